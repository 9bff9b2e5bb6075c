// gperftools file -> core::Profile, rule by rule, the way google/pprof converts: the
// expected values are worked out by hand from pprof's rules, and each synthetic file is
// also given to the real pprof, which must agree.
#include <gtest/gtest.h>

#include <limits>

#include "core/diagnostics.h"
#include "formats/gperf/gperf_convert.h"
#include "gperf_encoder.h"
#include "pprof_raw.h"
#include "profile_view.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

using Record = GperfRecord;

core::Profile convert(const std::string& bytes) {
  core::Diagnostics diagnostics;
  auto p = gperf::read_profile(as_bytes(bytes), "synthetic", diagnostics);
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(p).value();
}

const MappingView kCatchAll{0, std::numeric_limits<uint64_t>::max(), 0, ""};

// Each case: records, maps text, and the mapping every address must end in. Multi-frame
// records are mixed with others so that pprof's "strip a second frame shared by almost
// all samples" heuristic stays out of the way (tally applies it only on evidence of a
// signal frame: gperf_signal_frames_test.cc).
struct ConversionCase {
  std::string name;
  std::vector<Record> records;
  std::string maps;
  std::vector<WeightedStack> stacks;               // by hand
  std::map<uint64_t, MappingView> mappings;        // by hand
};

void PrintTo(const ConversionCase& c, std::ostream* os) { *os << c.name; }

std::vector<ConversionCase> conversion_cases() {
  const MappingView prog{0x11000, 0x12000, 0, "/bin/prog"};
  const MappingView libx_joined{0x10000, 0x12000, 0x1000, "/lib/libx.so"};
  const MappingView libx_apart{0x12000, 0x13000, 0x9000, "/lib/libx.so"};
  const MappingView liby_with_anon{0x13000, 0x15000, 0, "/lib/liby.so"};
  const MappingView main_prog{0x18000, 0x19000, 0, "/bin/prog"};
  const MappingView libz{0x10000, 0x20000, 0, "/lib/libz.so.1"};
  const MappingView other{0x30000, 0x31000, 0, "/bin/other"};
  const MappingView app{0x40000, 0x41000, 0, "/x/app.sox"};
  const MappingView nopie{0x400000, 0x402000, 0, "/bin/nopie"};
  const MappingView exe_moved{0x3000, 0x6000, 0, "/bin/exe"};
  const MappingView exe_kept{0x5000, 0x6000, 0x2000, "/bin/exe"};
  const MappingView hugepage_prog{0x10000, 0x14000, 0, "/bin/prog"};
  return {
      {"non_executable_mappings_are_skipped",
       {{3, {0x11800}}, {2, {0x20800}}, {1, {0x21800}}},
       "00011000-00012000 r-xp 00000000 08:01 7 /bin/prog\n"
       "00020000-00021000 r--p 00000000 08:01 8 /bin/data\n"
       "00021000-00022000 rw-p 00001000 08:01 8 /bin/data\n",
       {{1, {0x21800}}, {2, {0x20800}}, {3, {0x11800}}},
       {{0x11800, prog}, {0x20800, kCatchAll}, {0x21800, kCatchAll}}},
      {"adjacent_pieces_are_joined",
       {{1, {0x10800}}, {2, {0x11800}}, {3, {0x12800}}, {4, {0x13800}}, {5, {0x14800}}},
       "00010000-00011000 r-xp 00001000 08:01 7 /lib/libx.so\n"
       "00011000-00012000 r-xp 00002000 08:01 7 /lib/libx.so\n"  // offsets continue: joined
       "00012000-00013000 r-xp 00009000 08:01 7 /lib/libx.so\n"  // offset jumps: apart
       "00013000-00014000 r-xp 00000000 08:01 8 /lib/liby.so\n"  // other file: apart
       "00014000-00015000 r-xp 00000000 00:00 0 \n",             // anonymous: joined
       {{1, {0x10800}}, {2, {0x11800}}, {3, {0x12800}}, {4, {0x13800}}, {5, {0x14800}}},
       {{0x10800, libx_joined},
        {0x11800, libx_joined},
        {0x12800, libx_apart},
        {0x13800, liby_with_anon},
        {0x14800, liby_with_anon}}},
      {"main_binary_is_searched_first",
       // 0x18800 is in all of the first four; the main binary (the first mapping that is
       // neither a library nor [...]) is moved to the front, so it gets it.
       {{1, {0x18800}}, {2, {0x17800}}, {3, {0x30800}}},
       "00018000-00019000 r-xp 00000000 00:00 0 [vdso]\n"
       "00010000-00020000 r-xp 00000000 08:01 1 /lib/libz.so.1\n"
       "00017000-0001a000 r-xp 00000000 08:01 2 /usr/lib/libq.so\n"
       "00018000-00019000 r-xp 00000000 08:01 3 /bin/prog\n"
       "00030000-00031000 r-xp 00000000 08:01 4 /bin/other\n",
       {{1, {0x18800}}, {2, {0x17800}}, {3, {0x30800}}},
       {{0x18800, main_prog}, {0x17800, libz}, {0x30800, other}}},
      {"library_names_with_version_suffixes",
       {{1, {0x40800}}},
       "00040000-00041000 r-xp 00000000 08:01 1 /x/libw.so_2\n"
       "00040000-00041000 r-xp 00000000 08:01 1 /x/libv.so.3\n"
       "00040000-00041000 r-xp 00000000 08:01 2 /x/app.sox\n",
       {{1, {0x40800}}},
       {{0x40800, app}}},
      {"classic_load_address_0x400000",
       // start - offset = 0x400000 in the main binary (listed after a library, so this
       // needs the move to the front): start 0x400000, offset 0. No address lies below
       // 0x401000, so the legacy "first piece" fix-up cannot give the same result.
       {{1, {0x401800}}, {3, {0x10800}}},
       "00010000-00011000 r-xp 00000000 08:01 1 /lib/libc.so.6\n"
       "00401000-00402000 r-xp 00001000 08:01 2 /bin/nopie\n",
       {{1, {0x401800}}, {3, {0x10800}}},
       {{0x401800, nopie}, {0x10800, {0x10000, 0x11000, 0, "/lib/libc.so.6"}}}},
      {"unmapped_addresses_share_one_catch_all_mapping",
       {{1, {0x11800}}, {2, {0x50000}}, {3, {0x60000}}},
       "00011000-00012000 r-xp 00000000 08:01 7 /bin/prog\n",
       {{1, {0x11800}}, {2, {0x50000}}, {3, {0x60000}}},
       {{0x11800, prog}, {0x50000, kCatchAll}, {0x60000, kCatchAll}}},
      {"first_piece_of_a_split_mapping_restored",
       // 0x3500 is below /bin/exe but within its offset: pprof extends the mapping down.
       {{2, {0x3500}}, {1, {0x9000}}},
       "00005000-00006000 r-xp 00002000 00:00 1 /bin/exe\n",
       {{1, {0x9000}}, {2, {0x3500}}},
       {{0x3500, exe_moved}, {0x9000, kCatchAll}}},
      {"catch_all_mapping_takes_precedence_once_it_exists",
       // The same file with the records swapped: once the catch-all mapping exists it
       // contains every unmapped address, so pprof no longer extends /bin/exe.
       {{1, {0x9000}}, {2, {0x3500}}},
       "00005000-00006000 r-xp 00002000 00:00 1 /bin/exe\n",
       {{1, {0x9000}}, {2, {0x3500}}},
       {{0x3500, kCatchAll}, {0x9000, kCatchAll}}},
      {"anon_hugepage_in_front_of_the_main_binary_removed",
       {{1, {0x12800}}, {2, {0x11000}}},
       "00010000-00012000 r-xp 00000000 00:00 0 /anon_hugepage\n"
       "00012000-00014000 r-xp 00002000 08:01 1 /bin/prog\n",
       {{1, {0x12800}}, {2, {0x11000}}},
       {{0x12800, hugepage_prog}, {0x11000, hugepage_prog}}},
      {"leaf_as_is_callers_minus_one",
       {{3, {0x11100, 0x11205, 0x11309}}, {1, {0x11400}}, {1, {0x11500}}},
       "00011000-00012000 r-xp 00000000 08:01 7 /bin/prog\n",
       {{1, {0x11400}}, {1, {0x11500}}, {3, {0x11100, 0x11204, 0x11308}}},
       {{0x11100, prog}, {0x11204, prog}, {0x11308, prog}, {0x11400, prog}, {0x11500, prog}}},
      {"duplicated_leaf_dropped_then_stacks_summed",
       // The unwinder's copy of the leaf (pc == leaf, so leaf - 1 after the adjustment)
       // goes; the stack then equals the second record's.
       {{2, {0x11100, 0x11100, 0x11205}}, {1, {0x11100, 0x11205}}, {4, {0x11600, 0x11301}}},
       "00011000-00012000 r-xp 00000000 08:01 7 /bin/prog\n",
       {{3, {0x11100, 0x11204}}, {4, {0x11600, 0x11300}}},
       {{0x11100, prog}, {0x11204, prog}, {0x11600, prog}, {0x11300, prog}}},
      {"next_address_is_not_a_duplicated_leaf",
       // pcs 0x11100, 0x11101: the caller becomes 0x11100 too, which is not leaf - 1.
       {{2, {0x11100, 0x11101}}, {1, {0x11600, 0x11301}}},
       "00011000-00012000 r-xp 00000000 08:01 7 /bin/prog\n",
       {{1, {0x11600, 0x11300}}, {2, {0x11100, 0x11100}}},
       {{0x11100, prog}, {0x11600, prog}, {0x11300, prog}}},
  };
}

class GperfToProfile : public ::testing::TestWithParam<ConversionCase> {};

TEST_P(GperfToProfile, StacksAndMappingsAsWorkedOutByHand) {
  const ConversionCase& c = GetParam();
  core::Profile p = convert(encode_records(c.records, c.maps));
  EXPECT_EQ(weighted_stacks(p), c.stacks);
  EXPECT_EQ(mapping_by_address(p), c.mappings);
}

TEST_P(GperfToProfile, RealPprofAgrees) {
  std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "google/pprof");
  const ConversionCase& c = GetParam();
  TempDir dir;
  write_bytes(dir.file("case.prof"), encode_records(c.records, c.maps));
  PprofRaw raw = run_pprof_raw(pprof, dir.file("case.prof"));
  EXPECT_EQ(raw.weighted_stacks(), c.stacks);
  EXPECT_EQ(raw.mapping_by_address(), c.mappings);
}

INSTANTIATE_TEST_SUITE_P(Rules, GperfToProfile, ::testing::ValuesIn(conversion_cases()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(GperfToProfile, SampleTypesPeriodAndCpuValues) {
  GperfEncoder e(8, std::endian::little);
  e.header(4000).record(3, {0x11100}).trailer();
  core::Profile p = convert(e.bytes());
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[0].type), "samples");
  EXPECT_EQ(p.str(p.sample_types[0].unit), "count");
  EXPECT_EQ(p.str(p.sample_types[1].type), "cpu");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "nanoseconds");
  EXPECT_EQ(p.str(p.period_type.type), "cpu");
  EXPECT_EQ(p.str(p.period_type.unit), "nanoseconds");
  EXPECT_EQ(p.period, 4000000);
  ASSERT_EQ(p.sample_count(), 1u);
  EXPECT_EQ(p.values(0)[0], 3);
  EXPECT_EQ(p.values(0)[1], 12000000);
}

TEST(GperfToProfile, MappingsWithoutSamplesAreKept) {
  core::Profile p = convert(encode_records({{1, {0x11800}}},
                                   "00011000-00012000 r-xp 00000000 08:01 7 /bin/prog\n"
                                   "00030000-00031000 r-xp 00000000 08:01 8 /lib/libm.so.6\n"
                                   "00040000-00041000 rw-p 00000000 08:01 8 /lib/libm.so.6\n"));
  ASSERT_EQ(p.mappings.size(), 2u);
  std::vector<std::string> files;
  for (const core::Mapping& m : p.mappings) files.emplace_back(p.str(m.file));
  EXPECT_NE(std::find(files.begin(), files.end(), "/lib/libm.so.6"), files.end());
}

// The spec's $build substitution reaches the profile's mapping names.
TEST(GperfToProfile, BuildPathSubstitutedInMappingFiles) {
  core::Profile p = convert(encode_records({{1, {0x11800}}},
                                   "build=/home/me/out\n"
                                   "00011000-00012000 r-xp 00000000 08:01 7 $build/prog\n"));
  EXPECT_EQ(mapping_by_address(p).at(0x11800).file, "/home/me/out/prog");
}

}  // namespace
}  // namespace tally::test
