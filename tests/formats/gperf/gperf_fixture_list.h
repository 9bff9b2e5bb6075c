// The real gperftools profiles in shared/fixtures/gperf, found by listing the folder (not
// from a fixed list), so a fixture added later is tested too.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace tally::test {

inline std::string gperf_fixture_path(const std::string& name) {
  return shared("fixtures/gperf/" + name + ".prof");
}

// "split", "split-f100", ... (names without .prof), sorted.
inline std::vector<std::string> gperf_fixture_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(shared("fixtures/gperf")))
    if (e.path().extension() == ".prof") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A GoogleTest parameter name ("split_f100").
inline std::string gperf_test_name(std::string name) {
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(uint8_t(c)); }, '_');
  return name;
}

}  // namespace tally::test
