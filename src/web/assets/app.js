"use strict";
// tally serve's front end: one page whose path picks the view (API.md's page table). Links
// inside the app change the URL with history.pushState and redraw, so every view has its
// own URL and the back button works; the refine bar's parameters ride along in the query.
(function (T) {
  const el = T.el;
  const VIEW_OF_PATH = { "/": "flame", "/flame": "flame", "/top": "top", "/peek": "peek", "/source": "source", "/disasm": "disasm", "/diff": "diff", "/db": "db" };
  let meta = null, current = null, routeCount = 0;

  // API answers by URL: the server is read-only, so an answer never changes while the page lives.
  const cache = new Map();
  T.cachedApi = function (name, own) {
    const q = T.commonParams();
    q.delete("tz");  // the timeline's zoom changes no answer of T.api
    for (const key in own || {}) if (own[key]) q.set(key, own[key]);
    const key = name + "?" + q.toString();
    if (!cache.has(key)) {
      const promise = T.api(name, own);
      cache.set(key, promise);
      promise.catch(function () { cache.delete(key); });
      if (cache.size > 24) cache.delete(cache.keys().next().value);
    }
    return cache.get(key);
  };

  // A URL of `path` with the current common parameters changed by `changes` ("" removes one).
  T.withCommon = function (path, changes) {
    const q = T.commonParams();
    for (const key in changes) { if (changes[key]) q.set(key, changes[key]); else q.delete(key); }
    const text = q.toString();
    return path + (text ? "?" + text : "");
  };

  T.navigate = function (url, replace) {
    if (replace) history.replaceState(null, "", url); else history.pushState(null, "", url);
    route();
  };

  // Changes the URL's own parameters of the shown view without redrawing it.
  function setParams(changes, push) {
    const params = T.query();
    for (const key in changes) {
      const v = changes[key];
      if (v === null || v === undefined || v === "" || v === false) params.delete(key); else params.set(key, v === true ? "1" : v);
    }
    const text = params.toString(), url = location.pathname + (text ? "?" + text : "");
    if (push) history.pushState(null, "", url); else history.replaceState(null, "", url);
  }

  T.views.flame = async function (root) {
    const q = T.query();
    const compare = (meta.mode === "compare" && q.get("side") !== "base") || (meta.mode === "db" && !!q.get("base_epoch"));
    const requests = [T.cachedApi("flame")];
    if (compare) requests.push(T.cachedApi("diff"));
    const answers = await Promise.all(requests);
    const data = answers[0], diff = answers[1];
    const options = {
      icicle: q.get("icicle") === "1",
      zoom: q.has("z") ? parseInt(q.get("z"), 10) : 0,
      search: q.get("s") || "",
      onZoom: function (i) { setParams({ z: i === 0 ? null : String(i) }, true); },
      onSearch: function (term) { setParams({ s: term }, false); },
      onIcicle: function (on) { setParams({ icicle: on }, false); },
    };
    // The tooltip's flat% ± comes from /api/top; the graph does not wait for it.
    T.cachedApi("top").then(function (top) {
      const rows = new Map();
      for (const row of top.rows) rows.set(row.name, row);
      options.topRows = rows;
    }, function () { /* the tooltip goes without the ± */ });
    if (diff) {
      options.diffRows = new Map();
      let maxAbs = 0;
      for (const row of diff.rows) {
        options.diffRows.set(row.name, row);
        if (row.significant) maxAbs = Math.max(maxAbs, Math.abs(row.delta_pp));
      }
      options.diffMaxAbs = maxAbs;
    }
    if (data.nodes.name.length === 0) {
      root.appendChild(el("p", null, "The profile has no samples (after the filters)."));
      return;
    }
    T.flame = new T.FlameGraph(root, data, options);
    return function () { T.flame.destroy(); T.flame = null; };
  };

  function fillRefine() {
    const form = document.getElementById("refine"), q = T.query();
    for (const name of T.LABEL_PARAMS) form.elements[name].value = q.getAll(name).join(" ");
    for (const name of ["focus", "ignore", "hide", "show", "si", "granularity", "side", "time_range"]) {
      const field = form.elements[name];
      if (!field) continue;
      field.value = q.get(name) || "";
      if (field.tagName === "SELECT" && field.value !== (q.get(name) || "")) {
        field.appendChild(el("option", { value: q.get(name) }, q.get(name)));
        field.value = q.get(name);
      }
    }
    const db = document.getElementById("db-params");
    db.textContent = "";
    for (const key of T.DB_PARAMS) {
      if (!q.get(key)) continue;
      db.appendChild(el("span", { class: "chip" }, key + " " + q.get(key) + " ",
        el("button", { type: "button", title: "remove", onclick: function () {
          const params = T.query();
          params.delete(key);
          params.delete("z");
          const text = params.toString();
          T.navigate(location.pathname + (text ? "?" + text : ""));
        } }, "×")));
    }
  }

  // The current URL's own (non-common) parameters as "&a=b…", without the flame zoom when
  // the filters change (a zoom index is only valid for one filtered tree).
  function ownQuery(keepZoom) {
    const q = T.query(), out = new URLSearchParams();
    for (const [k, v] of q) if (T.COMMON_PARAMS.indexOf(k) < 0 && (keepZoom || k !== "z")) out.append(k, v);
    const text = out.toString();
    return text ? "&" + text : "";
  }

  function setupRefine() {
    const form = document.getElementById("refine");
    const si = form.elements.si;
    si.textContent = "";
    for (const t of meta.sample_types || []) {
      const option = el("option", { value: t.type === meta.default_sample_type ? "" : t.type }, t.type + (t.unit ? " (" + t.unit + ")" : ""));
      si.appendChild(option);
    }
    si.disabled = (meta.sample_types || []).length < 2;
    // The label keys the profile has, offered as "KEY=" in the label filter boxes.
    const keys = document.getElementById("label-keys");
    for (const label of meta.labels || []) keys.appendChild(el("option", { value: label.key + "=" }, label.kind));
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      const params = new URLSearchParams();
      for (const name of ["si", "focus", "ignore", "hide", "show", "granularity", "side", "time_range"]) {
        const field = form.elements[name];
        if (field && field.value) params.set(name, field.value);
      }
      // Label filters: one parameter per space-separated KEY=VALUE.
      for (const name of T.LABEL_PARAMS)
        for (const filter of form.elements[name].value.split(/\s+/)) if (filter) params.append(name, filter);
      const q = T.query();
      for (const key of T.DB_PARAMS.concat(["tz"])) if (q.get(key)) params.set(key, q.get(key));
      let text = params.toString() + ownQuery(false);
      if (text.startsWith("&")) text = text.substring(1);
      T.navigate(location.pathname + (text ? "?" + text : ""));
    });
    for (const name of ["si", "granularity", "side"]) form.elements[name].addEventListener("change", function () { form.requestSubmit(); });
    document.getElementById("clear-refine").addEventListener("click", function () {
      for (const name of ["focus", "ignore", "hide", "show", "label_focus", "label_ignore", "si", "granularity", "time_range"]) form.elements[name].value = "";
      form.requestSubmit();
    });
    for (const node of document.querySelectorAll("[data-mode]")) node.hidden = node.dataset.mode !== meta.mode;
    document.querySelector('#nav a[data-view="diff"]').hidden = meta.mode === "single";
    document.querySelector('#nav a[data-view="db"]').hidden = meta.mode !== "db";
    const files = document.getElementById("files");
    files.textContent = meta.mode === "compare" ? "base " + meta.files[0] + " → new " + meta.files[1] : (meta.files || []).join(" ");
    document.body.dataset.mode = meta.mode;
  }

  function updateNav(view) {
    for (const a of document.querySelectorAll("#nav a")) {
      const target = a.dataset.view;
      // Nav links keep the common parameters; peek/source/disasm also keep the function.
      const own = {};
      const f = T.query().get("f");
      if (f && (target === "peek" || target === "source" || target === "disasm")) own.f = f;
      a.href = T.pageUrl("/" + target, own);
      a.classList.toggle("active", target === view);
    }
  }

  async function route() {
    const id = ++routeCount;
    if (current && current.cleanup) current.cleanup();
    current = null;
    const view = VIEW_OF_PATH[location.pathname] || null;
    const main = document.getElementById("view");
    T.showError("");
    fillRefine();
    updateNav(view);
    T.updateTimeline(meta);
    main.dataset.state = "loading";
    main.dataset.view = view || "none";
    document.title = "tally " + (view || "");
    const root = el("div", { class: "view-" + view });
    main.textContent = "";
    main.appendChild(el("p", { class: "muted", id: "loading" }, "loading…"));
    try {
      if (!view) throw new Error("no view at " + location.pathname + " (see the bar above)");
      const cleanup = await T.views[view](root, meta);
      if (id !== routeCount) { if (cleanup) cleanup(); return; }
      current = { cleanup: cleanup };
      main.textContent = "";
      main.appendChild(root);
      // A graph laid out while detached has no width: draw it again now it is in the page.
      if (view === "flame" && T.flame) T.flame.draw();
      main.dataset.state = "ready";
      // For bench/serve_vs_pprof.py: when the view was in the page, and when it was painted.
      performance.mark("tally:" + view + ":ready");
      requestAnimationFrame(function () { performance.mark("tally:" + view + ":painted"); });
    } catch (error) {
      if (id !== routeCount) return;
      main.textContent = "";
      main.appendChild(root);
      T.showError(error.message);
      main.dataset.state = "error";
    }
  }

  document.addEventListener("click", function (e) {
    if (e.defaultPrevented || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    const a = e.target.closest ? e.target.closest("a") : null;
    if (!a || !(a.dataset.internal || a.closest("#nav"))) return;
    e.preventDefault();
    T.navigate(a.getAttribute("href"));
  });
  window.addEventListener("popstate", route);

  async function start() {
    try {
      meta = await T.api("meta", null, true);
    } catch (error) {
      T.showError(error.message);
      document.getElementById("view").dataset.state = "error";
      document.getElementById("view").textContent = "";
      return;
    }
    T.meta = meta;
    setupRefine();
    route();
  }
  start();
})(window.tally);
