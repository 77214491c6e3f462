// The deep check on the answer page: starts and stops it, polls its JSON while it runs (as verimed.js polls the
// question's), lists each sentence's deep verdict, and fills the sentence panel with the sentence's claims, each with
// its verdict and the evidence sentences of the abstracts it came from. Claims are model output and abstracts are
// untrusted: every server text goes in through textContent, never innerHTML.
(function () {
  "use strict";
  const section = document.getElementById("deep-check");
  if (!section) return;
  // Only the person who asked (and admins) get the start and stop forms; reviewers read the check and flag claims.
  const startForm = document.getElementById("deep-check-start");
  const startButton = document.getElementById("deep-check-button");
  const rerunInput = document.getElementById("deep-check-rerun");
  const stopForm = document.getElementById("deep-check-stop");
  const statusEl = document.getElementById("deep-check-status");
  const progressEl = document.getElementById("deep-check-progress");
  const summaryEl = document.getElementById("deep-check-summary");
  const panel = document.getElementById("sentence-panel");
  const treeEl = document.getElementById("sentence-panel-deep-check");
  const canFlag = section.dataset.canFlag === "true";
  const reasons = canFlag ? JSON.parse(section.dataset.flagReasons || "[]") : [];
  const csrf = section.querySelector("input[name=csrfmiddlewaretoken]").value;
  const RUNNING = ["queued", "running"];
  const STAGE_TEXT = {
    extracting: "Splitting the cited sentences into claims (one model call)…",
    judging: "Judging each claim against the abstracts its sentence cites…",
    searching: "Searching for other papers on the claims the cited abstracts do not settle…",
    done: "Storing the result…",
  };
  const DEEP_TEXT = {
    SUPPORT_ELSEWHERE: ["↗", "Supported by another paper"],
    CONTRADICT_ELSEWHERE: ["✖", "Contradicted by another paper"],
    PARTIAL: ["◐", "Partly supported"],
  };
  let data = null; // the latest deep-check JSON
  let polling = false;
  let shownKey = ""; // what the panel's tree was filled from, so an unchanged poll leaves focus and open forms alone

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function verdictText(label) {
    return DEEP_TEXT[label] || (window.VeriMed && window.VeriMed.VERDICT_TEXT[label]) || ["", label];
  }

  const sourceLabel = (id) => (window.VeriMed ? window.VeriMed.sourceLabel(id) : id);

  function badge(label, confidence) {
    const [icon, text] = verdictText(label);
    const node = el("span", "panel-verdict verdict-" + label);
    const mark = el("span", "icon", icon);
    mark.setAttribute("aria-hidden", "true");
    node.append(mark, " " + text);
    if (confidence != null) node.append(el("span", "panel-confidence", " · " + Math.round(confidence * 100) + "%"));
    return node;
  }

  function statusText(check) {
    if (!check.status) return "";
    if (check.status === "queued" && check.queue_position > 1) {
      const ahead = check.queue_position - 1;
      return "Deep check queued: " + ahead + (ahead === 1 ? " question or deep check" : " questions and deep checks") +
        " ahead of it…";
    }
    if (check.status === "queued") return "Deep check queued: waiting for a worker…";
    if (check.status === "running") return (STAGE_TEXT[check.stage] || "Starting…") + " " + check.progress + "%";
    if (check.status === "failed") return "The deep check failed: " + check.error;
    if (check.status === "stopped") return "The deep check was stopped.";
    const sentences = check.tree.sentences.filter((sentence) => sentence.claims.length);
    const claims = sentences.reduce((sum, sentence) => sum + sentence.claims.length, 0);
    const supported = sentences.filter((sentence) => sentence.verdict === "SUPPORT").length;
    if (!sentences.length) return "Done: the answer cites no abstract, so it has no claims to check.";
    return "Done: " + claims + (claims === 1 ? " claim" : " claims") + " in " + sentences.length +
      (sentences.length === 1 ? " cited sentence; " : " cited sentences; ") + supported + " fully supported. " +
      "Open a sentence's details to see its claims.";
  }

  function openSentence(position) {
    const button = document.querySelector('#answer .sentence[data-index="' + position + '"] .details-button');
    if (button && (panel.hidden || panel.dataset.index !== String(position))) button.click();
  }

  function renderSummary(check) {
    summaryEl.replaceChildren();
    if (check.status !== "done") return;
    check.tree.sentences.filter((sentence) => sentence.claims.length).forEach((sentence) => {
      const item = el("li", "deep-check-sentence");
      const open = el("button", "link-button", "Sentence " + (sentence.position + 1));
      open.type = "button";
      open.addEventListener("click", () => openSentence(sentence.position));
      const count = sentence.claims.length + (sentence.claims.length === 1 ? " claim" : " claims");
      item.append(open, " ", badge(sentence.verdict), " ", el("span", "meta", count));
      summaryEl.append(item);
    });
  }

  function evidenceBlock(evidence) {
    const block = el("div", "deep-evidence" + (evidence.cited ? "" : " deep-evidence-other"));
    const where = evidence.cited ? "Cited: " : "Another paper: ";
    block.append(el("p", "deep-evidence-source", where + (evidence.title || sourceLabel(evidence.pmid))));
    const line = el("p", "meta", sourceLabel(evidence.pmid) + " · ");
    line.append(badge(evidence.label, evidence.confidence));
    block.append(line);
    (evidence.evidence_text || []).forEach((text) => block.append(el("blockquote", "panel-evidence", text)));
    if ((evidence.evidence_spans || []).length && window.VeriMed) {
      const open = el("button", "secondary-button", "Open the abstract with the evidence highlighted");
      open.type = "button";
      open.addEventListener("click", () => window.VeriMed.openAbstract(evidence.pmid, evidence.evidence_spans));
      block.append(open);
    }
    return block;
  }

  function flagControls(position, index, flagged) {
    const box = el("div", "deep-claim-flag");
    const said = el("p", "meta");
    said.setAttribute("role", "status");
    if (flagged) {
      said.textContent = "Flagged for review.";
      box.append(said);
      return box;
    }
    const details = el("details");
    details.append(el("summary", "", "Flag this claim"));
    const form = el("form", "deep-claim-flag-form");
    const reason = el("select");
    reason.name = "reason";
    reason.setAttribute("aria-label", "What is wrong with claim " + (index + 1));
    reasons.forEach(([value, label]) => {
      const option = el("option", "", label);
      option.value = value;
      reason.append(option);
    });
    const comment = el("textarea");
    comment.name = "comment";
    comment.rows = 2;
    comment.maxLength = 3000;
    comment.setAttribute("aria-label", "Comment on claim " + (index + 1) + " (optional)");
    const send = el("button", "secondary-button", "Send flag");
    send.type = "submit";
    form.append(reason, comment, send);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      send.disabled = true;
      const response = await fetch(section.dataset.flagUrl, {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify({ sentence: position, claim: index, reason: reason.value, comment: comment.value }),
      });
      const body = await response.json().catch(() => ({}));
      if (response.ok) {
        details.remove();
        said.textContent = body.message || "Flag sent to the review queue";
        data.flagged.push([position, index]);
      } else {
        said.textContent = "Not flagged: " + (body.error || response.status);
        send.disabled = false;
      }
    });
    details.append(form);
    box.append(details, said);
    return box;
  }

  function fillTree() {
    const position = panel.hidden ? NaN : Number(panel.dataset.index);
    const sentence = data && data.status === "done" && data.tree
      ? data.tree.sentences.find((node) => node.position === position) : null;
    if (!sentence || !sentence.claims.length) {
      treeEl.hidden = true;
      shownKey = "";
      return;
    }
    const key = JSON.stringify([position, data.updated_at]);
    if (key === shownKey) return;
    shownKey = key;
    treeEl.replaceChildren();
    const heading = el("h3", "", "Deep check: ");
    heading.id = "deep-tree-heading";
    heading.append(badge(sentence.verdict));
    treeEl.append(heading);
    treeEl.append(el("p", "meta", sentence.from_model
      ? "The model split this sentence into " + sentence.claims.length +
        (sentence.claims.length === 1 ? " claim." : " claims.")
      : "Checked as one claim: the model's claims could not be used (" + sentence.note + ")."));
    const list = el("ol", "deep-claims");
    const flagged = new Set(data.flagged.map(([s, c]) => s + ":" + c));
    sentence.claims.forEach((claim, index) => {
      const item = el("li", "deep-claim");
      item.append(el("p", "deep-claim-text", claim.text));
      const verdict = el("p");
      verdict.append(badge(claim.verdict, claim.confidence));
      if (claim.requeried) verdict.append(el("span", "meta", " · the cited abstracts did not settle it: searched"));
      item.append(verdict);
      claim.evidence.forEach((evidence) => item.append(evidenceBlock(evidence)));
      if (canFlag) item.append(flagControls(sentence.position, index, flagged.has(sentence.position + ":" + index)));
      list.append(item);
    });
    treeEl.append(list);
    treeEl.hidden = false;
  }

  function render(check) {
    data = check;
    const running = RUNNING.includes(check.status);
    section.dataset.status = check.status || "none";
    statusEl.textContent = statusText(check);
    statusEl.classList.toggle("failed", check.status === "failed");
    progressEl.hidden = !running;
    progressEl.value = check.progress || 0;
    progressEl.textContent = (check.progress || 0) + "%";
    if (startForm) {
      startForm.hidden = running;
      startButton.disabled = running;
      startButton.textContent = check.status ? "Run the deep check again" : "Deep check";
      // Once a check exists, the button runs it again: a plain start returns a finished check as it is.
      rerunInput.value = check.status ? "1" : "";
      stopForm.hidden = !running;
    }
    renderSummary(check);
    fillTree();
  }

  async function load() {
    const response = await fetch(section.dataset.jsonUrl, { headers: { Accept: "application/json" } });
    if (!response.ok) throw new Error("deep check JSON: " + response.status);
    return response.json();
  }

  async function poll() {
    if (polling) return;
    polling = true;
    try {
      for (;;) {
        let check;
        try {
          check = await load();
        } catch (error) {
          statusEl.textContent = "Connection lost; retrying…";
          await new Promise((resolve) => setTimeout(resolve, 2000));
          continue;
        }
        render(check);
        if (!RUNNING.includes(check.status)) break;
        await new Promise((resolve) => setTimeout(resolve, 700));
      }
    } finally {
      polling = false;
    }
  }

  async function post(form) {
    const response = await fetch(form.action, {
      method: "POST",
      body: new FormData(form),
      headers: { Accept: "application/json" },
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) {
      statusEl.textContent = body.error || "The request failed (" + response.status + ").";
      return;
    }
    render(body);
    poll();
  }

  if (startForm) {
    startForm.addEventListener("submit", (event) => {
      event.preventDefault();
      startButton.disabled = true;
      post(startForm).finally(() => { startButton.disabled = RUNNING.includes(data && data.status); });
    });
    stopForm.addEventListener("submit", (event) => {
      event.preventDefault();
      stopForm.querySelector("button").disabled = true;
      post(stopForm).finally(() => { stopForm.querySelector("button").disabled = false; });
    });
  }

  // The question's own poll says when the answer is done: only then is there something to deep-check.
  document.addEventListener("verimed:rendered", (event) => {
    if (event.detail.status === "done") section.hidden = false;
  });
  // The sentence panel says which sentence it shows (answer-panel.js sets data-index).
  if (panel && treeEl) {
    new MutationObserver(fillTree).observe(panel, { attributes: true, attributeFilter: ["data-index", "hidden"] });
  }
  poll();
})();
