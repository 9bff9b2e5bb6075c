#include "formats/pprof/pprof_wire.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

namespace tally::pprof {

namespace {

enum Wire : uint8_t { kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5 };
constexpr uint64_t kMaxField = (uint64_t(1) << 29) - 1;

enum class Msg { profile, value_type, sample, label, mapping, location, line, function };

struct FieldRule {
  const char* name;
  uint8_t wire;              // expected wire type
  bool packed_ok = false;    // repeated scalar: also accepted length-delimited (packed)
  std::optional<Msg> nested;  // a sub-message
};

FieldRule scalar(const char* name, uint8_t wire, bool packed_ok = false) {
  return FieldRule{name, wire, packed_ok, std::nullopt};
}
FieldRule message(const char* name, Msg nested) { return FieldRule{name, kLen, false, nested}; }

// A message whose fields 1..N are all single varints, named in order.
std::optional<FieldRule> varint_field(uint64_t field, std::initializer_list<const char*> names) {
  if (field == 0 || field > names.size()) return std::nullopt;
  return scalar(names.begin()[field - 1], kVarint);
}

// The schema of proto/profile.proto, field number -> rule (nullopt: unknown field).
std::optional<FieldRule> rule(Msg m, uint64_t field) {
  switch (m) {
    case Msg::profile:
      switch (field) {
        case 1: return message("sample_type", Msg::value_type);
        case 2: return message("sample", Msg::sample);
        case 3: return message("mapping", Msg::mapping);
        case 4: return message("location", Msg::location);
        case 5: return message("function", Msg::function);
        case 6: return scalar("string_table", kLen);
        case 7: return scalar("drop_frames", kVarint);
        case 8: return scalar("keep_frames", kVarint);
        case 9: return scalar("time_nanos", kVarint);
        case 10: return scalar("duration_nanos", kVarint);
        case 11: return message("period_type", Msg::value_type);
        case 12: return scalar("period", kVarint);
        case 13: return scalar("comment", kVarint, true);
        case 14: return scalar("default_sample_type", kVarint);
        case 15: return scalar("doc_url", kVarint);
      }
      break;
    case Msg::value_type:
      if (field == 1) return scalar("type", kVarint);
      if (field == 2) return scalar("unit", kVarint);
      break;
    case Msg::sample:
      if (field == 1) return scalar("location_id", kVarint, true);
      if (field == 2) return scalar("value", kVarint, true);
      if (field == 3) return message("label", Msg::label);
      break;
    case Msg::label:
      return varint_field(field, {"key", "str", "num", "num_unit"});
    case Msg::mapping:
      return varint_field(field, {"id", "memory_start", "memory_limit", "file_offset", "filename",
                                  "build_id", "has_functions", "has_filenames",
                                  "has_line_numbers", "has_inline_frames"});
    case Msg::location:
      if (field == 4) return message("line", Msg::line);
      return varint_field(field, {"id", "mapping_id", "address", "", "is_folded"});
    case Msg::line:
      return varint_field(field, {"function_id", "line", "column"});
    case Msg::function:
      return varint_field(field, {"id", "name", "system_name", "filename", "start_line"});
  }
  return std::nullopt;
}

struct Walker {
  std::span<const uint8_t> bytes;
  bool strict;  // refuse unknown top-level fields (detection)
  size_t known_fields = 0;       // complete top-level fields of the schema
  size_t nonempty_messages = 0;  // complete top-level sub-messages with content

  bool varint(size_t& pos, size_t end, uint64_t& out) const {
    out = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (pos >= end) return false;
      uint8_t b = bytes[pos++];
      out |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;  // more than 10 bytes
  }

  std::optional<WireProblem> walk(Msg m, size_t pos, size_t end, const char* where) {
    while (pos < end) {
      const size_t at = pos;
      uint64_t tag;
      if (!varint(pos, end, tag))
        return problem(m, at, pos >= end, fmt::format("{}: truncated or overlong field tag", where));
      // libprotobuf reads tags and lengths as 32-bit varints, of at most 5 bytes.
      if (pos - at > 5) return WireProblem{at, fmt::format("{}: field tag longer than 5 bytes", where)};
      uint64_t field = tag >> 3;
      auto wire = static_cast<uint8_t>(tag & 7);
      // Protobuf's field numbers are 1 .. 2^29 - 1; libprotobuf refuses others.
      if (field == 0 || field > kMaxField)
        return WireProblem{at, fmt::format("{}: field number {} is invalid", where, field)};
      auto r = rule(m, field);
      if (r) {
        bool ok = wire == r->wire || (r->packed_ok && wire == kLen);
        if (!ok)
          return WireProblem{at, fmt::format("{}: field {} ({}) has wire type {}, expected {}",
                                             where, field, r->name, wire, r->wire)};
      } else if (strict && m == Msg::profile) {
        return WireProblem{at, fmt::format("unknown top-level field {}", field)};
      }
      // Problems inside a value are reported at the value's first byte.
      const size_t value_at = pos;
      uint64_t value;
      switch (wire) {
        case kVarint:
          if (!varint(pos, end, value))
            return problem(m, value_at, pos >= end,
                           fmt::format("{}: truncated or overlong varint", where));
          break;
        case kFixed64:
          if (end - pos < 8)
            return problem(m, value_at, true, fmt::format("{}: truncated 64-bit field", where));
          pos += 8;
          break;
        case kFixed32:
          if (end - pos < 4)
            return problem(m, value_at, true, fmt::format("{}: truncated 32-bit field", where));
          pos += 4;
          break;
        case kLen: {
          if (!varint(pos, end, value))
            return problem(m, value_at, pos >= end,
                           fmt::format("{}: truncated or overlong length", where));
          if (pos - value_at > 5)
            return WireProblem{value_at, fmt::format("{}: length longer than 5 bytes", where)};
          if (value > end - pos)
            return problem(m, at, true, fmt::format("{}: field {} claims {} bytes, only {} remain",
                                                    where, field, value, end - pos));
          if (m == Msg::profile && r && r->nested && value > 0) ++nonempty_messages;
          size_t sub_end = pos + static_cast<size_t>(value);
          if (r && r->nested) {
            if (auto p = walk(*r->nested, pos, sub_end, r->name)) return p;
          } else if (r && r->packed_ok) {
            for (size_t p = pos; p < sub_end;) {
              const size_t item_at = p;
              uint64_t ignored;
              if (!varint(p, sub_end, ignored))
                return WireProblem{item_at, fmt::format("{}: truncated or overlong packed varint",
                                                        r->name)};
            }
          }
          pos = sub_end;
          break;
        }
        default:
          return WireProblem{at, fmt::format("{}: wire type {} is not valid here", where, wire)};
      }
      if (m == Msg::profile && r) ++known_fields;
    }
    return std::nullopt;
  }

  // A problem of the input's end (the input was cut short) or of its content. Only the
  // top level can be cut short: a nested message's length was checked against the input.
  static WireProblem problem(Msg m, uint64_t offset, bool at_end, std::string what) {
    return WireProblem{offset, std::move(what), m == Msg::profile && at_end};
  }
};

}  // namespace

std::optional<WireProblem> check_wire(std::span<const uint8_t> bytes) {
  Walker w{bytes, false};
  return w.walk(Msg::profile, 0, bytes.size(), "profile");
}

bool looks_like_profile_message(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return false;
  // The first MiB decides, as if the input ended there: walking all of a big profile
  // here would only repeat the reader's own check_wire.
  constexpr size_t kPrefix = size_t(1) << 20;
  Walker w{bytes, true};
  auto problem = w.walk(Msg::profile, 0, std::min(bytes.size(), kPrefix), "profile");
  if (!problem) return w.known_fields > 0;
  // A profile cut short is still a profile (the reader then says where it ends), when
  // enough of it came before the cut. Text hardly gets this far: the tags of the first
  // fields of every sub-message (0x08, 0x10, 0x18) are control characters.
  return problem->truncated && w.known_fields >= 3 && w.nonempty_messages >= 1;
}

}  // namespace tally::pprof
