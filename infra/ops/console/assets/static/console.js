// Hookfan console: show each <time> in the operator's own time zone, with
// UTC on hover. Nothing else: the pages work without it.
"use strict";
(function () {
  var fmt = new Intl.DateTimeFormat(undefined, {
    year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
  });
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (isNaN(d.getTime()) || d.getUTCFullYear() < 2) { return; }
    el.title = el.textContent;
    el.textContent = fmt.format(d);
  });
})();
