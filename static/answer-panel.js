// The sentence panel: each answer sentence gets a "Details" button (clicking the sentence's text does the same) that
// opens a side panel with its verdict per cited abstract, the confidence and the abstract's evidence sentences. A
// real button, not role="button" on the sentence: the sentence already holds the citation chips, and interactive
// controls must not nest. Also the share link's copy button.
// Server text goes into the page through textContent only. verimed.js re-renders the sentences on every poll and
// fires `verimed:rendered`: listeners sit on the stable #answer container and attributes are set again each time.
(function () {
  "use strict";

  const copyButton = document.getElementById("share-copy");
  if (copyButton) {
    copyButton.addEventListener("click", async () => {
      const input = document.getElementById(copyButton.dataset.copyTarget);
      const said = document.getElementById("share-copied");
      input.select();
      try {
        await navigator.clipboard.writeText(input.value);
        said.textContent = "Link copied.";
      } catch (error) {
        said.textContent = "The link is selected: press Ctrl+C (⌘C) to copy it.";
      }
    });
  }

  const view = document.getElementById("question-view");
  const panel = document.getElementById("sentence-panel");
  const answerEl = document.getElementById("answer");
  if (!view || !panel || !answerEl) return;
  const heading = document.getElementById("sentence-panel-heading");
  const textEl = document.getElementById("sentence-panel-text");
  const verdictEl = document.getElementById("sentence-panel-verdict");
  const listEl = document.getElementById("sentence-panel-citations");
  let data = null; // the question JSON of the latest render
  let openIndex = null; // the sentence the panel shows
  let shown = ""; // what the panel was filled from, so an unchanged re-render leaves focus where it is

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const verdictText = (label) => (window.VeriMed && window.VeriMed.VERDICT_TEXT[label]) || ["", label];
  const percent = (confidence) => (confidence == null ? "" : Math.round(confidence * 100) + "%");
  const sentenceSpans = () => answerEl.querySelectorAll(".sentence[data-index]");

  // An Unclear verdict's confidence is that of the label the model leans to (`leaning`), below the threshold for
  // showing it: the badge says so rather than print a bare "confidence" beside "Unclear".
  function confidenceText(label, confidence, leaning) {
    const share = percent(confidence);
    if (label !== "UNCLEAR") return share ? " · confidence " + share : "";
    if (leaning) return " · leans " + verdictText(leaning)[1] + (share ? ", " + share : "");
    return " · not confident enough for a verdict" + (share ? " (best " + share + ")" : "");
  }

  function verdictBadge(label, confidence, leaning) {
    const [icon, text] = verdictText(label);
    const badge = el("span", "panel-verdict verdict-" + label);
    badge.append(el("span", "icon", icon));
    badge.lastChild.setAttribute("aria-hidden", "true");
    badge.append(" " + text);
    const detail = confidenceText(label, confidence, leaning);
    if (detail) badge.append(el("span", "panel-confidence", detail));
    return badge;
  }

  function evidenceLabel(verdict) {
    const label = verdict.label === "UNCLEAR" ? verdict.leaning : verdict.label;
    // For a NO_EVIDENCE verdict these are the sentences the verifier read and found wanting, not evidence.
    if (label === "NO_EVIDENCE") return "Closest sentences the verifier read:";
    return verdict.label === "UNCLEAR" ? "Evidence the model leaned on:" : "Evidence from the abstract:";
  }

  function citationItem(pmid, sentence, sources, given) {
    const verdict = sentence.verdicts[pmid] || { label: "NO_REFERENCE", confidence: null, evidence_text: [] };
    const source = sources.get(pmid);
    const item = el("li", "panel-citation");
    const label = window.VeriMed.sourceLabel(pmid);
    item.append(el("h3", "panel-citation-title", source && source.title ? source.title : label));
    item.append(el("p", "meta", label + (source && source.journal ? " · " + source.journal : "") +
      (source && source.year ? ", " + source.year : "")));
    const badges = window.VeriMedBadges ? window.VeriMedBadges.badges(source) : [];
    if (badges.length) {
      const line = el("p", "panel-badges");
      badges.forEach((badge) => line.append(badge, " "));
      item.append(line);
    }
    const verdictLine = el("p");
    verdictLine.append(verdictBadge(verdict.label, verdict.confidence, verdict.leaning));
    item.append(verdictLine);
    if (verdict.label === "UNCLEAR") {
      item.append(el("p", "meta", "The verifier was not confident enough to show a verdict: read the evidence yourself."));
    }
    const linkable = given.has(pmid) && verdict.label !== "NO_REFERENCE";
    if (!linkable) {
      item.append(el("p", "", "This source was not among the abstracts the model was given, so nothing checks it."));
      return item;
    }
    const evidence = verdict.evidence_text || [];
    if (evidence.length) {
      item.append(el("p", "panel-evidence-label", evidenceLabel(verdict)));
      evidence.forEach((text) => item.append(el("blockquote", "panel-evidence", text)));
    } else {
      item.append(el("p", "meta", "No sentence of the abstract was marked as evidence."));
    }
    const open = el("button", "secondary-button", "Open the abstract with the evidence highlighted");
    open.type = "button";
    open.addEventListener("click", () => window.VeriMed.openAbstract(pmid, verdict.evidence_spans || []));
    item.append(open);
    return item;
  }

  function fill() {
    const sentence = data && data.sentences[openIndex];
    if (!sentence) return false;
    const key = JSON.stringify([openIndex, sentence, data.retrieved.length]);
    if (key === shown) return true;
    shown = key;
    panel.dataset.index = String(openIndex); // which sentence, for deep-check.js
    heading.textContent = "Sentence " + (openIndex + 1);
    textEl.textContent = sentence.display_text;
    verdictEl.replaceChildren("Overall: ", verdictBadge(sentence.verdict, sentence.confidence));
    const sources = new Map(data.retrieved.filter((doc) => doc.source).map((doc) => [doc.pmid, doc.source]));
    const given = new Set(data.context && data.context.given ? data.context.given : data.retrieved.map((d) => d.pmid));
    listEl.replaceChildren();
    if (!sentence.citations.length) {
      listEl.append(el("li", "", "This sentence cites no abstract, so it was not verified."));
    }
    sentence.citations.forEach((pmid) => listEl.append(citationItem(pmid, sentence, sources, given)));
    return true;
  }

  function markExpanded() {
    sentenceSpans().forEach((span) => {
      const button = span.querySelector(".details-button");
      if (button) button.setAttribute("aria-expanded", String(!panel.hidden && Number(span.dataset.index) === openIndex));
    });
  }

  function open(index) {
    openIndex = index;
    shown = "";
    if (!fill()) return;
    panel.hidden = false;
    markExpanded();
    heading.focus();
  }

  function close() {
    if (panel.hidden) return;
    panel.hidden = true;
    markExpanded();
    const opener = answerEl.querySelector('.sentence[data-index="' + openIndex + '"] .details-button');
    openIndex = null;
    if (opener) opener.focus();
  }

  function toggle(span) {
    const index = Number(span.dataset.index);
    if (!panel.hidden && openIndex === index) close();
    else open(index);
  }

  document.addEventListener("verimed:rendered", (event) => {
    data = event.detail;
    sentenceSpans().forEach((span) => {
      if (span.querySelector(".details-button")) return;
      const button = el("button", "details-button", "Details");
      button.type = "button";
      button.setAttribute("aria-label", "Details of sentence " + (Number(span.dataset.index) + 1));
      button.setAttribute("aria-controls", "sentence-panel");
      span.append(" ", button);
    });
    if (!panel.hidden && !fill()) close();
    markExpanded();
  });

  answerEl.addEventListener("click", (event) => {
    const span = event.target.closest(".sentence[data-index]");
    if (!span) return;
    // The Details button toggles; a citation chip or the flag button does its own job; the text is a mouse shortcut.
    if (event.target.closest(".details-button") || !event.target.closest("button, a")) toggle(span);
  });

  document.getElementById("sentence-panel-close").addEventListener("click", close);
  document.addEventListener("keydown", (event) => {
    // Escape in an open dialog (the abstract, a flag) closes that dialog first, not the panel behind it.
    if (event.key !== "Escape" || panel.hidden || document.querySelector("dialog[open]")) return;
    close();
  });
})();
