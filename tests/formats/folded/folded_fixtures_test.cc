// Folded output of real profiles, checked against google/pprof's own output for the same
// data. The gperftools fixtures come with `pprof -raw` of pprof's symbolized .pb.gz (every
// location, its function, every sample) and `pprof -traces` (each sample's symbolized
// stack, leaf first, with its CPU time). A profile built from the -raw text with the
// core::Profile API and written as folded stacks must give exactly the stacks and times
// that -traces shows (FlameGraph's own scripts are not installed, and not needed).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>

#include "folded_test_helpers.h"
#include "support/stack_traces.h"
#include "support/test_support.h"

namespace tally::folded::test {
namespace {

using tally::test::read_text;
using tally::test::shared;

// --- the split fixture, by hand

// split.pb.raw.txt: locations 1..14 (address, mapping, function) and six samples
// (samples, cpu ns) whose stacks are location ids leaf first.
core::Profile split_profile_by_hand() {
  ProfileMaker m({{"samples", "count"}, {"cpu", "nanoseconds"}});
  core::Profile& p = m.p;
  const core::MappingId exe = p.add_mapping({0x55fdbeefb000, 0x55fdbeefc000, 0x1000, p.intern("../bin/split"), 0});
  const core::MappingId libc = p.add_mapping(
      {0x7f763a244000, 0x7f763a39a000, 0x26000, p.intern("/usr/lib/x86_64-linux-gnu/libc.so.6"), 0});
  const auto func_a = m.function("func_a"), func_b = m.function("func_b"),
             func_c = m.function("func_c"), func_d = m.function("func_d"),
             run_rounds = m.function("run_rounds", "_ZL10run_roundslm"), main = m.function("main"),
             call_main = m.function("__libc_start_call_main"),
             start_main = m.function("__libc_start_main"), start = m.function("_start");
  const core::LocationId l1 = m.location({func_d}, 0x55fdbeefb794, exe),
                         l2 = m.location({run_rounds}, 0x55fdbeefb82c, exe),
                         l3 = m.location({main}, 0x55fdbeefb53b, exe),
                         l4 = m.location({call_main}, 0x7f763a245249, libc),
                         l5 = m.location({start_main}, 0x7f763a245304, libc),
                         l6 = m.location({start}, 0x55fdbeefb580, exe),
                         l7 = m.location({func_b}, 0x55fdbeefb6da, exe),
                         l8 = m.location({run_rounds}, 0x55fdbeefb81c, exe),
                         l9 = m.location({func_d}, 0x55fdbeefb79a, exe),
                         l10 = m.location({func_b}, 0x55fdbeefb6d4, exe),
                         l11 = m.location({func_c}, 0x55fdbeefb734, exe),
                         l12 = m.location({run_rounds}, 0x55fdbeefb824, exe),
                         l13 = m.location({func_a}, 0x55fdbeefb674, exe),
                         l14 = m.location({run_rounds}, 0x55fdbeefb813, exe);
  m.sample({l1, l2, l3, l4, l5, l6}, {23, 23000000});
  m.sample({l7, l8, l3, l4, l5, l6}, {15, 15000000});
  m.sample({l9, l2, l3, l4, l5, l6}, {6, 6000000});
  m.sample({l10, l8, l3, l4, l5, l6}, {68, 68000000});
  m.sample({l11, l12, l3, l4, l5, l6}, {53, 53000000});
  m.sample({l13, l14, l3, l4, l5, l6}, {111, 111000000});
  return std::move(m.p);
}

TEST(FoldedFixtures, SplitProfileBuiltByHandGivesPprofTracesStacks) {
  // split.pprof-traces.txt, each block read bottom-up; func_b's two blocks (15ms, 68ms)
  // and func_d's (23ms, 6ms) differ only by address, so they sum.
  const std::string prefix = "_start;__libc_start_main;__libc_start_call_main;main;run_rounds;";
  EXPECT_EQ(write_ok(split_profile_by_hand(), 0),
            prefix + "func_a 111\n" + prefix + "func_b 83\n" + prefix + "func_c 53\n" + prefix +
                "func_d 29\n");
  EXPECT_EQ(write_ok(split_profile_by_hand(), 1),
            prefix + "func_a 111000000\n" + prefix + "func_b 83000000\n" + prefix +
                "func_c 53000000\n" + prefix + "func_d 29000000\n");
}

// --- every gperftools fixture, from pprof's own text

struct RawLocation {
  uint64_t address = 0;
  uint64_t mapping = 0;
  std::string function;  // "" when pprof had no symbol
};

// Builds a profile from `pprof -raw` text of a symbolized profile (locations with one
// function each, as the fixtures have).
core::Profile profile_from_pprof_raw(const std::string& text) {
  ProfileMaker m({{"samples", "count"}, {"cpu", "nanoseconds"}});
  std::istringstream in(text);
  std::string line, section;
  std::map<uint64_t, core::MappingId> mapping_ids;
  std::map<uint64_t, RawLocation> raw_locations;
  std::vector<std::pair<std::vector<int64_t>, std::vector<uint64_t>>> raw_samples;
  const std::regex location_re(R"(^\s*(\d+): 0x([0-9a-f]+) M=(\d+) ?(\S*).*$)");
  const std::regex mapping_re(R"(^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+).*$)");
  const std::regex sample_re(R"(^\s*(\d+)\s+(\d+):((?: \d+)+) ?$)");
  std::smatch match;
  while (std::getline(in, line)) {
    if (line == "Samples:" || line == "Locations" || line == "Mappings") {
      section = line;
      continue;
    }
    if (section == "Samples:" && std::regex_match(line, match, sample_re)) {
      std::vector<uint64_t> ids;
      std::istringstream id_text(match[3].str());
      for (uint64_t id; id_text >> id;) ids.push_back(id);
      raw_samples.push_back({{std::stoll(match[1].str()), std::stoll(match[2].str())}, ids});
    } else if (section == "Locations" && std::regex_match(line, match, location_re)) {
      raw_locations[std::stoull(match[1].str())] = {std::stoull(match[2].str(), nullptr, 16),
                                                    std::stoull(match[3].str()), match[4].str()};
    } else if (section == "Mappings" && std::regex_match(line, match, mapping_re)) {
      mapping_ids[std::stoull(match[1].str())] = m.p.add_mapping(
          {std::stoull(match[2].str(), nullptr, 16), std::stoull(match[3].str(), nullptr, 16),
           std::stoull(match[4].str(), nullptr, 16), m.p.intern(match[5].str()), 0});
    } else if (section == "Samples:" && line.find('/') == std::string::npos) {
      throw std::runtime_error("unexpected sample line: " + line);
    }
  }
  std::map<uint64_t, core::LocationId> location_ids;
  for (const auto& [id, raw] : raw_locations) {
    std::vector<core::FunctionId> functions;
    if (!raw.function.empty()) functions.push_back(m.function(raw.function));
    location_ids[id] = m.location(functions, raw.address, mapping_ids.at(raw.mapping));
  }
  for (const auto& [values, ids] : raw_samples) {
    std::vector<core::LocationId> stack;
    for (uint64_t id : ids) stack.push_back(location_ids.at(id));
    m.sample(stack, values);
  }
  if (raw_samples.empty()) throw std::runtime_error("no samples in the -raw text");
  return std::move(m.p);
}

// `pprof -traces` as folded lines with the time in nanoseconds, sorted.
std::string folded_from_pprof_traces(const std::string& text) {
  std::string out;
  for (const auto& [stack, ms] : tally::test::folded_ms_from_pprof_traces(text))
    out += stack + " " + std::to_string(ms * 1000000) + "\n";
  return out;
}

class FoldedGperfFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(FoldedGperfFixture, FoldedStacksEqualPprofTraces) {
  const std::string dir = shared("fixtures/gperf/");
  const core::Profile p = profile_from_pprof_raw(read_text(dir + GetParam() + ".pb.raw.txt"));
  std::string folded = write_ok(p, 1);
  // pprof -traces names an unsymbolized frame by its file only ("[libstdc++.so.6.0.30]");
  // tally adds the file offset.
  folded = std::regex_replace(folded, std::regex(R"(\+0x[0-9a-f]+\])"), "]");
  const std::string expected = folded_from_pprof_traces(read_text(dir + GetParam() + ".pprof-traces.txt"));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(folded, expected);
}

INSTANTIATE_TEST_SUITE_P(AllFixtures, FoldedGperfFixture,
                         ::testing::Values("split", "split-f100", "split-nofp", "split-mt", "deep",
                                           "shlib", "shlib-nofp"),
                         [](const ::testing::TestParamInfo<std::string>& fixture) {
                           std::string name = fixture.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(FoldedFixtures, UnsymbolizedFrameIsNamedByFileAndOffset) {
  // split-mt.pb.raw.txt location 3: 0x7f2659ed44a2, no function, in mapping 2
  // (0x7f2659e99000/0x7f2659f9a000/0x99000 .../libstdc++.so.6.0.30):
  // 0x7f2659ed44a2 - 0x7f2659e99000 + 0x99000 = 0xd44a2.
  const core::Profile p =
      profile_from_pprof_raw(read_text(shared("fixtures/gperf/split-mt.pb.raw.txt")));
  const std::string folded = write_ok(p, 0);
  EXPECT_NE(folded.find("clone3;start_thread;[libstdc++.so.6.0.30+0xd44a2];run_rounds;func_"),
            std::string::npos)
      << folded;
}

}  // namespace
}  // namespace tally::folded::test
