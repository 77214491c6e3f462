// A library PDF drawn at one page by pdf.js (served by the site from the npm package), with its text layer on top so
// that the words can be selected, and the cited passage's words highlighted. The passage text comes from the page's
// <template> (escaped by the server); it is compared as plain text and never inserted as markup.
const root = document.getElementById("pdf-viewer");
const status = document.getElementById("pdf-status");

function normalised(text) {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

// A line's text as a passage holds it: the reader joins a word hyphenated across lines, so a line ending in "treat-"
// is matched as "treat".
function lineText(span) {
  return normalised(span.textContent).replace(/-$/, "");
}

function highlight(layer) {
  const wanted = Array.from(document.querySelectorAll("template.pdf-highlight"), (template) =>
    normalised(template.content.textContent),
  ).filter((text) => text.length > 0);
  if (wanted.length === 0) return 0;
  let first = null;
  let count = 0;
  for (const span of layer.querySelectorAll("span")) {
    const text = lineText(span);
    // Short fragments ("of", "12") would match anywhere in the passage.
    if (text.length >= 8 && wanted.some((sought) => sought.includes(text))) {
      span.classList.add("evidence-highlight");
      first = first || span;
      count += 1;
    }
  }
  if (first) first.scrollIntoView({ block: "center" });
  return count;
}

async function show() {
  const pdfjs = await import(root.dataset.pdfjs);
  pdfjs.GlobalWorkerOptions.workerSrc = root.dataset.worker;
  const pdf = await pdfjs.getDocument({ url: root.dataset.file, isEvalSupported: false, enableXfa: false }).promise;
  const number = Math.min(Math.max(parseInt(root.dataset.page, 10) || 1, 1), pdf.numPages);
  const page = await pdf.getPage(number);
  const natural = page.getViewport({ scale: 1 });
  const scale = Math.min(2, Math.max(0.5, (root.clientWidth || 800) / natural.width));
  const viewport = page.getViewport({ scale: scale });
  const ratio = window.devicePixelRatio || 1;
  const canvas = root.querySelector("canvas");
  canvas.width = Math.floor(viewport.width * ratio);
  canvas.height = Math.floor(viewport.height * ratio);
  canvas.style.width = Math.floor(viewport.width) + "px";
  canvas.style.height = Math.floor(viewport.height) + "px";
  root.style.setProperty("--total-scale-factor", String(scale));
  root.style.setProperty("--scale-round-x", "1px");
  root.style.setProperty("--scale-round-y", "1px");
  await page.render({
    canvasContext: canvas.getContext("2d"),
    viewport: viewport,
    transform: ratio === 1 ? null : [ratio, 0, 0, ratio, 0, 0],
  }).promise;
  const layer = root.querySelector(".textLayer");
  await new pdfjs.TextLayer({ textContentSource: page.streamTextContent(), container: layer, viewport: viewport }).render();
  const marked = highlight(layer);
  root.dataset.rendered = "true";
  root.dataset.highlighted = String(marked);
}

show().catch(function (error) {
  status.textContent = "The PDF could not be shown here (" + error.message + "). Open it from the document's page.";
  root.dataset.rendered = "failed";
});
