"use strict";
(function () {
  function key(cell) {
    var v = cell.getAttribute("data-v");
    if (v === null) { v = cell.textContent.trim(); }
    if (v === "" || v === "—") { return null; }
    var n = Number(v);
    return isNaN(n) ? v.toLowerCase() : n;
  }
  function compare(a, b, dir) {
    if (a === null && b === null) { return 0; }
    if (a === null) { return 1; }
    if (b === null) { return -1; }
    if (typeof a !== typeof b) { a = String(a); b = String(b); }
    return (a < b ? -1 : a > b ? 1 : 0) * dir;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.tabIndex = 0;
      function sort() {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (r1, r2) { return compare(key(r1.cells[col]), key(r2.cells[col]), dir); });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter") { sort(); } });
    });
  });
  document.querySelectorAll("button[data-details]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("data-details") === "open";
      document.querySelectorAll("details.case").forEach(function (d) { d.open = open; });
    });
  });
  function openTarget() {
    var target = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();
})();
