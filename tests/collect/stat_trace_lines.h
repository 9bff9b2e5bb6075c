// Reading tally stat's trace in the tests: every line (of stdout or -o's file) must be one
// of miniprof's trace lines, 6 tab-separated fields with the running fraction as %.3f.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tally::test {

struct Line {
  int event;
  int core;
  uint64_t timestamp;
  uint64_t increase;
  double running;
  int interval;
};

// Every line of `out`, each checked to be a trace line (a test failure names any other).
inline std::vector<Line> parse_trace(const std::string& out) {
  static const std::regex pattern(R"(^(\d+)\t(\d+)\t(\d+)\t(\d+)\t(\d+\.\d{3})\t(\d+)$)");
  std::vector<Line> lines;
  std::istringstream stream(out);
  std::string text;
  size_t number = 0;
  while (std::getline(stream, text)) {
    ++number;
    std::smatch m;
    if (!std::regex_match(text, m, pattern)) {
      ADD_FAILURE() << "line " << number << " is not a trace line: '" << text << "'";
      continue;
    }
    lines.push_back(Line{std::stoi(m[1]), std::stoi(m[2]), std::stoull(m[3]), std::stoull(m[4]),
                         std::stod(m[5]), std::stoi(m[6])});
  }
  EXPECT_TRUE(out.empty() || out.back() == '\n');
  return lines;
}

// The CPU-bound workload (tests/collect/stat_busy.cc).
inline std::string busy() { return STAT_BUSY; }

// The lines of each interval, by logical time.
inline std::map<int, std::vector<Line>> by_interval(const std::vector<Line>& lines) {
  std::map<int, std::vector<Line>> intervals;
  for (const Line& line : lines) intervals[line.interval].push_back(line);
  return intervals;
}

}  // namespace tally::test
