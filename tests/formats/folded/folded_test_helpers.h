// Test-side helpers for the folded stacks tests: reading text into a profile, and a view
// of a profile's samples as root-first frame names taken straight from the model (not
// through the writer under test).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/profile.h"
#include "formats/folded/folded.h"
#include "support/format_reads.h"

namespace tally::folded::test {

using tally::test::bytes_of;

struct Reader {
  static constexpr std::string_view source = "test.folded";
  static constexpr auto read = &read_profile;
};
inline constexpr tally::test::ReadOk<Reader> read_ok{};
inline constexpr tally::test::ReadError<Reader> read_error{};

inline std::string write_ok(const core::Profile& p, size_t value_index,
                            core::Diagnostics& diagnostics) {
  auto text = write_folded(p, value_index, diagnostics);
  if (!text) throw std::runtime_error("unexpected write error: " + text.error().message);
  return std::move(text).value();
}

inline std::string write_ok(const core::Profile& p, size_t value_index = 0) {
  core::Diagnostics diagnostics;
  return write_ok(p, value_index, diagnostics);
}

struct StackValues {
  std::vector<std::string> frames;  // root first
  std::vector<int64_t> values;
  auto operator<=>(const StackValues&) const = default;
};

inline void PrintTo(const StackValues& s, std::ostream* os) {
  for (size_t i = 0; i < s.frames.size(); ++i) *os << (i ? " | " : "[") << s.frames[i];
  *os << "]";
  for (int64_t v : s.values) *os << " " << v;
}

// Every sample of `p` (not merged), frames root first, sorted.
inline std::vector<StackValues> samples_of(const core::Profile& p) {
  std::vector<StackValues> out;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    StackValues s;
    auto stack = p.stack(i);
    for (auto id = stack.rbegin(); id != stack.rend(); ++id) {
      const auto& lines = p.location(*id).lines;
      for (auto l = lines.rbegin(); l != lines.rend(); ++l)
        s.frames.emplace_back(p.str(p.function(l->function).name));
    }
    auto values = p.values(i);
    s.values.assign(values.begin(), values.end());
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Builds profiles for the writer tests by hand, with the core::Profile API.
class ProfileMaker {
 public:
  explicit ProfileMaker(std::vector<std::pair<std::string, std::string>> types = {{"samples", "count"}}) {
    for (const auto& [type, unit] : types) p.sample_types.push_back(p.value_type(type, unit));
  }
  core::FunctionId function(std::string_view name, std::string_view system_name = "") {
    return p.add_function({p.intern(name), p.intern(system_name.empty() ? name : system_name), 0, 0});
  }
  // A location with one line per function, innermost first.
  core::LocationId location(std::vector<core::FunctionId> functions, uint64_t address = 0,
                            core::MappingId mapping = 0) {
    core::Location l;
    l.address = address;
    l.mapping = mapping;
    for (core::FunctionId f : functions) l.lines.push_back({f, 0, 0});
    return p.add_location(std::move(l));
  }
  core::LocationId named(std::string_view name) { return location({function(name)}); }
  void sample(std::vector<core::LocationId> leaf_first, std::vector<int64_t> values,
              std::vector<core::Label> labels = {}) {
    p.add_sample(leaf_first, values, labels);
  }
  core::Profile p;
};

}  // namespace tally::folded::test
