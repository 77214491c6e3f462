// Renders a question's progress and answer from its JSON. All text from the server (abstracts, model output)
// goes into the page through textContent, never innerHTML: only the elements built here are markup.
(function () {
  "use strict";
  const view = document.getElementById("question-view");
  if (!view) return;
  const jsonUrl = view.dataset.jsonUrl;
  const articleUrl = (pmid) => view.dataset.articleUrl.replace("PMID", encodeURIComponent(pmid));
  const answerEl = document.getElementById("answer");
  const statusEl = document.getElementById("status-line");
  const sourcesEl = document.getElementById("sources");
  const dialog = document.getElementById("abstract-dialog");
  const STATUS_TEXT = {
    queued: "Queued: waiting for a worker…",
    retrieving: "Retrieving abstracts (BM25 + dense search)…",
    generating: "Writing the answer…",
    verifying: "Verifying each sentence against the abstracts it cites…",
    done: "Done.",
    failed: "Failed.",
    cancelled: "Stopped at your request.",
  };
  const VERDICT_TEXT = {
    SUPPORT: ["✔", "Supported"],
    CONTRADICT: ["✖", "Contradicted"],
    NO_EVIDENCE: ["?", "No evidence"],
    UNCLEAR: ["~", "Unclear"],
    NO_REFERENCE: ["!", "Not a retrieved paper"],
    UNCITED: ["–", "Uncited"],
  };
  const ORDER = ["retrieving", "generating", "verifying", "done"];
  // PubMed ids are digits; a benchmark corpus's other ids (SciFact's "S2:123") are shown as they are, unlinked.
  const isPmid = (id) => /^[0-9]+$/.test(id);
  const sourceLabel = (id) => (isPmid(id) ? "PMID " + id : id);
  // A page of the asker's own library, DOC:<document>:p<page>, is cited by its own id.
  const isLibraryPage = (id) => /^DOC:[0-9]+:p[0-9]+$/.test(id);
  const citationLabel = (id) => (isLibraryPage(id) ? id : "PUBMED:" + id);

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function showStages(status) {
    const current = ORDER.indexOf(status);
    document.querySelectorAll(".stages li").forEach((item) => {
      const index = ORDER.indexOf(item.dataset.stage);
      item.classList.toggle("active", index === current);
      item.classList.toggle("complete", current > index || status === "done");
    });
  }

  function renderSentences(data) {
    answerEl.replaceChildren();
    // Only abstracts the model was shown can be cited and linked.
    const retrieved = new Set(data.context && data.context.given ? data.context.given : data.retrieved.map((doc) => doc.pmid));
    const sources = window.VeriMedBadges.sourcesByPmid(data);
    data.sentences.forEach((sentence, index) => {
      const [icon, label] = VERDICT_TEXT[sentence.verdict] || ["", sentence.verdict];
      const span = el("span", "sentence verdict-" + sentence.verdict);
      span.dataset.index = String(index);
      const details = sentence.citations
        .map((pmid) => {
          const verdict = sentence.verdicts[pmid];
          if (!verdict) return pmid;
          const confidence = verdict.confidence == null ? "" : " " + Math.round(verdict.confidence * 100) + "%";
          // An Unclear citation's confidence is that of the label the model leans to, so the tooltip names it.
          const leaning = verdict.label === "UNCLEAR" && verdict.leaning ? " (leans " + verdict.leaning + ")" : "";
          return pmid + ": " + verdict.label + leaning + confidence;
        })
        .join("; ");
      span.title = label + (details ? " (" + details + ")" : "");
      span.append(el("span", "icon", icon));
      span.append(el("span", "visually-hidden", label + ": "));
      span.append(document.createTextNode(sentence.display_text));
      sentence.citations.forEach((pmid) => {
        const verdict = sentence.verdicts[pmid] || { label: "NO_REFERENCE", evidence_spans: [] };
        if (retrieved.has(pmid) && verdict.label !== "NO_REFERENCE") {
          const chip = el("button", "chip chip-" + verdict.label, citationLabel(pmid));
          chip.type = "button";
          chip.title = (isLibraryPage(pmid) ? "Open the page" : "Open the abstract") + " (" + verdict.label + ")";
          chip.addEventListener("click", () => openAbstract(pmid, verdict.evidence_spans || []));
          span.append(" ", chip);
          const badge = window.VeriMedBadges.citationBadge(sources.get(pmid));
          if (badge) span.append(" ", badge);
        } else {
          span.append(" ", el("span", "chip chip-unlinked", citationLabel(pmid) + " (not a given abstract)"));
        }
      });
      answerEl.append(span, " ");
    });
  }

  function authorLine(authors) {
    if (!authors || !authors.length) return "";
    return authors.length > 3 ? authors.slice(0, 3).join(", ") + ", et al." : authors.join(", ");
  }

  function externalLink(href, text) {
    const link = el("a", "", text);
    link.href = href;
    link.rel = "noopener noreferrer";
    link.target = "_blank";
    return link;
  }

  // Each part of the DOI is encoded, so a DOI's odd characters stay inside the doi.org path.
  const doiUrl = (doi) => "https://doi.org/" + doi.split("/").map(encodeURIComponent).join("/");

  function renderSources(data) {
    sourcesEl.replaceChildren();
    const cited = new Set(data.sentences.flatMap((sentence) => sentence.citations));
    // After the question's own hits, a follow-up's sources from the answers earlier in its thread.
    const earlier = new Set((data.thread_sources || []).map((doc) => doc.pmid));
    data.retrieved.concat(data.thread_sources || []).forEach((doc) => {
      if (!doc.source) return;
      const item = el("li", "source");
      const open = el("button", "link-button", doc.source.title || sourceLabel(doc.pmid));
      open.type = "button";
      open.addEventListener("click", () => openAbstract(doc.pmid, []));
      item.append(open);
      if (cited.has(doc.pmid)) item.append(" ", el("span", "cited-badge", "cited"));
      if (earlier.has(doc.pmid)) item.append(" ", el("span", "earlier-badge", "earlier in this thread"));
      window.VeriMedBadges.badges(doc.source).forEach((badge) => item.append(" ", badge));
      const authors = authorLine(doc.source.authors);
      if (authors) item.append(el("span", "source-line source-authors", authors));
      const meta = [doc.source.journal, doc.source.year].filter(Boolean).join(", ");
      if (meta) item.append(el("span", "source-line meta", meta));
      item.append(...window.VeriMedBadges.noticeLines(doc.source));
      const links = el("span", "source-line source-links");
      if (doc.source.doi) links.append(externalLink(doiUrl(doc.source.doi), "DOI " + doc.source.doi), " · ");
      if (doc.source.url && isLibraryPage(doc.pmid)) links.append(externalLink(doc.source.url, "Open " + doc.pmid));
      else if (doc.source.url) links.append(externalLink(doc.source.url, "PubMed " + doc.pmid));
      else if (isLibraryPage(doc.pmid)) links.append(el("span", "meta", doc.pmid));
      else links.append(el("span", "meta", doc.pmid + " (not a PubMed record)"));
      item.append(links);
      sourcesEl.append(item);
    });
  }

  async function openAbstract(pmid, evidence) {
    const response = await fetch(articleUrl(pmid));
    if (!response.ok && isLibraryPage(pmid)) {
      // Someone else's library page (a reviewer, a share link's reader): the answer cites it, its text stays theirs.
      document.getElementById("abstract-title").textContent = pmid;
      document.getElementById("abstract-meta").textContent = "";
      document.getElementById("abstract-body").replaceChildren(
        el("p", "meta", "A page of a document in the asker's own library: only they can read it."));
      dialog.showModal();
      return;
    }
    if (!response.ok) return;
    const article = await response.json();
    document.getElementById("abstract-title").textContent = article.title || sourceLabel(article.pmid);
    document.getElementById("abstract-meta").textContent =
      [article.journal, article.year, sourceLabel(article.pmid)].filter(Boolean).join(" · ");
    window.VeriMedBadges.badges(article).forEach((badge) => document.getElementById("abstract-meta").append(" ", badge));
    const body = document.getElementById("abstract-body");
    body.replaceChildren();
    // Evidence arrives as [start, end] character offsets into the abstract: exactly those characters are marked.
    const text = article.abstract || "";
    let cursor = 0;
    [...evidence].sort((a, b) => a[0] - b[0]).forEach(([start, end]) => {
      if (start < cursor || end > text.length) return;
      if (start > cursor) body.append(document.createTextNode(text.slice(cursor, start)));
      body.append(el("mark", "evidence", text.slice(start, end)));
      cursor = end;
    });
    if (cursor < text.length) body.append(document.createTextNode(text.slice(cursor)));
    if (isLibraryPage(pmid) && article.url) body.append(pageLink(article.url, text, evidence));
    dialog.showModal();
  }

  // The PDF itself at the cited page, with the evidence sentences highlighted there too.
  function pageLink(url, text, evidence) {
    const target = new URL(url, window.location.href);
    target.searchParams.delete("passage");
    evidence.slice(0, 10).forEach(([start, end]) => target.searchParams.append("highlight", text.slice(start, end)));
    const paragraph = el("p", "page-link");
    paragraph.append(externalLink(target.pathname + target.search, "Open the document at this page"));
    return paragraph;
  }

  dialog.querySelector(".close").addEventListener("click", () => dialog.close());
  // For the other scripts of the page (answer-panel.js): one abstract dialog, one set of verdict labels.
  window.VeriMed = { openAbstract, VERDICT_TEXT, sourceLabel };

  // The stop button works as a plain form; with JavaScript it posts in the background and the poll shows the rest.
  const cancelForm = document.getElementById("cancel-form");
  if (cancelForm) {
    cancelForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = document.getElementById("cancel-button");
      button.disabled = true;
      button.textContent = "Stopping…";
      await fetch(cancelForm.action, {
        method: "POST",
        body: new FormData(cancelForm),
        headers: { Accept: "application/json" },
      });
    });
  }

  function renderCitationNotes(data) {
    const notes = document.getElementById("citation-notes");
    notes.replaceChildren();
    (data.citation_notes || []).forEach((note) => {
      const text = note.how === "repaired"
        ? "The model wrote " + note.written + "; it was read as " + citationLabel(note.pmid) +
          ", the one given abstract within two digits of it."
        : "The model wrote " + note.written + ", which is not one of the abstracts it was given: not linked.";
      notes.append(el("li", "citation-note citation-" + note.how, text));
    });
  }

  // A verifier that could not run leaves the answer unverified: a notice takes the place of the verdict legend.
  function showVerificationUnavailable(data) {
    const unavailable = data.verification_status === "unavailable";
    const notice = document.getElementById("verification-unavailable");
    notice.textContent = unavailable ? "Verification unavailable: " + data.verification_error : "";
    notice.hidden = !unavailable;
    document.getElementById("verdict-legend").hidden = unavailable;
  }

  // While the corpus is still being embedded, the dense leg of search saw only part of it: say how much.
  function showSemanticCoverage(data) {
    const note = document.getElementById("semantic-coverage-note");
    if (!note) return; // a question over the asker's library alone: no PubMed index to cover
    const share = data.semantic_coverage;
    const mode = (data.settings.retrieval || {}).mode;
    const partial = share !== null && share !== undefined && share < 1 && mode !== "lexical";
    note.textContent = partial
      ? "Semantic search covered " + Math.floor(share * 100) + "% of the indexed abstracts when this question " +
        "was asked (the rest were still being embedded); keyword search covered them all."
      : "";
    note.hidden = !partial;
  }

  // A yes/no question's consensus: how many of its first retrieved abstracts support its claim, contradict it, say
  // nothing about it or are Unclear, as a meter; each count opens the list of its abstracts with their badges.
  const CONSENSUS_GROUPS = [
    ["support", "SUPPORT", "Support", "support the claim"],
    ["contradict", "CONTRADICT", "Contradict", "contradict it"],
    ["no_evidence", "NO_EVIDENCE", "No evidence", "say nothing about it"],
    ["unclear", "UNCLEAR", "Unclear", "the verifier was not confident enough"],
  ];
  let consensusShown = "";

  // What the consensus read, as the exports say it (webapp/qa/consensus_export.py, `read_phrase`): the first
  // abstracts retrieved and, when fusion ranked it below them, the one the search found closest to the question.
  function consensusReadPhrase(consensus) {
    const first = consensus.closest_read ? consensus.read - 1 : consensus.read;
    const phrase = "the first " + first + (first === 1 ? " abstract" : " abstracts") + " retrieved";
    return consensus.closest_read ? phrase + " and the one the search found closest to the question" : phrase;
  }

  // Said before the counts when more than half of the abstracts read are Unclear (webapp/qa/consensus_export.py,
  // `unsure_sentence`): the meter is no firmer than the verifier was.
  function consensusUnsure(consensus) {
    const unclear = consensus.unclear || 0;
    if (consensus.read <= 0 || unclear * 2 <= consensus.read) return "";
    return "Most of these abstracts (" + unclear + " of " + consensus.read + ") could not be read with confidence; " +
      "the counts below are uncertain.";
  }

  function renderConsensus(data) {
    const section = document.getElementById("consensus");
    const consensus = data.consensus;
    const shown = JSON.stringify(consensus || null);
    if (shown === consensusShown) return; // re-rendering would close the lists a reader opened
    consensusShown = shown;
    // A yes/no question whose claim could not be read has no meter: its bottom line is the answer model's reading.
    section.hidden = !consensus || consensus.claim === null;
    if (section.hidden) return;
    document.getElementById("consensus-claim").textContent =
      "Checked as the claim “" + consensus.claim + "” against " + consensusReadPhrase(consensus) + ".";
    const unsure = document.getElementById("consensus-unsure");
    unsure.textContent = consensusUnsure(consensus);
    unsure.hidden = !unsure.textContent;
    const meter = document.getElementById("consensus-meter");
    meter.replaceChildren();
    const sources = window.VeriMedBadges.sourcesByPmid(data);
    const groups = document.getElementById("consensus-groups");
    groups.replaceChildren();
    CONSENSUS_GROUPS.forEach(([key, label, name, meaning]) => {
      const count = consensus[key];
      if (count > 0) {
        const segment = el("span", "consensus-segment verdict-" + label, String(count));
        segment.style.flexGrow = String(count); // widths in proportion to the counts
        segment.title = count + " " + name.toLowerCase();
        meter.append(segment);
      }
      const group = el("details", "consensus-group");
      group.dataset.label = key;
      const summary = el("summary");
      summary.append(el("span", "consensus-count verdict-" + label, name + ": " + count), " ", el("span", "meta", meaning));
      group.append(summary);
      const list = el("ul", "consensus-sources");
      (consensus.pmids[key] || []).forEach((pmid) => {
        const source = sources.get(pmid);
        const item = el("li", "consensus-source");
        const open = el("button", "link-button", (source && source.title) || sourceLabel(pmid));
        open.type = "button";
        const verdict = consensus.verdicts[pmid] || {};
        open.addEventListener("click", () => openAbstract(pmid, verdict.evidence_spans || []));
        item.append(open, " ", el("span", "meta", sourceLabel(pmid)));
        window.VeriMedBadges.badges(source).forEach((badge) => item.append(" ", badge));
        list.append(item);
      });
      if (!count) list.append(el("li", "meta", "None."));
      group.append(list);
      groups.append(group);
    });
    meter.setAttribute("aria-label", CONSENSUS_GROUPS.map(([key, , name]) => name + " " + consensus[key]).join(", "));
    const speaking = consensus.support + consensus.contradict;
    const few = document.getElementById("consensus-few");
    few.hidden = speaking >= consensus.speaking_minimum;
    few.textContent = few.hidden ? "" :
      "Fewer than " + consensus.speaking_minimum + " abstracts speak to this: " +
      (speaking === 1 ? "1 supports or contradicts" : speaking + " support or contradict") +
      " the claim, too few to call a consensus.";
  }

  // A yes/no question's bottom line, above the answer: in the words of webapp/qa/bottom_line_display.py, which
  // renders it on the server too (the page as loaded, before this script runs).
  const BOTTOM_LINE_LIMITS =
    "This bottom line is a reading of the retrieved abstracts by an automatic verifier, not a clinical recommendation.";
  const BOTTOM_LINE_ANSWERS = ["yes", "no", "mixed", "not_enough"];
  const bottomLineEl = document.getElementById("bottom-line");
  const counted = (number, singular, plural) => number + " " + (number === 1 ? singular : plural);
  let bottomLineShown = "";
  let bottomLineVerdicts = {};

  function voteButtons(parent, pmids) {
    pmids.forEach((pmid) => {
      const open = el("button", "link-button", sourceLabel(pmid));
      open.type = "button";
      open.dataset.pmid = pmid;
      parent.append(" ", open);
    });
  }

  // Abstracts read, shown Unclear, that cast no vote (as webapp/qa/bottom_line_display.py counts them).
  function unclearNotVoting(line, verdicts) {
    const voting = new Set([].concat(line.yes_pmids || [], line.no_pmids || [], line.retracted_pmids || []));
    return Object.entries(verdicts).filter(([pmid, verdict]) => verdict.label === "UNCLEAR" && !voting.has(pmid)).length;
  }

  // What decided the bottom line, in the words of webapp/qa/bottom_line_sentence.py (decided_sentence).
  function decidedSentence(line, verdicts) {
    const side = line.answer === "yes" || line.answer === "no" ? line.answer : null;
    const model = line.model_reading || null;
    const modelWeight = (model && model.weight) || 0;
    const rounded = Math.round(modelWeight * 10) / 10;
    const modelPhrase = model
      ? "the answer model's reading of " + sourceLabel(model.pmid) +
        (modelWeight > 0 ? " (counted as " + rounded + (rounded === 1 ? " vote)" : " votes)") : "")
      : "";
    const weights = line.weights || {};
    const sidePmids = side === "yes" ? line.yes_pmids : side === "no" ? line.no_pmids : [];
    const sideVoteWeight = sidePmids.reduce((total, pmid) => total + (weights[pmid] || 0), 0);
    const modelOnSide = Boolean(model) && model.side === side;
    const votesDecide = !modelOnSide || (!line.model_alone && modelWeight < sideVoteWeight);
    if (line.model_alone && model) {
      return line.title + ": " + modelPhrase + " alone; no abstract votes, as the verifier could not read " +
        "this question as a claim to check.";
    }
    const sides = { yes: line.yes_pmids.length, no: line.no_pmids.length };
    const parts = [];
    if (side && votesDecide) {
      const number = sides[side];
      delete sides[side];
      parts.push(number === 1
        ? "mainly the vote of the 1 abstract that leans " + side
        : "mainly the votes of the " + number + " abstracts that lean " + side);
    } else if (side) {
      parts.push("mainly " + modelPhrase);
      if (!sides[side]) delete sides[side];
    } else if (model && model.side) {
      parts.push(modelPhrase + " leans " + model.side);
    }
    Object.entries(sides).forEach(([name, number]) => {
      parts.push(counted(number, "abstract leans " + name, "abstracts lean " + name));
    });
    parts.push(unclearNotVoting(line, verdicts) + " could not be read with confidence");
    return line.title + ": " + parts.join("; ") + ".";
  }

  function renderBottomLine(data) {
    const line = (data.consensus && data.consensus.bottom_line) || null;
    bottomLineVerdicts = line ? data.consensus.verdicts || {} : {};
    const shown = JSON.stringify(line);
    if (shown === bottomLineShown) return;
    bottomLineShown = shown;
    bottomLineEl.replaceChildren();
    bottomLineEl.hidden = !line;
    bottomLineEl.className = "bottom-line";
    if (!line) return;
    if (BOTTOM_LINE_ANSWERS.includes(line.answer)) bottomLineEl.classList.add("bottom-line-" + line.answer);
    const heading = el("h2", "", "Bottom line: ");
    heading.id = "bottom-line-heading";
    const title = el("span", "", line.title);
    title.id = "bottom-line-title";
    heading.append(title);
    bottomLineEl.append(heading);
    // The bottom line, not "the abstracts' votes": the answer model's reading may be what decided it.
    const said = {yes: "no", no: "yes"}[line.answer];
    if (line.answer_disagrees && said) {
      const disagrees = el("p", "bottom-line-disagrees",
        "The written answer below says " + said + ", but the bottom line says " + line.title +
        ": read the sources.");
      disagrees.id = "bottom-line-disagrees";
      bottomLineEl.append(disagrees);
    }
    let summary = decidedSentence(line, bottomLineVerdicts);
    // The Unclear ones are in the sentence above; the others read found nothing on the question.
    const others = Math.max((line.abstaining || 0) - unclearNotVoting(line, bottomLineVerdicts), 0);
    if (others) {
      summary += " " + counted(others, "other abstract read takes no side.", "other abstracts read take no side.");
    }
    const votes = el("p", "", summary);
    votes.id = "bottom-line-votes";
    bottomLineEl.append(votes);
    if (line.yes_pmids.length || line.no_pmids.length) {
      const voters = el("ul", "bottom-line-voters");
      [["yes", "Vote yes:", line.yes_pmids], ["no", "Vote no:", line.no_pmids]].forEach(([side, name, pmids]) => {
        if (!pmids.length) return;
        const item = el("li", "", name);
        item.dataset.side = side;
        voteButtons(item, pmids);
        voters.append(item);
      });
      bottomLineEl.append(voters);
    }
    // The answer LLM's reading of the closest abstract, when the rule weighs it (absent from older answers).
    if (line.model_reading || line.model_reading_failed) {
      const model = el("p", "bottom-line-model", line.model_reading
        ? "The answer model, reading the abstract closest to the question, leans " + line.model_reading.side +
          (line.model_alone ? "; that reading alone decides this bottom line:" : "; its reading is counted in the bottom line above:")
        : "The answer model could not be asked to read the closest abstract: the votes above are the verifier's.");
      model.id = "bottom-line-model";
      if (line.model_reading) voteButtons(model, [line.model_reading.pmid]);
      bottomLineEl.append(model);
    }
    if (line.retracted_pmids.length) {
      const retracted = el("p", "bottom-line-retracted",
        counted(line.retracted_pmids.length, "retracted paper did not vote:", "retracted papers did not vote:"));
      retracted.id = "bottom-line-retracted";
      voteButtons(retracted, line.retracted_pmids);
      bottomLineEl.append(retracted);
    }
    const limits = el("p", "bottom-line-limits meta", BOTTOM_LINE_LIMITS);
    limits.id = "bottom-line-limits";
    bottomLineEl.append(limits);
  }

  // One listener for the server's buttons and this script's: each opens its abstract with the evidence it was read by.
  bottomLineEl.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-pmid]");
    if (!button) return;
    const verdict = bottomLineVerdicts[button.dataset.pmid] || {};
    openAbstract(button.dataset.pmid, verdict.evidence_spans || []);
  });

  async function poll() {
    let data;
    try {
      const response = await fetch(jsonUrl, { headers: { Accept: "application/json" } });
      data = await response.json();
    } catch (error) {
      statusEl.textContent = "Connection lost; retrying…";
      setTimeout(poll, 2000);
      return;
    }
    showStages(data.status);
    view.dataset.status = data.status;
    const libraryOnly = ((data.settings || {}).filters || {}).sources === "library";
    statusEl.textContent = data.status === "failed"
      ? "Failed: " + data.error
      : (libraryOnly && data.status === "retrieving" ? "Retrieving pages of your library…" : null) ||
        STATUS_TEXT[data.status] || data.status;
    // Retrieved questions wait for the model with the status "retrieving"; the place in line says so.
    if ((data.status === "queued" || data.status === "retrieving") && data.queue_position > 1) {
      const ahead = data.queue_position - 1;
      const waiting = data.status === "queued" ? "Queued: " : "Sources found; waiting for the model: ";
      // Deep checks wait for the same model, so the place counts them too (webapp/qa/queue.py).
      statusEl.textContent = waiting + ahead + (ahead === 1 ? " question or deep check" : " questions and deep checks") +
        " ahead of yours…";
    }
    statusEl.classList.toggle("failed", data.status === "failed");
    if (data.sentences.length) {
      renderSentences(data);
      // Other scripts (flagging, the sentence panel) decorate the rendered sentences when this fires.
      document.dispatchEvent(new CustomEvent("verimed:rendered", { detail: data }));
    } else if (data.answer) {
      answerEl.textContent = data.answer; // raw tokens as they stream in
    }
    renderSources(data);
    renderBottomLine(data);
    renderConsensus(data);
    window.VeriMedBadges.showRetractionWarning(data);
    renderCitationNotes(data);
    const exportsEl = document.getElementById("exports");
    if (exportsEl) exportsEl.hidden = data.status !== "done";
    if (cancelForm && (data.status === "done" || data.status === "failed" || data.status === "cancelled")) {
      cancelForm.hidden = true;
    }
    const askAgainForm = document.getElementById("ask-again-form");
    if (askAgainForm) askAgainForm.hidden = !(data.status === "failed" || data.status === "cancelled");
    showVerificationUnavailable(data);
    showSemanticCoverage(data);
    document.getElementById("verified-by").textContent = data.models.verifier
      ? "Verdicts by " + data.models.verifier + (data.models.generator ? "; answer by " + data.models.generator : "") + "."
      : "";
    window.VeriMedTimings.render(data);
    document.getElementById("timings").textContent = JSON.stringify(
      { timings_ms: data.timings_ms, models: data.models }, null, 2);
    if (!["done", "failed", "cancelled"].includes(data.status)) setTimeout(poll, 400);
  }
  poll();
})();
