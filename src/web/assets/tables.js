"use strict";
// The table views: /top, /peek, /source and /disasm, and the sortable table they share.
(function (T) {
  const el = T.el;
  T.views = T.views || {};

  // tally's percentage text (analyze/units.cc percentage): 2 decimals from 1%, else 2 significant digits.
  T.tallyPct = function (pct) {
    if (pct === null || pct === undefined) return "";
    const ratio = Math.abs(pct);
    if (ratio >= 99.95 && ratio <= 100.05) return "100%";
    if (ratio >= 1) return T.fixed(ratio, 2) + "%";
    return T.general(ratio, 2) + "%";
  };

  // tally's ± text (analyze/confidence.cc format_interval); "-" for exact counts, as tally top prints.
  T.tallyInterval = function (pm) {
    if (pm === null || pm === undefined) return "-";
    if (pm === 0) return "±0%";
    return "±" + T.fixed(pm, pm >= 1 ? 1 : 2) + "%";
  };

  // A table whose headers sort it: columns [{key, label, num, text(row), title}], the sort
  // kept in the URL (sort=KEY&order=asc|desc) so a sorted table is a link and back undoes it.
  T.sortableTable = function (options) {
    const columns = options.columns, q = T.query();
    let sortKey = q.get("sort") || options.defaultSort || null;
    if (!columns.some(function (c) { return c.key === sortKey; })) sortKey = options.defaultSort || null;
    const column = columns.find(function (c) { return c.key === sortKey; });
    const order = q.get("order") || (column && column.num ? "desc" : "asc");
    const rows = options.rows.slice();
    if (column) {
      const sign = order === "asc" ? 1 : -1;
      rows.sort(function (a, b) {
        const x = a[sortKey], y = b[sortKey];
        if (x === y) return a.__order - b.__order;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (column.num ? x - y : String(x).localeCompare(String(y))) * sign;
      });
    }
    const head = el("tr");
    for (const c of columns) {
      const active = c.key === sortKey;
      const next = active ? (order === "asc" ? "desc" : "asc") : (c.num ? "desc" : "asc");
      const th = el("th", {
        class: (c.num ? "num " : "") + "sortable" + (active ? " sorted-" + order : ""), "data-key": c.key, title: c.title || "sort by " + c.label,
        onclick: function () {
          const params = T.query();
          params.set("sort", c.key);
          params.set("order", next);
          T.navigate(location.pathname + "?" + params.toString());
        },
      }, c.label);
      head.appendChild(th);
    }
    const body = el("tbody");
    const limit = options.limit || 2000;
    function fill(count) {
      body.textContent = "";
      const shown = Math.min(count, rows.length), fragment = document.createDocumentFragment();
      for (let i = 0; i < shown; i++) {
        const row = rows[i], tr = el("tr", { class: options.rowClass ? options.rowClass(row) : null });
        for (const c of columns) {
          const value = c.text ? c.text(row) : row[c.key];
          const td = el("td", { class: c.num ? "num" : c.cls || null, "data-key": c.key });
          if (c.num && row[c.key] !== null && row[c.key] !== undefined) td.dataset.value = row[c.key];
          if (value instanceof Node) td.appendChild(value); else td.textContent = value === null || value === undefined ? "" : value;
          if (c.style) c.style(row, td);
          tr.appendChild(td);
        }
        fragment.appendChild(tr);
      }
      body.appendChild(fragment);
      more.hidden = shown >= rows.length;
      more.textContent = "show all " + rows.length + " rows (" + shown + " shown)";
    }
    const more = el("button", { type: "button", class: "more", onclick: function () { fill(rows.length); } });
    const table = el("table", { class: "data " + (options.className || ""), id: options.id || null }, el("thead", null, head), body);
    fill(limit);
    return el("div", { class: "table-wrap" }, table, more);
  };

  function filterRegex(text) {
    if (!text) return null;
    try { return new RegExp(text, "i"); } catch (e) {
      return new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "i");
    }
  }

  function viewLinks(name) {
    const f = T.exactRegex(name);
    return el("span", { class: "row-links" },
      T.link(T.pageUrl("/peek", { f: f }), "peek"), " ",
      T.link(T.pageUrl("/source", { f: f }), "src"), " ",
      T.link(T.pageUrl("/disasm", { f: f }), "asm"), " ",
      T.link(T.pageUrl("/flame", { s: f }), "flame"));
  }
  T.viewLinks = viewLinks;

  // A filter box whose text is the URL's q= (replaced as one types, so back leaves the page).
  function filterBox(onChange) {
    const input = el("input", { type: "search", id: "filter", placeholder: "filter (regex)", size: 30, spellcheck: "false" });
    input.value = T.query().get("q") || "";
    let timer = 0;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        const params = T.query();
        if (input.value) params.set("q", input.value); else params.delete("q");
        const text = params.toString();
        history.replaceState(null, "", location.pathname + (text ? "?" + text : ""));
        onChange(input.value);
      }, 150);
    });
    return input;
  }

  T.views.top = async function (root) {
    const data = await T.cachedApi("top");
    let running = 0;
    const rows = data.rows.map(function (r, i) {
      running += r.flat;
      return Object.assign({ __order: i, sum_pct: data.total ? 100 * running / data.total : 0 }, r);
    });
    const unit = data.unit;
    const columns = [
      { key: "flat", label: "flat", num: true, text: function (r) { return T.fmtValue(r.flat, unit); } },
      { key: "flat_pct", label: "flat%", num: true, text: function (r) { return T.tallyPct(r.flat_pct); } },
      { key: "flat_pm", label: "±", num: true, title: "the 95% interval of flat% in percentage points (sampling error)",
        text: function (r) { return T.tallyInterval(r.flat_pm); } },
      { key: "sum_pct", label: "sum%", num: true, text: function (r) { return T.tallyPct(r.sum_pct); } },
      { key: "cum", label: "cum", num: true, text: function (r) { return T.fmtValue(r.cum, unit); } },
      { key: "cum_pct", label: "cum%", num: true, text: function (r) { return T.tallyPct(r.cum_pct); } },
      { key: "name", label: "name", cls: "name", text: function (r) { return el("span", null, el("span", { class: "fn" }, r.name), " ", viewLinks(r.name)); } },
    ];
    const count = el("span", { id: "top-count", class: "muted" });
    const holder = el("div");
    function show(filter) {
      const re = filterRegex(filter);
      const shown = re ? rows.filter(function (r) { return re.test(r.name); }) : rows;
      count.textContent = (re ? shown.length + " of " : "") + rows.length + " rows, total " + T.fmtValue(data.total, unit) +
        (unit ? " (" + unit + ")" : "");
      holder.textContent = "";
      holder.appendChild(T.sortableTable({ columns: columns, rows: shown, id: "top-table", className: "top" }));
    }
    root.appendChild(el("div", { class: "controls" }, filterBox(show), count));
    if (data.warnings && data.warnings.length) root.appendChild(el("p", { class: "muted", id: "top-warnings" }, data.warnings.join("; ")));
    root.appendChild(holder);
    show(T.query().get("q") || "");
  };

  // The f= form of peek, source and disasm: a regex of the functions to show.
  function functionForm(path, hint) {
    const input = el("input", { name: "f", id: "function-regex", size: 40, spellcheck: "false", placeholder: "function regex" });
    input.value = T.query().get("f") || "";
    const form = el("form", { class: "controls", onsubmit: function (e) {
      e.preventDefault();
      T.navigate(T.pageUrl(path, { f: input.value }));
    } }, el("label", null, "function ", input), el("button", { type: "submit" }, "Show"), el("span", { class: "muted" }, " " + hint));
    return form;
  }

  // A background whose intensity is a line's share of its routine's hottest line.
  function heat(td, value, max) {
    if (!value || !max) return;
    const share = value / max;
    td.parentNode.style.backgroundColor = "rgba(255, 90, 0, " + (0.08 + 0.5 * share).toFixed(3) + ")";
    td.parentNode.classList.add("hot");
    td.parentNode.dataset.share = share.toFixed(4);
  }

  function needFunction(root, path, hint) {
    root.appendChild(functionForm(path, hint));
    const f = T.query().get("f");
    if (!f) {
      root.appendChild(el("p", { class: "muted" }, "Give a function regex, or open a function from the flame graph or the top table."));
      return null;
    }
    return f;
  }

  T.views.peek = async function (root) {
    const f = needFunction(root, "/peek", "callers above, callees below, each edge's cost");
    if (!f) return;
    const data = await T.cachedApi("peek", { f: f });
    const unit = data.unit, total = data.total;
    if (!data.entries.length) root.appendChild(el("p", null, "No function matches " + f + "."));
    for (const entry of data.entries) {
      const table = el("table", { class: "data peek" });
      table.appendChild(el("thead", null, el("tr", null, el("th", { class: "num" }, "value"), el("th", { class: "num" }, "share"), el("th", null, "function"))));
      const body = el("tbody");
      const edge = function (e, kind) {
        const share = entry.cum ? e.value / entry.cum : 0;
        const bar = el("span", { class: "bar", style: "width:" + (100 * share).toFixed(1) + "%" });
        return el("tr", { class: kind }, el("td", { class: "num" }, T.fmtValue(e.value, unit)),
          el("td", { class: "num" }, T.fmtPct(e.value, entry.cum)),
          el("td", null, el("span", { class: "barbox" }, bar), kind === "caller" ? "↑ " : "↓ ",
            T.link(T.pageUrl("/peek", { f: T.exactRegex(e.name) }), e.name)));
      };
      for (const c of entry.callers) body.appendChild(edge(c, "caller"));
      if (!entry.callers.length) body.appendChild(el("tr", { class: "caller muted" }, el("td"), el("td"), el("td", null, "(no callers: a root)")));
      body.appendChild(el("tr", { class: "self" }, el("td", { class: "num" }, T.fmtValue(entry.cum, unit)), el("td", { class: "num" }, T.fmtPct(entry.cum, total)),
        el("td", null, el("b", null, entry.name), " flat " + T.fmtValue(entry.flat, unit) + " (" + T.fmtPct(entry.flat, total) + ")  ", viewLinks(entry.name))));
      for (const c of entry.callees) body.appendChild(edge(c, "callee"));
      table.appendChild(body);
      root.appendChild(el("section", { class: "entry" }, el("h3", null, entry.name), table));
    }
  };

  T.views.source = async function (root) {
    const f = needFunction(root, "/source", "tally list: source lines with flat and cum");
    if (!f) return;
    const data = await T.cachedApi("source", { f: f });
    const unit = data.unit;
    if (!data.routines.length) root.appendChild(el("p", null, "No source for " + f + "."));
    for (const routine of data.routines) {
      let max = 0;
      for (const line of routine.lines) max = Math.max(max, line.flat);
      const useCum = max === 0;
      if (useCum) for (const line of routine.lines) max = Math.max(max, line.cum);
      const body = el("tbody");
      for (const line of routine.lines) {
        const tr = el("tr", { "data-line": line.line },
          el("td", { class: "num flat" }, line.flat ? T.fmtValue(line.flat, unit) : "."),
          el("td", { class: "num cum" }, line.cum ? T.fmtValue(line.cum, unit) : "."),
          el("td", { class: "num lineno" }, String(line.line)),
          el("td", { class: "code" }, line.text));
        body.appendChild(tr);
        heat(tr.firstChild, useCum ? line.cum : line.flat, max);
      }
      root.appendChild(el("section", { class: "routine" },
        el("h3", null, routine.name, " ", viewLinks(routine.name)),
        el("div", { class: "muted" }, routine.file + " — flat " + T.fmtValue(routine.flat, unit) + " (" + T.fmtPct(routine.flat, data.total) +
          "), cum " + T.fmtValue(routine.cum, unit) + " (" + T.fmtPct(routine.cum, data.total) + ")"),
        routine.error ? el("div", { class: "error-text source-error" }, "source not shown: " + routine.error) : null,
        el("table", { class: "data listing source" }, el("thead", null, el("tr", null, el("th", { class: "num" }, "flat"), el("th", { class: "num" }, "cum"),
          el("th", { class: "num" }, "line"), el("th", null, "source"))), body)));
    }
  };

  T.views.disasm = async function (root) {
    const f = needFunction(root, "/disasm", "tally disasm: instructions with flat and cum");
    if (!f) return;
    const data = await T.cachedApi("disasm", { f: f });
    const unit = data.unit;
    if (!data.routines.length) root.appendChild(el("p", null, "No instructions for " + f + "."));
    for (const routine of data.routines) {
      let max = 0;
      for (const ins of routine.instructions) max = Math.max(max, ins.flat);
      const useCum = max === 0;
      if (useCum) for (const ins of routine.instructions) max = Math.max(max, ins.cum);
      const body = el("tbody");
      let lastSource = "";
      for (const ins of routine.instructions) {
        const source = (ins.file || "") + (ins.line ? ":" + ins.line : "");
        const where = source !== lastSource ? source + (ins.function && ins.function !== routine.name ? " (" + ins.function + ")" : "") : "";
        lastSource = source;
        const tr = el("tr", { "data-address": ins.address },
          el("td", { class: "num flat" }, ins.flat ? T.fmtValue(ins.flat, unit) : "."),
          el("td", { class: "num cum" }, ins.cum ? T.fmtValue(ins.cum, unit) : "."),
          el("td", { class: "address" }, ins.address),
          el("td", { class: "code" }, ins.text),
          el("td", { class: "where muted" }, where));
        body.appendChild(tr);
        heat(tr.firstChild, useCum ? ins.cum : ins.flat, max);
      }
      root.appendChild(el("section", { class: "routine" },
        el("h3", null, routine.name, " ", viewLinks(routine.name)),
        el("div", { class: "muted" }, "flat " + T.fmtValue(routine.flat, unit) + " (" + T.fmtPct(routine.flat, data.total) + "), cum " +
          T.fmtValue(routine.cum, unit) + " (" + T.fmtPct(routine.cum, data.total) + ")"),
        el("table", { class: "data listing disasm" }, el("thead", null, el("tr", null, el("th", { class: "num" }, "flat"), el("th", { class: "num" }, "cum"),
          el("th", null, "address"), el("th", null, "instruction"), el("th", null, "source"))), body)));
    }
  };
})(window.tally);
