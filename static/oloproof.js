// Progressive enhancement only: every page works without this file.
// Rows and sections marked data-live-run follow their run's status by polling a small
// JSON endpoint (every data-poll-ms, the smallest on the page; else every 2.5 s), so a
// run page's counter advances case by case; one marked data-reload-when-done reloads
// once the run finishes.
(function () {
  "use strict";
  var statusUrl = document.body.getAttribute("data-status-url");
  var FINISHED = { succeeded: true, failed: true };
  var POLL_MS = 2500;

  function liveIds() {
    var ids = {};
    document.querySelectorAll("[data-live-run]").forEach(function (el) {
      ids[el.getAttribute("data-live-run")] = true;
    });
    return Object.keys(ids);
  }

  function pollMs() {
    var shortest = POLL_MS;
    document.querySelectorAll("[data-live-run][data-poll-ms]").forEach(function (el) {
      var ms = parseInt(el.getAttribute("data-poll-ms"), 10);
      if (ms >= 200 && ms < shortest) { shortest = ms; }
    });
    return shortest;
  }

  function setText(selector, text) {
    document.querySelectorAll(selector).forEach(function (el) { el.textContent = text; });
  }

  function apply(run) {
    var id = String(run.id);
    document.querySelectorAll('[data-status-of="' + id + '"]').forEach(function (el) {
      el.textContent = run.status;
      el.className = "badge status-" + run.status;
    });
    setText('[data-progress-of="' + id + '"]', run.cases_done + "/" + run.cases_total);
    var percent = run.cases_total > 0 ? Math.min(100, Math.round(100 * run.cases_done / run.cases_total)) : 0;
    document.querySelectorAll('[data-bar-of="' + id + '"]').forEach(function (el) {
      el.style.width = percent + "%";
    });
    if (FINISHED[run.status]) {
      document.querySelectorAll('[data-live-run="' + id + '"]').forEach(function (el) {
        el.removeAttribute("data-live-run");
        if (el.hasAttribute("data-reload-when-done")) { window.location.reload(); }
      });
    }
  }

  function poll() {
    var ids = liveIds();
    if (!statusUrl || ids.length === 0) { return; }
    fetch(statusUrl + "?ids=" + ids.join(","), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : { runs: [] }; })
      .then(function (data) { data.runs.forEach(apply); })
      .catch(function () { /* the next poll tries again */ })
      .then(function () { if (liveIds().length) { window.setTimeout(poll, pollMs()); } });
  }

  if (liveIds().length) { window.setTimeout(poll, pollMs()); }
})();
