// What the libtally tests share: where libtally and gperftools' libprofiler are; reading
// `pprof -top` and `tally top` tables. (Running a program with extra environment
// variables, a time limit and its rusage, the CPU time a profile's total is compared
// with: test::run in support/test_support.h.)
#pragma once

#include <map>
#include <string>
#include <vector>

namespace tally::test {

std::string runtime_library();     // the libtally.so under test
std::string gperftools_library();  // gperftools' libprofiler.so, or "" when not installed

struct TopTable {
  double total_ms = 0;                     // "... of X total"
  std::map<std::string, double> flat_ms;   // function -> flat
  std::map<std::string, double> flat_pct;  // function -> flat%
  std::map<std::string, double> cum_ms;    // function -> cum
};
// Parses `pprof -top` (and `tally top`, which has the same first columns).
TopTable parse_top(const std::string& text);

// `tally top` of a profile (symbolized from the binaries it names); a failure is a test
// failure. cum_ms of a function absent from it is 0.
TopTable tally_top(const std::string& profile);
double cum_ms(const TopTable& table, const std::string& function);

// Files in `directory` (names only), sorted.
std::vector<std::string> list_directory(const std::string& directory);

}  // namespace tally::test
