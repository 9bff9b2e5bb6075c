// The reader with its lines lexed on other threads (Lexing, chunk_lexer.h) against the
// serial read: the same profile to the last id (strings, mappings, functions, locations,
// samples in order, call edges and jumps in order, parts), the same warnings, the same
// counts, and the same error with the same line number, whatever the number of threads
// and the chunk size; on every real callgrind file of ../shared, on a file of four parts,
// on compressed names defined in one chunk and used in a later one, and on errors in a late
// chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "callgrind_test_helpers.h"
#include "formats/callgrind/chunk_lexer.h"

namespace tally::callgrind::test {
namespace {

std::span<const uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct Read {
  core::Expected<core::Profile> profile = core::Error{"not read"};
  std::vector<std::string> warnings;
  core::PositionCounts counts;
};

Read read(const std::string& text, const Lexing& lexing,
          core::PositionDetail detail = core::PositionDetail::full) {
  Read r;
  core::Diagnostics d;
  r.profile = read_profile_with(span_of(text), "test.callgrind", d, lexing, nullptr, nullptr,
                                detail,
                                detail == core::PositionDetail::functions ? &r.counts : nullptr);
  r.warnings = d.warnings();
  return r;
}

// Every field a reader fills, id for id.
void expect_identical(const core::Profile& a, const core::Profile& b) {
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (core::StringId i = 0; i < a.strings.size(); ++i)
    ASSERT_EQ(a.str(i), b.str(i)) << "string " << i;
  EXPECT_EQ(a.sample_types, b.sample_types);
  EXPECT_EQ(a.default_sample_type, b.default_sample_type);
  EXPECT_EQ(a.comments, b.comments);
  EXPECT_EQ(a.attributes, b.attributes);
  EXPECT_EQ(a.mappings, b.mappings);
  EXPECT_EQ(a.functions, b.functions);
  EXPECT_EQ(a.locations, b.locations);
  ASSERT_EQ(a.sample_count(), b.sample_count());
  for (size_t i = 0; i < a.sample_count(); ++i) {
    ASSERT_TRUE(std::ranges::equal(a.stack(i), b.stack(i))) << "sample " << i;
    ASSERT_TRUE(std::ranges::equal(a.values(i), b.values(i))) << "sample " << i;
    ASSERT_TRUE(std::ranges::equal(a.labels(i), b.labels(i))) << "sample " << i;
  }
  EXPECT_EQ(a.call_graph.calls.size(), b.call_graph.calls.size());
  EXPECT_EQ(a.call_graph.jumps.size(), b.call_graph.jumps.size());
  EXPECT_TRUE(a.call_graph == b.call_graph);
}

void expect_same_read(const Read& serial, const Read& lexed) {
  ASSERT_EQ(serial.profile.has_value(), lexed.profile.has_value());
  if (!serial.profile) {
    EXPECT_EQ(serial.profile.error().message, lexed.profile.error().message);
    return;
  }
  expect_identical(*serial.profile, *lexed.profile);
  EXPECT_EQ(serial.warnings, lexed.warnings);
  EXPECT_EQ(serial.counts.counted, lexed.counts.counted);
  EXPECT_EQ(serial.counts.locations, lexed.counts.locations);
  EXPECT_EQ(serial.counts.samples, lexed.counts.samples);
  EXPECT_EQ(serial.counts.calls, lexed.counts.calls);
  EXPECT_EQ(serial.counts.jumps, lexed.counts.jumps);
}

// Both details, 1 to 3 threads, chunks from one line each to larger than the text.
void expect_same_for_every_setting(const std::string& text, bool small_chunks = true) {
  for (const auto detail : {core::PositionDetail::full, core::PositionDetail::functions}) {
    const Read serial = read(text, Lexing{0}, detail);
    for (const unsigned threads : {1u, 2u, 3u}) {
      for (const size_t chunk : {size_t(1), size_t(97), size_t(4096), size_t(1) << 20}) {
        if (chunk == 1 && !small_chunks) continue;
        SCOPED_TRACE(::testing::Message() << "threads " << threads << ", chunk " << chunk
                                          << ", by function "
                                          << (detail == core::PositionDetail::functions));
        expect_same_read(serial, read(text, Lexing{threads, chunk}, detail));
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

size_t chunks_of(const std::string& text, size_t chunk_bytes) {
  ChunkPipeline pipeline(text, chunk_bytes, 1);
  size_t n = 0;
  while (pipeline.next()) ++n;
  return n;
}

// The 1-based number of the chunk line `line` (1-based) is in.
size_t chunk_of_line(const std::string& text, size_t chunk_bytes, size_t line) {
  ChunkPipeline pipeline(text, chunk_bytes, 2);
  size_t seen = 0, k = 0;
  while (const LexedChunk* c = pipeline.next()) {
    ++k;
    seen += c->lines.size();
    if (seen >= line) return k;
  }
  return 0;
}

TEST(CallgrindLexing, EveryRealFileReadsAsTheSerialRead) {
  std::vector<std::string> files = callgrind_files("conformance/callgrind");
  for (const std::string& f : callgrind_files("fixtures/callgrind")) files.push_back(f);
  ASSERT_GT(files.size(), 20u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const std::string text = file_text(path);
    // One line a chunk on the small files; the others in chunks of 97 bytes and up.
    expect_same_for_every_setting(text, text.size() < 40000);
    if (HasFailure()) return;
  }
}

TEST(CallgrindLexing, FourPartsInManyChunksReadAsTheSerialRead) {
  // valgrind --separate-threads=yes --combine-dumps=yes writes the threads' dumps one after
  // the other in one file: a part each.
  std::string text;
  for (const char* t : {"01", "02", "03", "04"})
    text += file_text(tally::test::shared(std::string("fixtures/callgrind/callgrind.out.split-mt.threads-") + t));
  const Read serial = read(text, Lexing{0});
  ASSERT_TRUE(serial.profile.has_value()) << serial.profile.error().message;
  ASSERT_EQ(serial.profile->call_graph.parts.size(), 4u);
  ASSERT_GT(chunks_of(text, 4096), 20u);
  expect_same_for_every_setting(text, false);
}

TEST(CallgrindLexing, NamesDefinedInOneChunkAndUsedInALaterOne) {
  std::string text =
      "events: Ir\n"
      "positions: instr line\n"
      "ob=(1) /bin/prog\n"
      "fl=(1) main.c\n"
      "fn=(1) main\n"
      "0x10 3 5\n"
      "cfn=(2) helper\n"
      "calls=2 0x40 9\n"
      "0x14 4 100\n";
  const size_t definitions_end = 9;  // lines
  for (int i = 0; i < 300; ++i) text += "+4 * 1\n";
  text += "fn=(2)\n0x40 9 7\n+2 +1 3\nfn=(1)\n0x18 5 11\nfl=(1)\nfn=(2)\n-2 -1 1\n";
  const size_t last_line = definitions_end + 300 + 8;
  const size_t chunk = 256;
  // The definitions are in the first chunk, their uses several chunks later.
  ASSERT_EQ(chunk_of_line(text, chunk, definitions_end), 1u);
  ASSERT_GE(chunk_of_line(text, chunk, last_line - 7), 5u);

  const Read lexed = read(text, Lexing{2, chunk});
  ASSERT_TRUE(lexed.profile.has_value()) << lexed.profile.error().message;
  const core::Profile& p = *lexed.profile;
  // Counted by hand from the text: main 5 + 300 + 11 (100 is the call's), helper 7 + 3 + 1.
  EXPECT_EQ(self_cost(p, "main"), 316);
  EXPECT_EQ(self_cost(p, "helper"), 11);
  EXPECT_EQ(p.functions.size(), 2u);
  EXPECT_TRUE(lexed.warnings.empty()) << lexed.warnings.front();
  ASSERT_EQ(p.call_graph.calls.size(), 1u);
  EXPECT_EQ(function_of(p, p.call_graph.calls[0].callee), "helper");
  EXPECT_EQ(p.call_graph.calls[0].count, 2);
  expect_same_for_every_setting(text);
}

// A text of `lines` good lines, then `bad`, then more good lines.
std::string text_with_bad_line(size_t lines, const std::string& bad) {
  std::string text = "events: Ir\npositions: instr line\nfl=(1) a.c\nfn=(1) f\n0x100 1 1\n";
  for (size_t i = 6; i < lines; ++i) text += "+1 +1 2\n";  // lines 6 to lines - 1
  text += bad + "\n";
  for (int i = 0; i < 50; ++i) text += "+1 +1 2\n";
  return text;
}

TEST(CallgrindLexing, AnErrorInALateChunkNamesItsLine) {
  struct Case {
    std::string bad;       // lines put in at line 2000
    size_t line;           // the line the error names
    std::string expected;  // after "line N: "
  };
  const size_t at = 2000;
  const std::vector<Case> cases = {
      {"+1 +1 2x", at, "cost line expects numbers, found 'x'"},
      {"+1 zz 2", at, "cost line: expected 2 subpositions (instr line), found 'zz 2'"},
      {"-99999 +1 2", at, "cost line: relative position -99999 goes below 0"},
      {"+1 +1 2 3", at, "cost line has 2 costs, but the events: line names 1 event"},
      {"+1 +1 99999999999999999999", at, "cost line has a cost beyond the 64-bit range"},
      {"cfn=(2) g\ncalls=1 0x10 1\nfn=(1)", at + 2,
       "expected the call's cost line after calls= (line 2001), found 'fn=(1)'"},
      {"jump=3 +2 *", at + 1,
       "the line after jump=/jcnd= (line 2000) is the jump's source position and has no costs"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.bad);
    const std::string text = text_with_bad_line(at, c.bad);
    ASSERT_GE(chunk_of_line(text, 1024, c.line), 10u);
    const Read serial = read(text, Lexing{0});
    ASSERT_FALSE(serial.profile.has_value());
    for (const unsigned threads : {1u, 2u, 3u}) {
      const Read lexed = read(text, Lexing{threads, 1024});
      ASSERT_FALSE(lexed.profile.has_value());
      const std::string& message = lexed.profile.error().message;
      EXPECT_EQ(message, serial.profile.error().message);
      EXPECT_TRUE(message.starts_with("test.callgrind: line " + std::to_string(c.line) + ": " +
                                      c.expected))
          << message;
    }
  }
}

TEST(CallgrindLexing, LinesAreCutAsTheSerialReadCutsThem) {
  const std::string text = "events: Ir\r\n\n  \t0x1f +2 -3 *+4 7\r\n12 x\nfn=a\n+1-2 5";
  LexedChunk c;
  lex_chunk(text, c);
  ASSERT_EQ(c.lines.size(), 6u);
  EXPECT_EQ(std::string_view(c.lines[0].text, c.lines[0].size), "events: Ir");
  EXPECT_EQ(c.lines[0].words, LexedLine::kText);
  EXPECT_EQ(c.lines[1].size, 0u);
  EXPECT_EQ(c.lines[2].words, 5u);  // the \r is not part of the line
  EXPECT_EQ(c.lines[3].words, LexedLine::kText);  // "x" is not a number: the reader says so
  EXPECT_EQ(c.lines[4].words, LexedLine::kText);
  EXPECT_EQ(c.lines[5].words, 2u);  // no '\n' at the end
  ASSERT_EQ(c.words.size(), 7u);
  EXPECT_EQ(c.words[0].value, 0x1fu);
  EXPECT_EQ(c.words[1].kind, SubPosition::Kind::plus);
  EXPECT_EQ(c.words[2].kind, SubPosition::Kind::minus);
  EXPECT_EQ(c.words[2].value, 3u);
  EXPECT_EQ(c.words[3].kind, SubPosition::Kind::same);
  EXPECT_TRUE(c.words[3].range);
  EXPECT_EQ(c.words[4].value, 7u);
  EXPECT_TRUE(c.words[5].range);
  EXPECT_EQ(c.words[5].value, 1u);
  EXPECT_EQ(c.words[6].value, 5u);
}

TEST(CallgrindLexing, DefaultUsesSpareCoresOnlyForLargeTexts) {
  const size_t large = size_t(64) << 20;
  EXPECT_EQ(default_lexing(1 << 20, 2, 0.0).threads, 0u);  // small: no threads
  EXPECT_EQ(default_lexing(large, 1, 0.0).threads, 0u);    // one core
  EXPECT_EQ(default_lexing(large, 2, 0.3).threads, 1u);    // the cores but one
  EXPECT_EQ(default_lexing(large, 4, 1.2).threads, 3u);
  EXPECT_EQ(default_lexing(large, 64, 0.0).threads, 8u);   // at most 8
  EXPECT_EQ(default_lexing(large, 2, 1.5).threads, 0u);    // no core to spare
  EXPECT_EQ(default_lexing(large, 2, 12.0).threads, 0u);
}

}  // namespace
}  // namespace tally::callgrind::test
