// The header's line structure (dcpiformat(4) "ASCII HEADER"): required lines exactly once,
// optional lines, unknown lines kept in order, the "samples" terminator, malformed lines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "dcpi_read_helpers.h"

namespace tally::dcpi::test {
namespace {

using testing::HasSubstr;

const char* const kRequiredKeys[] = {"version", "image",  "epoch", "platform", "event",
                                     "period",  "tstart", "tsize", "cpuspeed"};

TEST(DcpiHeaderLines, TheRequiredLinesAloneMakeAValidFile) {
  auto f = read_string(file_with(required_lines()));
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->header.size(), 9u);
  EXPECT_EQ(f->header[0], (HeaderLine{"version", "pdb-0.07"}));
  EXPECT_EQ(f->header[8], (HeaderLine{"cpuspeed", "500"}));
}

class MissingRequiredLine : public testing::TestWithParam<const char*> {};

TEST_P(MissingRequiredLine, IsAnErrorNamingTheLine) {
  const std::string key = GetParam();
  std::string message = read_error(file_with(with_line(key, "")));
  // Eight header lines remain; the terminator, line 9, is where the lack shows.
  EXPECT_THAT(message, HasSubstr("t.dcpi: line 9:"));
  EXPECT_THAT(message, HasSubstr("required"));
  EXPECT_THAT(message, HasSubstr(key));
  for (const char* other : kRequiredKeys)
    if (other != key) {
      EXPECT_THAT(message, testing::Not(HasSubstr(other))) << "only '" << key << "' is missing";
    }
}

INSTANTIATE_TEST_SUITE_P(EachKey, MissingRequiredLine, testing::ValuesIn(kRequiredKeys));

TEST(DcpiHeaderLines, SeveralMissingLinesAreAllNamed) {
  std::vector<std::string> lines = required_lines();
  lines.erase(lines.begin() + 7);  // tsize
  lines.erase(lines.begin() + 1);  // image
  std::string message = read_error(file_with(lines));
  EXPECT_THAT(message, HasSubstr("image"));
  EXPECT_THAT(message, HasSubstr("tsize"));
}

class DuplicatedRequiredLine : public testing::TestWithParam<const char*> {};

TEST_P(DuplicatedRequiredLine, IsAnErrorAtTheSecondOccurrence) {
  const std::string key = GetParam();
  std::vector<std::string> lines = required_lines();
  std::string first;
  for (const std::string& l : lines)
    if (l.starts_with(key + " ")) first = l;
  lines.push_back("cpuamask ff");  // line 10: an optional line between the two
  lines.push_back(first);          // line 11: the same line again, value and all
  std::string message = read_error(file_with(lines));
  EXPECT_THAT(message, HasSubstr("t.dcpi: line 11:"));
  EXPECT_THAT(message, HasSubstr("'" + key + "'"));
}

INSTANTIATE_TEST_SUITE_P(EachKey, DuplicatedRequiredLine, testing::ValuesIn(kRequiredKeys));

TEST(DcpiHeaderLines, OptionalLinesAreAcceptedAndParsed) {
  std::vector<std::string> lines = required_lines();
  lines.insert(lines.begin() + 2, "path /usr/lib/lib with space.so");
  lines.push_back("cpuamask 0000000F");
  lines.push_back("cpuimplv 2");
  lines.push_back("cpucount\t4");
  auto f = read_string(file_with(lines));
  ASSERT_TRUE(f) << f.error().message;
  auto fields = parse_fields(*f, "t.dcpi");
  ASSERT_TRUE(fields) << fields.error().message;
  EXPECT_EQ(fields->path, "/usr/lib/lib with space.so");
  EXPECT_EQ(fields->cpuamask, "0000000F");
  EXPECT_EQ(fields->cpuimplv, 2u);
  EXPECT_EQ(fields->cpucount, 4u);
}

TEST(DcpiHeaderLines, TheRequiredFieldsAreParsed) {
  auto f = read_string(file_with(required_lines()));
  ASSERT_TRUE(f) << f.error().message;
  auto fields = parse_fields(*f, "t.dcpi");
  ASSERT_TRUE(fields) << fields.error().message;
  EXPECT_EQ(fields->major, 0u);
  EXPECT_EQ(fields->minor, 7u);
  EXPECT_EQ(fields->image, "1a2b3c4d");
  EXPECT_EQ(fields->platform, "alpha");
  EXPECT_EQ(fields->event, "cycles");
  EXPECT_EQ(fields->period, 62976u);
  EXPECT_EQ(fields->tstart, 0x120000000u);
  EXPECT_EQ(fields->tsize, 4096u);
  EXPECT_EQ(fields->cpuspeed, 500u);
  EXPECT_FALSE(fields->path.has_value());
  EXPECT_FALSE(fields->cpucount.has_value());
}

TEST(DcpiHeaderLines, RestOfLineValuesKeepInnerAndTrailingBlanks) {
  auto f = read_string(file_with(with_line("platform", "platform  Alpha\t21164 \t")));
  ASSERT_TRUE(f) << f.error().message;
  auto fields = parse_fields(*f, "t.dcpi");
  ASSERT_TRUE(fields) << fields.error().message;
  EXPECT_EQ(fields->platform, "Alpha\t21164 \t");
}

// Any word is an unknown line, "samples foo" too: only "samples" and blanks end the header.
const std::vector<HeaderLine> kUnknown = {
    {"zzz", "1"}, {"samples", "foo"}, {"x-y:z=", "a\tb  c"}, {"Version", "pdb-9.9"}, {"samplesx", "1"}};

std::vector<std::string> with_unknown_lines() {
  std::vector<std::string> lines = required_lines();
  lines.insert(lines.begin(), kUnknown[0].key + " " + kUnknown[0].value);
  lines.insert(lines.begin() + 4, kUnknown[1].key + " " + kUnknown[1].value);
  lines.insert(lines.begin() + 7, kUnknown[2].key + " " + kUnknown[2].value);
  lines.push_back(kUnknown[3].key + " " + kUnknown[3].value);
  lines.push_back(kUnknown[4].key + " " + kUnknown[4].value);
  return lines;
}

TEST(DcpiHeaderLines, UnknownLinesAreKeptInTheirOrder) {
  auto f = read_string(file_with(with_unknown_lines()));
  ASSERT_TRUE(f) << f.error().message;
  ASSERT_EQ(f->header.size(), 14u);
  EXPECT_EQ(f->header[0], kUnknown[0]);
  EXPECT_EQ(f->header[4], kUnknown[1]);
  EXPECT_EQ(f->header[7], kUnknown[2]);
  EXPECT_EQ(f->header[12], kUnknown[3]);
  EXPECT_EQ(f->header[13], kUnknown[4]);
  // The binary part was found after the real terminator, not after "samples foo".
  ASSERT_EQ(f->chunks.size(), 1u);
  EXPECT_EQ(f->chunks[0].offset, 8u);
}

TEST(DcpiHeaderLines, UnknownLinesSurviveReadThenWriteInTheirOrder) {
  const std::string original = file_with(with_unknown_lines());
  auto f = read_string(original);
  ASSERT_TRUE(f) << f.error().message;
  auto written = write_dcpi(*f);
  ASSERT_TRUE(written) << written.error().message;
  // Single-space separators and tally's padding: the hand-built file is already canonical.
  EXPECT_EQ(*written, original);
  auto again = read_string(*written);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->header, f->header);
}

TEST(DcpiHeaderLines, TheTerminatorMayHaveTrailingSpacesAndTabs) {
  const std::string head = lines_text(required_lines());
  for (std::string blanks : {"", " ", "\t", " \t \t", "   "}) {
    std::vector<RawChunk> chunks = {{0, {7}}};
    std::string file = head + "samples" + blanks + "\n" + chunks_bytes(chunks) + true_footer(chunks);
    auto f = read_string(file);
    ASSERT_TRUE(f) << "'" << blanks << "': " << f.error().message;
    ASSERT_EQ(f->chunks.size(), 1u);
    EXPECT_EQ(f->chunks[0].counts, std::vector<uint32_t>{7});
    EXPECT_EQ(f->header.size(), 9u);
  }
}

TEST(DcpiHeaderLines, AnUnalignedBinarySectionIsStillRead) {
  // The padding is advice ("should"), not grammar.
  std::string head = lines_text(required_lines()) + "samples\n";
  if (head.size() % 4 == 0) head = "b 12\n" + head;
  ASSERT_NE(head.size() % 4, 0u);
  std::vector<RawChunk> chunks = {{3, {1, 2}}};
  auto f = read_string(head + chunks_bytes(chunks) + true_footer(chunks));
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->chunks[0].counts, (std::vector<uint32_t>{1, 2}));
}

TEST(DcpiHeaderLines, AHeaderWithoutTerminatorIsAnError) {
  EXPECT_THAT(read_error(lines_text(required_lines())), HasSubstr("samples"));
  // "samples" without its newline, at the end of the input, does not end the header either.
  EXPECT_THAT(read_error(lines_text(required_lines()) + "samples"), HasSubstr("line 10"));
  // "samples foo" is an unknown line, not the end.
  EXPECT_THAT(read_error(lines_text(required_lines()) + "samples foo\n" + le32(0) + le32(0)),
              HasSubstr("samples"));
}

TEST(DcpiHeaderLines, AnEmptyLineIsAnErrorWithItsLineNumber) {
  std::vector<std::string> lines = required_lines();
  lines.insert(lines.begin() + 3, "");
  EXPECT_THAT(read_error(file_with(lines)), HasSubstr("t.dcpi: line 4:"));
}

TEST(DcpiHeaderLines, AKeyWithoutValueIsAnErrorWithItsLineNumber) {
  for (std::string bad : {"cpucount", "cpucount ", "cpucount\t \t", "frobnicate"}) {
    std::vector<std::string> lines = required_lines();
    lines.insert(lines.begin() + 5, bad);
    std::string message = read_error(file_with(lines));
    EXPECT_THAT(message, HasSubstr("t.dcpi: line 6:")) << "'" << bad << "'";
  }
}

TEST(DcpiHeaderLines, ALineStartingWithABlankIsAnError) {
  for (std::string bad : {" cpucount 2", "\tcpucount 2"}) {
    std::vector<std::string> lines = required_lines();
    lines.push_back(bad);
    EXPECT_THAT(read_error(file_with(lines)), HasSubstr("t.dcpi: line 10:")) << "'" << bad << "'";
  }
}

TEST(DcpiHeaderLines, AnEmptyInputIsAnError) {
  EXPECT_THAT(read_error(""), HasSubstr("line 1"));
}

}  // namespace
}  // namespace tally::dcpi::test
