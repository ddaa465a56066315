// Keeps the approval queue live and the time left on each request current.
// The console works without it: a reload shows the same.
"use strict";
(function () {
  function tick() {
    document.querySelectorAll("[data-deadline]").forEach(function (el) {
      var left = Math.round((Date.parse(el.dataset.deadline) - Date.now()) / 1000);
      if (left <= 0) { el.textContent = "timed out"; return; }
      var m = Math.floor(left / 60), s = left % 60;
      el.textContent = (m > 0 ? m + "m" : "") + s + "s left";
    });
  }
  function poll(box) {
    var every = parseInt(box.dataset.every, 10) || 3000;
    setInterval(function () {
      fetch(box.dataset.poll, { credentials: "same-origin" }).then(function (res) {
        if (res.redirected || !res.ok) { return null; }
        return res.text();
      }).then(function (html) {
        if (html !== null && html !== undefined && html !== box.dataset.last) {
          box.dataset.last = html;
          box.innerHTML = html;
          tick();
        }
      }).catch(function () {});
    }, every);
  }
  document.addEventListener("DOMContentLoaded", function () {
    tick();
    setInterval(tick, 1000);
    document.querySelectorAll("[data-poll]").forEach(poll);
  });
})();
