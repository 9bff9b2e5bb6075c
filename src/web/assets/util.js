"use strict";
// Shared helpers of tally's web UI: DOM building, number formatting, the URL's query
// parameters and the JSON API. Everything hangs off window.tally (no framework, no build step).
window.tally = window.tally || {};
(function (T) {
  // Parameters every view and API call takes (API.md); the rest of a URL's query is the view's own.
  // tz (the timeline's zoom, "START:END" seconds) is kept by every view too, but is no API
  // parameter: only /api/timeline gets it, as window.
  T.COMMON_PARAMS = ["si", "focus", "ignore", "hide", "show", "label_focus", "label_ignore", "time_range", "granularity", "side", "epoch", "epoch_to", "image", "event", "base_epoch", "base_epoch_to", "tz"];
  // The label filters may repeat (every label_focus must match): kept with all their values.
  T.LABEL_PARAMS = ["label_focus", "label_ignore"];
  // Database parameters (--db): kept by every view; base_epoch (a comparison's base) only
  // goes to /api/diff, the other views show the new side.
  T.DB_PARAMS = ["epoch", "epoch_to", "image", "event", "base_epoch", "base_epoch_to"];

  T.el = function (tag, attrs) {
    const node = document.createElement(tag);
    for (const key in attrs || {}) {
      const value = attrs[key];
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.substring(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (let i = 2; i < arguments.length; i++) {
      const child = arguments[i];
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" || typeof child === "number" ? document.createTextNode(String(child)) : child);
    }
    return node;
  };

  // The units tally's text reports scale to (analyze/units.cc): memory and time families.
  const MEMORY = [["B", 1], ["kB", 1024], ["MB", 1024 ** 2], ["GB", 1024 ** 3], ["TB", 1024 ** 4]];
  const TIME = [["ns", 1], ["us", 1e3], ["ms", 1e6], ["s", 1e9], ["hrs", 3600e9]];
  const UNIT_ALIASES = {
    b: [MEMORY, 1], byte: [MEMORY, 1], kb: [MEMORY, 1024], kilobyte: [MEMORY, 1024], mb: [MEMORY, 1024 ** 2],
    megabyte: [MEMORY, 1024 ** 2], gb: [MEMORY, 1024 ** 3],
    ns: [TIME, 1], nanosecond: [TIME, 1], us: [TIME, 1e3], microsecond: [TIME, 1e3], ms: [TIME, 1e6],
    millisecond: [TIME, 1e6], s: [TIME, 1e9], sec: [TIME, 1e9], second: [TIME, 1e9],
  };
  function unitOf(unit) {
    let key = String(unit || "").toLowerCase();
    if (key.length > 2 && key.endsWith("s")) key = key.slice(0, -1);
    return UNIT_ALIASES[key] || null;
  }
  // printf's rounding. toFixed and toPrecision round an exact tie (40.625 to 2 decimals) up,
  // C's printf and fmt (tally's text reports) to the even digit: 40.62. The page must show
  // the digits tally prints, so numbers are rounded here on the value's exact decimal digits.
  // |x| as {digits, point}: the digits with the decimal point after the first `point` of them.
  function exactDigits(x) {
    const text = Math.abs(x).toFixed(100), dot = text.indexOf(".");
    return { digits: text.slice(0, dot) + text.slice(dot + 1), point: dot };
  }
  // round(|x| * 10^places), half to even, as a digit string without leading zeros.
  function roundScaled(x, places) {
    const exact = exactDigits(x), keep = exact.point + places;
    const kept = exact.digits.slice(0, keep), rest = exact.digits.slice(keep);
    const odd = kept.length > 0 && "13579".indexOf(kept[kept.length - 1]) >= 0;
    const up = rest[0] > "5" || (rest[0] === "5" && (/[1-9]/.test(rest.slice(1)) || odd));
    const chars = (kept || "0").split("");
    if (up) {
      let i = chars.length - 1;
      while (i >= 0 && chars[i] === "9") chars[i--] = "0";
      if (i < 0) chars.unshift("1"); else chars[i] = String(Number(chars[i]) + 1);
    }
    return chars.join("").replace(/^0+(?=\d)/, "");
  }
  // A digit string scaled by 10^-places as fixed-point text.
  function withPoint(digits, places) {
    if (places === 0) return digits;
    const padded = digits.padStart(places + 1, "0");
    return padded.slice(0, padded.length - places) + "." + padded.slice(padded.length - places);
  }
  // printf("%.*f", places, x).
  T.fixed = function (x, places) {
    if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return x.toFixed(places);
    return (x < 0 ? "-" : "") + withPoint(roundScaled(x, places), places);
  };
  // printf("%.*g", precision, x): precision significant digits, trailing zeros dropped.
  T.general = function (x, precision) {
    if (x === 0) return "0";
    if (!Number.isFinite(x) || Math.abs(x) >= 1e21) return String(x);
    const exact = exactDigits(x), first = exact.digits.search(/[1-9]/);
    let exponent = exact.point - first - 1;
    let digits = roundScaled(x, precision - 1 - exponent);
    if (digits.length > precision) { exponent += 1; digits = digits.slice(0, precision); }
    const drop = function (text) { return text.indexOf(".") < 0 ? text : text.replace(/0+$/, "").replace(/\.$/, ""); };
    let text;
    if (exponent < -4 || exponent >= precision) {
      text = drop(withPoint(digits, precision - 1)) + "e" + (exponent < 0 ? "-" : "+") + String(Math.abs(exponent)).padStart(2, "0");
    } else {
      text = drop(withPoint(digits, precision - 1 - exponent));
    }
    return (x < 0 ? "-" : "") + text;
  };
  function trim(number) {
    const text = T.fixed(number, 2);
    return text.endsWith(".00") ? text.slice(0, -3) : text;
  }
  // A value in its unit, scaled like tally's "auto" labels: 1.25s, 340ms, 12.5MB, 1234.
  T.fmtValue = function (value, unit) {
    if (value === null || value === undefined) return "";
    const family = unitOf(unit);
    if (!family) return Number.isInteger(value) ? String(value) : trim(value);
    const base = Math.abs(value) * family[1];
    let best = null;
    for (const u of family[0]) if (base / u[1] >= 1) best = u;
    if (!best) best = family[0] === TIME ? ["s", 1e9] : family[0][0];
    const text = trim(base / best[1]);
    if (text === "0") return "0";
    return (value < 0 ? "-" : "") + text + best[0];
  };
  T.fmtPct = function (value, total) {
    if (!total) return "0%";
    return T.fixed(100 * value / total, 2) + "%";
  };
  T.fmtNum = function (x, digits) {
    return x === null || x === undefined ? "" : T.fixed(Number(x), digits === undefined ? 2 : digits);
  };

  // FNV-1a of the name's UTF-8 bytes into the palettes of tally's SVG flame graph
  // (analyze/flame_svg.cc: flame_colour warm, flame_off_cpu_colour the blues of frames off the
  // CPU), so both show a function in the same colour; the timeline's off-CPU spans use the blues.
  const encoder = new TextEncoder();
  function fnv1a(name) {
    let h = 2166136261 >>> 0;
    for (const byte of encoder.encode(name)) {
      h ^= byte;
      h = Math.imul(h, 16777619) >>> 0;
    }
    return h;
  }
  function hex(r, g, b) {
    return "#" + [r, g, b].map(function (c) { return c.toString(16).padStart(2, "0"); }).join("");
  }
  T.flameColour = function (name) {
    const h = fnv1a(name);
    return hex(205 + (h % 51), (h >>> 8) % 231, (h >>> 16) % 56);
  };
  T.flameOffCpuColour = function (name) {
    const h = fnv1a(name);
    return hex(60 + (h % 60), 110 + ((h >>> 8) % 80), 205 + ((h >>> 16) % 51));
  };

  // "^name$" with the regex characters escaped: the f= of a link that opens exactly one function.
  T.exactRegex = function (name) {
    return "^" + name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$";
  };

  T.query = function () { return new URLSearchParams(location.search); };
  // The common parameters of the current URL (the refine bar's state), as URLSearchParams.
  T.commonParams = function () {
    const q = T.query(), out = new URLSearchParams();
    for (const key of T.COMMON_PARAMS) {
      if (T.LABEL_PARAMS.indexOf(key) >= 0) { for (const v of q.getAll(key)) if (v) out.append(key, v); }
      else if (q.get(key)) out.set(key, q.get(key));
    }
    return out;
  };
  // A page URL that keeps the common parameters and sets the view's own.
  T.pageUrl = function (path, own) {
    const q = T.commonParams();
    for (const key in own || {}) if (own[key] !== null && own[key] !== undefined && own[key] !== "") q.set(key, own[key]);
    const text = q.toString();
    return path + (text ? "?" + text : "");
  };

  // GET /api/NAME with the common parameters plus `own`; rejects with the server's
  // {"error": ...} text on a 4xx/5xx so that the page can show it.
  T.api = async function (name, own, withoutCommon) {
    const q = withoutCommon ? new URLSearchParams() : T.commonParams();
    q.delete("tz");
    if (name !== "diff") { q.delete("base_epoch"); q.delete("base_epoch_to"); }
    for (const key in own || {}) if (own[key] !== null && own[key] !== undefined && own[key] !== "") q.set(key, own[key]);
    return T.apiQuery(name, q);
  };
  // GET /api/NAME with exactly the parameters `q` (URLSearchParams).
  T.apiQuery = async function (name, q) {
    const text = q.toString();
    const response = await fetch("/api/" + name + (text ? "?" + text : ""), { headers: { Accept: "application/json" } });
    let body = null;
    try { body = await response.json(); } catch (e) { body = null; }
    if (!response.ok) {
      const message = body && body.error ? body.error : response.status + " " + response.statusText;
      const error = new Error("/api/" + name + ": " + message);
      error.status = response.status;
      throw error;
    }
    if (body === null) throw new Error("/api/" + name + ": the answer is not JSON");
    return body;
  };

  T.showError = function (message) {
    const box = document.getElementById("error");
    box.textContent = message;
    box.hidden = !message;
  };

  // A link inside the app: navigates with history.pushState instead of a page load.
  T.link = function (href, text, attrs) {
    const a = T.el("a", Object.assign({ href: href, "data-internal": "1" }, attrs || {}), text);
    return a;
  };
})(window.tally);
