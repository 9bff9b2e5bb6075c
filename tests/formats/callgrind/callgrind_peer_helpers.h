// Running callgrind_annotate (valgrind's reader of callgrind files) on a file and making its
// output comparable between two files: only the line naming the data file is normalised.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace tally::callgrind::test {

inline std::string callgrind_annotate_path() {
  return tally::test::find_program("callgrind_annotate");
}

// callgrind_annotate's output for `file` with `options`, run in `cwd` (callgrind_annotate
// strips the working directory from file names and lists the source files it cannot find
// relative to it, so both files of a comparison must be annotated from the same place).
inline std::string annotate(const std::string& file, const std::vector<std::string>& options,
                            const std::string& cwd) {
  std::vector<std::string> argv{callgrind_annotate_path()};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(file);
  const tally::test::RunResult r = tally::test::run(argv, "", cwd);
  EXPECT_EQ(r.exit_code, 0) << "callgrind_annotate failed on " << file << ":\n" << r.err;
  EXPECT_EQ(r.err.find("WARNING"), std::string::npos)
      << "callgrind_annotate warned on " << file << ":\n" << r.err;
  return r.out;
}

// The output with the data file's name replaced: the line "Profile data file 'NAME'
// (creator: ...)" is the only one that names the file. With `whole_line` the creator on that
// line is dropped too (pprof -callgrind writes no creator: line; tally writes one).
inline std::string without_file_name(const std::string& output, bool whole_line = false) {
  static constexpr std::string_view kPrefix = "Profile data file '";
  std::string out;
  size_t begin = 0;
  while (begin < output.size()) {
    size_t end = output.find('\n', begin);
    end = end == std::string::npos ? output.size() : end + 1;
    std::string_view line(output.data() + begin, end - begin);
    if (line.starts_with(kPrefix)) {
      const size_t close = line.find('\'', kPrefix.size());
      if (whole_line || close == std::string_view::npos)
        out += "Profile data file 'FILE'\n";
      else
        out += "Profile data file 'FILE" + std::string(line.substr(close));
    } else {
      out += line;
    }
    begin = end;
  }
  return out;
}

// --tree=caller/calling/both lists a function's callers ("< ") and callees (">   ") sorted by
// cost, and those of equal cost in Perl's hash order, which changes from run to run (the
// same file gives different outputs). Each run of adjacent call lines of one kind and equal
// cost is put in text order, so that two outputs can be compared; nothing else moves.
inline std::string with_tied_calls_sorted(const std::string& output) {
  static const std::regex kCallLine(R"(^(\s*[0-9,.]+ (?:\(\s*[0-9.]+%\))?\s+)([<>]) .*\n?)");
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < output.size()) {
    size_t end = output.find('\n', begin);
    end = end == std::string::npos ? output.size() : end + 1;
    lines.emplace_back(output, begin, end - begin);
    begin = end;
  }
  // The key of a call line (cost column and marker), or "" for any other line.
  auto key = [](const std::string& line) {
    std::smatch m;
    return std::regex_match(line, m, kCallLine) ? m[1].str() + m[2].str() : std::string();
  };
  for (size_t i = 0; i < lines.size();) {
    const std::string k = key(lines[i]);
    size_t j = i + 1;
    if (!k.empty())
      while (j < lines.size() && key(lines[j]) == k) ++j;
    std::sort(lines.begin() + static_cast<std::ptrdiff_t>(i),
              lines.begin() + static_cast<std::ptrdiff_t>(j));
    i = j;
  }
  std::string out;
  for (const auto& l : lines) out += l;
  return out;
}

// Auto-annotation prints a section per source file it finds on this machine (e.g.
// /usr/include/c++/12/bits/std_thread.h), in Perl's hash order, which changes from run to
// run. Adjacent sections are put in file name order; their content is kept as printed.
inline std::string with_source_sections_sorted(const std::string& output) {
  static const std::string kFancy(80, '-');
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < output.size()) {
    size_t end = output.find('\n', begin);
    end = end == std::string::npos ? output.size() : end + 1;
    lines.emplace_back(output, begin, end - begin);
    begin = end;
  }
  auto is_fancy = [&](size_t i) { return i < lines.size() && lines[i].starts_with(kFancy + "\n"); };
  auto is_title = [&](size_t i) {
    return i < lines.size() && lines[i].starts_with("-- Auto-annotated source: ") && i > 0 &&
           is_fancy(i - 1);
  };
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    if (!is_title(i + 1) || !is_fancy(i)) {
      out += lines[i++];
      continue;
    }
    // A run of sections: each from the fancy line before its title to the next fancy line
    // after the one closing the title.
    std::vector<std::pair<std::string, std::string>> sections;  // title, text
    while (is_fancy(i) && is_title(i + 1)) {
      size_t end = i + 3;
      while (end < lines.size() && !is_fancy(end)) ++end;
      std::string text;
      for (size_t k = i; k < end; ++k) text += lines[k];
      sections.emplace_back(lines[i + 1], std::move(text));
      i = end;
    }
    std::sort(sections.begin(), sections.end());
    for (const auto& section : sections) out += section.second;
  }
  return out;
}

}  // namespace tally::callgrind::test
