/* contexttrace report: draw the charts (Vega-Embed, inlined), sort the index, toggle the breakdown panels.
   Everything comes from the JSON in #ct-data; nothing is fetched. Charts are drawn when they come near
   the viewport, so a page of many traces opens at once. */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("ct-data").textContent);
  /* ast: Vega interprets its expressions (Vega-Embed's vega-interpreter) instead of compiling them with
     Function, so the page's Content-Security-Policy needs no 'unsafe-eval'. */
  const OPTIONS = { renderer: "svg", actions: false, tooltip: { theme: "dark" }, ast: true };

  /* A columnar dataset ({column: [values]}) as rows ([{column: value}]). */
  function rows(columns) {
    const keys = Object.keys(columns || {});
    const n = keys.length ? columns[keys[0]].length : 0;
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const row = {};
      for (const k of keys) row[k] = columns[k][i];
      out[i] = row;
    }
    return out;
  }

  function source(el) {
    const kind = el.dataset.chart;
    if (kind === "growth") {
      const t = DATA.traces[Number(el.dataset.trace)];
      return [DATA.specs[t.specs[el.dataset.axis || t.axis]], t.datasets];
    }
    if (kind === "index") return [DATA.specs.index, DATA.index];
    if (kind === "compare") return [DATA.specs[el.dataset.spec], DATA.compare];
    if (kind === "panel") {
      const p = DATA.panels[Number(el.dataset.trace)][Number(el.dataset.panelIndex)];
      return [p.spec, p.datasets];
    }
    throw new Error("unknown chart " + kind);
  }

  /* Leave out the layers whose data is empty (a trace with no compaction, no re-read): Vega would warn that
     their x extent is infinite. A view left with no layer goes too. */
  function prune(node, sets) {
    if (node === null || typeof node !== "object") return node;
    for (const key of ["layer", "vconcat", "hconcat", "concat"]) {
      if (Array.isArray(node[key])) {
        node[key] = node[key].map((child) => prune(child, sets)).filter((child) => child !== null);
        if (!node[key].length) return null;
      }
    }
    if (node.data && typeof node.data.name === "string") {
      const rowsOf = sets[node.data.name];
      if (!rowsOf || !rowsOf.length) return null;
    }
    return node;
  }

  /* The index chart fills its card; with so many traces that a trace would get fewer than MIN_STEP
     pixels it keeps MIN_STEP each and scrolls inside the card. */
  const MIN_STEP = 14;
  function indexWidth(el, traces) {
    const room = Math.max(200, el.clientWidth - 90); /* the y axis and its title */
    return Math.max(room, Math.ceil(traces * MIN_STEP));
  }

  function draw(el) {
    if (el.dataset.state) return el._drawn || Promise.resolve();
    el.dataset.state = "drawing";
    let spec, datasets;
    try {
      [spec, datasets] = source(el);
    } catch (err) {
      el.dataset.state = "failed";
      console.error(err);
      return Promise.resolve();
    }
    const sets = {};
    for (const name of Object.keys(datasets || {})) sets[name] = rows(datasets[name]);
    spec = prune(JSON.parse(JSON.stringify(spec)), sets);
    if (spec === null) {
      el.dataset.state = "empty";
      el.textContent = "Nothing to draw.";
      return Promise.resolve();
    }
    spec.datasets = sets;
    if (el.dataset.chart === "index") spec.width = indexWidth(el, sets.traces.length / 2);
    el._drawn = vegaEmbed(el, spec, OPTIONS).then(
      (result) => { el._view = result; el.dataset.state = "drawn"; },
      (err) => {
        el.dataset.state = "failed";
        el.textContent = "This chart could not be drawn: " + err;
        console.error(err);
      }
    );
    return el._drawn;
  }

  const charts = Array.from(document.querySelectorAll("[data-chart]"));
  if ("IntersectionObserver" in window) {
    const seen = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (e.isIntersecting) { seen.unobserve(e.target); draw(e.target); }
      }
    }, { rootMargin: "600px 0px" });
    charts.forEach((c) => seen.observe(c));
  } else {
    charts.forEach(draw);
  }
  /* For a reader who wants every chart now (printing), and for the browser tests. */
  window.contexttrace = { drawAll: () => Promise.all(charts.map(draw)) };
  window.addEventListener("beforeprint", () => { charts.forEach(draw); });

  /* "by time" / "by call": draw the growth chart again on the other x axis. */
  document.querySelectorAll(".axis-switch button[data-axis]").forEach((button) => {
    button.addEventListener("click", () => {
      const el = document.getElementById(button.parentElement.dataset.for);
      if (!el || el.dataset.axis === button.dataset.axis) return;
      button.parentElement.querySelectorAll("button").forEach((b) => {
        b.setAttribute("aria-pressed", String(b === button));
      });
      const redraw = () => {
        if (el._view) el._view.finalize();
        el._view = null;
        el.dataset.axis = button.dataset.axis;
        delete el.dataset.state;
        el.textContent = "";
        draw(el);
      };
      (el._drawn || Promise.resolve()).then(redraw);
    });
  });

  /* The grade badge toggles its breakdown panel (spec 000); Escape closes the one last opened or focused. */
  let last = null;
  function toggle(badge, open) {
    const panel = document.getElementById(badge.getAttribute("aria-controls"));
    if (!panel) return;
    const show = open === undefined ? badge.getAttribute("aria-expanded") !== "true" : open;
    badge.setAttribute("aria-expanded", String(show));
    panel.hidden = !show;
    last = show ? badge : null;
  }
  document.querySelectorAll("button.badge[aria-controls]").forEach((b) => {
    b.addEventListener("click", () => toggle(b));
  });
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    const section = document.activeElement && document.activeElement.closest("section.trace");
    const badge = (section && section.querySelector("button.badge[aria-expanded=true]")) || last;
    if (badge) toggle(badge, false);
  });

  /* Runs of one file: the group's row opens and closes its runs' rows. */
  document.querySelectorAll("#index-table tr.group details").forEach((details) => {
    details.addEventListener("toggle", () => {
      document.querySelectorAll(`#index-table tr.run[data-group="${details.dataset.group}"]`).forEach((row) => {
        row.hidden = !details.open;
      });
    });
  });

  /* Sortable index: each header sorts by its column (numbers as numbers), again to reverse. The runs of a
     group sort among themselves and stay under their group's row, which moves with its first run. */
  const table = document.getElementById("index-table");
  if (table && DATA.index_sort) {
    const body = table.tBodies[0];
    table.querySelectorAll("th[data-key] button").forEach((button) => {
      button.addEventListener("click", () => {
        const th = button.parentElement;
        const key = th.dataset.key;
        const asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("th[data-key]").forEach((h) => h.setAttribute("aria-sort", "none"));
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        const order = (a, b) => {
          const x = DATA.index_sort[Number(a.dataset.row)][key];
          const y = DATA.index_sort[Number(b.dataset.row)][key];
          const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
          return asc ? c : -c;
        };
        const blocks = new Map();
        Array.from(body.rows).forEach((r) => {
          const id = r.dataset.group || "row" + r.dataset.row;
          if (!blocks.has(id)) blocks.set(id, { head: null, rows: [] });
          if (r.classList.contains("group")) blocks.get(id).head = r;
          else blocks.get(id).rows.push(r);
        });
        const sorted = Array.from(blocks.values());
        sorted.forEach((b) => b.rows.sort(order));
        sorted.sort((a, b) => order(a.rows[0], b.rows[0]));
        sorted.forEach((b) => {
          if (b.head) body.appendChild(b.head);
          b.rows.forEach((r) => body.appendChild(r));
        });
      });
    });
  }
})();
