// profile.proto bytes -> core::Profile, validated, without a libprotobuf message. The
// top-level fields may come in any order (Go writes string_table after the samples), so
// the message is walked several times: strings and scalars, then mappings and functions,
// then locations, then samples, each pass resolving references against the earlier ones.
#include <fmt/format.h>

#include <limits>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "formats/pprof/pprof.h"
#include "formats/pprof/pprof_wire.h"
#include "formats/pprof/wire_reader.h"
#include "io/gzip.h"

namespace tally::pprof {

namespace {

// Top-level field numbers of Profile (proto/profile.proto).
enum Field : uint64_t {
  kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5,
  kStringTable = 6, kDropFrames = 7, kKeepFrames = 8, kTimeNanos = 9, kDurationNanos = 10,
  kPeriodType = 11, kPeriod = 12, kComment = 13, kDefaultSampleType = 14, kDocUrl = 15,
};

// The error a semantic check raises: no byte offset, the message names the field.
struct Invalid {
  std::string what;
};

// pprof ids (any nonzero numbers, usually 1..N) -> the model's dense ids.
class IdMap {
 public:
  explicit IdMap(size_t expected) : dense_(4 * expected + 1024, 0) {}
  // False when `id` is there already.
  bool add(uint64_t id, uint32_t to) {
    if (id < dense_.size()) {
      if (dense_[id] != 0) return false;
      dense_[id] = to;
      return true;
    }
    return sparse_.emplace(id, to).second;
  }
  uint32_t find(uint64_t id) const {  // 0: absent
    if (id < dense_.size()) return dense_[id];
    auto it = sparse_.find(id);
    return it == sparse_.end() ? 0 : it->second;
  }

 private:
  std::vector<uint32_t> dense_;
  std::unordered_map<uint64_t, uint32_t> sparse_;
};

class Decoder {
 public:
  Decoder(std::span<const uint8_t> bytes, core::Profile& p) : bytes_(bytes), p_(p) {}

  void run() {
    scalars_and_strings();
    // Counted by the first pass: the model's arrays are sized once, without the slack of
    // doubling (a profile's locations are often its biggest array).
    p_.mappings.reserve(mappings_);
    p_.functions.reserve(functions_);
    p_.locations.reserve(locations_);
    entities(kMapping);
    entities(kFunction);
    entities(kLocation);
    samples();
  }

 private:
  // Calls f(field, wire, reader) for each top-level field.
  template <class F>
  void each_field(F&& f) {
    WireReader r(bytes_, 0);
    while (!r.at_end()) {
      uint64_t field;
      uint8_t wire;
      r.tag(field, wire);
      f(field, wire, r);
    }
  }

  template <class... Args>
  core::StringId str(int64_t index, fmt::format_string<Args...> where, Args&&... args) const {
    if (index == 0) return 0;
    if (index < 0 || static_cast<uint64_t>(index) >= strings_.size())
      throw Invalid{fmt::format("{} refers to string {}, but the string table has {} entries",
                                fmt::format(where, std::forward<Args>(args)...), index,
                                strings_.size())};
    return strings_[static_cast<size_t>(index)];
  }

  void scalars_and_strings() {
    std::vector<std::span<const uint8_t>> table;
    std::vector<std::span<const uint8_t>> sample_types;
    int64_t drop = 0, keep = 0, default_type = 0, doc = 0, period_type = 0, period_unit = 0;
    std::vector<int64_t> comments;
    each_field([&](uint64_t field, uint8_t wire, WireReader& r) {
      uint64_t start;
      switch (field) {
        case kStringTable: table.push_back(r.bytes(start)); break;
        case kSampleType: sample_types.push_back(r.bytes(start)); break;
        case kSample: {  // counted, with their frames, to size the model's arrays once
          ++samples_;
          WireReader m = r.sub();
          while (!m.at_end()) {
            uint64_t f;
            uint8_t w;
            m.tag(f, w);
            if (f == 1 && w == kLen) {
              WireReader ids = m.sub();
              frames_ += ids.varint_count();
            } else {
              frames_ += f == 1 && w == kVarint;
              m.skip(w);
            }
          }
          break;
        }
        case kMapping: ++mappings_; r.skip(wire); break;
        case kLocation: ++locations_; r.skip(wire); break;
        case kFunction: ++functions_; r.skip(wire); break;
        case kDropFrames: drop = static_cast<int64_t>(r.varint()); break;
        case kKeepFrames: keep = static_cast<int64_t>(r.varint()); break;
        case kTimeNanos: p_.time_nanos = static_cast<int64_t>(r.varint()); break;
        case kDurationNanos: p_.duration_nanos = static_cast<int64_t>(r.varint()); break;
        case kPeriod: p_.period = static_cast<int64_t>(r.varint()); break;
        case kDefaultSampleType: default_type = static_cast<int64_t>(r.varint()); break;
        case kDocUrl: doc = static_cast<int64_t>(r.varint()); break;
        case kComment:
          r.repeated_varint(wire, [&](uint64_t v) { comments.push_back(static_cast<int64_t>(v)); });
          break;
        case kPeriodType: {  // a sub-message seen twice merges, as protobuf does
          WireReader m = r.sub();
          while (!m.at_end()) {
            uint64_t f;
            uint8_t w;
            m.tag(f, w);
            if (f == 1 && w == kVarint) period_type = static_cast<int64_t>(m.varint());
            else if (f == 2 && w == kVarint) period_unit = static_cast<int64_t>(m.varint());
            else m.skip(w);
          }
          break;
        }
        default: r.skip(wire);
      }
    });
    if (!table.empty() && !table[0].empty())
      throw Invalid{fmt::format("string_table[0] is \"{}\"; it must be empty",
                                as_text(table[0]).substr(0, 40))};
    strings_.reserve(table.size());
    for (auto s : table) strings_.push_back(p_.intern(as_text(s)));

    for (size_t i = 0; i < sample_types.size(); ++i) {
      int64_t type = 0, unit = 0;
      WireReader m(sample_types[i], 0);
      while (!m.at_end()) {
        uint64_t f;
        uint8_t w;
        m.tag(f, w);
        if (f == 1 && w == kVarint) type = static_cast<int64_t>(m.varint());
        else if (f == 2 && w == kVarint) unit = static_cast<int64_t>(m.varint());
        else m.skip(w);
      }
      p_.sample_types.push_back({str(type, "sample_type {} type", i + 1),
                                 str(unit, "sample_type {} unit", i + 1)});
    }
    p_.period_type = {str(period_type, "period_type type"), str(period_unit, "period_type unit")};
    p_.drop_frames = str(drop, "drop_frames");
    p_.keep_frames = str(keep, "keep_frames");
    p_.default_sample_type = str(default_type, "default_sample_type");
    p_.doc_url = str(doc, "doc_url");
    for (size_t i = 0; i < comments.size(); ++i)
      p_.comments.push_back(str(comments[i], "comment {}", i + 1));
  }

  static std::string_view as_text(std::span<const uint8_t> s) {
    return {reinterpret_cast<const char*>(s.data()), s.size()};
  }

  void entities(Field kind) {
    const char* what = kind == kMapping ? "mapping" : kind == kFunction ? "function" : "location";
    IdMap& ids = kind == kMapping ? mapping_ids_ : kind == kFunction ? function_ids_ : location_ids_;
    ids = IdMap(kind == kMapping ? mappings_ : kind == kFunction ? functions_ : locations_);
    size_t index = 0;
    each_field([&](uint64_t field, uint8_t wire, WireReader& r) {
      if (field != kind) return r.skip(wire);
      ++index;
      WireReader m = r.sub();
      uint64_t id = 0;
      uint32_t dense = 0;
      switch (kind) {
        case kMapping: dense = mapping(m, id); break;
        case kFunction: dense = function(m, id); break;
        default: dense = location(m, id); break;
      }
      if (id == 0) throw Invalid{fmt::format("{} #{} has id 0; ids must be nonzero", what, index)};
      if (!ids.add(id, dense)) throw Invalid{fmt::format("two {}s have id {}", what, id)};
    });
  }

  uint32_t mapping(WireReader& m, uint64_t& id) {
    core::Mapping out;
    int64_t file = 0, build_id = 0;
    m.for_each_varint_field([&](uint64_t f, uint64_t v) {
      switch (f) {
        case 1: id = v; break;
        case 2: out.start = v; break;
        case 3: out.limit = v; break;
        case 4: out.offset = v; break;
        case 5: file = static_cast<int64_t>(v); break;
        case 6: build_id = static_cast<int64_t>(v); break;
        case 7: out.has_functions = v != 0; break;
        case 8: out.has_filenames = v != 0; break;
        case 9: out.has_line_numbers = v != 0; break;
        case 10: out.has_inline_frames = v != 0; break;
        default: break;
      }
    });
    out.file = str(file, "mapping {} filename", id);
    out.build_id = str(build_id, "mapping {} build_id", id);
    return p_.add_mapping(out);
  }

  uint32_t function(WireReader& m, uint64_t& id) {
    int64_t name = 0, system_name = 0, filename = 0;
    core::Function out;
    m.for_each_varint_field([&](uint64_t f, uint64_t v) {
      switch (f) {
        case 1: id = v; break;
        case 2: name = static_cast<int64_t>(v); break;
        case 3: system_name = static_cast<int64_t>(v); break;
        case 4: filename = static_cast<int64_t>(v); break;
        case 5: out.start_line = static_cast<int64_t>(v); break;
        default: break;
      }
    });
    out.name = str(name, "function {} name", id);
    out.system_name = str(system_name, "function {} system_name", id);
    out.filename = str(filename, "function {} filename", id);
    return p_.add_function(out);
  }

  uint32_t location(WireReader& m, uint64_t& id) {
    core::Location out;
    uint64_t mapping_id = 0;
    std::vector<std::pair<uint64_t, core::Line>> lines;  // function id, line
    while (!m.at_end()) {
      uint64_t f;
      uint8_t w;
      m.tag(f, w);
      if (f == 4 && w == kLen) {
        WireReader l = m.sub();
        uint64_t function_id = 0;
        core::Line line;
        while (!l.at_end()) {
          uint64_t lf;
          uint8_t lw;
          l.tag(lf, lw);
          if (lw != kVarint) {
            l.skip(lw);
            continue;
          }
          uint64_t v = l.varint();
          if (lf == 1) function_id = v;
          else if (lf == 2) line.line = static_cast<int64_t>(v);
          else if (lf == 3) line.column = static_cast<int64_t>(v);
        }
        lines.emplace_back(function_id, line);
        continue;
      }
      if (w != kVarint) {
        m.skip(w);
        continue;
      }
      uint64_t v = m.varint();
      if (f == 1) id = v;
      else if (f == 2) mapping_id = v;
      else if (f == 3) out.address = v;
      else if (f == 5) out.is_folded = v != 0;
    }
    if (mapping_id != 0) {
      out.mapping = mapping_ids_.find(mapping_id);
      if (out.mapping == 0)
        throw Invalid{fmt::format("location {} refers to mapping {}, which does not exist", id,
                                  mapping_id)};
    }
    out.lines.reserve(lines.size());
    for (auto& [function_id, line] : lines) {
      if (function_id != 0) {
        line.function = function_ids_.find(function_id);
        if (line.function == 0)
          throw Invalid{fmt::format("location {} refers to function {}, which does not exist",
                                    id, function_id)};
      }
      out.lines.push_back(line);
    }
    return p_.add_location(std::move(out));
  }

  void samples() {
    const size_t types = p_.sample_types.size();
    std::vector<core::LocationId> stack;
    std::vector<int64_t> values;
    std::vector<core::Label> labels;
    p_.reserve_samples(samples_, frames_);
    size_t index = 0;
    each_field([&](uint64_t field, uint8_t wire, WireReader& r) {
      if (field != kSample) return r.skip(wire);
      ++index;
      WireReader m = r.sub();
      stack.clear();
      values.clear();
      labels.clear();
      while (!m.at_end()) {
        uint64_t f;
        uint8_t w;
        m.tag(f, w);
        if (f == 1 && (w == kVarint || w == kLen)) {
          m.repeated_varint(w, [&](uint64_t id) {
            core::LocationId loc = location_ids_.find(id);
            if (loc == 0)
              throw Invalid{fmt::format("sample {} refers to location {}, which does not exist",
                                        index, id)};
            stack.push_back(loc);
          });
        } else if (f == 2 && (w == kVarint || w == kLen)) {
          m.repeated_varint(w, [&](uint64_t v) { values.push_back(static_cast<int64_t>(v)); });
        } else if (f == 3 && w == kLen) {
          labels.push_back(label(m, index, labels.size() + 1));
        } else {
          m.skip(w);
        }
      }
      if (values.size() != types)
        throw Invalid{fmt::format("sample {} has {} values, but the profile has {} sample types",
                                  index, values.size(), types)};
      p_.add_sample(stack, values, labels);
    });
  }

  core::Label label(WireReader& m, size_t sample, size_t index) {
    WireReader l = m.sub();
    int64_t key = 0, s = 0, unit = 0, num = 0;
    l.for_each_varint_field([&](uint64_t f, uint64_t u) {
      const auto v = static_cast<int64_t>(u);
      if (f == 1) key = v;
      else if (f == 2) s = v;
      else if (f == 3) num = v;
      else if (f == 4) unit = v;
    });
    return {.key = str(key, "sample {} label {} key", sample, index),
            .str = str(s, "sample {} label {} str", sample, index),
            .num = num,
            .num_unit = str(unit, "sample {} label {} num_unit", sample, index)};
  }

  std::span<const uint8_t> bytes_;
  core::Profile& p_;
  std::vector<core::StringId> strings_;
  size_t samples_ = 0, frames_ = 0, mappings_ = 0, locations_ = 0, functions_ = 0;
  IdMap mapping_ids_{0}, function_ids_{0}, location_ids_{0};
};

}  // namespace

bool looks_like_pprof(std::span<const uint8_t> bytes) { return looks_like_profile_message(bytes); }

core::Expected<core::Profile> decode_profile(std::span<const uint8_t> bytes,
                                             const std::string& source,
                                             core::Diagnostics& diagnostics) {
  (void)diagnostics;
  std::vector<uint8_t> inflated;
  const bool gzipped = io::is_gzip(bytes);
  if (gzipped) {
    auto out = io::gunzip(bytes, source);
    if (!out) return out.error();
    inflated = std::move(*out);
    bytes = inflated;
  }
  // A big profile's wire check runs beside its decoding (the decoder's reads are
  // bounds-checked, so it is safe on any bytes); a problem it finds is what is reported,
  // as if it had run first.
  constexpr size_t kCheckBesideAbove = size_t(1) << 20;
  std::optional<WireProblem> problem;
  std::optional<core::Error> decode_error;
  core::Profile p;
  {
    std::jthread checker;
    if (bytes.size() > kCheckBesideAbove)
      checker = std::jthread([&] { problem = check_wire(bytes); });
    else
      problem = check_wire(bytes);
    if (!problem) {
      try {
        Decoder(bytes, p).run();
      } catch (const Invalid& e) {
        decode_error = core::Error{source + ": " + e.what};
      } catch (const core::FormatError& e) {
        decode_error = e.located(source);
      }
    }
  }
  if (problem)
    return core::Error{fmt::format("{}: byte {}{}: not a valid pprof profile: {}", source,
                                   problem->offset, gzipped ? " of the uncompressed data" : "",
                                   problem->what)};
  if (decode_error) return std::move(*decode_error);
  return p;
}

core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes,
                                           const std::string& source,
                                           core::Diagnostics& diagnostics) {
  auto p = decode_profile(bytes, source, diagnostics);
  if (p) p->canonicalize();
  return p;
}

}  // namespace tally::pprof
