// Follows an indexing job from its JSON while it runs: progress bar, counts, failed files and log.
// Server text (file names, errors, log lines) goes into the page through textContent only.
(function () {
  "use strict";
  const view = document.getElementById("index-job");
  if (!view) return;
  const jsonUrl = view.dataset.jsonUrl;
  const POLL_MS = 1000;
  const byId = (id) => document.getElementById(id);

  function setText(id, value) {
    const node = byId(id);
    if (node) node.textContent = String(value);
  }

  function renderProgress(progress) {
    const bar = byId("job-progress");
    bar.max = Math.max(progress.max, 1);
    bar.value = progress.value;
    bar.textContent = progress.percent + "%";
    bar.setAttribute("aria-valuemax", String(progress.max));
    bar.setAttribute("aria-valuenow", String(progress.value));
    bar.setAttribute("aria-valuetext", progress.percent + "%");
    setText("job-progress-text", progress.value + " of " + progress.max + " " + progress.unit);
  }

  function renderFailed(files) {
    const list = byId("job-failed-files");
    list.replaceChildren(
      ...files.map((item) => {
        const li = document.createElement("li");
        const name = document.createElement("code");
        name.textContent = item.name;
        const error = document.createElement("span");
        error.className = "index-error";
        error.textContent = item.error;
        li.append(name, " (" + item.attempts + " attempts): ", error);
        return li;
      })
    );
    byId("job-no-failures").hidden = files.length > 0;
  }

  function renderLog(lines) {
    const log = byId("job-log");
    const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
    log.textContent = lines.map((line) => (line.at || "").slice(0, 19) + " " + line.message + "\n").join("");
    if (atBottom) log.scrollTop = log.scrollHeight;
  }

  function render(data) {
    const status = byId("job-status");
    status.textContent = data.status_text;
    status.className = "index-status-line status-" + data.status;
    renderProgress(data.progress);
    setText("job-files-done", data.files.done);
    setText("job-files-failed", data.files.failed);
    setText("job-files-cancelled", data.files.cancelled);
    setText("job-files-total", data.files.total);
    setText("job-articles", data.articles);
    setText("job-articles-total", data.articles_total);
    setText("job-deleted", data.deleted);
    setText("job-rate", data.articles_per_second);
    setText("job-eta", data.eta_seconds == null ? "–" : "about " + data.eta_seconds + " s");
    const cancel = byId("job-cancel");
    byId("job-cancel-form").hidden = data.finished;
    if (data.cancel_requested) {
      cancel.disabled = true;
      cancel.textContent = "Cancel requested";
    }
    renderFailed(data.failed_files);
    renderLog(data.log);
  }

  async function poll() {
    try {
      const response = await fetch(jsonUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (response.ok) {
        const data = await response.json();
        render(data);
        if (data.finished) return;
      } else if (response.status < 500) {
        setText("job-status", "Cannot follow this job any more (" + response.status + "): reload the page.");
        return; // signed out or the job is gone: polling again would not help
      }
    } catch (error) {
      // A missed poll (network blip, server restart) is retried at the next tick.
    }
    window.setTimeout(poll, POLL_MS);
  }

  if (view.dataset.finished !== "true") window.setTimeout(poll, POLL_MS);
})();
