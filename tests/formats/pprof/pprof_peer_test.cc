// The real google/pprof agrees with what tally writes:
// - every gperftools fixture converted by `tally convert --to pprof --symbolize=none` gives
//   the same `pprof -raw -symbolize=none` and `pprof -top -symbolize=none` as the original;
// - pprof's own -proto output of each fixture, read by tally and written again, decodes to
//   the same message field by field (MessageDifferencer), and pprof -top shows the same.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <sstream>

#include "every_field_message.h"
#include "pprof_test_helpers.h"
#include "reference_pprof.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// pprof's output for `file`, less the lines that name the file itself (they differ because
// the two files differ in name, which is the one difference the comparison allows).
std::string pprof_text(const std::vector<std::string>& args, const std::string& file) {
  std::vector<std::string> argv = {find_pprof()};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(file);
  RunResult r = run(argv);
  if (r.exit_code != 0) throw std::runtime_error("pprof failed on " + file + ": " + r.err);
  std::istringstream in(r.out);
  std::string line, out;
  while (std::getline(in, line))
    if (line.find(file) == std::string::npos) out += line + "\n";
  return out;
}

// libprotobuf's parse of a gzipped message (inflated by zlib).
reference::Message parse_message(const std::string& gz) {
  auto m = reference::parse(gunzip_bytes(gz));
  if (!m) throw std::runtime_error("libprotobuf cannot parse the message");
  return *m;
}

std::string differences(const reference::Message& expected, const reference::Message& actual) {
  google::protobuf::util::MessageDifferencer differencer;
  std::string report;
  differencer.ReportDifferencesToString(&report);
  return differencer.Compare(expected, actual) ? "" : report;
}

class GperfFixtureAsPprof : public ::testing::TestWithParam<GperfFixture> {};

TEST_P(GperfFixtureAsPprof, PprofRawAndTopEqualPprofOnTheOriginal) {
  TALLY_REQUIRE_PEER(find_pprof(), "google/pprof");
  const std::string original = shared("fixtures/gperf/" + GetParam().name + ".prof");
  TempDir dir;
  const std::string converted = dir.file(GetParam().name + ".pb.gz");
  // The format alone, as pprof -symbolize=none shows the original: without the names
  // convert adds by default from whatever binaries this machine has (libc).
  RunResult r =
      run_tally({"convert", original, "--to", "pprof", "--symbolize=none", "-o", converted});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "a lossless conversion has nothing to report";

  const std::string raw = pprof_text({"-raw", "-symbolize=none"}, original);
  ASSERT_NE(raw.find("Samples:"), std::string::npos) << raw;
  EXPECT_EQ(pprof_text({"-raw", "-symbolize=none"}, converted), raw);

  const std::vector<std::string> top = {"-top", "-symbolize=none", "-nodecount=1000"};
  const std::string top_original = pprof_text(top, original);
  ASSERT_NE(top_original.find("flat%"), std::string::npos) << top_original;
  EXPECT_EQ(pprof_text(top, converted), top_original);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, GperfFixtureAsPprof, ::testing::ValuesIn(gperf_fixtures()),
                         [](const auto& p) { return test_name(p.param.name); });

class PprofFixtureRewritten : public ::testing::TestWithParam<std::string> {};

TEST_P(PprofFixtureRewritten, ReadAndWrittenByTheLibraryIsTheSameMessage) {
  const std::string original = read_text(pprof_proto_fixture_path(GetParam()));
  const reference::Message expected = parse_message(original);
  ASSERT_GT(expected.sample_size(), 0);
  ASSERT_GT(expected.function_size(), 0) << "pprof -proto output is symbolized";

  auto profile = read_pprof_profile(original);
  ASSERT_TRUE(profile) << profile.error().message;
  const std::string written = write_pprof_profile(*profile);
  EXPECT_EQ(differences(expected, parse_message(written)), "");
}

TEST_P(PprofFixtureRewritten, ConvertedByTheCliIsTheSameMessageAndTheSameTop) {
  const std::string original = pprof_proto_fixture_path(GetParam());
  TempDir dir;
  const std::string converted = dir.file(GetParam() + ".pb.gz");
  // The codec's fidelity, message for message: no symbolization adds names (convert names
  // what the binaries on this machine resolve by default, libstdc++'s thread entry here).
  RunResult r = run_tally({"convert", original, "--symbolize=none", "--to", "pprof", "-o", converted});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(differences(parse_message(read_text(original)), parse_message(read_text(converted))), "");

  TALLY_REQUIRE_PEER(find_pprof(), "google/pprof");
  const std::vector<std::string> top = {"-top", "-nodecount=1000"};
  const std::string expected_top =
      read_text(shared("fixtures/gperf/" + GetParam() + ".pb.pprof-top.txt"));
  ASSERT_NE(expected_top.find("flat%"), std::string::npos);
  EXPECT_EQ(pprof_text(top, converted), expected_top);
  EXPECT_EQ(pprof_text(top, converted), pprof_text(top, original));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PprofFixtureRewritten,
                         ::testing::ValuesIn(pprof_proto_fixture_names()),
                         [](const auto& p) { return test_name(p.param); });

TEST(PprofPeer, GooglePprofReadsEveryFieldTallyWrites) {
  TALLY_REQUIRE_PEER(find_pprof(), "google/pprof");
  auto profile = read_pprof_profile(every_field_message());
  ASSERT_TRUE(profile) << profile.error().message;
  TempDir dir;
  const std::string file = dir.file("every-field.pb.gz");
  write_bytes(file, write_pprof_profile(*profile));
  const std::string raw = pprof_text({"-raw"}, file);
  // What google/pprof (Debian's 2021 build, which predates Line.column and doc_url) shows
  // of each field the message sets (every_field_message.cc); 1700000000 s is
  // 2023-11-14 22:13:20 UTC (date -u -d @1700000000).
  for (const std::string& expected : std::vector<std::string>{
           "Comment: first comment\n",
           "Comment: " + kLatin1 + "\n",
           "PeriodType: cpu nanoseconds\n",
           "Period: 10000000\n",
           "Time: 2023-11-14 22:13:20.123456789 +0000 UTC\n",
           "Duration: 2.5s\n",
           "samples/count cpu/nanoseconds[dflt]\n",  // default_sample_type = cpu
           "          5   50000000: ",
           "                thread:[worker-1]\n",
           "                alloc_size:[4096 bytes]\n",
           "          2   20000000: ",
           "                pid:[1234]\n",
           "         -1  -10000000: ",
           " inlined_helper /src/app.cc:14 s=12\n             main /src/app.cc:42 s=40(_Z4mainv)\n",
           " main /src/app.cc:41 s=40(_Z4mainv)\n",
           ": 0x7f0000000abc M=2 [F] " + kLatin1 + " /lib/libc.so.6:0 s=0\n",
           ": 0x400000/0x500000/0x1000 /bin/app abcdef0123 [FN][FL][IN]\n",
           ": 0x7f0000000000/0x7f0000100000/0x0 /lib/libc.so.6  \n"})
    EXPECT_NE(raw.find(expected), std::string::npos) << "pprof -raw lacks \"" << expected << "\":\n" << raw;
}

TEST(PprofFixtures, EveryGperfFixtureHasItsPprofProto) {
  // Guards the parameter lists above against an empty or renamed fixture folder.
  std::vector<std::string> names = pprof_proto_fixture_names();
  EXPECT_EQ(names.size(), gperf_fixtures().size());
  for (const GperfFixture& f : gperf_fixtures())
    EXPECT_NE(std::find(names.begin(), names.end(), f.name), names.end()) << f.name;
}

}  // namespace
}  // namespace tally::test
