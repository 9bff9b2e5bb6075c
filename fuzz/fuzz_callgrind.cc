// The callgrind reader on any bytes: looks_like_callgrind and read_profile; on success the
// call-graph model must hold together (every self cost a one-frame sample at a valid
// position, edges and jumps between valid positions of valid parts, one value per sample
// type everywhere, part labels only on multi-part files), and the writer, with and without
// compression, must give text that reads again to the same self costs, calls and jumps at
// the same positions; the read lexed on other threads (Lexing) must give the same profile id for
// id, or the same error. (Not to the same text when written again: blocks follow location ids,
// which a reader assigns in order of appearance, callees included.)
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "formats/callgrind/callgrind.h"
#include "fuzz_check.h"

using namespace tally;

namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Saturating sums depend on the order of their terms once they saturate, and the writer
// may order costs differently: totals are compared only where no sum can reach the limit.
bool sums_are_exact(const core::Profile& p) {
  unsigned __int128 magnitude = 0;
  auto add = [&](int64_t v) {
    magnitude += v < 0 ? static_cast<unsigned __int128>(-(v + 1)) + 1
                       : static_cast<unsigned __int128>(v);
  };
  for (size_t i = 0; i < p.sample_count(); ++i)
    for (int64_t v : p.values(i)) add(v);
  for (const core::CallEdge& e : p.call_graph.calls) {
    add(e.count);
    for (int64_t v : e.inclusive) add(v);
  }
  for (const core::Jump& j : p.call_graph.jumps) {
    add(j.executed);
    add(j.followed);
  }
  return magnitude < (static_cast<unsigned __int128>(1) << 62);
}

void check_model(const core::Profile& p) {
  const size_t strings = p.strings.size();
  const size_t types = p.sample_types.size();
  const core::CallGraph& g = p.call_graph;
  FUZZ_CHECK(g.present, "a callgrind file reads as a call-graph profile");
  FUZZ_CHECK(!g.parts.empty(), "a call graph has at least one part");
  FUZZ_CHECK(types >= 1, "an events: line names at least one event");
  FUZZ_CHECK(g.events.size() == types, "one EventInfo per sample type");
  for (const core::ValueType& t : p.sample_types)
    FUZZ_CHECK(t.type < strings && t.unit < strings, "sample type strings exist");
  for (const core::EventInfo& e : g.events) FUZZ_CHECK(e.long_name < strings, "long names exist");
  const auto valid = [&](core::LocationId id) { return id >= 1 && id <= p.locations.size(); };
  for (size_t i = 0; i < p.sample_count(); ++i) {
    FUZZ_CHECK(p.stack(i).size() == 1, "a self cost is a one-frame sample");
    FUZZ_CHECK(valid(p.stack(i)[0]), "sample location ids exist");
    FUZZ_CHECK(p.values(i).size() == types, "one value per sample type");
    const auto labels = p.labels(i);
    if (g.parts.size() == 1) {
      FUZZ_CHECK(labels.empty(), "a one-part file has no labels");
    } else {
      FUZZ_CHECK(labels.size() == 1 && p.str(labels[0].key) == "part" && labels[0].num >= 1 &&
                     static_cast<uint64_t>(labels[0].num) <= g.parts.size(),
                 "every sample of a multi-part file names its part");
    }
  }
  for (const core::CallEdge& e : g.calls) {
    FUZZ_CHECK(valid(e.caller) && valid(e.callee), "edge location ids exist");
    FUZZ_CHECK(e.part < g.parts.size(), "edge parts exist");
    FUZZ_CHECK(e.inclusive.size() == types, "one inclusive cost per sample type");
    FUZZ_CHECK(e.count >= 0, "call counts are unsigned in the file");
  }
  for (const core::Jump& j : g.jumps) {
    FUZZ_CHECK(valid(j.from) && valid(j.to), "jump location ids exist");
    FUZZ_CHECK(j.part < g.parts.size(), "jump parts exist");
    FUZZ_CHECK(j.executed >= 0 && j.followed >= 0, "jump counts are unsigned in the file");
    if (!j.conditional) FUZZ_CHECK(j.executed == j.followed, "an unconditional jump is followed");
  }
  for (const core::GraphPart& part : g.parts) {
    FUZZ_CHECK(part.summary.empty() || part.summary.size() == types, "summary: is widened");
    FUZZ_CHECK(part.totals.empty() || part.totals.size() == types, "totals: is widened");
  }
  for (const core::Location& l : p.locations) {
    FUZZ_CHECK(l.mapping <= p.mappings.size(), "location mapping ids exist");
    FUZZ_CHECK(l.lines.size() == 1, "a position is one function and line");
    FUZZ_CHECK(l.lines[0].function >= 1 && l.lines[0].function <= p.functions.size(),
               "line function ids exist");
    FUZZ_CHECK(l.lines[0].line >= 0, "line numbers are unsigned in the file");
    if (!g.has_instr) FUZZ_CHECK(l.address == 0, "no addresses without instr positions");
  }
  for (const core::Function& f : p.functions)
    FUZZ_CHECK(f.name < strings && f.system_name < strings && f.filename < strings,
               "function strings exist");
  for (const core::Mapping& m : p.mappings)
    FUZZ_CHECK(m.file < strings && m.build_id < strings, "mapping strings exist");
  for (core::StringId c : p.comments) FUZZ_CHECK(c < strings, "comment strings exist");
}

// Every field the reader fills, id for id.
bool same_profile(const core::Profile& a, const core::Profile& b) {
  if (a.strings.size() != b.strings.size() || a.sample_count() != b.sample_count()) return false;
  for (core::StringId i = 0; i < a.strings.size(); ++i)
    if (a.str(i) != b.str(i)) return false;
  for (size_t i = 0; i < a.sample_count(); ++i)
    if (!std::ranges::equal(a.stack(i), b.stack(i)) || !std::ranges::equal(a.values(i), b.values(i)) ||
        !std::ranges::equal(a.labels(i), b.labels(i)))
      return false;
  return a.sample_types == b.sample_types && a.comments == b.comments &&
         a.attributes == b.attributes && a.mappings == b.mappings && a.functions == b.functions &&
         a.locations == b.locations && a.call_graph == b.call_graph;
}

// A position as text: object, function, file, address, line.
std::string position(const core::Profile& p, core::LocationId id) {
  const core::Location& l = p.location(id);
  const core::Function& f = p.function(l.lines[0].function);
  std::string out(l.mapping ? p.str(p.mapping(l.mapping).file) : std::string_view());
  // The writer spells an unknown file ("") as valgrind does, "???".
  std::string_view file = p.str(f.filename);
  if (file == "???") file = {};
  out.append("|").append(p.str(f.name)).append("|").append(file);
  return out + "|" + std::to_string(l.address) + "|" + std::to_string(l.lines[0].line);
}

using Content = std::map<std::string, std::vector<int64_t>>;

void add_to(Content& c, const std::string& key, std::span<const int64_t> values) {
  std::vector<int64_t>& sum = c[key];
  sum.resize(values.size(), 0);
  for (size_t i = 0; i < values.size(); ++i) sum[i] += values[i];  // sums_are_exact
}

// Everything the file says, independent of ids and order: self costs, calls and the jumps
// a writer can keep (within one object), each with its part, summed by position (two
// locations may share a position: a function with code from one file under two homes, which
// a writer lists under the first).
Content content(const core::Profile& p) {
  Content out;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    const auto labels = p.labels(i);
    const int64_t part = labels.empty() ? 1 : labels[0].num;
    add_to(out, "self " + std::to_string(part) + " " + position(p, p.stack(i)[0]), p.values(i));
  }
  for (const core::CallEdge& e : p.call_graph.calls) {
    add_to(out, "call " + std::to_string(e.part + 1) + " " + position(p, e.caller) + " -> " +
                    position(p, e.callee), e.inclusive);
    add_to(out, "calls " + std::to_string(e.part + 1) + " " + position(p, e.caller) + " -> " +
                    position(p, e.callee), std::span(&e.count, 1));
  }
  for (const core::Jump& j : p.call_graph.jumps) {
    if (p.location(j.from).mapping != p.location(j.to).mapping) continue;
    const int64_t counts[] = {j.executed, j.followed};
    add_to(out, "jump " + std::to_string(j.part + 1) + " " + position(p, j.from) + " -> " +
                    position(p, j.to) + (j.conditional ? " cond" : ""), counts);
  }
  return out;
}

std::string describe(const Content::value_type& entry) {
  std::string out = entry.first;
  for (int64_t v : entry.second) out += " " + std::to_string(v);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  (void)callgrind::looks_like_callgrind(bytes);

  core::Diagnostics diagnostics;
  auto profile = callgrind::read_profile(bytes, "fuzz", diagnostics);
  // Lexed on other threads in chunks of a few lines: the same profile, id for id, the same
  // warnings, or the same error at the same line.
  core::Diagnostics lexed_diagnostics;
  auto lexed = callgrind::read_profile_with(bytes, "fuzz", lexed_diagnostics,
                                            callgrind::Lexing{2, 64});
  FUZZ_CHECK(lexed.has_value() == profile.has_value(), "the lexed read fails where the read fails");
  if (!profile) {
    FUZZ_CHECK(lexed.error().message == profile.error().message,
               "the lexed read fails with the read's error");
  } else {
    FUZZ_CHECK(same_profile(*lexed, *profile) &&
                   lexed_diagnostics.warnings() == diagnostics.warnings(),
               "the lexed read makes the read's profile and warnings");
  }
  // The read by function (reports by function, cat --summary) fails as the full read
  // does, and counts what the full read made.
  core::Diagnostics by_function_diagnostics;
  core::PositionCounts counts;
  auto by_function = callgrind::read_profile(bytes, "fuzz", by_function_diagnostics, nullptr,
                                             nullptr, core::PositionDetail::functions, &counts);
  FUZZ_CHECK(by_function.has_value() == profile.has_value(),
             "the read by function fails where the full read fails");
  // The same lexed on other threads, positions counted on a thread of their own.
  core::Diagnostics lexed_by_function_diagnostics;
  core::PositionCounts lexed_counts;
  auto lexed_by_function = callgrind::read_profile_with(
      bytes, "fuzz", lexed_by_function_diagnostics, callgrind::Lexing{1, 64}, nullptr, nullptr,
      core::PositionDetail::functions, &lexed_counts);
  FUZZ_CHECK(lexed_by_function.has_value() == by_function.has_value(),
             "the lexed read by function fails where the read by function fails");
  if (by_function)
    FUZZ_CHECK(same_profile(*lexed_by_function, *by_function) &&
                   lexed_counts.counted == counts.counted &&
                   lexed_counts.locations == counts.locations &&
                   lexed_counts.samples == counts.samples && lexed_counts.calls == counts.calls &&
                   lexed_counts.jumps == counts.jumps,
               "the lexed read by function makes the same profile and counts");
  if (!profile) {
    FUZZ_CHECK(profile.error().message.starts_with("fuzz: line "), "errors name the line");
    FUZZ_CHECK(by_function.error().message == profile.error().message,
               "the read by function fails with the full read's error");
    return 0;
  }
  const core::Profile& p = *profile;
  check_model(p);
  check_model(*by_function);
  FUZZ_CHECK(counts.counted && counts.locations == p.locations.size() &&
                 counts.samples == p.sample_count() && counts.calls == p.call_graph.calls.size() &&
                 counts.jumps == p.call_graph.jumps.size(),
             "the read by function counts the full read's locations, samples, calls and jumps");
  FUZZ_CHECK(by_function->locations.size() <= p.locations.size(),
             "the read by function makes no more locations than the full read");
  const bool exact = sums_are_exact(p);
  if (exact)  // saturated sums depend on the order of addition
    for (size_t k = 0; k < p.sample_types.size(); ++k)
      FUZZ_CHECK(by_function->total(k) == p.total(k), "the read by function keeps every total");
  const bool plain_text = std::none_of(data, data + size, [](uint8_t c) {
    return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
  });

  for (const bool compress : {true, false}) {
    const callgrind::WriteOptions options{compress, compress};
    auto written = callgrind::write_callgrind(p, options, diagnostics);
    if (!written) {
      // The writer refuses what callgrind cannot say (negative costs, no measured event).
      FUZZ_CHECK(written.error().kind == core::ErrorKind::unsupported, "refusals are unsupported");
      continue;
    }
    // Detection refuses control bytes (binary formats); names carry the input's.
    if (plain_text)
      FUZZ_CHECK(callgrind::looks_like_callgrind(as_bytes(*written)),
                 "what tally writes is detected as callgrind");
    core::Diagnostics again_diagnostics;
    auto again = callgrind::read_profile(as_bytes(*written), "rewritten", again_diagnostics);
    if (!again) std::fprintf(stderr, "%s\n--- written:\n%s\n", again.error().message.c_str(),
                             written->c_str());
    FUZZ_CHECK(again.has_value(), "tally reads the callgrind text it wrote");
    check_model(*again);
    FUZZ_CHECK(again->call_graph.parts.size() == p.call_graph.parts.size(), "parts are kept");
    FUZZ_CHECK(again->sample_types.size() <= p.sample_types.size(),
               "no event appears from nowhere");
    if (exact && again->sample_types.size() == p.sample_types.size()) {
      for (size_t k = 0; k < p.sample_types.size(); ++k)
        FUZZ_CHECK(again->total(k) == p.total(k), "rewriting keeps every event's total");
      const auto before = content(p), after = content(*again);
      if (before != after) {
        for (const auto& entry : before)
          if (auto it = after.find(entry.first); it == after.end() || it->second != entry.second)
            std::fprintf(stderr, "before: %s\n", describe(entry).c_str());
        for (const auto& entry : after)
          if (auto it = before.find(entry.first); it == before.end() || it->second != entry.second)
            std::fprintf(stderr, "after: %s\n", describe(entry).c_str());
      }
      FUZZ_CHECK(before == after, "rewriting keeps every cost, call and jump where it was");
    }
  }
  return 0;
}
