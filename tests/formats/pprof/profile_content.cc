#include "profile_content.h"

#include <fmt/format.h>

namespace tally::test {

namespace {

// Quoted, with bytes outside printable ASCII escaped (strings may be any bytes).
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto b = static_cast<uint8_t>(c);
    if (b < 0x20 || b >= 0x7f || c == '"' || c == '\\') out += fmt::format("\\x{:02x}", b);
    else out += c;
  }
  return out + "\"";
}

}  // namespace

std::string profile_content(const core::Profile& p) {
  auto s = [&](core::StringId id) { return quoted(p.str(id)); };
  std::string out;
  for (const core::ValueType& t : p.sample_types)
    out += fmt::format("sample_type {} {}\n", s(t.type), s(t.unit));
  out += fmt::format("default_sample_type {}\nperiod_type {} {}\nperiod {}\n",
                     s(p.default_sample_type), s(p.period_type.type), s(p.period_type.unit),
                     p.period);
  out += fmt::format("time_nanos {}\nduration_nanos {}\n", p.time_nanos, p.duration_nanos);
  out += fmt::format("drop_frames {}\nkeep_frames {}\ndoc_url {}\n", s(p.drop_frames),
                     s(p.keep_frames), s(p.doc_url));
  for (core::StringId c : p.comments) out += fmt::format("comment {}\n", s(c));
  for (const auto& [key, value] : p.attributes)
    out += fmt::format("attribute {} {}\n", quoted(key), quoted(value));
  for (size_t i = 0; i < p.mappings.size(); ++i) {
    const core::Mapping& m = p.mappings[i];
    out += fmt::format("mapping {}: {:#x}/{:#x}/{:#x} {} {} flags {}{}{}{}\n", i + 1, m.start,
                       m.limit, m.offset, s(m.file), s(m.build_id), int(m.has_functions),
                       int(m.has_filenames), int(m.has_line_numbers), int(m.has_inline_frames));
  }
  for (size_t i = 0; i < p.functions.size(); ++i) {
    const core::Function& f = p.functions[i];
    out += fmt::format("function {}: {} {} {} {}\n", i + 1, s(f.name), s(f.system_name),
                       s(f.filename), f.start_line);
  }
  for (size_t i = 0; i < p.locations.size(); ++i) {
    const core::Location& l = p.locations[i];
    out += fmt::format("location {}: {:#x} mapping {}{}\n", i + 1, l.address, l.mapping,
                       l.is_folded ? " folded" : "");
    for (const core::Line& line : l.lines) {
      std::string name = line.function == 0 ? "-" : s(p.function(line.function).name);
      out += fmt::format("  function {} {} line {} column {}\n", line.function, name, line.line,
                         line.column);
    }
  }
  for (size_t i = 0; i < p.sample_count(); ++i) {
    out += "sample";
    for (int64_t v : p.values(i)) out += fmt::format(" {}", v);
    out += " at";
    for (core::LocationId id : p.stack(i)) out += fmt::format(" {}", id);
    out += "\n";
    for (const core::Label& l : p.labels(i))
      out += fmt::format("  label {} {} {} {}\n", s(l.key), s(l.str), l.num, s(l.num_unit));
  }
  out += "strings";
  for (size_t i = 0; i < p.strings.size(); ++i) out += " " + s(static_cast<core::StringId>(i));
  return out + "\n";
}

}  // namespace tally::test
