// genir-eval's viewer: j/k move through the rows (or a session's judgments), Enter opens the
// row, / goes to the search box. In a bundle (a static copy, no server) the search box
// narrows the rows the copy holds, from its JSON block. Every text is set as text.
(function () {
  "use strict";
  const bundle = document.body.dataset.bundle === "1";
  const search = document.getElementById("q");

  function items() {
    const rows = Array.from(document.querySelectorAll("#sessions tbody tr"));
    const shown = rows.filter((row) => !row.hidden);
    return shown.length || rows.length ? shown : Array.from(document.querySelectorAll(".judgment, .turn"));
  }
  let current = -1;
  function move(step) {
    const list = items();
    if (!list.length) { return; }
    list.forEach((el) => el.classList.remove("current"));
    current = Math.max(0, Math.min(list.length - 1, current + step));
    const el = list[current];
    el.classList.add("current");
    el.scrollIntoView({block: "nearest"});
  }
  function open() {
    const list = items();
    const el = list[current];
    if (!el) { return; }
    const target = el.dataset.href || (el.id ? "#" + el.id : "");
    if (target) { window.location.href = target; }
  }

  if (bundle && search) {
    const block = document.getElementById("view-data");
    const data = block ? JSON.parse(block.textContent) : {rows: []};
    const text = {};
    data.rows.forEach((row) => { text[row.session_id] = row.text; });
    const count = document.getElementById("count");
    search.addEventListener("input", () => {
      const needle = search.value.toLowerCase();
      let kept = 0;
      document.querySelectorAll("#sessions tbody tr").forEach((row) => {
        const id = row.id.replace(/^row-/, "");
        const match = !needle || (text[row.dataset.session || ""] || text[id] || "").includes(needle);
        row.hidden = !match;
        if (match) { kept += 1; }
      });
      if (count) { count.textContent = kept + " sessions"; }
      current = -1;
    });
  }

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement
      || event.target instanceof HTMLTextAreaElement;
    if (typing) {
      if (event.key === "Escape") { event.target.blur(); }
      return;
    }
    if (event.key === "j") { event.preventDefault(); move(1); }
    else if (event.key === "k") { event.preventDefault(); move(-1); }
    else if (event.key === "Enter" && current >= 0) { event.preventDefault(); open(); }
    else if (event.key === "/" && search) { event.preventDefault(); search.focus(); }
  });
})();
