(function () {
  "use strict";
  // The filters of the check table; a page without the table (the interop matrix) has none.
  function filters(form) {
    var boxes = form.querySelectorAll("input[name=outcome]");
    var area = document.getElementById("area-filter");
    var checks = document.querySelectorAll("tbody.check");
    var shown = document.getElementById("shown");

    function apply() {
      var outcomes = {};
      boxes.forEach(function (b) { outcomes[b.value] = b.checked; });
      var n = 0;
      checks.forEach(function (c) {
        var visible = outcomes[c.dataset.outcome] && (area.value === "" || area.value === c.dataset.area);
        c.classList.toggle("filtered-out", !visible);
        if (visible) { n++; }
      });
      shown.textContent = n + " of " + checks.length + " checks shown";
    }

    function setOutcomes(pick) {
      boxes.forEach(function (b) { b.checked = pick(b.value); });
      apply();
    }

    form.addEventListener("change", apply);
    document.getElementById("only-failures").addEventListener("click", function () {
      setOutcomes(function (o) { return o === "FAIL" || o === "CRASH" || o === "TIMEOUT"; });
    });
    document.getElementById("show-all").addEventListener("click", function () {
      area.value = "";
      setOutcomes(function () { return true; });
    });
    // The query may preset the filters: ?outcome=FAIL,CRASH&area=FRAME.
    var query = new URLSearchParams(location.search);
    if (query.has("outcome")) {
      var wanted = query.get("outcome").toUpperCase().split(",");
      boxes.forEach(function (b) { b.checked = wanted.indexOf(b.value) >= 0; });
    }
    if (query.has("area")) { area.value = query.get("area").toUpperCase(); }
    form.hidden = false;
    apply();
  }
  // A link to a check or a frame always shows it, whatever the filters.
  function reveal() {
    var target = location.hash.length > 1 && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!target) { return; }
    var body = target.closest("tbody.check");
    if (body) { body.classList.remove("filtered-out"); }
    var details = target.closest("details");
    while (details) { details.open = true; details = details.parentElement.closest("details"); }
    if (target.tagName === "DETAILS") { target.open = true; }
    target.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  var form = document.getElementById("filters");
  if (form) { filters(form); }
  reveal();
  document.documentElement.setAttribute("data-script", "ok");
})();
