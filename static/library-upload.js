// The library's upload form: each chosen file is sent on its own, one after another, with a progress bar while it
// travels and its outcome (added, already there, or why it was refused) when the server has read it. Without this
// script the form posts every file at once and the page lists the outcomes.
(function () {
  "use strict";
  const form = document.getElementById("library-upload");
  if (!form) return;
  const input = document.getElementById("library-files");
  const list = document.getElementById("library-progress");
  const token = form.querySelector("input[name=csrfmiddlewaretoken]").value;

  function row(file) {
    const item = document.createElement("li");
    item.className = "library-progress-item";
    const name = document.createElement("span");
    name.textContent = file.name;
    const bar = document.createElement("progress");
    bar.max = 100;
    bar.value = 0;
    bar.setAttribute("aria-label", "Uploading " + file.name);
    const outcome = document.createElement("span");
    outcome.className = "library-progress-outcome";
    outcome.textContent = "Waiting";
    item.append(name, bar, outcome);
    list.append(item);
    return { bar: bar, outcome: outcome };
  }

  function send(file, shown) {
    return new Promise(function (resolve) {
      const body = new FormData();
      body.append("csrfmiddlewaretoken", token);
      body.append("file", file);
      const request = new XMLHttpRequest();
      request.open("POST", form.action);
      request.setRequestHeader("Accept", "application/json");
      shown.outcome.textContent = "Uploading";
      request.upload.addEventListener("progress", function (event) {
        if (event.lengthComputable) shown.bar.value = Math.round((100 * event.loaded) / event.total);
      });
      request.upload.addEventListener("load", function () {
        shown.bar.value = 100;
        shown.outcome.textContent = "Reading the paper";
      });
      request.addEventListener("load", function () {
        let result = null;
        try {
          result = JSON.parse(request.responseText).results[0] || null;
        } catch (error) {
          result = null;
        }
        if (!result) {
          shown.outcome.textContent = "Not added: the server answered " + request.status + ".";
          shown.outcome.classList.add("library-progress-refused");
        } else if (result.outcome === "refused") {
          shown.outcome.textContent = "Refused: " + result.detail;
          shown.outcome.classList.add("library-progress-refused");
        } else {
          shown.outcome.textContent = "";
          const link = document.createElement("a");
          link.href = result.url;
          link.textContent = result.outcome === "added" ? "Added: open it" : "Already in your library: open it";
          shown.outcome.append(link);
        }
        resolve(result !== null && result.outcome !== "refused");
      });
      request.addEventListener("error", function () {
        shown.outcome.textContent = "Not added: the connection failed. Try again.";
        shown.outcome.classList.add("library-progress-refused");
        resolve(false);
      });
      request.send(body);
    });
  }

  async function refreshList() {
    const response = await fetch(window.location.href, { headers: { Accept: "text/html" } });
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = page.getElementById("library-list");
    const current = document.getElementById("library-list");
    if (fresh && current) current.replaceWith(document.adoptNode(fresh));
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    const files = Array.from(input.files);
    if (files.length === 0) return;
    list.replaceChildren();
    const rows = files.map(row);
    let added = false;
    for (let index = 0; index < files.length; index += 1) {
      added = (await send(files[index], rows[index])) || added;
    }
    input.value = "";
    if (added) await refreshList();
  });
})();
