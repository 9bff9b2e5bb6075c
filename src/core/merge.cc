#include "core/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace tally::core {

namespace {

std::string type_list(const Profile& p) {
  std::string out;
  for (const auto& t : p.sample_types)
    out += (out.empty() ? "" : ", ") + std::string(p.str(t.type)) + "/" + std::string(p.str(t.unit));
  return out.empty() ? "(none)" : out;
}

class Appender {
 public:
  explicit Appender(Profile& into) : into_(into) {}

  void append(const Profile& src) {
    std::vector<StringId> str(src.strings.size());
    for (size_t i = 0; i < str.size(); ++i) str[i] = into_.intern(src.strings[static_cast<StringId>(i)]);
    auto s = [&](StringId id) { return str[id]; };

    // Mappings: one per (file, build id, offset); relocation = destination - source start.
    std::vector<MappingId> mapping(src.mappings.size() + 1, 0);
    std::vector<uint64_t> shift(src.mappings.size() + 1, 0);
    for (size_t i = 0; i < src.mappings.size(); ++i) {
      const Mapping& m = src.mappings[i];
      StringId file = s(m.file), build_id = s(m.build_id);
      bool named = file != 0 || build_id != 0;
      auto key = named ? std::make_tuple(file, build_id, m.offset, uint64_t(0), uint64_t(0))
                       : std::make_tuple(file, build_id, m.offset, m.start, m.limit);
      auto [it, inserted] = mappings_.try_emplace(key, 0);
      if (inserted) {
        Mapping copy = m;
        copy.file = file;
        copy.build_id = build_id;
        it->second = into_.add_mapping(copy);
      } else {
        Mapping& dst = into_.mapping(it->second);
        // The merged mapping knows symbols only if every part did.
        dst.has_functions = dst.has_functions && m.has_functions;
        dst.has_filenames = dst.has_filenames && m.has_filenames;
        dst.has_line_numbers = dst.has_line_numbers && m.has_line_numbers;
        dst.has_inline_frames = dst.has_inline_frames && m.has_inline_frames;
        if (m.limit - m.start > dst.limit - dst.start) dst.limit = dst.start + (m.limit - m.start);
      }
      mapping[i + 1] = it->second;
      shift[i + 1] = into_.mapping(it->second).start - m.start;  // modular arithmetic
    }
    std::vector<FunctionId> function(src.functions.size() + 1, 0);
    for (size_t i = 0; i < src.functions.size(); ++i) {
      const Function& f = src.functions[i];
      function[i + 1] = into_.add_function(
          {s(f.name), s(f.system_name), s(f.filename), f.start_line});
    }
    std::vector<LocationId> location(src.locations.size() + 1, 0);
    for (size_t i = 0; i < src.locations.size(); ++i) {
      Location l = src.locations[i];
      if (l.address != 0) l.address += shift[l.mapping];
      l.mapping = mapping[l.mapping];
      for (Line& line : l.lines) line.function = function[line.function];
      location[i + 1] = into_.add_location(std::move(l));
    }
    std::vector<LocationId> stack;
    std::vector<Label> labels;
    for (size_t i = 0; i < src.sample_count(); ++i) {
      stack.clear();
      for (LocationId id : src.stack(i)) stack.push_back(location[id]);
      labels.clear();
      for (Label l : src.labels(i)) {
        l.key = s(l.key);
        l.str = s(l.str);
        l.num_unit = s(l.num_unit);
        labels.push_back(l);
      }
      into_.add_sample(stack, src.values(i), labels);
    }
    if (src.call_graph.present) append_call_graph(src, location);
    for (StringId c : src.comments) {
      StringId id = s(c);
      if (std::find(into_.comments.begin(), into_.comments.end(), id) == into_.comments.end())
        into_.comments.push_back(id);
    }
  }

 private:
  // Call graphs sum part by part (part k of every input into part k): the edges and jumps
  // of later inputs join those of equal endpoints when the model is canonicalized.
  void append_call_graph(const Profile& from, const std::vector<LocationId>& location) {
    const CallGraph& src = from.call_graph;
    CallGraph& dst = into_.call_graph;
    if (!dst.present) {
      dst.present = true;
      dst.has_line = false;
      dst.events = src.events;
      for (EventInfo& e : dst.events) e.long_name = 0;
    }
    dst.has_instr = dst.has_instr || src.has_instr;
    dst.has_line = dst.has_line || src.has_line;
    for (size_t i = 0; i < src.events.size() && i < dst.events.size(); ++i)
      if (dst.events[i].long_name == 0 && src.events[i].long_name != 0)
        dst.events[i].long_name = into_.intern(from.str(src.events[i].long_name));
    for (size_t k = 0; k < src.parts.size(); ++k) {
      if (k >= dst.parts.size()) {
        dst.parts.push_back(src.parts[k]);
      } else {
        // The sum of two dumps has no one summary or totals (a writer computes totals).
        dst.parts[k].summary.clear();
        dst.parts[k].totals.clear();
      }
    }
    for (CallEdge e : src.calls) {
      e.caller = location[e.caller];
      e.callee = location[e.callee];
      dst.calls.push_back(std::move(e));
    }
    for (Jump j : src.jumps) {
      j.from = location[j.from];
      j.to = location[j.to];
      dst.jumps.push_back(j);
    }
    for (const InlinedFile& f : src.inlined_files)
      if (std::find(dst.inlined_files.begin(), dst.inlined_files.end(), f) == dst.inlined_files.end())
        dst.inlined_files.push_back(f);
  }

  Profile& into_;
  std::map<std::tuple<StringId, StringId, uint64_t, uint64_t, uint64_t>, MappingId> mappings_;
};

}  // namespace

Expected<Profile> merge_profiles(const std::vector<const Profile*>& profiles,
                                 Diagnostics& diagnostics) {
  Profile out;
  if (profiles.empty()) return out;
  const Profile& first = *profiles[0];
  size_t graphs = 0;
  for (const Profile* p : profiles) graphs += p->call_graph.present;
  if (graphs != 0 && graphs != profiles.size())
    return Error{"cannot merge call-graph profiles (callgrind) with stack profiles: turn "
                 "the call graphs into stacks first (tally convert --approximate)",
                 ErrorKind::unsupported};
  for (size_t i = 1; i < profiles.size(); ++i) {
    const Profile& p = *profiles[i];
    bool same = p.sample_types.size() == first.sample_types.size();
    for (size_t t = 0; same && t < p.sample_types.size(); ++t)
      same = p.str(p.sample_types[t].type) == first.str(first.sample_types[t].type) &&
             p.str(p.sample_types[t].unit) == first.str(first.sample_types[t].unit);
    if (!same)
      return Error{fmt::format("cannot merge profiles with different sample types: profile 1 "
                               "has [{}], profile {} has [{}]", type_list(first), i + 1,
                               type_list(p)),
                   ErrorKind::unsupported};
  }
  for (const auto& t : first.sample_types)
    out.sample_types.push_back(out.value_type(first.str(t.type), first.str(t.unit)));
  out.period_type = out.value_type(first.str(first.period_type.type), first.str(first.period_type.unit));
  out.default_sample_type = out.intern(first.str(first.default_sample_type));
  out.drop_frames = out.intern(first.str(first.drop_frames));
  out.keep_frames = out.intern(first.str(first.keep_frames));
  out.doc_url = out.intern(first.str(first.doc_url));

  Appender appender(out);
  for (size_t i = 0; i < profiles.size(); ++i) {
    const Profile& p = *profiles[i];
    if (p.time_nanos != 0 && (out.time_nanos == 0 || p.time_nanos < out.time_nanos))
      out.time_nanos = p.time_nanos;
    out.duration_nanos += p.duration_nanos;
    if (p.period > out.period) {
      if (out.period != 0)
        diagnostics.warn(fmt::format("merge: periods differ ({} and {}); the merged profile "
                                     "says {}", out.period, p.period, p.period));
      out.period = p.period;
    } else if (p.period != out.period && p.period != 0) {
      diagnostics.warn(fmt::format("merge: periods differ ({} and {}); the merged profile says {}",
                                   out.period, p.period, out.period));
    }
    if (i > 0 && (p.str(p.period_type.type) != first.str(first.period_type.type) ||
                  p.str(p.period_type.unit) != first.str(first.period_type.unit)))
      diagnostics.warn(fmt::format("merge: profile {} has period type {}/{}, the first {}/{}",
                                   i + 1, p.str(p.period_type.type), p.str(p.period_type.unit),
                                   first.str(first.period_type.type),
                                   first.str(first.period_type.unit)));
    appender.append(p);
  }
  // Format-specific header data survives only where every input agrees on it; whatever
  // goes, from any input, is reported once by key.
  std::string dropped;
  std::vector<std::pair<std::string, std::string>> common;
  std::vector<std::string> dropped_keys;
  for (size_t i = 0; i < profiles.size(); ++i) {
    for (const auto& kv : profiles[i]->attributes) {
      bool everywhere = true;
      for (const Profile* p : profiles)
        everywhere = everywhere && std::find(p->attributes.begin(), p->attributes.end(), kv) !=
                                       p->attributes.end();
      if (everywhere) {
        if (i == 0) common.push_back(kv);
      } else if (std::find(dropped_keys.begin(), dropped_keys.end(), kv.first) ==
                 dropped_keys.end()) {
        dropped_keys.push_back(kv.first);
        dropped += (dropped.empty() ? "" : ", ") + kv.first;
      }
    }
  }
  out.attributes = std::move(common);
  if (!dropped.empty())
    diagnostics.warn("merge: header data that differs between the inputs was dropped: " + dropped);
  out.canonicalize();
  return out;
}

}  // namespace tally::core
