// Failures exit with the codes of src/cli/command.h and say what and where: 3 for a file
// that cannot be opened, 1 for malformed input (with the byte offset for binary formats),
// 2 for usage errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "gperf_decoder.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// N in the first "byte N" of a message, or -1. (No std::regex: GCC 12 warns inside it
// under -fsanitize=address.)
int64_t byte_offset_in(const std::string& message) {
  size_t at = message.find("byte ");
  if (at == std::string::npos) return -1;
  at += 5;
  size_t end = message.find_first_not_of("0123456789", at);
  if (end == at) return -1;
  return std::stoll(message.substr(at, end - at));
}

TEST(CliErrors, MissingFileIsAnIoErrorNamingThePath) {
  TempDir dir;
  const std::string missing = dir.file("no-such-profile.prof");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"cat", missing}, {"cat", "--summary", missing},
        {"convert", missing, "-o", dir.file("out"), "--to", "gperf"}}) {
    RunResult r = run_tally(args);
    EXPECT_EQ(r.exit_code, 3) << args[0];
    EXPECT_TRUE(contains(r.err, missing)) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(CliErrors, DirectoryAsInputIsRefused) {
  TempDir dir;
  RunResult r = run_tally({"cat", dir.path()});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_TRUE(contains(r.err, dir.path())) << r.err;
}

TEST(CliErrors, GarbageIsMalformedInputAndUnrecognised) {
  TempDir dir;
  const std::string garbage = dir.file("garbage.prof");
  write_bytes(garbage, "this is not a profile\n\x01\x02\x03 at all\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"cat", garbage}, {"cat", "--summary", garbage},
        {"convert", garbage, "-o", dir.file("out"), "--to", "dcpi"}}) {
    RunResult r = run_tally(args);
    EXPECT_EQ(r.exit_code, 1) << args[0];
    EXPECT_TRUE(contains(r.err, "unrecognised")) << r.err;
    EXPECT_TRUE(contains(r.err, garbage)) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST(CliErrors, EmptyInputIsUnrecognised) {
  RunResult r = run_tally({"cat", "-"}, "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "unrecognised")) << r.err;
}

// The fixture cut in the middle of its second record: the message names a byte offset
// inside that record (where the record starts, or where its missing PCs would be).
TEST(CliErrors, TruncatedGperfNamesTheByteOffset) {
  const std::vector<uint8_t> bytes = read_bytes(shared("fixtures/gperf/split.prof"));
  const DecodedGperf decoded = decode_gperf64le(bytes);
  ASSERT_GE(decoded.records.size(), 2u);
  const uint64_t record = decoded.records[1].offset;
  const uint64_t cut = record + 20;  // count, num_pcs, and half a PC
  TempDir dir;
  const std::string truncated = dir.file("truncated.prof");
  write_bytes(truncated, std::string(bytes.begin(), bytes.begin() + static_cast<long>(cut)));

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"cat", truncated}, {"cat", "--summary", truncated},
        {"convert", truncated, "-o", dir.file("out"), "--to", "gperf"}}) {
    RunResult r = run_tally(args);
    EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
    const int64_t at = byte_offset_in(r.err);
    ASSERT_GE(at, 0) << "no byte offset in: " << r.err;
    EXPECT_GE(uint64_t(at), record) << r.err;
    EXPECT_LT(uint64_t(at), cut) << r.err;
    EXPECT_TRUE(contains(r.err, truncated)) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir.file("out")));
}

TEST(CliErrors, CatPrintsTheRecordsBeforeATruncationThenFails) {
  const std::vector<uint8_t> bytes = read_bytes(shared("fixtures/gperf/split.prof"));
  const DecodedGperf decoded = decode_gperf64le(bytes);
  const uint64_t cut = decoded.records[3].offset + 12;
  RunResult r = run_tally({"cat", "-"}, std::string(bytes.begin(), bytes.begin() +
                                                                       static_cast<long>(cut)));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.out, "record 3 at byte " + std::to_string(decoded.records[2].offset)))
      << r.out;
  EXPECT_FALSE(contains(r.out, "record 4 ")) << r.out;
  EXPECT_TRUE(contains(r.err, "<stdin>: byte ")) << r.err;
}

TEST(CliErrors, UnknownOutputFormatIsAUsageErrorEvenBeforeReading) {
  TempDir dir;
  // The input does not even exist: the command line is checked first.
  RunResult r = run_tally({"convert", dir.file("missing"), "-o", "-", "--to", "pprofish"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "pprofish")) << r.err;
}

TEST(CliErrors, UnwritableOutputIsAnIoError) {
  TempDir dir;
  RunResult r = run_tally({"convert", shared("fixtures/gperf/split.prof"), "-o",
                           dir.file("no-such-dir/out.prof"), "--to", "gperf"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "no-such-dir")) << r.err;
}

}  // namespace
}  // namespace tally::test
