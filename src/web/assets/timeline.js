"use strict";
// The per-thread timeline above every view (issue 23): one row per thread, its on-CPU and
// off-CPU spans in time order from /api/timeline (computed and bounded by the server), off-CPU
// coloured by reason in the blues of the flame graph's off-CPU frames. Dragging over it sets
// the common parameter time_range (seconds from the profile's start), so that every view and
// API call is filtered to that time. The range's zoom button shows just that time (the server
// computes the spans within the window, so a coarsened row gets its detail back); "whole
// recording" goes back. The zoom is in the URL (tz=START:END, kept across views like the
// filters): a zoomed view is a link, and back undoes a zoom.
(function (T) {
  const el = T.el;
  const ROW = 16, AXIS = 18, LABELS = 190, MIN_DRAG = 3;
  const ON_CPU = "#e0602a";
  // Off-CPU reasons (collect/off_cpu.cc's names) in blues; any other in the flame graph's
  // off-CPU palette (analyze/flame_svg.cc, flame_off_cpu_colour).
  const REASON_COLOURS = { sleep: "#86b8f2", futex: "#4d5fd6", io: "#2aa6bf", preempted: "#a3abc4", blocked: "#3f84d9", other: "#8a7ee0" };
  function offCpuColour(name) { return REASON_COLOURS[name] || T.flameOffCpuColour(name); }
  T.timelineColour = function (state) { return state === "on-cpu" ? ON_CPU : offCpuColour(state); };

  // "START:END" in seconds -> [start, end] in ns (an open end: the profile's edge).
  function parseRange(text, end) {
    const m = /^([0-9.]*):([0-9.]*)$/.exec(text || "");
    if (!m) return null;
    return [m[1] ? parseFloat(m[1]) * 1e9 : 0, m[2] ? parseFloat(m[2]) * 1e9 : end];
  }
  function seconds(ns) { return (ns / 1e9).toFixed(6).replace(/0+$/, "").replace(/\.$/, ""); }

  // The common parameters but time_range (the timeline always spans the whole recording)
  // and those that do not change it: what its content depends on.
  function timelineParams() {
    const q = T.commonParams();
    for (const key of ["time_range", "si", "granularity", "tz"]) q.delete(key);
    q.delete("base_epoch");
    q.delete("base_epoch_to");
    const zoom = zoomed();
    if (zoom) q.set("window", zoom);
    return q;
  }

  // The window shown ("START:END" seconds, the URL's tz), null for the whole recording.
  function zoomed() { return T.query().get("tz") || null; }

  // model: the last /api/timeline answer; its window_start/window_end are the time drawn.
  let box = null, shownKey = null, model = null, drawn = null;
  function shownFrom() { return model.window_start !== undefined ? model.window_start : model.start; }
  function shownTo() { return model.window_end !== undefined ? model.window_end : model.end; }

  function selection() {
    if (!model) return null;
    return parseRange(T.query().get("time_range"), model.end);
  }

  // A new history entry (back undoes the zoom); the flame graph's own zoom stays, the
  // filters being the same.
  function setZoom(text) {
    const q = T.query();
    if (text) q.set("tz", text); else q.delete("tz");
    const query = q.toString();
    T.navigate(location.pathname + (query ? "?" + query : ""));
  }

  function setRange(text) {
    const q = T.query();
    if (text) q.set("time_range", text); else q.delete("time_range");
    q.delete("z");  // a flame zoom index is only valid for one filtered tree
    const query = q.toString();
    T.navigate(location.pathname + (query ? "?" + query : ""));
  }

  function summary() {
    const range = T.query().get("time_range"), zoom = zoomed();
    const parts = [el("span", { class: "timeline-title" }, "Timeline")];
    if (range) {
      const r = parseRange(range, model ? model.end : 0);
      const text = r ? T.fmtValue(r[0], "nanoseconds") + " – " + T.fmtValue(r[1], "nanoseconds") : range;
      parts.push(el("span", { class: "chip", id: "timeline-range" }, "time " + text + " ",
        el("button", { type: "button", title: "show all the time", onclick: function (e) { e.preventDefault(); setRange(""); } }, "×")));
      if (r && range !== zoom && model && model.has_timestamps)
        parts.push(el("button", { type: "button", id: "timeline-zoom", title: "show only this range in the timeline",
          onclick: function (e) { e.preventDefault(); setZoom(range); } }, "zoom to range"));
    } else if (model && model.has_timestamps) {
      parts.push(el("span", { class: "muted" }, " drag over the rows to filter every view to a time range"));
    }
    if (zoom && model && model.has_timestamps) {
      parts.push(el("span", { class: "muted", id: "timeline-zoomed" }, " showing " + T.fmtValue(shownFrom(), "nanoseconds") +
        " – " + T.fmtValue(shownTo(), "nanoseconds") + " "));
      parts.push(el("button", { type: "button", id: "timeline-unzoom", title: "show the whole recording in the timeline",
        onclick: function (e) { e.preventDefault(); setZoom(null); } }, "whole recording"));
    }
    return el("summary", null, ...parts);
  }

  // Ticks over [from, to] at multiples of 1, 2 or 5 times a power of ten, about every 100 px.
  function ticks(width, from, to) {
    if (to <= from) return [];
    const raw = (to - from) / Math.max(1, width / 100), power = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(function (m) { return m * power; }).find(function (s) { return s >= raw; });
    const out = [];
    for (let t = Math.ceil(from / step) * step; t <= to; t += step) out.push(t);
    return out;
  }

  function render(data) {
    model = data;
    const details = el("details", { id: "timeline-box", open: sessionStorage.getItem("tally-timeline-closed") ? null : "" });
    details.addEventListener("toggle", function () {
      if (details.open) sessionStorage.removeItem("tally-timeline-closed"); else sessionStorage.setItem("tally-timeline-closed", "1");
      if (details.open) draw();
    });
    details.appendChild(summary());
    if (!data.has_timestamps) {
      details.appendChild(el("p", { class: "muted", id: "timeline-none" },
        "This profile's samples have no timestamps, so there is no timeline (tally record --off-cpu records them)."));
      box.textContent = "";
      box.appendChild(details);
      return;
    }
    if (data.threads.length === 0) {
      details.appendChild(el("p", { class: "muted", id: "timeline-none" }, "No sample has a timestamp after the filters."));
      box.textContent = "";
      box.appendChild(details);
      return;
    }
    const labels = el("div", { class: "timeline-labels", style: "padding-top:" + AXIS + "px" });
    data.threads.forEach(function (thread, row) {
      const name = (thread.name || "thread") + " " + thread.tid;
      labels.appendChild(el("div", {
        class: "timeline-label", "data-tid": thread.tid, "data-row": row,
        title: name + ": on-CPU " + T.fmtValue(thread.on_cpu, "nanoseconds") + ", off-CPU " + T.fmtValue(thread.off_cpu, "nanoseconds") +
          (thread.coarsened ? " (coarsened: " + T.fmtValue(thread.slot, "nanoseconds") + " slots)" : ""),
      }, name, thread.coarsened ? el("span", { class: "timeline-coarse", title: "more spans than drawn: each slot of " + T.fmtValue(thread.slot, "nanoseconds") + " shows its main state" }, " ≈") : null));
    });
    // data-start/data-end: the time drawn (the zoom's window, else the whole recording).
    const canvas = el("canvas", { id: "timeline-canvas", "data-start": shownFrom(), "data-end": shownTo(), "data-zoomed": zoomed() ? "1" : "0",
      "data-axis": AXIS, "data-row-height": ROW });
    const tip = el("div", { class: "tip", hidden: true });
    const plot = el("div", { class: "timeline-plot" }, canvas, tip);
    const legend = el("div", { class: "legend timeline-legend" });
    // Only the states some drawn span has: a reason seen only outside the zoom, or in a
    // thread not shown, would name a colour the plot does not use.
    const drawnStates = new Set();
    data.threads.forEach(function (thread) { thread.spans.state.forEach(function (s) { drawnStates.add(s); }); });
    data.states.forEach(function (state, index) {
      if (!drawnStates.has(index)) return;
      legend.appendChild(el("span", { class: "swatch", "data-state": state, style: "background:" + T.timelineColour(state) + (state === "on-cpu" ? ";color:#fff" : "") }, state));
      legend.appendChild(document.createTextNode(" "));
    });
    if (data.threads_omitted) legend.appendChild(el("span", { class: "muted" }, " " + data.threads_omitted + " threads with less time not shown"));
    if (data.threads.some(function (t) { return t.coarsened; }))
      legend.appendChild(el("span", { class: "muted" }, " ≈ coarsened: each slot shows the state that covered most of it"));
    const body = el("div", { class: "timeline-body" }, labels, plot);
    details.appendChild(body);
    details.appendChild(legend);
    box.textContent = "";
    box.appendChild(details);
    drawn = { canvas: canvas, tip: tip, base: null, width: 0 };
    attach(canvas, tip);
    draw();
  }

  // The rows into an offscreen canvas, kept; the selection is drawn over a copy of it.
  function draw() {
    if (!drawn || !model) return;
    const canvas = drawn.canvas, ratio = window.devicePixelRatio || 1;
    const width = Math.max(200, canvas.parentElement.clientWidth), height = AXIS + model.threads.length * ROW;
    canvas.style.width = width + "px";
    canvas.style.height = height + "px";
    canvas.width = Math.round(width * ratio);
    canvas.height = Math.round(height * ratio);
    const base = document.createElement("canvas");
    base.width = canvas.width;
    base.height = canvas.height;
    const g = base.getContext("2d");
    g.scale(ratio, ratio);
    g.fillStyle = "#fbfbf8";
    g.fillRect(0, 0, width, height);
    const from = shownFrom(), scale = width / Math.max(1, shownTo() - from);
    g.fillStyle = "#555";
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "middle";
    for (const t of ticks(width, from, shownTo())) {
      const x = Math.round((t - from) * scale) + 0.5;
      g.fillRect(x, AXIS - 5, 1, 5);
      if (x < width - 30) g.fillText(T.fmtValue(t, "nanoseconds"), x + 2, AXIS / 2 - 1);
    }
    const colours = model.states.map(T.timelineColour);
    model.threads.forEach(function (thread, row) {
      const y = AXIS + row * ROW;
      g.fillStyle = row % 2 ? "#f3f3ee" : "#fbfbf8";
      g.fillRect(0, y, width, ROW);
      const spans = thread.spans;
      // One fill colour at a time: a few thousand spans a row draw in a few ms.
      for (let state = 0; state < colours.length; state++) {
        g.fillStyle = colours[state];
        for (let i = 0; i < spans.state.length; i++) {
          if (spans.state[i] !== state) continue;
          const x0 = (spans.start[i] - from) * scale, x1 = (spans.end[i] - from) * scale;
          g.fillRect(x0, y + 2, Math.max(1, x1 - x0), ROW - 4);
        }
      }
    });
    drawn.base = base;
    drawn.width = width;
    overlay(selection());
    performance.mark("tally:timeline:drawn");  // for the benchmarks, as app.js marks the views
  }

  // The base image with everything outside [from, to] (ns) shaded.
  function overlay(range) {
    const canvas = drawn.canvas, g = canvas.getContext("2d"), ratio = window.devicePixelRatio || 1;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.drawImage(drawn.base, 0, 0);
    if (!range) return;
    g.scale(ratio, ratio);
    const from = shownFrom(), scale = drawn.width / Math.max(1, shownTo() - from), height = canvas.height / ratio;
    const x0 = Math.min(drawn.width, Math.max(0, (Math.min(range[0], range[1]) - from) * scale));
    const x1 = Math.max(0, Math.min(drawn.width, (Math.max(range[0], range[1]) - from) * scale));
    g.fillStyle = "rgba(40, 50, 60, 0.45)";
    g.fillRect(0, AXIS, x0, height - AXIS);
    g.fillRect(x1, AXIS, drawn.width - x1, height - AXIS);
    g.fillStyle = "#26313d";
    g.fillRect(x0, 0, 1, height);
    g.fillRect(Math.max(x0, x1 - 1), 0, 1, height);
  }

  // The drag in progress: where it began ({x, t}), or null.
  let dragFrom = null;
  function timeAt(e) {
    const r = drawn.canvas.getBoundingClientRect();
    const x = Math.min(Math.max(e.clientX - r.left, 0), r.width);
    return { x: x, t: shownFrom() + x / r.width * (shownTo() - shownFrom()), y: e.clientY - r.top };
  }
  function attach(canvas, tip) {
    canvas.addEventListener("mousedown", function (e) {
      if (e.button !== 0) return;
      e.preventDefault();
      dragFrom = timeAt(e);
      tip.hidden = true;
    });
    canvas.addEventListener("mouseleave", function () { if (!dragFrom) tip.hidden = true; });
  }
  // On the window, once: a drag may end outside the canvas.
  window.addEventListener("mousemove", function (e) {
    if (!drawn || !drawn.canvas.isConnected) return;
    if (dragFrom) { overlay([dragFrom.t, timeAt(e).t]); return; }
    if (e.target !== drawn.canvas) { drawn.tip.hidden = true; return; }
    showTip(timeAt(e), drawn.tip);
  });
  window.addEventListener("mouseup", function (e) {
    if (!dragFrom || !drawn || !drawn.canvas.isConnected) { dragFrom = null; return; }
    const from = dragFrom, to = timeAt(e);
    dragFrom = null;
    if (Math.abs(to.x - from.x) < MIN_DRAG) { overlay(selection()); return; }
    const lo = Math.max(0, Math.min(from.t, to.t)), hi = Math.max(from.t, to.t);
    setRange(seconds(lo) + ":" + seconds(hi));
  });

  // The span under the pointer: thread, state, when and how long.
  function showTip(at, tip) {
    const row = Math.floor((at.y - AXIS) / ROW);
    const thread = row >= 0 ? model.threads[row] : null;
    if (!thread) { tip.hidden = true; return; }
    const spans = thread.spans;
    let found = -1;
    for (let i = 0; i < spans.start.length; i++) {
      if (spans.start[i] > at.t) break;
      if (spans.end[i] >= at.t) found = i;
    }
    tip.textContent = "";
    tip.appendChild(el("div", { class: "tip-name" }, (thread.name || "thread") + " " + thread.tid));
    if (found >= 0) {
      const state = model.states[spans.state[found]];
      tip.appendChild(el("div", null, (state === "on-cpu" ? "on-CPU" : "off-CPU: " + state) + ", " +
        T.fmtValue(spans.start[found], "nanoseconds") + " – " + T.fmtValue(spans.end[found], "nanoseconds") +
        " (" + T.fmtValue(spans.end[found] - spans.start[found], "nanoseconds") + ")"));
    } else {
      tip.appendChild(el("div", { class: "muted" }, "no sample at " + T.fmtValue(at.t, "nanoseconds")));
    }
    tip.hidden = false;
    tip.style.left = Math.min(at.x + 12, Math.max(0, drawn.width - tip.offsetWidth - 4)) + "px";
    tip.style.top = (at.y + 14) + "px";
  }

  // Called on every route: fetches the timeline again when its filters changed, else only
  // redraws the selection. Profiles without a "timestamp" label are not asked at all.
  T.updateTimeline = async function (meta) {
    box = document.getElementById("timeline");
    const hasTimes = (meta.labels || []).some(function (l) { return l.key === "timestamp"; });
    const params = timelineParams();
    const key = hasTimes ? params.toString() : "none";
    box.hidden = false;
    if (key === shownKey) {
      const old = box.querySelector("summary");
      if (old) old.replaceWith(summary());
      if (drawn) overlay(selection());
      return;
    }
    shownKey = key;
    if (!hasTimes) { render({ has_timestamps: false }); return; }
    try {
      const data = await T.apiQuery("timeline", params);
      if (shownKey === key) render(data);
    } catch (error) {
      if (shownKey !== key) return;
      shownKey = null;
      box.textContent = "";
      box.appendChild(el("p", { class: "error-text" }, "timeline: " + error.message));
    }
  };
  window.addEventListener("resize", function () { if (drawn && box && box.querySelector("details[open]")) draw(); });
})(window.tally);
