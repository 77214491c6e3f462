// Flagging from the answer page: a "Flag" button after each answer sentence opens a dialog that posts the flag
// to the review queue. verimed.js re-renders the sentences on every poll, so decoration must be idempotent.
// Server text (sentences, PMIDs, error messages) enters the page through textContent only.
(function () {
  "use strict";
  const dialog = document.getElementById("flag-dialog");
  if (!dialog) return; // not offered: a read-only view, or someone without the researcher role
  const form = document.getElementById("flag-form");
  const announce = document.getElementById("flag-announce");
  const errorEl = document.getElementById("flag-error");
  const pmidSelect = document.getElementById("flag-pmid");
  const submitButton = document.getElementById("flag-submit");
  // Sentence positions with an open flag: from the server at load, then those flagged on this page.
  const flagged = new Set((dialog.dataset.flagged || "").split(",").filter(Boolean));
  let sentences = [];
  let current = null;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function showFlagged(span, tools) {
    const on = flagged.has(span.dataset.index);
    span.classList.toggle("flagged", on);
    if (on && !tools.querySelector(".flag-marker")) tools.prepend(el("span", "flag-marker", "⚑ Flagged"));
  }

  function decorate(span) {
    const index = span.dataset.index;
    // Found by index, not position, so other scripts adding their own nodes never lead to a second button.
    let tools = span.parentElement.querySelector('.flag-tools[data-for="' + index + '"]');
    if (!tools) {
      tools = el("span", "flag-tools");
      tools.dataset.for = index;
      const button = el("button", "flag-button", "Flag");
      button.type = "button";
      button.setAttribute("aria-label", "Flag sentence " + (Number(index) + 1));
      button.addEventListener("click", () => openDialog(Number(index)));
      tools.append(button);
      span.after(tools);
    }
    showFlagged(span, tools);
  }

  function decorateAll() {
    document.querySelectorAll("#answer .sentence").forEach(decorate);
  }

  function showError(message) {
    errorEl.textContent = message;
    errorEl.hidden = false;
  }

  function openDialog(index) {
    const sentence = sentences[index];
    current = index;
    form.reset();
    errorEl.hidden = true;
    errorEl.textContent = "";
    document.getElementById("flag-sentence").value = String(index);
    document.getElementById("flag-dialog-title").textContent = "Flag sentence " + (index + 1);
    document.getElementById("flag-sentence-text").textContent = sentence ? sentence.display_text : "";
    const whole = el("option", "", "The sentence as a whole");
    whole.value = "";
    pmidSelect.replaceChildren(whole);
    (sentence ? sentence.citations : []).forEach((pmid) => {
      const verdict = sentence.verdicts && sentence.verdicts[pmid];
      const words = verdict && ((window.VeriMed && window.VeriMed.VERDICT_TEXT[verdict.label]) || ["", verdict.label])[1];
      const option = el("option", "", window.VeriMed.sourceLabel(pmid) + (words ? " (" + words + ")" : ""));
      option.value = pmid;
      pmidSelect.append(option);
    });
    dialog.showModal();
  }

  function focusButton(index) {
    const button = document.querySelector('.flag-tools[data-for="' + index + '"] .flag-button');
    if (button) button.focus();
  }

  document.getElementById("flag-cancel").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    if (current !== null) focusButton(current);
  });

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    if (!data.get("reason")) {
      showError("Choose what is wrong.");
      return;
    }
    submitButton.disabled = true;
    let response;
    let body = {};
    try {
      response = await fetch(form.action, {
        method: "POST",
        credentials: "same-origin",
        headers: {
          "Content-Type": "application/json",
          Accept: "application/json",
          "X-CSRFToken": data.get("csrfmiddlewaretoken"),
        },
        body: JSON.stringify({
          sentence: Number(data.get("sentence")),
          reason: data.get("reason"),
          pmid: data.get("pmid") || "",
          comment: data.get("comment") || "",
        }),
      });
      body = await response.json().catch(() => ({}));
    } catch (error) {
      showError("The flag could not be sent (connection lost); try again.");
      return;
    } finally {
      submitButton.disabled = false;
    }
    if (!response.ok) {
      showError(body.error || "The flag could not be sent (error " + response.status + ").");
      return;
    }
    flagged.add(String(body.sentence));
    decorateAll();
    dialog.close();
    announce.textContent = (body.message || "Flag sent to the review queue") + ": sentence " + (body.sentence + 1) + ".";
  });

  document.addEventListener("verimed:rendered", (event) => {
    sentences = (event.detail && event.detail.sentences) || [];
    decorateAll();
  });
})();
