#include "formats/gperf/signal_frames.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/checked_math.h"
#include "core/sample_merger.h"

namespace tally::gperf {

namespace {

std::string_view base_name(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "libc-2.15.so": `prefix`, a version that starts with a digit, ".so".
bool versioned_library(std::string_view name, std::string_view prefix) {
  return name.starts_with(prefix) && name.size() > prefix.size() &&
         name[prefix.size()] >= '0' && name[prefix.size()] <= '9' && name.ends_with(".so");
}

// pprof's shape: the second frame of all records but at most records/32 of them.
struct SharedFrame {
  core::LocationId id = 0;
  uint64_t records = 0;
};

SharedFrame shared_second_frame(std::span<const uint32_t> records_by_second_frame,
                                uint64_t records) {
  const uint64_t needed = records - records / 32;
  if (needed == 0) return {};
  for (size_t id = 1; id < records_by_second_frame.size(); ++id)
    if (records_by_second_frame[id] >= needed)  // more than half: at most one such frame
      return {static_cast<core::LocationId>(id), records_by_second_frame[id]};
  return {};
}

bool shares(std::span<const core::LocationId> stack, core::LocationId id) {
  return stack.size() > 1 && stack[1] == id;
}

std::string mapping_name(const core::Profile& p, core::MappingId id) {
  if (id == 0) return "no mapping";
  std::string_view file = p.str(p.mapping(id).file);
  return file.empty() ? "an unnamed mapping" : std::string(file);
}

struct Verdict {
  bool remove = false;
  std::string evidence;
};

// Without the binary: the trampoline's library, and leaves in at least two mappings.
Verdict judge_from_profile(const core::Profile& p, std::string_view file,
                           const std::vector<core::MappingId>& leaf_mappings) {
  if (file.empty())
    return {false, "the profile names no mapped file for it, so nothing shows it is the "
                   "signal trampoline"};
  if (!holds_signal_trampoline(file))
    return {false, "that file does not hold the signal trampoline (libc, libpthread and the "
                   "vDSO do)"};
  std::string leaves;
  for (size_t i = 0; i < leaf_mappings.size() && i < 4; ++i)
    leaves += (i ? ", " : "") + mapping_name(p, leaf_mappings[i]);
  if (leaf_mappings.size() > 4) leaves += ", ...";
  if (leaf_mappings.size() < 2)
    return {false, fmt::format("that library holds the signal trampoline, but the leaves under "
                               "the frame all lie in one mapping ({}): it may be their caller",
                               leaves)};
  return {true, fmt::format("that library holds the signal trampoline, and the leaves under the "
                            "frame lie in {} mappings ({}), as under a signal, which interrupts "
                            "anywhere, and not under one call site",
                            leaf_mappings.size(), leaves)};
}

// The samples again, `id` removed where it is the second frame; then, as pprof, a leaf
// that the unwinder reported twice (leaf == caller - 1 + 1) is dropped. Equal stacks merge.
void remove_second_frame(core::Profile& p, core::LocationId id) {
  const size_t value_count = p.sample_types.size();
  std::vector<core::LocationId> frames;
  std::vector<size_t> ends;
  std::vector<int64_t> values;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    const size_t begin = frames.size();
    auto stack = p.stack(s);
    frames.insert(frames.end(), stack.begin(), stack.end());
    if (shares(stack, id)) {
      frames.erase(frames.begin() + begin + 1);
      if (frames.size() - begin > 1 &&
          p.location(frames[begin]).address == p.location(frames[begin + 1]).address + 1)
        frames.erase(frames.begin() + begin + 1);
    }
    ends.push_back(frames.size());
    auto v = p.values(s);
    values.insert(values.end(), v.begin(), v.end());
  }
  p.clear_samples();  // gperftools samples have no labels
  core::SampleMerger merger(p);
  for (size_t s = 0, begin = 0; s < ends.size(); begin = ends[s++])
    merger.add(std::span(frames).subspan(begin, ends[s] - begin),
               std::span(values).subspan(s * value_count, value_count));
}

}  // namespace

bool holds_signal_trampoline(std::string_view file) {
  const std::string_view name = base_name(file);
  return name.starts_with("libc.so") || versioned_library(name, "libc-") ||
         name.starts_with("libpthread.so") || versioned_library(name, "libpthread-") ||
         name.starts_with("ld-musl-") || name.starts_with("libc.musl-") ||
         name == "[vdso]" || name.starts_with("linux-vdso.so") || name.starts_with("linux-gate.so");
}

void remove_signal_frame(core::Profile& p, std::span<const uint32_t> records_by_second_frame,
                         uint64_t records, const BinaryInspector* inspect) {
  const SharedFrame shared = shared_second_frame(records_by_second_frame, records);
  if (shared.id == 0) return;
  const core::Location& location = p.location(shared.id);
  const uint64_t recorded = location.address + 1;  // the reader took one off the return address
  std::string file;
  core::Mapping mapping;
  if (location.mapping != 0) {
    mapping = p.mapping(location.mapping);
    file = p.str(mapping.file);
  }

  int64_t samples = 0;
  std::vector<core::MappingId> leaf_mappings;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    auto stack = p.stack(s);
    if (!shares(stack, shared.id)) continue;
    samples = core::add_saturating(samples, p.values(s)[0]);  // counts come from the file
    core::MappingId leaf = p.location(stack[0]).mapping;
    if (std::find(leaf_mappings.begin(), leaf_mappings.end(), leaf) == leaf_mappings.end())
      leaf_mappings.push_back(leaf);
  }
  std::sort(leaf_mappings.begin(), leaf_mappings.end());

  BinaryAnswer answer;
  if (inspect && *inspect && !file.empty())
    answer = (*inspect)({.file = file, .start = mapping.start, .limit = mapping.limit,
                         .offset = mapping.offset, .address = recorded});
  Verdict verdict;
  switch (answer.kind) {
    case BinaryAnswer::Kind::signal_frame:
      verdict = {true, "the binary: " + answer.detail};
      break;
    case BinaryAnswer::Kind::other_code:
      verdict = {false, "the binary says it is not a signal frame: " + answer.detail};
      break;
    case BinaryAnswer::Kind::not_at_hand:
      verdict = judge_from_profile(p, file, leaf_mappings);
      if (!file.empty())
        verdict.evidence += "; no binary at hand" +
                            (answer.detail.empty() ? std::string() : ": " + answer.detail);
      break;
  }

  const std::string where =
      fmt::format("address 0x{:x} (location 0x{:x}) in {}", recorded, location.address,
                  file.empty() ? mapping_name(p, location.mapping) : file);
  if (!verdict.remove) {
    p.set_attribute("gperf.shared_frame_kept",
                    fmt::format("{}: the second frame of {} of {} records ({} samples), which "
                                "pprof removes as a signal-handler artifact; kept: {}",
                                where, shared.records, records, samples, verdict.evidence));
    return;
  }
  remove_second_frame(p, shared.id);
  p.set_attribute("gperf.signal_frames_removed",
                  fmt::format("{} samples ({} of {} records), {}; evidence: {}", samples,
                              shared.records, records, where, verdict.evidence));
}

}  // namespace tally::gperf
