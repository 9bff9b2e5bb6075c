// Stack samples -> the call-graph shape, by google/pprof's rule (internal/graph newGraph,
// which `pprof -callgrind` prints): a frame is one line of a location (inline frames
// apart, innermost first); the sample's value is self cost of the leaf frame; walking from
// the root, each caller->callee pair adds the value to that edge once per sample (deep
// recursion repeats pairs; counting them again would inflate inclusive costs), and a frame
// "calling" the same position (recursion at one call site) is no edge.
// Where tally's file deliberately differs from `pprof -callgrind`'s (checked in
// tests/formats/callgrind/callgrind_pprof_peer_test.cc): an edge's call count is the
// number of samples through it, not pprof's 0, which callgrind_annotate reads as "no call"
// and adds to the caller's self cost; file names are kept as recorded, not cleaned; all
// sample types are written in their own units (pprof writes its one selected type).
#include <algorithm>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "core/hash.h"
#include "core/sample_merger.h"
#include "formats/callgrind/callgrind.h"

namespace tally::callgrind {

namespace {

class GraphBuilder {
 public:
  GraphBuilder(const core::Profile& in, core::Diagnostics& diagnostics)
      : in_(in), diagnostics_(diagnostics) {}

  core::Profile build() {
    copy_header();
    count_index_ = count_type();
    std::vector<uint32_t> frames;
    size_t labelled = 0;
    for (size_t i = 0; i < in_.sample_count(); ++i) {
      frames.clear();
      for (core::LocationId loc : in_.stack(i)) {
        if (loc == 0 || loc > in_.locations.size())
          throw std::logic_error("a sample refers to no location");
        const size_t lines = in_.location(loc).lines.size();
        for (size_t k = 0; k < std::max<size_t>(lines, 1); ++k) frames.push_back(frame(loc, k));
      }
      if (!in_.labels(i).empty()) ++labelled;
      const auto values = in_.values(i);
      if (std::all_of(values.begin(), values.end(), [](int64_t v) { return v == 0; }))
        continue;  // pprof skips them too: no node, no edge
      if (frames.empty()) {
        ++empty_stacks_;
        continue;
      }
      add(frames, values, i);
    }
    finish_edges();
    if (labelled > 0)
      diagnostics_.warn(fmt::format("callgrind: labels of {} sample{} dropped (a call graph has "
                                    "none)", labelled, labelled == 1 ? "" : "s"));
    if (empty_stacks_ > 0)
      diagnostics_.warn(fmt::format("callgrind: {} sample{} without a stack dropped",
                                    empty_stacks_, empty_stacks_ == 1 ? "" : "s"));
    return std::move(out_);
  }

 private:
  struct Edge {
    uint32_t caller = 0, callee = 0;
    int64_t count = 0;
    size_t last_sample = SIZE_MAX;  // counted once per sample
    std::vector<int64_t> inclusive;
  };

  void copy_header() {
    for (const auto& t : in_.sample_types)
      out_.sample_types.push_back(out_.value_type(in_.str(t.type), in_.str(t.unit)));
    out_.default_sample_type = out_.intern(in_.str(in_.default_sample_type));
    out_.period_type = out_.value_type(in_.str(in_.period_type.type), in_.str(in_.period_type.unit));
    out_.period = in_.period;
    out_.time_nanos = in_.time_nanos;
    out_.duration_nanos = in_.duration_nanos;
    for (core::StringId c : in_.comments) out_.comments.push_back(out_.intern(in_.str(c)));
    for (const core::Mapping& m : in_.mappings) {
      core::Mapping copy = m;
      copy.file = out_.intern(in_.str(m.file));
      copy.build_id = out_.intern(in_.str(m.build_id));
      out_.add_mapping(copy);
    }
    for (const core::Function& f : in_.functions)
      out_.add_function({out_.intern(in_.str(f.name)), out_.intern(in_.str(f.system_name)),
                         out_.intern(in_.str(f.filename)), f.start_line});
    auto& graph = out_.call_graph;
    graph.present = true;
    graph.parts.emplace_back();
    graph.has_line = true;
    for (const core::Location& l : in_.locations)
      if (l.address != 0) graph.has_instr = true;
  }

  // The sample type that counts samples ("samples"/count, else the first count), or -1.
  int count_type() const {
    int first_count = -1;
    for (size_t i = 0; i < in_.sample_types.size(); ++i) {
      if (in_.str(in_.sample_types[i].unit) != "count") continue;
      if (in_.str(in_.sample_types[i].type) == "samples") return static_cast<int>(i);
      if (first_count < 0) first_count = static_cast<int>(i);
    }
    return first_count;
  }

  // One position per (location, line): a location of the output profile.
  uint32_t frame(core::LocationId loc, size_t line) {
    const uint64_t key = uint64_t(loc) << 32 | line;
    auto [it, inserted] = frames_.try_emplace(key, 0);
    if (inserted) {
      const core::Location& l = in_.location(loc);
      core::Location position;
      position.mapping = l.mapping;
      position.address = l.address;
      if (line < l.lines.size()) position.lines.push_back(l.lines[line]);
      it->second = out_.add_location(std::move(position));
    }
    return it->second;
  }

  // `frames` leaf first.
  void add(const std::vector<uint32_t>& frames, std::span<const int64_t> values, size_t sample) {
    const uint32_t leaf = frames.front();
    merger_.add(std::span(&leaf, 1), values);
    const int64_t count = count_index_ >= 0 ? values[static_cast<size_t>(count_index_)] : 1;
    for (size_t i = frames.size() - 1; i > 0; --i) {
      const uint32_t caller = frames[i], callee = frames[i - 1];
      if (caller == callee) continue;
      auto [it, inserted] = edge_index_.try_emplace(uint64_t(caller) << 32 | callee, edges_.size());
      if (inserted) edges_.push_back({caller, callee, 0, SIZE_MAX, std::vector<int64_t>(values.size())});
      Edge& e = edges_[it->second];
      if (e.last_sample == sample) continue;
      e.last_sample = sample;
      e.count = core::add_saturating(e.count, count);
      for (size_t k = 0; k < values.size(); ++k)
        e.inclusive[k] = core::add_saturating(e.inclusive[k], values[k]);
    }
  }

  void finish_edges() {
    auto& calls = out_.call_graph.calls;
    calls.reserve(edges_.size());
    for (Edge& e : edges_) calls.push_back({e.caller, e.callee, e.count, 0, std::move(e.inclusive)});
  }

  const core::Profile& in_;
  core::Diagnostics& diagnostics_;
  core::Profile out_;
  core::SampleMerger merger_{out_};
  int count_index_ = -1;
  std::unordered_map<uint64_t, uint32_t> frames_;
  std::unordered_map<uint64_t, size_t> edge_index_;
  std::vector<Edge> edges_;
  size_t empty_stacks_ = 0;
};

}  // namespace

core::Expected<core::Profile> call_graph_from_stacks(const core::Profile& profile,
                                                     core::Diagnostics& diagnostics) {
  if (profile.call_graph.present) return profile;
  try {
    return GraphBuilder(profile, diagnostics).build();
  } catch (const std::logic_error& e) {
    return core::Error{std::string("callgrind: ") + e.what(), core::ErrorKind::unsupported};
  }
}

}  // namespace tally::callgrind
