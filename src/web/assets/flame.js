"use strict";
// The flame graph: /api/flame's preorder arrays drawn on one <canvas>. Only the frames of
// the zoomed subtree that are at least MIN_FRAME_PX wide are drawn (narrower ones are merged
// into their parent, as tally's SVG flame graph prunes them), so 200k unique stacks draw in
// milliseconds and a zoom only walks the visible frames.
(function (T) {
  const ROW = 16, FONT = "12px Verdana, sans-serif", CHAR_WIDTH = 7.2, MIN_FRAME_PX = 0.5;
  const MATCH_COLOUR = "#e600e6";

  // Start offsets, parents and subtree ends of the preorder tree: a node's subtree is
  // [i, end[i]) and its children start where its parent starts, one after another.
  function layoutTree(data) {
    const nodes = data.nodes, n = nodes.name.length;
    const start = new Float64Array(n), end = new Int32Array(n), parent = new Int32Array(n);
    const nextStart = [0], lastAt = [], open = [];
    let maxDepth = 0;
    for (let i = 0; i < n; i++) {
      const d = nodes.depth[i];
      while (open.length && nodes.depth[open[open.length - 1]] >= d) end[open.pop()] = i;
      open.push(i);
      if (d === 0) { start[i] = 0; parent[i] = -1; }
      else {
        parent[i] = lastAt[d - 1];
        start[i] = nextStart[d];
        nextStart[d] += nodes.total[i];
      }
      lastAt[d] = i;
      nextStart[d + 1] = start[i];
      if (d > maxDepth) maxDepth = d;
    }
    while (open.length) end[open.pop()] = n;
    return { n: n, start: start, end: end, parent: parent, maxDepth: maxDepth };
  }

  function diffColour(row, maxAbs) {
    if (!row || !row.significant || !maxAbs) return "#d9d9d0";
    const strength = Math.min(1, Math.abs(row.delta_pp) / maxAbs);
    const fade = Math.round(215 - 175 * strength);
    // More time in the new profile is red, less is blue.
    return row.delta_pp > 0 ? "rgb(255," + fade + "," + fade + ")" : "rgb(" + fade + "," + fade + ",255)";
  }

  class FlameGraph {
    constructor(root, data, options) {
      this.data = data;
      this.tree = layoutTree(data);
      this.options = options; // {icicle, zoom, search, diffRows, topRows, onZoom, onSearch, onIcicle}
      this.icicle = !!options.icicle;
      this.zoomIndex = options.zoom >= 0 && options.zoom < this.tree.n ? options.zoom : 0;
      this.colours = new Array(data.names.length);
      this.offCpuColours = new Array(data.names.length);
      this.matchedNames = null;
      this.matchedShare = null;
      this.drawnByDepth = [];
      this.build(root);
      this.setSearch(options.search || "", false);
      this.draw();
      this.resizeHandler = () => this.draw();
      window.addEventListener("resize", this.resizeHandler);
    }

    build(root) {
      const el = T.el;
      this.resetButton = el("button", { type: "button", id: "flame-reset", onclick: () => this.zoomTo(0, true) }, "Reset zoom");
      this.icicleBox = el("input", { type: "checkbox", id: "flame-icicle" });
      this.icicleBox.checked = this.icicle;
      this.icicleBox.addEventListener("change", () => {
        this.icicle = this.icicleBox.checked;
        if (this.options.onIcicle) this.options.onIcicle(this.icicle);
        this.draw();
      });
      this.searchBox = el("input", { id: "flame-search", type: "search", placeholder: "search (regex)", size: 24, spellcheck: "false" });
      this.searchBox.value = this.options.search || "";
      let timer = 0;
      this.searchBox.addEventListener("input", () => {
        clearTimeout(timer);
        timer = setTimeout(() => { this.setSearch(this.searchBox.value, true); this.draw(); }, 120);
      });
      this.matchedText = el("span", { id: "flame-matched" });
      const total = this.data.total;
      this.summary = el("span", { id: "flame-summary", class: "muted" },
        "total " + T.fmtValue(total, this.data.unit) + " " + (this.data.unit || "") + ", " + this.tree.n + " frames");
      this.selected = el("div", { id: "flame-selected", class: "muted" }, "Click a frame to zoom; right-click (or p, s, d keys over it) to open it in the other views.");
      this.canvas = el("canvas", { id: "flame-canvas" });
      this.tip = el("div", { id: "flame-tip", class: "tip", hidden: true });
      this.menu = el("div", { id: "flame-menu", class: "menu", hidden: true });
      this.wrap = el("div", { class: "flame-wrap" }, this.canvas, this.tip, this.menu);
      root.appendChild(el("div", { class: "controls" }, this.resetButton, el("label", null, this.icicleBox, " icicle"),
        this.searchBox, this.matchedText, this.summary));
      if (this.options.diffRows) root.appendChild(el("div", { class: "legend muted" },
        "Differential: width is the new profile; ", el("span", { class: "swatch up" }, "more"), " ",
        el("span", { class: "swatch down" }, "less"), " for changes that pass tally diff's z-test; grey: no significant change."));
      if (!this.options.diffRows && this.data.nodes.off_cpu && this.data.nodes.off_cpu.indexOf(1) >= 0)
        root.appendChild(el("div", { class: "legend muted", id: "flame-off-cpu-legend" },
          el("span", { class: "swatch", style: "background:" + T.flameOffCpuColour("off-cpu") + ";color:#fff" }, "off-CPU"),
          " frames: more than half of their time off the CPU (waiting), in the blues of the timeline's off-CPU spans; ",
          el("span", { class: "swatch", style: "background:" + T.flameColour("on-cpu") + ";color:#000" }, "on-CPU"), " frames in warm colours."));
      root.appendChild(this.selected);
      root.appendChild(this.wrap);

      this.canvas.addEventListener("mousemove", (e) => this.hover(e));
      this.canvas.addEventListener("mouseleave", () => { this.tip.hidden = true; this.hovered = -1; });
      this.canvas.addEventListener("click", (e) => {
        this.menu.hidden = true;
        const i = this.frameAtEvent(e);
        if (i >= 0) this.zoomTo(i, true);
      });
      this.canvas.addEventListener("contextmenu", (e) => {
        const i = this.frameAtEvent(e);
        if (i < 0) return;
        e.preventDefault();
        this.openMenu(i, e);
      });
      this.keyHandler = (e) => {
        const t = e.target, tag = t && t.tagName;
        const typing = tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && !/^(checkbox|radio|button|submit)$/.test(t.type));
        if (e.ctrlKey || e.metaKey || e.altKey) return;
        if (typing) {
          if (e.key === "Escape" && e.target === this.searchBox) { this.searchBox.value = ""; this.setSearch("", true); this.draw(); }
          return;
        }
        if (e.key === "/") { e.preventDefault(); this.searchBox.focus(); return; }
        if (e.key === "Escape") { this.menu.hidden = true; this.zoomTo(0, true); return; }
        const views = { p: "/peek", s: "/source", d: "/disasm" };
        if (views[e.key] && this.hovered >= 0) T.navigate(T.pageUrl(views[e.key], { f: T.exactRegex(this.nameOf(this.hovered)) }));
      };
      document.addEventListener("keydown", this.keyHandler);
    }

    destroy() {
      window.removeEventListener("resize", this.resizeHandler);
      document.removeEventListener("keydown", this.keyHandler);
    }

    nameOf(i) { return this.data.names[this.data.nodes.name[i]]; }

    // Whether the server drew frame i as off the CPU (/api/flame's nodes.off_cpu: the rule of
    // tally flame's SVG, computed there); never in a differential graph.
    offCpu(i) {
      const column = this.data.nodes.off_cpu;
      return !this.options.diffRows && !!column && column[i] === 1;
    }

    colourOf(i) {
      const nameIndex = this.data.nodes.name[i];
      if (this.matchedNames && this.matchedNames[nameIndex]) return MATCH_COLOUR;
      // One cache per palette: a function may be on the CPU in one stack and off it in another.
      const off = this.offCpu(i), cache = off ? this.offCpuColours : this.colours;
      let c = cache[nameIndex];
      if (c === undefined) {
        const name = this.data.names[nameIndex];
        c = this.options.diffRows ? diffColour(this.options.diffRows.get(name), this.options.diffMaxAbs)
          : off ? T.flameOffCpuColour(name) : T.flameColour(name);
        cache[nameIndex] = c;
      }
      return c;
    }

    // The regex search: matched names are coloured, and the matched share counts each
    // sample once (in preorder, a frame that starts inside a matched one is under it).
    setSearch(term, fromUser) {
      this.matchedText.textContent = "";
      this.matchedText.className = "";
      this.matchedNames = null;
      this.matchedShare = null;
      delete this.canvas.dataset.matchedPct;
      if (term) {
        let re = null;
        try { re = new RegExp(term); } catch (e) {
          this.matchedText.textContent = "invalid regex: " + e.message;
          this.matchedText.className = "error-text";
        }
        if (re) {
          const names = this.data.names, hit = new Uint8Array(names.length);
          for (let k = 0; k < names.length; k++) hit[k] = re.test(names[k]) ? 1 : 0;
          const nodes = this.data.nodes, start = this.tree.start;
          let matched = 0, coveredEnd = -1;
          for (let i = 0; i < this.tree.n; i++) {
            if (hit[nodes.name[i]] && start[i] >= coveredEnd) {
              matched += nodes.total[i];
              coveredEnd = start[i] + nodes.total[i];
            }
          }
          this.matchedNames = hit;
          this.matchedShare = this.data.total ? 100 * matched / this.data.total : 0;
          this.matchedText.textContent = "Matched: " + T.fixed(this.matchedShare, 2) + "% (" + T.fmtValue(matched, this.data.unit) + ")";
          this.canvas.dataset.matchedPct = String(this.matchedShare);
          this.canvas.dataset.matchedValue = String(matched);
        }
      }
      if (fromUser && this.options.onSearch) this.options.onSearch(term);
    }

    zoomTo(i, fromUser) {
      if (i === this.zoomIndex) return;
      this.zoomIndex = i;
      this.draw();
      if (fromUser && this.options.onZoom) this.options.onZoom(i);
    }

    // Picks the frames to draw: the zoomed frame's ancestors (full width) and its subtree's
    // frames that are wide enough; narrower subtrees are skipped whole and counted.
    visibleFrames(width) {
      const t = this.tree, nodes = this.data.nodes, z = this.zoomIndex;
      const scale = width / Math.max(1, nodes.total[z]), z0 = t.start[z];
      const frames = [], ancestors = [], merges = [];
      let merged = 0, maxDepth = nodes.depth[z], run = null;
      // Consecutive narrow siblings are contiguous: wide enough together, they show as one
      // grey block ("N frames merged") instead of a gap.
      const closeRun = function () {
        if (run && run.value * scale >= MIN_FRAME_PX) merges.push(run);
        run = null;
      };
      for (let p = t.parent[z]; p >= 0; p = t.parent[p]) ancestors.push(p);
      for (let i = z; i < t.end[z];) {
        const w = nodes.total[i] * scale, d = nodes.depth[i];
        if (w < MIN_FRAME_PX) {
          const count = t.end[i] - i;
          merged += count;
          if (run && run.depth === d && run.start + run.value === t.start[i]) { run.value += nodes.total[i]; run.count += count; }
          else { closeRun(); run = { depth: d, start: t.start[i], value: nodes.total[i], count: count }; }
          i = t.end[i];
          continue;
        }
        closeRun();
        frames.push(i);
        if (d > maxDepth) maxDepth = d;
        i++;
      }
      closeRun();
      for (const m of merges) if (m.depth > maxDepth) maxDepth = m.depth;
      return { frames: frames, ancestors: ancestors, merges: merges, merged: merged, maxDepth: maxDepth, scale: scale, z0: z0 };
    }

    mergeBox(m) {
      const v = this.visible;
      const y = this.icicle ? m.depth * ROW : (v.maxDepth - m.depth) * ROW;
      return { x: (m.start - v.z0) * v.scale, y: y, w: m.value * v.scale, h: ROW - 1, depth: m.depth };
    }

    // The name, else its longest start with ".." that fits `room` pixels, else "".
    fittingLabel(ctx, nameIndex, room) {
      const name = this.data.names[nameIndex];
      const widths = this.textWidths || (this.textWidths = new Map());
      let full = widths.get(nameIndex);
      if (full === undefined) { full = ctx.measureText(name).width; widths.set(nameIndex, full); }
      if (full <= room) return name;
      let lo = 0, hi = Math.min(name.length - 1, Math.floor(room / 3));
      while (lo < hi) {  // the longest prefix whose label fits
        const mid = (lo + hi + 1) >> 1;
        if (ctx.measureText(name.substring(0, mid) + "..").width <= room) lo = mid; else hi = mid - 1;
      }
      return lo >= 1 ? name.substring(0, lo) + ".." : "";
    }

    frameBox(i) {
      const nodes = this.data.nodes, v = this.visible;
      const d = nodes.depth[i];
      const y = this.icicle ? d * ROW : (v.maxDepth - d) * ROW;
      if (d < nodes.depth[this.zoomIndex]) return { x: 0, y: y, w: this.width, h: ROW - 1, depth: d };
      return { x: (this.tree.start[i] - v.z0) * v.scale, y: y, w: nodes.total[i] * v.scale, h: ROW - 1, depth: d };
    }

    draw() {
      const started = performance.now();
      const canvas = this.canvas, nodes = this.data.nodes;
      const width = Math.max(200, this.wrap.clientWidth || 800);
      this.width = width;
      const v = this.visibleFrames(width);
      this.visible = v;
      const height = (v.maxDepth + 1) * ROW;
      const ratio = window.devicePixelRatio || 1;
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(height * ratio);
      canvas.style.width = width + "px";
      canvas.style.height = height + "px";
      const ctx = canvas.getContext("2d");
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      ctx.clearRect(0, 0, width, height);
      ctx.font = FONT;
      ctx.textBaseline = "middle";
      const byDepth = [];
      const put = (i, alpha) => {
        const b = this.frameBox(i);
        ctx.globalAlpha = alpha;
        ctx.fillStyle = this.colourOf(i);
        ctx.fillRect(b.x, b.y, Math.max(b.w - (b.w > 2 ? 0.5 : 0), MIN_FRAME_PX), b.h);
        if (b.w - 6 >= 3 * CHAR_WIDTH) {
          const label = this.fittingLabel(ctx, this.data.nodes.name[i], b.w - 6);
          if (label) {
            ctx.fillStyle = "#000";
            ctx.fillText(label, b.x + 3, b.y + ROW / 2);
          }
        }
        (byDepth[b.depth] || (byDepth[b.depth] = [])).push(i);
      };
      for (let k = v.ancestors.length - 1; k >= 0; k--) put(v.ancestors[k], 0.5);
      for (const i of v.frames) put(i, 1);
      ctx.globalAlpha = 1;
      ctx.fillStyle = "#c9c9c0";
      const mergesByDepth = [];
      for (const m of v.merges) {
        const b = this.mergeBox(m);
        ctx.fillRect(b.x, b.y, Math.max(b.w - (b.w > 2 ? 0.5 : 0), MIN_FRAME_PX), b.h);
        (mergesByDepth[m.depth] || (mergesByDepth[m.depth] = [])).push(m);
      }
      this.mergesByDepth = mergesByDepth;
      this.drawnByDepth = byDepth;
      this.resetButton.disabled = this.zoomIndex === 0;
      const z = this.zoomIndex, zbox = this.frameBox(z);
      // The layout as data attributes, for links and for the browser tests' assertions.
      Object.assign(canvas.dataset, {
        ready: "1", zoom: String(z), zoomName: this.nameOf(z), zoomX: zbox.x.toFixed(2), zoomWidth: zbox.w.toFixed(2),
        width: String(width), drawn: String(v.frames.length + v.ancestors.length), merged: String(v.merged),
        icicle: this.icicle ? "1" : "0", drawMs: (performance.now() - started).toFixed(1),
      });
      this.summary.textContent = "total " + T.fmtValue(this.data.total, this.data.unit) + ", " + this.tree.n + " frames" +
        (v.merged ? ", " + v.merged + " narrower than " + MIN_FRAME_PX + " px merged" : "");
      this.showSelected();
    }

    showSelected() {
      const z = this.zoomIndex;
      this.selected.textContent = "";
      if (z === 0) {
        this.selected.appendChild(document.createTextNode("Click a frame to zoom; right-click it (or press p, s, d over it) to open it in peek, source or disasm."));
        return;
      }
      const name = this.nameOf(z);
      this.selected.appendChild(T.el("b", null, name));
      this.selected.appendChild(document.createTextNode(" " + T.fmtValue(this.data.nodes.total[z], this.data.unit) + " (" +
        T.fmtPct(this.data.nodes.total[z], this.data.total) + ") — "));
      for (const link of this.linksFor(name)) { this.selected.appendChild(link); this.selected.appendChild(document.createTextNode(" ")); }
    }

    linksFor(name) {
      const f = T.exactRegex(name);
      return [
        T.link(T.pageUrl("/peek", { f: f }), "peek", { class: "peek-link" }),
        T.link(T.pageUrl("/source", { f: f }), "source", { class: "source-link" }),
        T.link(T.pageUrl("/disasm", { f: f }), "disasm", { class: "disasm-link" }),
        T.link(T.pageUrl("/top", { q: name }), "top"),
        T.link(T.withCommon(location.pathname, { focus: f }), "focus"),
        T.link(T.withCommon(location.pathname, { ignore: f }), "ignore"),
      ];
    }

    openMenu(i, e) {
      const name = this.nameOf(i), menu = this.menu;
      menu.textContent = "";
      menu.appendChild(T.el("div", { class: "menu-title" }, name));
      menu.appendChild(T.el("button", { type: "button", onclick: () => { menu.hidden = true; this.zoomTo(i, true); } }, "zoom"));
      for (const link of this.linksFor(name)) menu.appendChild(link);
      const r = this.wrap.getBoundingClientRect();
      menu.style.left = Math.min(e.clientX - r.left, this.width - 180) + "px";
      menu.style.top = (e.clientY - r.top + 4) + "px";
      menu.hidden = false;
    }

    // The first drawn frame named `name` and its box in CSS pixels (for links and tests).
    findFrame(name) {
      for (const list of this.drawnByDepth) {
        if (!list) continue;
        for (const i of list) if (this.nameOf(i) === name) return Object.assign({ index: i }, this.frameBox(i));
      }
      return null;
    }

    frameAtEvent(e) {
      const r = this.canvas.getBoundingClientRect();
      return this.frameAt(e.clientX - r.left, e.clientY - r.top);
    }

    // The drawn frame under (x, y) in CSS pixels: its row, then a binary search by x.
    frameAt(x, y) {
      const row = Math.floor(y / ROW);
      const depth = this.icicle ? row : this.visible.maxDepth - row;
      const list = this.drawnByDepth[depth];
      if (!list) return -1;
      let lo = 0, hi = list.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1, b = this.frameBox(list[mid]);
        if (x < b.x) hi = mid - 1;
        else if (x >= b.x + Math.max(b.w, MIN_FRAME_PX)) lo = mid + 1;
        else return list[mid];
      }
      return -1;
    }

    // The merged block of narrow frames under (x, y), or null.
    mergeAt(x, y) {
      const row = Math.floor(y / ROW);
      const depth = this.icicle ? row : this.visible.maxDepth - row;
      for (const m of this.mergesByDepth[depth] || []) {
        const b = this.mergeBox(m);
        if (x >= b.x && x < b.x + Math.max(b.w, MIN_FRAME_PX)) return m;
      }
      return null;
    }

    placeTip(e) {
      const r = this.wrap.getBoundingClientRect(), tip = this.tip;
      tip.hidden = false;
      tip.style.left = Math.min(e.clientX - r.left + 12, Math.max(0, this.width - tip.offsetWidth - 4)) + "px";
      tip.style.top = (e.clientY - r.top + 16) + "px";
    }

    hover(e) {
      const i = this.frameAtEvent(e);
      this.hovered = i;
      const tip = this.tip;
      if (i < 0) {
        const r = this.canvas.getBoundingClientRect(), m = this.mergeAt(e.clientX - r.left, e.clientY - r.top);
        if (!m) { tip.hidden = true; return; }
        tip.textContent = "";
        tip.appendChild(T.el("div", { class: "tip-name" }, m.count + " frames merged (each narrower than " + MIN_FRAME_PX + " px)"));
        tip.appendChild(T.el("div", null, T.fmtValue(m.value, this.data.unit) + " (" + T.fmtPct(m.value, this.data.total) + "); zoom into the parent to see them"));
        this.placeTip(e);
        return;
      }
      const nodes = this.data.nodes, unit = this.data.unit, total = this.data.total, name = this.nameOf(i);
      tip.textContent = "";
      tip.appendChild(T.el("div", { class: "tip-name" }, name));
      const rows = [
        ["total", T.fmtValue(nodes.total[i], unit) + " (" + T.fmtPct(nodes.total[i], total) + ")"],
        ["self", T.fmtValue(nodes.self[i], unit) + " (" + T.fmtPct(nodes.self[i], total) + ")"],
      ];
      if (this.zoomIndex !== 0) rows.push(["of zoom", T.fmtPct(nodes.total[i], nodes.total[this.zoomIndex])]);
      if (this.offCpu(i)) rows.push(["state", "mostly off the CPU"]);
      const top = this.options.topRows && this.options.topRows.get(name);
      if (top) rows.push(["flat%", T.fmtNum(top.flat_pct) + "% " + (top.flat_pm !== null && top.flat_pm !== undefined ? T.tallyInterval(top.flat_pm) + " (95%)" : "(exact)")]);
      const diff = this.options.diffRows && this.options.diffRows.get(name);
      if (diff) {
        rows.push(["base → new", T.fmtNum(diff.base_pct) + "% → " + T.fmtNum(diff.new_pct) + "%"]);
        rows.push(["change", (diff.delta_pp > 0 ? "+" : "") + T.fmtNum(diff.delta_pp) + " pp, p = " + T.fmtNum(diff.p_value, 4) +
          (diff.significant ? " (significant)" : "")]);
      }
      const table = T.el("table");
      for (const row of rows) table.appendChild(T.el("tr", null, T.el("th", null, row[0]), T.el("td", null, row[1])));
      tip.appendChild(table);
      this.placeTip(e);
    }
  }

  // Exposed for the view and for the browser tests (window.tally.flame is the graph on the page).
  T.FlameGraph = FlameGraph;
  T.layoutTree = layoutTree;
})(window.tally);
