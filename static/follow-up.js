// Follows a follow-up's rewrite from its JSON: when the standalone question comes, it replaces the proposal in the
// text box, unless the person has already edited it (what they typed always wins). Text goes in as values and
// textContent only. Without JavaScript, reloading the page shows the same.
(function () {
  "use strict";
  const draft = document.getElementById("follow-up-draft");
  if (!draft || draft.dataset.status !== "rewriting") return;
  const field = document.getElementById("follow-up-question");
  const status = document.getElementById("follow-up-status");
  const POLL_MS = 1000;
  const GIVE_UP_MS = 180000;
  const started = Date.now();
  let edited = false;
  field.addEventListener("input", () => { edited = true; });

  function show(data) {
    draft.dataset.status = data.status;
    if (!edited) field.value = data.proposal;
    if (data.status === "proposed") {
      status.textContent = edited
        ? "The model's rewrite came after you edited the question, so yours is kept. It proposed: " + data.proposal
        : "Rewritten from this thread as a standalone question: check it, edit it if needed, then ask.";
    } else {
      const note = data.note ? data.note.charAt(0).toUpperCase() + data.note.slice(1) + ". " : "";
      status.textContent = note + "Edit the question if needed, then ask.";
    }
  }

  async function poll() {
    let data = null;
    try {
      const response = await fetch(draft.dataset.jsonUrl, { headers: { Accept: "application/json" } });
      if (response.ok) data = await response.json();
    } catch (error) {
      data = null; // a dropped connection: try again on the next tick
    }
    if (data && data.status !== "rewriting") {
      show(data);
      return;
    }
    if (Date.now() - started > GIVE_UP_MS) {
      status.textContent = "The rewrite is taking long (the model may be busy with other questions). Edit the " +
        "question and ask, or reload the page later to see the rewrite.";
      return;
    }
    setTimeout(poll, POLL_MS);
  }
  setTimeout(poll, POLL_MS);
})();
