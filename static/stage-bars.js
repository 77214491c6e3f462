// "Timings and models" on the answer page: a bar per stage, from the payload's `stage_timings` (in the order the
// stages ran, webapp/qa/stage_timings.py), each as wide as its share of the whole, with its name and seconds. Loaded
// before verimed.js, which calls render on every poll. Text goes in through textContent only.
(function () {
  "use strict";
  // The words for each stage the payload can name; an unknown one shows its own name.
  const STAGE_WORDS = {
    queue: "Waiting for a worker",
    retrieval: "Search",
    consensus: "Bottom line",
    context: "Packing the prompt",
    first_token: "Reading the prompt",
    writing: "Writing the answer",
    generation: "Writing the answer",
    verification: "Verification",
    answer_stance: "The answer's stance",
  };

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  const seconds = (ms) => (ms / 1000).toFixed(ms < 10000 ? 1 : 0) + " s";

  function render(data) {
    const list = document.getElementById("stage-bars");
    const total = document.getElementById("stage-total");
    if (!list || !total) return;
    const stages = (data.stage_timings || []).filter((timing) => timing.ms >= 0);
    const sum = stages.reduce((whole, timing) => whole + timing.ms, 0);
    list.replaceChildren();
    stages.forEach((timing) => {
      const name = STAGE_WORDS[timing.stage] || timing.stage;
      const share = sum > 0 ? timing.ms / sum : 0;
      const row = el("li", "stage-bar");
      row.dataset.stage = timing.stage;
      const label = el("span", "stage-name", name);
      const track = el("span", "stage-track");
      const fill = el("span", "stage-fill");
      fill.style.width = (share * 100).toFixed(1) + "%"; // its share of the whole (CSSOM: allowed by the CSP)
      track.append(fill);
      const figure = el("span", "stage-seconds", seconds(timing.ms));
      figure.title = Math.round(share * 100) + "% of the time";
      row.append(label, track, figure);
      list.append(row);
    });
    total.textContent = stages.length ? "In all " + seconds(sum) + "." : "";
  }

  window.VeriMedTimings = { render };
})();
