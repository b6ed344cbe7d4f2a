"""The report page's own script: sorting, filters, the runs table, one instance at a time, the figures.

Plain JavaScript without a framework, embedded whole in the page by :mod:`odrp.bench.page`.
"""

SCRIPT = r"""
// The report page's own script (odrp.bench.page embeds it): sorting, filters, the runs table, one
// instance at a time, and the Plotly figures. Plain JavaScript, no framework.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("odrp-data").textContent);
  const $ = (id) => document.getElementById(id);
  const MAX_RUNS = 2000; // rows the runs table shows at once (the count says how many match)

  // ------------------------------------------------------------------------------ formatting
  function num(x, digits) {
    if (x === null || x === undefined) return "-";
    if (x === "inf") return "inf";
    if (x === "-inf") return "-inf";
    return Number(x).toPrecision(digits).replace(/\.?0+(e|$)/, "$1");
  }
  function pct(x) {
    if (x === null || x === undefined) return "-";
    if (x === "inf" || x === "-inf") return x;
    return (100 * x).toFixed(2) + "%";
  }
  function certified(r) {
    if (r.gap_known === null && r.gap_bound === null) return "-";
    return "[" + pct(r.gap_known) + ", " + pct(r.gap_bound) + "]";
  }
  function paramsText(p) {
    return Object.keys(p).sort().map((k) => k + "=" + p[k]).join(", ");
  }
  function cell(text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  // ---------------------------------------------------------------------------------- sorting
  // A cell sorts by the number it starts with ("1/4 (25.00%)" by 1, "24.50%" by 24.5, "inf" last),
  // else by its text; "-" (no value) always sorts last.
  function sortKey(text) {
    const t = text.trim();
    if (t === "-" || t === "") return [2, 0];
    if (/^-?inf/.test(t)) return [0, t[0] === "-" ? -Infinity : Infinity];
    const m = t.match(/^-?\d+(\.\d+)?(e[-+]?\d+)?/i);
    return m ? [0, parseFloat(m[0])] : [1, t.toLowerCase()];
  }
  function compare(a, b) {
    if (a[0] !== b[0]) return a[0] - b[0];
    if (a[1] < b[1]) return -1;
    return a[1] > b[1] ? 1 : 0;
  }
  function makeSortable(table) {
    table.querySelectorAll("thead th").forEach((th, column) => {
      th.addEventListener("click", () => {
        const descending = th.classList.contains("asc");
        table.querySelectorAll("thead th").forEach((h) => h.classList.remove("asc", "desc"));
        th.classList.add(descending ? "desc" : "asc");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort((r, s) => {
          const a = sortKey(r.cells[column].textContent), b = sortKey(s.cells[column].textContent);
          if (a[0] === 2 || b[0] === 2) return a[0] - b[0]; // no value: last either way
          return descending ? compare(b, a) : compare(a, b);
        });
        rows.forEach((r) => body.appendChild(r));
      });
    });
  }

  // ---------------------------------------------------------------------------------- filters
  const filters = { method: $("filter-method"), status: $("filter-status"), parameter: $("filter-parameter") };
  function applyFilters() {
    const method = filters.method.value, parameter = filters.parameter.value;
    // the server-made tables: rows of other methods, and other values of the chosen parameter, hide
    document.querySelectorAll("table.sortable tbody tr").forEach((tr) => {
      const table = tr.closest("table");
      if (table.id === "runs-table" || table.id === "instance-runs") return;
      let show = true;
      if (method && tr.dataset.method !== undefined) show = tr.dataset.method === method;
      if (method && table.classList.contains("pairs")) {
        show = tr.cells[0].textContent === method || tr.cells[1].textContent === method;
      }
      if (show && parameter && tr.dataset.param !== undefined) {
        const name = parameter.split("=")[0];
        if (tr.dataset.param.split("=")[0] === name) show = tr.dataset.param === parameter;
      }
      tr.classList.toggle("hidden", !show);
    });
    renderRuns();
  }

  // --------------------------------------------------------------------------------- the runs
  const studySelect = $("runs-study");
  const studies = Array.from(new Set(data.runs.map((r) => r.kind + " / " + r.study)));
  studies.forEach((s) => studySelect.add(new Option(s, s)));
  function renderRuns() {
    const method = filters.method.value, status = filters.status.value, parameter = filters.parameter.value;
    const study = studySelect.value;
    const cut = parameter.indexOf("=");
    const [pname, pvalue] = parameter ? [parameter.slice(0, cut), parameter.slice(cut + 1)] : [null, null];
    const shown = data.runs.filter(
      (r) =>
        (!method || r.method === method) &&
        (!status || r.status === status) &&
        (!study || r.kind + " / " + r.study === study) &&
        (!pname || String(r.params[pname]) === pvalue)
    );
    const body = $("runs-table").tBodies[0];
    body.replaceChildren();
    shown.slice(0, MAX_RUNS).forEach((r) => {
      const tr = document.createElement("tr");
      tr.dataset.method = r.method;
      tr.append(cell(r.kind), cell(r.study));
      const link = document.createElement("td");
      const a = document.createElement("a");
      a.className = "instance";
      a.textContent = r.instance;
      a.addEventListener("click", () => showInstance(r.instance, true));
      link.appendChild(a);
      tr.append(link, cell(paramsText(r.params)), cell(r.method), cell(String(r.repeat)), cell(r.status));
      tr.append(cell(num(r.objective, 6)), cell(pct(r.gap)), cell(certified(r)), cell(num(r.time, 3)));
      body.appendChild(tr);
    });
    const counts = {};
    shown.forEach((r) => (counts[r.status] = (counts[r.status] || 0) + 1));
    const parts = Object.keys(counts).sort().map((s) => counts[s] + " " + s);
    $("runs-count").textContent =
      shown.length + " of " + data.runs.length + " runs" + (parts.length ? ": " + parts.join(", ") : "") +
      (shown.length > MAX_RUNS ? " (the first " + MAX_RUNS + " shown)" : "");
    $("filter-note").textContent = shown.length + " runs match";
  }

  // ------------------------------------------------------------------------------ one instance
  const instanceSelect = $("instance-select");
  Object.keys(data.instances).forEach((id) => {
    const i = data.instances[id];
    instanceSelect.add(new Option(i.kind + " / " + i.study + " / " + id, id));
  });
  function showInstance(id, scroll) {
    const i = data.instances[id];
    if (!i) return;
    instanceSelect.value = id;
    const view = $("instance-view");
    view.replaceChildren();
    const facts = document.createElement("table");
    facts.className = "about";
    const add = (k, v) => {
      const tr = document.createElement("tr");
      const th = document.createElement("th");
      th.textContent = k;
      tr.append(th, cell(v === null || v === undefined ? "-" : String(v)));
      facts.appendChild(tr);
    };
    add("instance", id + (i.name ? " (" + i.name + ")" : ""));
    add("kind / study", i.kind + " / " + i.study);
    add("parameters", i.params);
    add("size", i.size);
    add("optimum", i.optimum === null ? "-" : num(i.optimum, 10) + " (" + i.optimum_status + ")");
    add("how it was proven", i.proof);
    add("certificate", i.certificate);
    view.appendChild(facts);
    const table = document.createElement("table");
    table.className = "sortable";
    table.id = "instance-runs";
    const head = table.createTHead().insertRow();
    const headers = ["method", "repeat", "status", "objective", "gap", "certified gap", "time s", "verified"];
    [...headers, "message"].forEach((h) => {
      const th = document.createElement("th");
      th.textContent = h;
      head.appendChild(th);
    });
    const body = table.createTBody();
    data.runs.filter((r) => r.instance === id).forEach((r) => {
      const tr = body.insertRow();
      tr.append(cell(r.method), cell(String(r.repeat)), cell(r.status), cell(num(r.objective, 10)));
      tr.append(cell(pct(r.gap)), cell(certified(r)), cell(num(r.time, 3)), cell(r.verified ? "yes" : "no"));
      tr.append(cell(r.message, "message"));
    });
    view.appendChild(table);
    makeSortable(table);
    if (scroll) $("instance").scrollIntoView();
  }
  instanceSelect.addEventListener("change", () => showInstance(instanceSelect.value, false));

  // ---------------------------------------------------------------------------------- figures
  function drawFigures() {
    document.querySelectorAll("div.plot").forEach((div) => {
      const figure = JSON.parse($(div.dataset.figure).textContent);
      Plotly.newPlot(div, figure.data, figure.layout, { displaylogo: false, responsive: true });
    });
  }

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  Object.values(filters).forEach((f) => f.addEventListener("change", applyFilters));
  studySelect.addEventListener("change", renderRuns);
  applyFilters();
  if (instanceSelect.options.length) showInstance(instanceSelect.options[0].value, false);
  drawFigures();
})();
"""
