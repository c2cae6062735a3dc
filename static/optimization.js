// The optimization page: draws each figure from its element's data-figure, and while the
// search runs (data-live-url on #optimization-live) fetches the page's changing part every
// second, swapping it in when it changed, so candidates appear as they are recorded
// without loading the page again. Folds a reader opened stay open across a swap.
(function () {
  "use strict";
  var POLL_MS = 1000;

  function draw(root) {
    if (!window.Plotly) { return; }
    root.querySelectorAll(".plot[data-figure]").forEach(function (el) {
      var figure = JSON.parse(el.getAttribute("data-figure"));
      window.Plotly.newPlot(el, figure.data, figure.layout, figure.config);
    });
  }

  function openFolds(root) {
    var open = {};
    root.querySelectorAll("details[data-key]").forEach(function (el) {
      open[el.getAttribute("data-key")] = el.open;
    });
    return open;
  }

  function swap(current, html) {
    var parsed = new DOMParser().parseFromString(html, "text/html");
    var next = parsed.getElementById("optimization-live");
    if (!next) { return current; }
    if (next.getAttribute("data-version") === current.getAttribute("data-version")) {
      return current;
    }
    var folds = openFolds(current);
    next = document.importNode(next, true);
    next.querySelectorAll("details[data-key]").forEach(function (el) {
      var key = el.getAttribute("data-key");
      if (key in folds) { el.open = folds[key]; }
    });
    current.replaceWith(next);
    draw(next);
    return next;
  }

  function poll() {
    var live = document.getElementById("optimization-live");
    var url = live && live.getAttribute("data-live-url");
    if (!url) { return; }
    fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) { if (html) { live = swap(live, html); } })
      .catch(function () { /* the next poll tries again */ })
      .then(function () {
        if (live.getAttribute("data-live-url")) { window.setTimeout(poll, POLL_MS); }
      });
  }

  function start() {
    draw(document);
    window.setTimeout(poll, POLL_MS);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
