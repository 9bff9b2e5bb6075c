#include "runtime_test_support.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tally::test {
namespace {

// "1.50s", "230ms", "12us", "0" -> milliseconds.
double parse_duration_ms(const std::string& text) {
  size_t end = 0;
  double value = std::stod(text, &end);
  std::string unit = text.substr(end);
  if (unit == "s") return value * 1000;
  if (unit == "us" || unit == "µs") return value / 1000;
  if (unit == "ns") return value / 1e6;
  if (unit == "mins") return value * 60000;
  return value;  // "ms", or a bare 0
}

}  // namespace

std::string runtime_library() { return TALLY_RUNTIME_LIBRARY; }

std::string gperftools_library() {
  for (const char* path : {"/lib/x86_64-linux-gnu/libprofiler.so", "/usr/lib/x86_64-linux-gnu/libprofiler.so",
                           "/usr/lib/libprofiler.so"}) {
    if (access(path, R_OK) == 0) return path;
  }
  return "";
}


TopTable parse_top(const std::string& text) {
  TopTable table;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (size_t of = line.find("% of "); of != std::string::npos && line.find(" total") != std::string::npos) {
      std::istringstream rest(line.substr(of + 5));
      std::string total;
      rest >> total;
      table.total_ms = parse_duration_ms(total);
    }
  }
  for (const TopRow& row : top_rows(text)) {
    table.flat_ms[row.name] = parse_duration_ms(row.flat);
    table.flat_pct[row.name] = std::stod(row.flat_percent);
    table.cum_ms[row.name] = parse_duration_ms(row.cum);
  }
  return table;
}

TopTable tally_top(const std::string& profile) {
  RunResult result = run_tally({"top", "--nodecount=1000", profile});
  EXPECT_EQ(result.exit_code, 0) << profile << ": " << result.err;
  return parse_top(result.out);
}

double cum_ms(const TopTable& table, const std::string& function) {
  auto found = table.cum_ms.find(function);
  return found == table.cum_ms.end() ? 0 : found->second;
}

std::vector<std::string> list_directory(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tally::test
