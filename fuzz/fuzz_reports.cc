// Every report on any profile tally reads: the bytes are read as the command line reads a
// file (gzip inflated, the format detected, formats::read_profile without canonical order),
// then, on success, the result models of top, peek, tree, traces, flame, list (on stand-in
// source files), images, thread totals, diff of the profile against itself and timeline,
// rendered as text, SVG and JSON. Sample values come from the file, so sums near the int64
// limits must saturate, never overflow (UBSan aborts on that). The node granularity and
// the sample type reported follow from the input's hash, so that every choice is reached.
//
// Invariants checked besides "no crash": the totals are the saturated sums of the values
// (computed here in 128 bits); a profile whose values are all non-negative gives no negative
// flat, cum, link weight, image, thread or timeline total, and no flat above its cum on
// stacks; every flame frame is at least as wide as each child; a diff of a profile with
// itself changes nothing and finds nothing significant.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "analyze/diff.h"
#include "analyze/flame_svg.h"
#include "analyze/flame_tree.h"
#include "analyze/images.h"
#include "analyze/peek.h"
#include "analyze/source_files.h"
#include "analyze/source_list.h"
#include "analyze/timeline.h"
#include "analyze/top.h"
#include "analyze/top_text.h"
#include "analyze/traces.h"
#include "analyze/tree.h"
#include "cli/thread_totals.h"
#include "formats/format.h"
#include "fuzz_check.h"
#include "io/gzip.h"
#include "io/input.h"
#include "web/report_json.h"

using namespace tally;

namespace {

using Wide = __int128;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t clamp_wide(Wide v) {
  if (v > kMax) return kMax;
  if (v < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

Wide wide_abs(int64_t v) { return v < 0 ? -Wide{v} : Wide{v}; }

// A directory holding one source file of 40 lines, made once: list reads it for half the
// functions; the other half name a file that exists nowhere. The profile's own file names
// are never opened (they could name /dev/zero or a pipe).
const std::string& source_dir() {
  static const std::string dir = [] {
    char pattern[] = "/tmp/fuzz_reports_src.XXXXXX";
    const char* made = mkdtemp(pattern);
    FUZZ_CHECK(made != nullptr, "a temporary directory for the stand-in sources");
    std::ofstream out(std::string(made) + "/present.c");
    for (int line = 1; line <= 40; ++line) out << "int line" << line << ";\n";
    return std::string(made);
  }();
  return dir;
}

// The profile with every function's file renamed to present.c or absent.c (by its id).
core::Profile with_stand_in_sources(const core::Profile& p) {
  core::Profile copy = p;
  const core::StringId present = copy.intern("present.c"), absent = copy.intern("absent.c");
  for (core::Function& f : copy.functions)
    if (f.filename != 0) f.filename = f.filename % 2 == 0 ? present : absent;
  return copy;
}

// As the server sends it: names from the file may be invalid UTF-8, replaced (web/api.cc).
void dump(const nlohmann::json& j) {
  FUZZ_CHECK(!j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).empty(),
             "JSON is written");
}

bool json_has_negative_total(const nlohmann::json& j) {
  return j.contains("total") && j["total"].is_number_integer() && j["total"].get<int64_t>() < 0;
}

void check_top(const core::Profile& p, const analyze::TopOptions& options, size_t value,
               bool non_negative) {
  auto top = analyze::compute_top(p, options);
  if (!top) return;
  Wide total = 0;
  for (size_t s = 0; s < p.sample_count(); ++s) total += wide_abs(p.values(s)[value]);
  FUZZ_CHECK(top->total == clamp_wide(total), "top's total is the saturated sum of |value|");
  FUZZ_CHECK(top->total >= 0 && top->total_samples >= 0, "top's totals are not negative");
  for (const analyze::TopRow& row : top->rows) {
    if (non_negative) {
      FUZZ_CHECK(row.flat >= 0 && row.cum >= 0, "non-negative values give non-negative rows");
      // A call graph's inclusive costs come from its calls (recursion counts twice).
      if (top->call_graph) continue;
      FUZZ_CHECK(row.cum <= top->total, "no cum above the total");
      FUZZ_CHECK(row.flat <= row.cum, "a stack node's flat is in its cum");
    }
  }
  if (non_negative) FUZZ_CHECK(top->shown_flat >= 0, "the shown flat sum is not negative");
  const std::string text = analyze::format_top(*top);
  FUZZ_CHECK(!text.empty(), "top prints something");
  const nlohmann::json j = web::top_json(*top);
  FUZZ_CHECK(!json_has_negative_total(j), "top's JSON total is not negative");
  dump(j);
}

void check_tree_reports(const core::Profile& p, const analyze::NodeOptions& nodes,
                        bool non_negative) {
  analyze::TreeOptions tree_options;
  tree_options.nodes = nodes;
  if (auto tree = analyze::compute_tree(p, tree_options)) {
    for (const analyze::TreeEntry& e : tree->entries) {
      if (!non_negative) continue;
      FUZZ_CHECK(e.flat >= 0 && e.cum >= 0 && e.flat <= e.cum, "tree entries are sane");
      for (const auto* links : {&e.callers, &e.callees})
        for (const analyze::TreeLink& l : *links) FUZZ_CHECK(l.weight >= 0, "tree links are not negative");
    }
    analyze::format_tree(*tree);
  }
  analyze::PeekOptions peek_options;
  peek_options.regex = ".";
  peek_options.nodes = nodes;
  if (auto peek = analyze::compute_peek(p, peek_options)) {
    if (non_negative)
      for (const analyze::TreeEntry& e : peek->entries)
        for (const auto* links : {&e.callers, &e.callees})
          for (const analyze::TreeLink& l : *links) FUZZ_CHECK(l.weight >= 0, "peek links are not negative");
    analyze::format_tree(*peek);
    dump(web::peek_json(*peek));
  }
  analyze::TracesOptions traces_options;
  traces_options.nodes = nodes;
  if (auto traces = analyze::compute_traces(p, traces_options)) analyze::format_traces(*traces);
}

void check_flame(const core::Profile& p, const analyze::NodeOptions& nodes, size_t value) {
  analyze::FlameTreeOptions options;
  options.nodes = nodes;
  const analyze::FlameSvgOptions svg;
  options.min_fraction = analyze::min_frame_fraction(svg);
  auto tree = analyze::build_flame_tree(p, options);
  if (!tree) return;
  Wide positive = 0;
  for (size_t s = 0; s < p.sample_count(); ++s)
    if (p.values(s)[value] > 0) positive += p.values(s)[value];
  FUZZ_CHECK(tree->total() == clamp_wide(positive),
             "the flame graph's width is the saturated sum of the positive values");
  for (const analyze::FlameFrame& f : tree->frames) {
    FUZZ_CHECK(f.value >= 0 && f.start >= 0, "flame frames have no negative width or offset");
    FUZZ_CHECK(f.off_cpu >= 0 && f.off_cpu <= f.value, "a frame's off-CPU part is within it");
    for (uint32_t c : f.children)
      FUZZ_CHECK(tree->frames[c].value <= f.value, "a child is no wider than its parent");
  }
  const nlohmann::json j = web::flame_json(*tree);
  for (const auto& self : j["nodes"]["self"])
    FUZZ_CHECK(self.get<int64_t>() >= 0, "a flame frame's self width is not negative");
  dump(j);
  analyze::render_flame_svg(*tree, svg);
}

void check_list(const core::Profile& p, bool non_negative) {
  const core::Profile stand_in = with_stand_in_sources(p);
  analyze::SourceFiles sources(source_dir(), "");
  analyze::ListOptions options;
  options.regex = ".";
  auto list = analyze::compute_list(stand_in, options, sources);
  if (!list) return;
  FUZZ_CHECK(list->total >= 0, "list's total is not negative");
  if (non_negative)
    for (const analyze::ListRoutine& r : list->routines) {
      FUZZ_CHECK(r.flat >= 0 && r.cum >= 0, "list routines are not negative");
      for (const analyze::ListLine& l : r.lines)
        FUZZ_CHECK(l.flat >= 0 && l.cum >= 0, "list lines are not negative");
    }
  analyze::format_list(*list);
  dump(web::source_json(*list));
}

void check_diff(const core::Profile& p, const analyze::NodeOptions& nodes) {
  analyze::DiffOptions options;
  options.top.nodes = nodes;
  auto diff = analyze::compute_diff(p, p, options);
  if (!diff) return;
  FUZZ_CHECK(diff->base_total == diff->new_total, "a profile against itself: equal totals");
  FUZZ_CHECK(diff->significant == 0, "a profile against itself: no significant change");
  for (const analyze::DiffRow& row : diff->rows) {
    FUZZ_CHECK(row.flat_change() == 0 && row.cum_change() == 0,
               "a profile against itself: no change in any share");
    FUZZ_CHECK(!row.significant, "a profile against itself: no row significant");
  }
  analyze::format_diff(*diff);
  dump(web::diff_json(*diff));
}

void check_others(const core::Profile& p, bool all_non_negative, bool non_negative) {
  if (auto images = analyze::compute_images(p, "")) {
    if (non_negative) {
      FUZZ_CHECK(images->total >= 0, "non-negative values give a non-negative image total");
      for (const analyze::ImageRow& row : images->rows)
        FUZZ_CHECK(row.value >= 0 && row.value <= images->total, "an image is within the total");
    }
    analyze::format_images(*images);
  }
  if (auto threads = cli::thread_totals_text(p, {}, ""); threads && all_non_negative) {
    // Rows after the title and the header; the last column is always a value.
    size_t line_start = 0;
    for (int line = 0; line_start < threads->size(); ++line) {
      const size_t end = threads->find('\n', line_start);
      const std::string row = threads->substr(line_start, end - line_start);
      if (line >= 2)
        FUZZ_CHECK(row.find_last_of(' ') == std::string::npos || row[row.find_last_of(' ') + 1] != '-',
                   "thread totals of non-negative values are not negative");
      if (end == std::string::npos) break;
      line_start = end + 1;
    }
  }
  if (auto timeline = analyze::compute_timeline(p, {})) {
    for (const analyze::TimelineThread& t : timeline->threads) {
      if (all_non_negative) FUZZ_CHECK(t.on_cpu >= 0 && t.off_cpu >= 0, "thread times are not negative");
      for (const analyze::TimelineSpan& span : t.spans) FUZZ_CHECK(span.begin <= span.end, "spans end after they begin");
    }
    dump(web::timeline_json(*timeline));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (io::is_gzip(bytes)) {
    auto inflated = io::gunzip(bytes, "fuzz.gz", uint64_t(16) << 20);
    if (!inflated) return 0;
    bytes = std::move(*inflated);
  }
  uint64_t hash = 1469598103934665603u;  // FNV-1a: the options follow from the input
  for (uint8_t b : bytes) hash = (hash ^ b) * 1099511628211u;
  core::Diagnostics diagnostics;
  auto read = formats::read_profile(io::Input::from_bytes("fuzz", std::move(bytes)), diagnostics,
                                    nullptr, /*canonical=*/false);
  if (!read || read->sample_types.empty()) return 0;
  const core::Profile& p = *read;

  analyze::NodeOptions nodes;
  nodes.granularity = static_cast<analyze::Granularity>(hash % 4);
  nodes.inlines = (hash >> 2) % 2 == 0;
  auto value = analyze::report_value_index(p, "");
  if (!value) return 0;
  bool non_negative = true, all_non_negative = true;
  for (size_t s = 0; s < p.sample_count(); ++s)
    for (size_t t = 0; t < p.sample_types.size(); ++t) {
      const bool negative = p.values(s)[t] < 0;
      all_non_negative = all_non_negative && !negative;
      if (t == *value) non_negative = non_negative && !negative;
    }
  // The call graph's inclusive costs are values too.
  for (const core::CallEdge& e : p.call_graph.calls)
    for (int64_t v : e.inclusive) {
      all_non_negative = all_non_negative && v >= 0;
      non_negative = non_negative && v >= 0;
    }

  analyze::TopOptions top;
  top.nodes = nodes;
  check_top(p, top, *value, non_negative);
  check_tree_reports(p, nodes, non_negative);
  check_flame(p, nodes, *value);
  check_list(p, non_negative);
  check_diff(p, nodes);
  check_others(p, all_non_negative, non_negative);
  return 0;
}
