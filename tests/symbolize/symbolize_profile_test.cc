// The gperftools fixtures, read and symbolized by tally, name the same functions (inline
// frames included) at every location address as google/pprof's own symbolization of the
// same .prof, which is kept in NAME.pb.gz (`pprof -proto`).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "formats/format.h"
#include "io/input.h"
#include "symbolize/symbolize.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

core::Profile read(const std::string& path) {
  auto input = io::Input::open(path);
  if (!input) throw std::runtime_error(input.error().message);
  core::Diagnostics diagnostics;
  auto profile = formats::read_profile(std::move(*input), diagnostics);
  if (!profile) throw std::runtime_error(profile.error().message);
  return std::move(*profile);
}

std::string base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// The workload's own files: the executable and libtallywork*.so. libc is left out: the
// machine that recorded the fixtures had its own libc build, which this one may not have
// (gperftools profiles carry no build id to tell).
bool is_fixture_binary(std::string_view file) {
  std::string base = base_name(file);
  return !base.empty() && base.find("libc.so") == std::string::npos &&
         base.find("ld-linux") == std::string::npos && base.find("libprofiler") == std::string::npos &&
         base.find("libstdc++") == std::string::npos && base.find("libm.so") == std::string::npos &&
         base.find("libgcc") == std::string::npos && base.find("libunwind") == std::string::npos &&
         base.front() != '[';
}

// (mapping file's base name, address) -> function names, innermost first.
std::map<std::pair<std::string, uint64_t>, std::vector<std::string>> names_by_address(
    const core::Profile& profile) {
  std::map<std::pair<std::string, uint64_t>, std::vector<std::string>> names;
  for (const auto& location : profile.locations) {
    if (location.mapping == 0) continue;
    std::string file = base_name(profile.str(profile.mapping(location.mapping).file));
    if (!is_fixture_binary(file)) continue;
    auto& list = names[{file, location.address}];
    for (const auto& line : location.lines)
      list.emplace_back(profile.str(profile.function(line.function).name));
  }
  return names;
}

class PprofSymbolizationTest : public ::testing::TestWithParam<GperfFixture> {};

TEST_P(PprofSymbolizationTest, SameFunctionsAsPprof) {
  const std::string name = GetParam().name;
  core::Profile profile = read(shared("fixtures/gperf/" + name + ".prof"));
  symbolize::Options options;
  options.binary_paths = {shared("fixtures/bin")};
  options.names = symbolize::NameStyle::simplified;  // pprof's names have no parameters
  core::Diagnostics diagnostics;
  ASSERT_TRUE(symbolize::symbolize(profile, options, diagnostics).has_value());
  for (const auto& warning : diagnostics.warnings()) {
    // Only system libraries may be missing or without debug symbols; the fixture's own
    // binaries are in bin/. "symbolize: FILE: problem", or "FILE: no debug symbols ...".
    const std::string prefix = "symbolize: ";
    const size_t from = warning.starts_with(prefix) ? prefix.size() : 0;
    std::string file = warning.substr(from, warning.find(": ", from) - from);
    EXPECT_FALSE(is_fixture_binary(file)) << warning;
    std::cout << "note: " << warning << " (not compared)\n";
  }

  auto ours = names_by_address(profile);
  auto theirs = names_by_address(read(shared("fixtures/gperf/" + name + ".pb.gz")));
  ASSERT_FALSE(theirs.empty());
  EXPECT_EQ(ours.size(), theirs.size()) << "the same fixture locations";
  size_t compared = 0;
  for (const auto& [key, expected] : theirs) {
    auto found = ours.find(key);
    if (found == ours.end()) {
      ADD_FAILURE() << fmt::format("{} {:#x}: not in tally's profile", key.first, key.second);
      continue;
    }
    EXPECT_EQ(found->second, expected) << fmt::format("{} {:#x}", key.first, key.second);
    ++compared;
  }
  EXPECT_GE(compared, 5u);
  size_t inline_frames = 0;
  for (const auto& [key, expected] : theirs) inline_frames += expected.size() - 1;
  std::cout << name << ": " << compared << " locations compared, " << inline_frames
            << " inline frames among them\n";
  // Every symbolized mapping says so, as pprof's output does.
  std::vector<bool> used(profile.mappings.size(), false);
  for (const auto& location : profile.locations)
    if (location.mapping != 0) used[location.mapping - 1] = true;
  for (size_t m = 0; m < profile.mappings.size(); ++m) {
    const auto& mapping = profile.mappings[m];
    if (!used[m] || !is_fixture_binary(profile.str(mapping.file))) continue;
    EXPECT_TRUE(mapping.has_functions) << profile.str(mapping.file);
    EXPECT_TRUE(mapping.has_inline_frames) << profile.str(mapping.file);
  }
}

INSTANTIATE_TEST_SUITE_P(Gperf, PprofSymbolizationTest, ::testing::ValuesIn(gperf_fixtures()),
                         [](const auto& param_info) {
                           std::string n = param_info.param.name;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace tally::test
