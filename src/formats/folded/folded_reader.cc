// Folded stacks -> core::Profile.
#include <array>

#include "core/sample_merger.h"
#include "formats/folded/folded.h"
#include "formats/folded/folded_line.h"
#include "formats/folded/frame_split.h"
#include "io/line_reader.h"

namespace tally::folded {

namespace {

// How many data lines end in two counts: all of them make a differential file.
struct CountColumns {
  uint64_t data_lines = 0;
  uint64_t two_count_lines = 0;
  uint64_t first_two_count_line = 0;
  bool differential() const { return data_lines > 0 && two_count_lines == data_lines; }
};

CountColumns survey(std::string_view text) {
  CountColumns c;
  io::LineReader lines(text);
  std::string_view line;
  LineParts parts;
  while (lines.next(line)) {
    if (cut_line(line, parts) != LineKind::data) continue;
    ++c.data_lines;
    int64_t ignored = 0;
    if (parse_count(parts.first_count, ignored) && parse_count(parts.count, ignored) &&
        c.two_count_lines++ == 0)
      c.first_two_count_line = lines.line_number();
  }
  return c;
}

class ProfileBuilder {
 public:
  explicit ProfileBuilder(bool differential) {
    profile_.sample_types.push_back(profile_.value_type("samples", "count"));
    if (differential) profile_.sample_types.push_back(profile_.value_type("samples_after", "count"));
  }

  // `frames` root first, as in the file.
  void add(const std::vector<std::string_view>& frames, std::span<const int64_t> values) {
    stack_.clear();
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) stack_.push_back(location_for(*it));
    merger_.add(stack_, values);
  }
  void comment(std::string_view text) { profile_.comments.push_back(profile_.intern(text)); }
  core::Profile take() { return std::move(profile_); }

 private:
  // One function and one location per distinct frame name.
  core::LocationId location_for(std::string_view name) {
    const core::StringId id = profile_.intern(name);
    if (id >= location_by_name_.size()) location_by_name_.resize(id + 1, 0);
    core::LocationId& location = location_by_name_[id];
    if (location == 0) {
      const core::FunctionId function = profile_.add_function({id, id, 0, 0});
      core::Location l;
      l.lines.push_back({function, 0, 0});
      location = profile_.add_location(std::move(l));
    }
    return location;
  }

  core::Profile profile_;
  core::SampleMerger merger_{profile_};
  std::vector<core::LocationId> location_by_name_;  // by the name's StringId
  std::vector<core::LocationId> stack_;
};

std::string_view comment_text(std::string_view line) {
  line.remove_prefix(1);  // '#'
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return line;
}

int64_t count_or_fail(std::string_view token, uint64_t line) {
  int64_t value = 0;
  if (!parse_count(token, value))
    core::fail_at_line(line, "expected 'frames COUNT': " + count_problem(token));
  return value;
}

}  // namespace

core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes, const std::string& source,
                                           core::Diagnostics& diagnostics) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  try {
    const CountColumns columns = survey(text);
    const bool differential = columns.differential();
    if (differential)
      diagnostics.warn(source + ": every line has two counts: read as a differential folded file "
                                "(sample type 'samples' from the first count, 'samples_after' "
                                "from the second)");
    else if (columns.two_count_lines > 0)
      diagnostics.warn(source + ": " + std::to_string(columns.two_count_lines) +
                       " lines (the first: line " + std::to_string(columns.first_two_count_line) +
                       ") end in two numbers but others have one count, so the file is not read "
                       "as differential: the number before the count stays part of the leaf "
                       "frame's name");

    ProfileBuilder builder(differential);
    FrameSplitter splitter;
    io::LineReader lines(text);
    std::string_view line;
    LineParts parts;
    std::array<int64_t, 2> values{};
    while (lines.next(line)) {
      const uint64_t number = lines.line_number();
      switch (cut_line(line, parts)) {
        case LineKind::blank:
          continue;
        case LineKind::comment:
          builder.comment(comment_text(parts.text));
          continue;
        case LineKind::data:
          break;
      }
      if (parts.stack.empty())
        core::fail_at_line(number, is_digits(parts.count)
                                       ? "expected 'frames COUNT', found a count without frames"
                                       : "expected 'frames COUNT', found no count");
      if (differential) {
        values[0] = count_or_fail(parts.first_count, number);
        values[1] = count_or_fail(parts.count, number);
        builder.add(splitter.split(parts.differential_stack), std::span(values.data(), 2));
      } else {
        values[0] = count_or_fail(parts.count, number);
        builder.add(splitter.split(parts.stack), std::span(values.data(), 1));
      }
    }
    if (columns.data_lines == 0) diagnostics.warn(source + ": the file holds no stacks");
    return builder.take();
  } catch (const core::FormatError& e) {
    return e.located(source);
  }
}

}  // namespace tally::folded
