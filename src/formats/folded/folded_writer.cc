// core::Profile -> folded stacks.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "core/checked_math.h"
#include "core/path_name.h"
#include "formats/folded/folded.h"
#include "formats/folded/folded_line.h"
#include "formats/folded/frame_split.h"

namespace tally::folded {

namespace {

// The frames of each location, root-first and joined by ';', computed once per location.
class FrameNames {
 public:
  explicit FrameNames(const core::Profile& p) : p_(p), text_(p.locations.size()) {}

  const std::string& of(core::LocationId id) {
    std::optional<std::string>& text = text_[id - 1];
    if (!text) text = join(p_.location(id));
    return *text;
  }
  bool dropped_details() const { return dropped_details_; }
  size_t names_with_newlines() const { return names_with_newlines_; }
  size_t names_that_split() const { return names_that_split_; }

 private:
  std::string join(const core::Location& l) {
    if (l.address != 0 || l.mapping != 0) dropped_details_ = true;
    std::string out;
    // Lines are innermost first; the file wants the outermost (caller) first.
    for (auto line = l.lines.rbegin(); line != l.lines.rend(); ++line) {
      if (line != l.lines.rbegin()) out += ';';
      out += frame_name(l, *line);
    }
    if (l.lines.empty()) out = address_name(l);
    return out;
  }

  std::string frame_name(const core::Location& l, const core::Line& line) {
    if (line.line != 0 || line.column != 0) dropped_details_ = true;
    if (line.function == 0) return address_name(l);
    const core::Function& f = p_.function(line.function);
    if (f.filename != 0 || f.start_line != 0) dropped_details_ = true;
    std::string_view name = p_.str(f.name);
    if (name.empty()) name = p_.str(f.system_name);
    if (name.empty()) return address_name(l);
    return clean(name);
  }

  // "[libfoo.so+0x1234]" (file offset), "0x1234" or "[unknown]".
  std::string address_name(const core::Location& l) {
    if (l.address == 0) return "[unknown]";
    if (l.mapping != 0) {
      const core::Mapping& m = p_.mapping(l.mapping);
      std::string_view file = core::base_name(p_.str(m.file));
      if (!file.empty() && l.address >= m.start)
        return clean(fmt::format("[{}+{:#x}]", file, l.address - m.start + m.offset));
    }
    return fmt::format("{:#x}", l.address);
  }

  // A newline would end the line early; a ';' outside brackets would split the frame.
  std::string clean(std::string_view name) {
    std::string s(name);
    if (s.find_first_of("\r\n") != std::string::npos) {
      ++names_with_newlines_;
      std::replace(s.begin(), s.end(), '\n', ' ');
      std::replace(s.begin(), s.end(), '\r', ' ');
    }
    if (s.find(';') != std::string::npos && splitter_.split(s).size() > 1) ++names_that_split_;
    return s;
  }

  const core::Profile& p_;
  std::vector<std::optional<std::string>> text_;  // by location id - 1
  FrameSplitter splitter_;
  bool dropped_details_ = false;
  size_t names_with_newlines_ = 0;
  size_t names_that_split_ = 0;
};

std::string type_name(const core::Profile& p, size_t index) {
  const core::ValueType& t = p.sample_types[index];
  return std::string(p.str(t.type)) + "/" + std::string(p.str(t.unit));
}

// The value of each distinct folded stack, and what was left out on the way.
struct Stacks {
  std::unordered_map<std::string, int64_t> value_of;
  size_t negative = 0, labelled = 0, empty = 0;
  int64_t empty_value = 0;
};

Stacks collect(const core::Profile& profile, size_t value_index, FrameNames& names) {
  Stacks out;
  std::string stack;
  for (size_t i = 0; i < profile.sample_count(); ++i) {
    const int64_t value = profile.values(i)[value_index];
    if (value < 0) ++out.negative;
    if (value <= 0) continue;
    if (!profile.labels(i).empty()) ++out.labelled;
    const auto ids = profile.stack(i);
    if (ids.empty()) {
      ++out.empty;
      out.empty_value = core::add_saturating(out.empty_value, value);
      continue;
    }
    stack.clear();
    for (auto id = ids.rbegin(); id != ids.rend(); ++id) {
      if (id != ids.rbegin()) stack += ';';
      stack += names.of(*id);
    }
    int64_t& sum = out.value_of[stack];
    sum = core::add_saturating(sum, value);
  }
  return out;
}

// Lines that a reader of folded stacks would take differently from what was meant.
struct Ambiguities {
  size_t comment_like = 0;     // the root frame begins with '#'
  size_t two_count_like = 0;   // the leaf frame ends in " <digits>"
};

std::string format_sorted(const Stacks& stacks, Ambiguities& ambiguities) {
  std::vector<const std::pair<const std::string, int64_t>*> sorted;
  sorted.reserve(stacks.value_of.size());
  for (const auto& entry : stacks.value_of) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->first < b->first; });
  std::string out;
  LineParts parts;
  int64_t ignored = 0;
  for (const auto* entry : sorted) {
    const size_t begin = out.size();
    fmt::format_to(std::back_inserter(out), "{} {}\n", entry->first, entry->second);
    const LineKind kind = cut_line(std::string_view(out).substr(begin), parts);
    if (kind == LineKind::comment) ++ambiguities.comment_like;
    if (kind == LineKind::data && parse_count(parts.first_count, ignored)) ++ambiguities.two_count_like;
  }
  return out;
}

void report_losses(const core::Profile& profile, size_t value_index, const Stacks& stacks,
                   const FrameNames& names, const Ambiguities& ambiguities,
                   core::Diagnostics& diagnostics) {
  const std::string chosen = type_name(profile, value_index);
  if (profile.sample_types.size() > 1) {
    std::string others;
    for (size_t k = 0; k < profile.sample_types.size(); ++k)
      if (k != value_index) others += (others.empty() ? "'" : ", '") + type_name(profile, k) + "'";
    diagnostics.warn("folded stacks hold one value per stack: wrote '" + chosen + "', dropped " +
                     others);
  }
  if (stacks.negative > 0)
    diagnostics.warn(fmt::format("{} samples with a negative '{}' value skipped", stacks.negative,
                                 chosen));
  if (stacks.empty > 0)
    diagnostics.warn(fmt::format("{} samples without frames dropped ('{}' total {})", stacks.empty,
                                 chosen, stacks.empty_value));
  if (stacks.labelled > 0)
    diagnostics.warn(fmt::format("labels of {} samples dropped (folded stacks have no labels)",
                                 stacks.labelled));
  if (names.dropped_details())
    diagnostics.warn("folded stacks keep frame names only: addresses, mappings, files and line "
                     "numbers were dropped");
  if (names.names_with_newlines() > 0)
    diagnostics.warn(fmt::format("{} frame names held line breaks, written as spaces",
                                 names.names_with_newlines()));
  if (names.names_that_split() > 0)
    diagnostics.warn(fmt::format("{} frame names contain ';' outside brackets: readers of folded "
                                 "stacks will split each into several frames",
                                 names.names_that_split()));
  if (ambiguities.comment_like > 0)
    diagnostics.warn(fmt::format("{} stacks start with a frame beginning with '#': readers of "
                                 "folded stacks take those lines for comments",
                                 ambiguities.comment_like));
  const size_t lines = stacks.value_of.size();
  if (lines > 0 && ambiguities.two_count_like == lines)
    diagnostics.warn("every stack's leaf frame ends in a number: readers will take the file for a "
                     "differential one with two counts per line");
  if (lines == 0)
    diagnostics.warn("no samples with a '" + chosen + "' value above 0: the output is empty");
}

}  // namespace

core::Expected<std::string> write_folded(const core::Profile& profile, size_t value_index,
                                         core::Diagnostics& diagnostics) {
  if (value_index >= profile.sample_types.size())
    return core::Error{fmt::format("cannot write folded stacks of value {}: the profile has {} "
                                   "sample type{}",
                                   value_index, profile.sample_types.size(),
                                   profile.sample_types.size() == 1 ? "" : "s"),
                       core::ErrorKind::unsupported};
  FrameNames names(profile);
  const Stacks stacks = collect(profile, value_index, names);
  Ambiguities ambiguities;
  std::string out = format_sorted(stacks, ambiguities);
  report_losses(profile, value_index, stacks, names, ambiguities, diagnostics);
  return out;
}

}  // namespace tally::folded
