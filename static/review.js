// The review queue's keys: p pass, f fail, 0-9 a score (0 the bottom of the range, 9 the
// top), n the note, s the next draw, ? the list of keys. Progressive enhancement only:
// the buttons, the score field and the skip link work without this file.
(function () {
  "use strict";
  var form = document.getElementById("label-form");
  var keys = document.getElementById("review-keys");
  var skip = document.getElementById("review-skip");

  function typing(target) {
    var tag = target && target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || (target && target.isContentEditable);
  }

  function press(value) {
    var button = form && form.querySelector('button[name="value"][value="' + value + '"]');
    if (button) { button.click(); }
    return Boolean(button);
  }

  // A digit picks one of ten evenly spaced points of the score's range, so 0 and 9 are
  // its ends whatever the range is.
  function score(digit) {
    var field = form.querySelector('input[name="value"]');
    if (!field || !form.hasAttribute("data-score-min")) { return false; }
    var low = parseFloat(form.getAttribute("data-score-min"));
    var high = parseFloat(form.getAttribute("data-score-max"));
    var value = low + (high - low) * digit / 9;
    field.value = String(Math.round(value * 1e6) / 1e6);
    form.requestSubmit();
    return true;
  }

  function toggleKeys() {
    if (keys) { keys.hidden = !keys.hidden; }
    return Boolean(keys);
  }

  function focusNote() {
    var note = form.querySelector('textarea[name="note"]');
    if (note) { note.focus(); }
    return Boolean(note);
  }

  // Whether the key did something (then the browser's own use of it is prevented).
  function act(key) {
    if (key === "?") { return toggleKeys(); }
    if (key === "Escape" && keys && !keys.hidden) { keys.hidden = true; return true; }
    if (key === "s" && skip) { window.location.assign(skip.href); return true; }
    if (!form) { return false; }
    if (key === "p" || key === "f") { return press(key === "p" ? "1" : "0"); }
    if (key === "n") { return focusNote(); }
    if (/^[0-9]$/.test(key)) { return score(parseInt(key, 10)); }
    return false;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) { return; }
    if (typing(event.target)) {
      if (event.key === "Escape") { event.target.blur(); }
      return;
    }
    if (act(event.key)) { event.preventDefault(); }
  });
})();
