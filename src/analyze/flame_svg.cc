#include "analyze/flame_svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

#include "analyze/units.h"
#include "core/checked_math.h"

namespace tally::analyze {

namespace {

constexpr int kFrameHeight = 16;
constexpr int kFontSize = 12;
constexpr double kCharWidth = 0.59 * kFontSize;  // an average glyph of the font below
constexpr int kPadX = 10;
constexpr int kPadTop = 60;  // title, subtitle and the controls
constexpr int kPadBottom = 34;  // the details line

void append_escaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += '?';
        else out += c;
    }
  }
}

// The label that fits `width` pixels: the name, else its start and "..", else nothing.
// Counts bytes, not glyphs: a little short for non-ASCII names, never too long.
std::string_view fitting_label(std::string_view name, double width, std::string& buffer) {
  const auto chars = static_cast<long>((width - 6) / kCharWidth);
  if (chars < 3) return {};
  if (static_cast<long>(name.size()) <= chars) return name;
  size_t keep = static_cast<size_t>(chars - 2);
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xc0) == 0x80) --keep;  // UTF-8
  buffer.assign(name.substr(0, keep));
  buffer += "..";
  return buffer;
}

std::string percent(int64_t value, int64_t total) {
  return fmt::format("{:.2f}%", total > 0 ? 100.0 * static_cast<double>(value) /
                                                static_cast<double>(total)
                                          : 0.0);
}

// The script: plain JavaScript run once the SVG has loaded. Frames are the <g> children
// of #frames in preorder, each with data-s (left edge), data-v (value) and data-d (depth)
// in value units, so zooming is exact integer arithmetic on those, not on pixels.
constexpr std::string_view kScript = R"JS(
(function () {
  'use strict';
  var svg = document.documentElement, NS = 'http://www.w3.org/2000/svg';
  var width = +svg.getAttribute('data-width'), padX = 10, charWidth = 0.59 * 12;
  var details = document.getElementById('details');
  var matchedText = document.getElementById('matched');
  var resetButton = document.getElementById('reset');
  var frames = [], nodes = document.getElementById('frames').children;
  for (var i = 0; i < nodes.length; i++) {
    var g = nodes[i], title = g.getElementsByTagName('title')[0].textContent;
    frames.push({
      g: g, rect: g.getElementsByTagName('rect')[0], text: g.getElementsByTagName('text')[0],
      title: title, name: title.substring(0, title.lastIndexOf(' (')),
      s: +g.getAttribute('data-s'), v: +g.getAttribute('data-v'), d: +g.getAttribute('data-d'),
      fill: g.getElementsByTagName('rect')[0].getAttribute('fill')
    });
  }
  var total = frames.length ? frames[0].v : 0, zoomed = 0;

  function label(name, w) {
    var n = Math.floor((w - 6) / charWidth);
    if (n < 3) return '';
    return name.length <= n ? name : name.substring(0, n - 2) + '..';
  }
  function place(f, x, w) {
    f.rect.setAttribute('x', x.toFixed(2));
    f.rect.setAttribute('width', w.toFixed(2));
    var text = label(f.name, w);
    if (!f.text) {
      if (!text) return;
      f.text = document.createElementNS(NS, 'text');
      f.text.setAttribute('y', (+f.rect.getAttribute('y') + 11.5).toString());
      f.g.appendChild(f.text);
    }
    f.text.setAttribute('x', (x + 3).toFixed(2));
    f.text.textContent = text;
  }
  // Shows the subtree of frame z across the full width, its ancestors dimmed below it.
  function zoom(z) {
    zoomed = z;
    var root = frames[z], scale = (width - 2 * padX) / root.v, end = root.s + root.v;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i], shown;
      if (f.d >= root.d) {
        shown = f.s >= root.s && f.s + f.v <= end;
        if (shown) place(f, padX + (f.s - root.s) * scale, f.v * scale);
        f.g.removeAttribute('class');
      } else {
        shown = f.s <= root.s && f.s + f.v >= end;
        if (shown) place(f, padX, width - 2 * padX);
        if (shown) f.g.setAttribute('class', 'parent');
      }
      f.g.style.display = shown ? '' : 'none';
    }
    resetButton.style.display = z === 0 ? 'none' : '';
  }
  // Highlights the frames whose name matches; the matched share counts each sample once:
  // in preorder a frame that starts before the end of a matched one is inside it.
  function search(term) {
    var re = null;
    matchedText.textContent = '';
    if (term) {
      try { re = new RegExp(term); } catch (e) { matchedText.textContent = 'invalid regex'; }
    }
    var matched = 0, coveredEnd = -1;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i], hit = re !== null && re.test(f.name);
      f.rect.setAttribute('fill', hit ? '#e600e6' : f.fill);
      if (hit && f.s >= coveredEnd) {
        matched += f.v;
        coveredEnd = f.s + f.v;
      }
    }
    if (re) matchedText.textContent = 'Matched: ' + (total ? 100 * matched / total : 0).toFixed(2) + '%';
  }
  function frameOf(target) {
    for (var n = target; n && n !== svg; n = n.parentNode)
      if (n.parentNode && n.parentNode.id === 'frames') return n;
    return null;
  }
  function indexOf(g) { return Array.prototype.indexOf.call(nodes, g); }
  function askSearch() {
    var term = window.prompt('Search (regular expression):', '');
    if (term !== null) search(term);
  }
  svg.addEventListener('click', function (e) {
    var g = frameOf(e.target);
    if (g) zoom(indexOf(g));
  });
  svg.addEventListener('mouseover', function (e) {
    var g = frameOf(e.target);
    details.textContent = g ? frames[indexOf(g)].title : '\u00a0';
  });
  resetButton.addEventListener('click', function (e) { e.stopPropagation(); zoom(0); });
  document.getElementById('search').addEventListener('click', askSearch);
  window.addEventListener('keydown', function (e) {
    if ((e.ctrlKey && e.key === 'f') || e.key === '/') { e.preventDefault(); askSearch(); }
    else if (e.key === 'Escape') { search(''); zoom(0); }
  });
  // State from the URL, for links and headless checks: #s=REGEX&z=NAME (zoom to the
  // first frame, in preorder, with that exact name).
  zoom(0);
  var params = window.location.hash.substring(1).split('&');
  for (var p = 0; p < params.length; p++) {
    var eq = params[p].indexOf('='), key = params[p].substring(0, eq);
    var val = decodeURIComponent(params[p].substring(eq + 1));
    if (key === 's') search(val);
    for (var k = 0; key === 'z' && k < frames.length; k++)
      if (frames[k].name === val) { zoom(k); break; }
  }
  svg.setAttribute('data-tally-ready', '1');
})();
)JS";

}  // namespace

double min_frame_fraction(const FlameSvgOptions& options) {
  return options.min_frame_px / std::max(1, options.width - 2 * kPadX);
}

// The same rounding as build_flame_tree's, so pruning again removes nothing more.
int64_t min_frame_value(int64_t total, const FlameSvgOptions& options) {
  return core::to_int64_saturating(
      std::ceil(static_cast<double>(total) * min_frame_fraction(options)));
}

std::string flame_colour(std::string_view name) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  const unsigned r = 205 + h % 51, g = (h >> 8) % 231, b = (h >> 16) % 56;
  return fmt::format("#{:02x}{:02x}{:02x}", r, g, b);
}

std::string flame_off_cpu_colour(std::string_view name) {
  uint32_t h = 2166136261u;  // FNV-1a
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  const unsigned r = 60 + h % 60, g = 110 + (h >> 8) % 80, b = 205 + (h >> 16) % 51;
  return fmt::format("#{:02x}{:02x}{:02x}", r, g, b);
}

std::string render_flame_svg(FlameTree& tree, const FlameSvgOptions& options) {
  const int64_t total = tree.total();
  if (total > 0) prune_flame_tree(tree, min_frame_value(total, options));
  const int width = options.width;
  const double usable = width - 2 * kPadX;
  const uint32_t max_depth = tree.frames.empty() ? 0 : tree.max_depth();
  const int frames_bottom = kPadTop + static_cast<int>(max_depth + 1) * kFrameHeight;
  const int height = frames_bottom + kPadBottom;

  std::string out;
  auto w = std::back_inserter(out);
  fmt::format_to(w,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
                 "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
                 "height=\"{1}\" viewBox=\"0 0 {0} {1}\" data-width=\"{0}\">\n",
                 width, height);
  out +=
      "<style>\n"
      "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
      "#title { font-size: 17px; }\n"
      "#frames g { cursor: pointer; }\n"
      "#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
      "#frames g.parent { opacity: 0.5; }\n"
      "#frames text { pointer-events: none; }\n"
      ".button { cursor: pointer; fill: #0645ad; }\n"
      "</style>\n";
  fmt::format_to(w, "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#f8f8f0\"/>\n", width,
                 height);
  out += fmt::format("<text id=\"title\" x=\"{}\" y=\"24\" text-anchor=\"middle\">", width / 2);
  append_escaped(out, options.title);
  out += "</text>\n";
  std::string subtitle = fmt::format("{} {}: total {}", tree.sample_type, tree.sample_unit,
                                     scaled_label(total, tree.sample_unit, "auto"));
  if (tree.has_off_cpu) subtitle += ", off-CPU frames in blue";
  if (tree.merged_frames > 0)
    subtitle += fmt::format(", {} tiny frames merged (narrower than {} px)", tree.merged_frames,
                            options.min_frame_px);
  fmt::format_to(w, "<text id=\"subtitle\" x=\"{}\" y=\"44\" text-anchor=\"middle\">", width / 2);
  append_escaped(out, subtitle);
  out += "</text>\n";
  fmt::format_to(w,
                 "<text id=\"reset\" class=\"button\" x=\"{}\" y=\"24\">Reset Zoom</text>\n"
                 "<text id=\"search\" class=\"button\" x=\"{}\" y=\"24\" "
                 "text-anchor=\"end\">Search</text>\n"
                 "<text id=\"matched\" x=\"{}\" y=\"{}\" text-anchor=\"end\"></text>\n"
                 "<text id=\"details\" x=\"{}\" y=\"{}\">\u00a0</text>\n",
                 kPadX, width - kPadX, width - kPadX, frames_bottom + 20, kPadX,
                 frames_bottom + 20);

  out += "<g id=\"frames\">\n";
  const double scale = total > 0 ? usable / static_cast<double>(total) : 0;
  std::string buffer;
  for (const FlameFrame& f : tree.frames) {
    const std::string& name = tree.names[f.name];
    const double x = kPadX + static_cast<double>(f.start) * scale;
    const double fw = static_cast<double>(f.value) * scale;
    const int y = kPadTop + static_cast<int>(max_depth - f.depth) * kFrameHeight;
    fmt::format_to(w, "<g data-s=\"{}\" data-v=\"{}\" data-d=\"{}\"><title>", f.start, f.value,
                   f.depth);
    append_escaped(out, name);
    fmt::format_to(w, " ({}, {}", scaled_label(f.value, tree.sample_unit, "auto"),
                   percent(f.value, total));
    if (f.merged_frames > 0) fmt::format_to(w, ", {} tiny frames merged", f.merged_frames);
    fmt::format_to(w,
                   ")</title><rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" "
                   "fill=\"{}\"/>",
                   x, y, fw, kFrameHeight - 1,
                   mostly_off_cpu(f) ? flame_off_cpu_colour(name) : flame_colour(name));
    const std::string_view text = fitting_label(name, fw, buffer);
    if (!text.empty()) {
      fmt::format_to(w, "<text x=\"{:.2f}\" y=\"{:.1f}\">", x + 3, y + 11.5);
      append_escaped(out, text);
      out += "</text>";
    }
    out += "</g>\n";
  }
  out += "</g>\n<script type=\"text/ecmascript\"><![CDATA[";
  out += kScript;
  out += "]]></script>\n</svg>\n";
  return out;
}

}  // namespace tally::analyze
