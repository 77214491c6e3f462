// Badges on a source wherever the answer page shows one: its retraction status (red Retracted, amber Expression of
// concern, grey Corrected or Notice) and its study design; and the warning at the top of an answer that cites a
// retracted paper. Loaded before verimed.js, which calls these. Text from the server goes in through textContent.
(function () {
  "use strict";
  const RETRACTION_TEXT = {
    retracted: ["Retracted", "PubMed lists this paper as retracted"],
    concern: ["Expression of concern", "The journal published an expression of concern about this paper"],
    corrected: ["Corrected", "An erratum corrects this paper"],
    notice: ["Notice", "This is itself a retraction, expression-of-concern or erratum notice"],
  };
  const NOTICE_TEXT = {
    RetractionIn: "Retraction in",
    ExpressionOfConcernIn: "Expression of concern in",
    ErratumIn: "Erratum in",
    RetractionOf: "Retraction of",
    ExpressionOfConcernFor: "Expression of concern for",
    ErratumFor: "Erratum for",
  };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const status = (source) => (source && source.retraction ? source.retraction.status : "none");

  // The badges of one source, in reading order: the retraction status first, it matters most.
  function badges(source) {
    const found = [];
    const known = RETRACTION_TEXT[status(source)];
    if (known) {
      const badge = el("span", "source-badge retraction-badge retraction-" + status(source), known[0]);
      badge.title = known[1];
      found.push(badge);
    }
    if (source && source.study_design) {
      const design = el("span", "source-badge design-badge", source.study_design.label);
      design.title = "Study design, from PubMed's publication types";
      found.push(design);
    }
    return found;
  }

  // Only the statuses a reader must weigh are shown beside a citation in the answer text.
  function citationBadge(source) {
    const known = RETRACTION_TEXT[status(source)];
    if (!known || status(source) === "notice") return null;
    const badge = el("span", "source-badge retraction-badge retraction-" + status(source), known[0]);
    badge.title = known[1];
    return badge;
  }

  // "Retraction in PMID 15516371: Klessig DF, … 2004": one line per notice, for the sources list.
  function noticeLines(source) {
    const notices = (source && source.retraction && source.retraction.notices) || [];
    return notices.map((notice) => {
      const where = notice.pmid ? " PMID " + notice.pmid : "";
      const phrase = (NOTICE_TEXT[notice.ref_type] || notice.ref_type) + where;
      return el("span", "source-line source-notice", phrase + (notice.source ? ": " + notice.source : ""));
    });
  }

  // A follow-up's sources include those its thread's earlier answers cited (`thread_sources`).
  const sourcesByPmid = (data) =>
    new Map(
      data.retrieved.concat(data.thread_sources || []).filter((doc) => doc.source).map((doc) => [doc.pmid, doc.source])
    );

  function showRetractionWarning(data) {
    const warning = document.getElementById("retraction-warning");
    if (!warning) return;
    const sources = sourcesByPmid(data);
    const cited = [...new Set(data.sentences.flatMap((sentence) => sentence.citations))];
    const retracted = cited.filter((pmid) => status(sources.get(pmid)) === "retracted");
    warning.textContent = retracted.length
      ? "This answer cites " + (retracted.length === 1 ? "a retracted paper" : retracted.length + " retracted papers") +
        " (" + retracted.map((pmid) => window.VeriMed.sourceLabel(pmid)).join(", ") + "): read it with that in mind."
      : "";
    warning.hidden = !retracted.length;
  }

  window.VeriMedBadges = { badges, citationBadge, noticeLines, sourcesByPmid, showRetractionWarning };
})();
