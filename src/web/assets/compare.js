"use strict";
// The comparison (/diff) and database (/db) views.
(function (T) {
  const el = T.el;
  T.views = T.views || {};

  T.diffClass = function (row) {
    if (row.status === "same" || (row.status === "changed" && !row.significant)) return "same";
    const direction = row.delta_pp > 0 ? "up" : row.delta_pp < 0 ? "down" : "";
    return "changed status-" + row.status + " " + direction;
  };

  T.views.diff = async function (root, meta) {
    const q = T.query();
    if (meta.mode === "db" && !q.get("base_epoch")) {
      root.appendChild(el("p", null, "Choose two epochs to compare on the ", T.link(T.withCommon("/db", {}), "database page"), "."));
      return;
    }
    if (meta.mode === "single") {
      root.appendChild(el("p", null, "A comparison needs two profiles (tally serve BASE NEW) or two epochs of a database (--db DIR)."));
      return;
    }
    if (meta.mode === "db")
      root.appendChild(el("p", { id: "diff-epochs" }, "Base epoch ", el("code", null, q.get("base_epoch") + (q.get("base_epoch_to") ? " … " + q.get("base_epoch_to") : "")), " → new ",
        el("code", null, (q.get("epoch") || "latest") + (q.get("epoch_to") ? " … " + q.get("epoch_to") : ""))));
    const data = await T.cachedApi("diff");
    const unit = data.unit;
    const rows = data.rows.map(function (r, i) { return Object.assign({ __order: i }, r); });
    const onlyChanged = el("input", { type: "checkbox", id: "only-changed" });
    onlyChanged.checked = T.query().get("changed") === "1";
    const counts = {};
    for (const r of rows) counts[r.status] = (counts[r.status] || 0) + 1;
    const pv = function (x) { return x === null || x === undefined ? "" : x < 0.0001 ? x.toExponential(1) : x.toFixed(4); };
    const columns = [
      { key: "name", label: "name", cls: "name", text: function (r) { return el("span", null, el("span", { class: "fn" }, r.name), " ", T.viewLinks(r.name)); } },
      { key: "base", label: "base", num: true, text: function (r) { return T.fmtValue(r.base, unit); } },
      { key: "new", label: "new", num: true, text: function (r) { return T.fmtValue(r.new, unit); } },
      { key: "base_pct", label: "base%", num: true, text: function (r) { return T.fmtNum(r.base_pct) + "%"; } },
      { key: "new_pct", label: "new%", num: true, text: function (r) { return T.fmtNum(r.new_pct) + "%"; } },
      { key: "delta_pp", label: "Δ pp", num: true, text: function (r) { return (r.delta_pp > 0 ? "+" : "") + T.fmtNum(r.delta_pp); } },
      { key: "p_value", label: "p", num: true, text: function (r) { return pv(r.p_value); } },
      { key: "status", label: "status", text: function (r) { return r.status + (r.status === "changed" && !r.significant ? " (not significant)" : ""); } },
    ];
    const holder = el("div");
    function show() {
      const shown = onlyChanged.checked ? rows.filter(function (r) { return T.diffClass(r) !== "same"; }) : rows;
      holder.textContent = "";
      holder.appendChild(T.sortableTable({ columns: columns, rows: shown, id: "diff-table", className: "diff", rowClass: T.diffClass }));
    }
    onlyChanged.addEventListener("change", function () {
      const params = T.query();
      if (onlyChanged.checked) params.set("changed", "1"); else params.delete("changed");
      history.replaceState(null, "", location.pathname + "?" + params.toString());
      show();
    });
    root.appendChild(el("div", { class: "controls" },
      el("span", null, "base " + T.fmtValue(data.base_total, unit) + ", new " + T.fmtValue(data.new_total, unit) + " " + (unit || "")),
      el("label", null, onlyChanged, " only changed"),
      el("span", { class: "muted" }, Object.keys(counts).sort().map(function (k) { return counts[k] + " " + k; }).join(", ")),
      T.link(T.pageUrl("/flame"), "differential flame graph")));
    root.appendChild(el("div", { class: "legend muted" }, el("span", { class: "swatch up" }, "more"), " ", el("span", { class: "swatch down" }, "less"),
      " in the new profile, marked only when the change passes tally diff's z-test; unmarked rows did not change significantly."));
    root.appendChild(holder);
    show();
    const removed = rows.filter(function (r) { return r.status === "removed"; });
    const section = el("section", { id: "removed" }, el("h3", null, "Removed functions (" + removed.length + ")"));
    if (!removed.length) section.appendChild(el("p", { class: "muted" }, "None: every function of the base profile is in the new one."));
    else {
      const list = el("ul");
      for (const r of removed) list.appendChild(el("li", null, r.name + " — " + T.fmtValue(r.base, unit) + " (" + T.fmtNum(r.base_pct) + "%) in base"));
      section.appendChild(list);
    }
    root.appendChild(section);
  };

  // Samples per epoch of the top images, as an inline SVG line chart.
  function chart(data, topImages, unit) {
    const NS = "http://www.w3.org/2000/svg";
    const svg = function (tag, attrs, text) {
      const node = document.createElementNS(NS, tag);
      for (const k in attrs) node.setAttribute(k, attrs[k]);
      if (text !== undefined) node.textContent = text;
      return node;
    };
    const width = 760, height = 240, left = 60, right = 180, top = 10, bottom = 40;
    const epochs = data.epochs, n = epochs.length;
    let max = 1;
    for (const image of topImages) for (const v of image.per_epoch) max = Math.max(max, v);
    const x = function (i) { return left + (n <= 1 ? (width - left - right) / 2 : i * (width - left - right) / (n - 1)); };
    const y = function (v) { return top + (height - top - bottom) * (1 - v / max); };
    const root = svg("svg", { id: "db-chart", width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img" });
    root.appendChild(svg("title", {}, "samples per epoch of the top images"));
    root.appendChild(svg("line", { x1: left, y1: y(0), x2: width - right, y2: y(0), stroke: "#888" }));
    root.appendChild(svg("line", { x1: left, y1: top, x2: left, y2: y(0), stroke: "#888" }));
    root.appendChild(svg("text", { x: left - 6, y: top + 10, "text-anchor": "end", class: "axis" }, T.fmtValue(max, unit)));
    root.appendChild(svg("text", { x: left - 6, y: y(0), "text-anchor": "end", class: "axis" }, "0"));
    const step = Math.max(1, Math.ceil(n / 6));
    for (let i = 0; i < n; i += step)
      root.appendChild(svg("text", { x: x(i), y: height - bottom + 16, "text-anchor": "middle", class: "axis" }, epochs[i].start || epochs[i].name));
    const palette = ["#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
    topImages.forEach(function (image, k) {
      const colour = palette[k % palette.length];
      const points = image.per_epoch.map(function (v, i) { return x(i).toFixed(1) + "," + y(v).toFixed(1); }).join(" ");
      root.appendChild(svg("polyline", { points: points, fill: "none", stroke: colour, "stroke-width": 2, "data-image": image.name }));
      image.per_epoch.forEach(function (v, i) {
        const dot = svg("circle", { cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 4, fill: colour, class: "point" });
        dot.appendChild(svg("title", {}, image.name + " in " + epochs[i].name + ": " + T.fmtValue(v, unit) + " (click: this epoch and image)"));
        dot.addEventListener("click", function () {
          choose({ epoch: epochs[i].name, image: image.name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") });
        });
        root.appendChild(dot);
      });
      const label = image.name.length > 24 ? "…" + image.name.slice(-23) : image.name;
      root.appendChild(svg("rect", { x: width - right + 10, y: top + 16 * k, width: 10, height: 10, fill: colour }));
      root.appendChild(svg("text", { x: width - right + 24, y: top + 16 * k + 9, class: "axis" }, label));
    });
    return root;
  }

  // Sets database parameters (epoch, image, event) for every view, keeping the others.
  function choose(changes) {
    const params = T.query();
    for (const key in changes) { if (changes[key]) params.set(key, changes[key]); else params.delete(key); }
    const text = params.toString();
    T.navigate(location.pathname + (text ? "?" + text : ""));
  }

  T.views.db = async function (root, meta) {
    if (meta.mode !== "db") {
      root.appendChild(el("p", null, "The database view needs tally serve --db DIR."));
      return;
    }
    const data = await T.cachedApi("db");
    const q = T.query(), epoch = q.get("epoch") || "", image = q.get("image") || "", event = q.get("event") || "";
    const epochSelect = el("select", { id: "db-epoch" });
    epochSelect.appendChild(el("option", { value: "" }, "latest"));
    epochSelect.appendChild(el("option", { value: "all" }, "all epochs"));
    // An epoch name's prefix selects every epoch starting with it (store/query.cc): a day is a range.
    const days = new Map();
    for (const e of data.epochs) if (/^\d{14}$/.test(e.name)) days.set(e.name.substring(0, 8), (days.get(e.name.substring(0, 8)) || 0) + 1);
    if (days.size > 1 || data.epochs.length > 1)
      for (const [day, count] of days)
        epochSelect.appendChild(el("option", { value: day }, "day " + day.substring(0, 4) + "-" + day.substring(4, 6) + "-" + day.substring(6) + " (" + count + " epochs)"));
    for (const e of data.epochs) epochSelect.appendChild(el("option", { value: e.name }, e.name + (e.start ? " (" + e.start + ")" : "")));
    epochSelect.value = epoch;
    if (epochSelect.value !== epoch) { epochSelect.appendChild(el("option", { value: epoch }, epoch)); epochSelect.value = epoch; }
    epochSelect.addEventListener("change", function () { choose({ epoch: epochSelect.value, epoch_to: epochSelect.value === "all" ? "" : q.get("epoch_to") }); });
    // A range: from the chosen epoch through this one (epoch_to, store/query.cc).
    const epochTo = q.get("epoch_to") || "";
    const toSelect = el("select", { id: "db-epoch-to" }, el("option", { value: "" }, "(only the epoch)"));
    for (const e of data.epochs) toSelect.appendChild(el("option", { value: e.name }, e.name));
    toSelect.value = epochTo;
    toSelect.addEventListener("change", function () {
      const from = epoch && epoch !== "all" ? epoch : (data.epochs.length ? data.epochs[0].name : "");
      choose({ epoch: toSelect.value ? from : epoch, epoch_to: toSelect.value });
    });
    // A comparison of two epochs, or ranges: /diff with base_epoch (through base_epoch_to)
    // as the base and epoch (through epoch_to) as the new side.
    const baseSelect = el("select", { id: "db-compare-base" }), newSelect = el("select", { id: "db-compare-new" });
    const baseToSelect = el("select", { id: "db-compare-base-to" }, el("option", { value: "" }, "(only the epoch)"));
    const newToSelect = el("select", { id: "db-compare-new-to" }, el("option", { value: "" }, "(only the epoch)"));
    data.epochs.forEach(function (e, i) {
      for (const select of [baseSelect, newSelect, baseToSelect, newToSelect]) select.appendChild(el("option", { value: e.name }, e.name));
      if (i === data.epochs.length - 2) baseSelect.value = e.name;
    });
    if (q.get("base_epoch")) baseSelect.value = q.get("base_epoch");
    baseToSelect.value = q.get("base_epoch_to") || "";
    if (data.epochs.length) newSelect.value = epoch && epoch !== "all" && !q.get("epoch_to") ? epoch : data.epochs[data.epochs.length - 1].name;
    const compareButton = el("button", { type: "button", id: "db-compare", onclick: function () {
      const params = T.commonParams();
      params.set("base_epoch", baseSelect.value);
      if (baseToSelect.value) params.set("base_epoch_to", baseToSelect.value); else params.delete("base_epoch_to");
      params.set("epoch", newSelect.value);
      if (newToSelect.value) params.set("epoch_to", newToSelect.value); else params.delete("epoch_to");
      T.navigate("/diff?" + params.toString());
    } }, "Compare");
    compareButton.disabled = data.epochs.length < 2;
    const eventSelect = el("select", { id: "db-event" }, el("option", { value: "" }, "default"));
    for (const e of data.events) eventSelect.appendChild(el("option", { value: e }, e));
    eventSelect.value = event;
    eventSelect.addEventListener("change", function () { choose({ event: eventSelect.value }); });
    root.appendChild(el("div", { class: "controls" }, el("label", null, "epoch ", epochSelect), el("label", null, "through ", toSelect), el("label", null, "event ", eventSelect),
      image ? el("span", null, "image ", el("code", null, image), " ", el("button", { type: "button", id: "db-clear-image", onclick: function () { choose({ image: "" }); } }, "all images")) : null,
      el("span", { class: "muted" }, "The choice applies to every view (flame, top, …).")));
    root.appendChild(el("div", { class: "controls", id: "db-compare-controls" }, el("label", null, "compare base ", baseSelect), el("label", null, "through ", baseToSelect),
      el("label", null, "with new ", newSelect), el("label", null, "through ", newToSelect), compareButton));

    // The totals are in the event's unit (nanoseconds for cpu-clock), as /api/meta names it.
    const type = (meta.sample_types || []).find(function (t) { return t.type === (event || meta.default_sample_type); });
    const unit = type ? type.unit : "";
    const unitText = unit && unit !== "count" ? " (" + unit + ")" : "";
    const topImages = data.images.slice(0, 5);
    if (data.epochs.length && topImages.length) root.appendChild(el("section", null, el("h3", null, "Per epoch, top images" + unitText), chart(data, topImages, unit)));

    const inRange = function (name) {
      if (!epochTo) return name === epoch;
      const names = data.epochs.map(function (e) { return e.name; });
      const from = names.findIndex(function (n) { return n.startsWith(epoch); });
      let to = -1;
      names.forEach(function (n, i) { if (n.startsWith(epochTo)) to = i; });
      const i = names.indexOf(name);
      return from >= 0 && from <= i && i <= to;
    };
    const epochBody = el("tbody");
    for (const e of data.epochs) {
      epochBody.appendChild(el("tr", { class: inRange(e.name) ? "chosen" : null, "data-epoch": e.name },
        el("td", null, T.link(T.withCommon("/db", { epoch: e.name, epoch_to: "" }), e.name, { class: "epoch-link" })), el("td", null, e.start || ""),
        el("td", { class: "num", "data-value": e.total }, T.fmtValue(e.total, unit))));
    }
    const imageBody = el("tbody");
    const imagePattern = function (name) { return name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"); };
    for (const im of data.images) {
      imageBody.appendChild(el("tr", { class: imagePattern(im.name) === image ? "chosen" : null, "data-image": im.name },
        el("td", null, T.link(T.withCommon("/db", { image: imagePattern(im.name) }), im.name, { class: "image-link" })),
        el("td", { class: "num", "data-value": im.total }, T.fmtValue(im.total, unit))));
    }
    root.appendChild(el("div", { class: "columns" },
      el("section", null, el("h3", null, "Epochs (" + data.epochs.length + ")"),
        el("table", { class: "data", id: "db-epochs" }, el("thead", null, el("tr", null, el("th", null, "epoch"), el("th", null, "start"), el("th", { class: "num" }, "total"))), epochBody)),
      el("section", null, el("h3", null, "Images (" + data.images.length + ")"),
        el("table", { class: "data", id: "db-images" }, el("thead", null, el("tr", null, el("th", null, "image"), el("th", { class: "num" }, "total"))), imageBody))));
  };
})(window.tally);
