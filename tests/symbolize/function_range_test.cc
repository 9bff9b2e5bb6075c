// symbolize/function_range: the symbol groups and ranges `nm -n` gives (pprof's source for
// -disasm), on the fixture binaries; the code bytes of a range are the file's bytes there.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "support/test_support.h"
#include "symbolize/find_binary.h"
#include "symbolize/function_range.h"

namespace tally::test {
namespace {

// nm -n: address -> names of the defined symbols (skipping absolute ones, which have no
// section, and those nm marks as debugging or undefined).
std::map<uint64_t, std::set<std::string>> nm_symbols(const std::string& path) {
  const std::string nm = find_program("nm");
  std::map<uint64_t, std::set<std::string>> out;
  const RunResult r = run({nm, "-n", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(r.out);
  static const std::regex kLine(R"(^([0-9a-f]+) (\S) (.+)$)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, kLine)) continue;
    const char type = m[2].str()[0];
    if (type == 'a' || type == 'A' || type == 'N' || type == 'U' || type == 'w') continue;
    out[std::stoull(m[1], nullptr, 16)].insert(m[3]);
  }
  return out;
}

TEST(FunctionRanges, SameGroupsAndEndsAsNm) {
  TALLY_REQUIRE_PEER(find_program("nm"), "nm");
  for (const char* name : {"split", "deep", "libtallywork.so", "shlib_main-nofp"}) {
    SCOPED_TRACE(name);
    const std::string path = shared(std::string("fixtures/bin/") + name);
    auto ranges = symbolize::FunctionRanges::load(symbolize::find_binary(path, "", {}));
    ASSERT_TRUE(ranges);
    const auto nm = nm_symbols(path);
    ASSERT_GT(nm.size(), 10u);
    std::map<uint64_t, std::set<std::string>> ours;
    for (const auto& s : ranges->symbols()) {
      ours[s.start].insert(s.names.begin(), s.names.end());
      EXPECT_GT(s.end, s.start);
      // A range stops at the next symbol nm lists, or before it at its section's end.
      auto next = nm.upper_bound(s.start);
      if (next != nm.end()) {
        EXPECT_LE(s.end, next->first) << s.names.front();
      }
    }
    // Every group nm lists at an address in an allocated section is one of ours; only
    // symbols of empty ranges (a section's end) are missing.
    for (const auto& [address, names] : nm) {
      auto it = ours.find(address);
      if (it == ours.end()) continue;
      EXPECT_EQ(it->second, names) << std::hex << address;
    }
    size_t functions = 0;
    for (const auto& [address, names] : ours) {
      // What tally names without a symbol, as the symbolizer does (PLT entries, functions
      // known by their FDE: symbolize's stripped_names_test checks those) is not nm's.
      const std::string& first = *names.begin();
      if (names.size() == 1 && (first.ends_with("@plt") || first.find("!sub_") != std::string::npos))
        continue;
      ASSERT_TRUE(nm.count(address)) << std::hex << address << " " << first;
      functions += names.count("lib_hot") + names.count("func_a") + names.count("deep_leaf") +
                   names.count("main_local");
    }
    EXPECT_EQ(functions, 1u);
  }
}

TEST(FunctionRanges, FunctionsRunToTheNextSymbolAndCodeIsTheFileBytes) {
  const std::string path = shared("fixtures/bin/split");
  auto ranges = symbolize::FunctionRanges::load(symbolize::find_binary(path, "", {}));
  ASSERT_TRUE(ranges);
  const symbolize::SymbolRange* a = nullptr;
  const symbolize::SymbolRange* b = nullptr;
  for (const auto& s : ranges->symbols()) {
    if (s.names.front() == "func_a") a = &s;
    if (s.names.front() == "func_b") b = &s;
  }
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->end, b->start);  // padding included, as pprof's nm-based ranges
  EXPECT_EQ(ranges->containing(a->start + 5), a);
  EXPECT_EQ(ranges->containing(a->end), b);
  auto code = ranges->code(a->start, a->end);
  ASSERT_TRUE(code);
  ASSERT_EQ(code->size(), a->end - a->start);
  // The same bytes as the file holds where the executable segment maps that address.
  const std::vector<uint8_t> file = read_bytes(path);
  std::vector<uint8_t> at_offset;
  for (const auto& seg : ranges->segments())
    if (seg.executable && a->start >= seg.vaddr && a->start < seg.vaddr + seg.filesz) {
      const size_t offset = a->start - seg.vaddr + seg.offset;
      at_offset.assign(file.begin() + static_cast<long>(offset),
                       file.begin() + static_cast<long>(offset + code->size()));
    }
  EXPECT_EQ(*code, at_offset);
  EXPECT_FALSE(ranges->code(0, 0));
}

}  // namespace
}  // namespace tally::test
