// Every field of profile.proto through tally: a message written by the test's own encoder
// (every_field_message.h) reads into the right core::Profile, and what tally writes back
// means the same profile, field for field, as decoded again by the test's own decoder.
#include <gtest/gtest.h>

#include <algorithm>

#include "every_field_message.h"
#include "pprof_schema.h"
#include "pprof_test_helpers.h"
#include "proto_wire.h"
#include "wire_profile_text.h"

namespace tally::test {
namespace {

namespace S = schema;
using wire::Writer;

Writer value_type(uint64_t type, uint64_t unit) {
  return Writer().varint(S::value_type::type, type).varint(S::value_type::unit, unit);
}

core::Profile read_every_field() {
  auto p = read_pprof_profile(every_field_message());
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(p).value();
}

const core::Location& location_at(const core::Profile& p, uint64_t address) {
  for (const core::Location& l : p.locations)
    if (l.address == address) return l;
  throw std::runtime_error("no location at the address");
}

TEST(PprofFields, TheTestsOwnRenderingOfTheInputIsAsWrittenByHand) {
  // Checks the decoder and renderer that the other tests rely on.
  EXPECT_EQ(profile_text(every_field_message()), kEveryFieldText);
}

TEST(PprofFields, HeaderFieldsRead) {
  core::Profile p = read_every_field();
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[1].type), "cpu");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "nanoseconds");
  EXPECT_EQ(p.str(p.default_sample_type), "cpu");
  EXPECT_EQ(p.str(p.period_type.type), "cpu");
  EXPECT_EQ(p.period, 10000000);
  EXPECT_EQ(p.time_nanos, 1700000000123456789);
  EXPECT_EQ(p.duration_nanos, 2500000000);
  EXPECT_EQ(p.str(p.drop_frames), "drop.*");
  EXPECT_EQ(p.str(p.keep_frames), "keep_me");
  EXPECT_EQ(p.str(p.doc_url), "https://example.com/doc");
  ASSERT_EQ(p.comments.size(), 2u);
  EXPECT_EQ(p.str(p.comments[0]), "first comment");
  EXPECT_EQ(p.str(p.comments[1]), kLatin1);
}

TEST(PprofFields, MappingsWithTheirFlags) {
  core::Profile p = read_every_field();
  ASSERT_EQ(p.mappings.size(), 2u);
  const core::Mapping& app = p.mapping(location_at(p, 0x401234).mapping);
  EXPECT_EQ(app.start, 0x400000u);
  EXPECT_EQ(app.limit, 0x500000u);
  EXPECT_EQ(app.offset, 0x1000u);
  EXPECT_EQ(p.str(app.file), "/bin/app");
  EXPECT_EQ(p.str(app.build_id), "abcdef0123");
  EXPECT_TRUE(app.has_functions);
  EXPECT_TRUE(app.has_filenames);
  EXPECT_FALSE(app.has_line_numbers);
  EXPECT_TRUE(app.has_inline_frames);
  const core::Mapping& libc = p.mapping(location_at(p, 0x7f0000000abc).mapping);
  EXPECT_EQ(p.str(libc.file), "/lib/libc.so.6");
  EXPECT_EQ(p.str(libc.build_id), "");
  EXPECT_FALSE(libc.has_functions || libc.has_filenames || libc.has_line_numbers ||
               libc.has_inline_frames);
}

TEST(PprofFields, LocationsLinesColumnsAndFolding) {
  core::Profile p = read_every_field();
  const core::Location& inlined = location_at(p, 0x401234);
  EXPECT_FALSE(inlined.is_folded);
  ASSERT_EQ(inlined.lines.size(), 2u);
  EXPECT_EQ(p.str(p.function(inlined.lines[0].function).name), "inlined_helper");
  EXPECT_EQ(inlined.lines[0].line, 14);
  EXPECT_EQ(inlined.lines[0].column, 7);
  const core::Function& main_fn = p.function(inlined.lines[1].function);
  EXPECT_EQ(p.str(main_fn.name), "main");
  EXPECT_EQ(p.str(main_fn.system_name), "_Z4mainv");
  EXPECT_EQ(p.str(main_fn.filename), "/src/app.cc");
  EXPECT_EQ(main_fn.start_line, 40);
  EXPECT_EQ(inlined.lines[1].line, 42);
  EXPECT_EQ(inlined.lines[1].column, 3);

  const core::Location& folded = location_at(p, 0x7f0000000abc);
  EXPECT_TRUE(folded.is_folded);
  ASSERT_EQ(folded.lines.size(), 1u);
  EXPECT_EQ(p.str(p.function(folded.lines[0].function).name), kLatin1);
}

TEST(PprofFields, SamplesValuesAndLabels) {
  core::Profile p = read_every_field();
  ASSERT_EQ(p.sample_count(), 3u);
  EXPECT_EQ(p.total(0), 5 + 2 - 1);
  EXPECT_EQ(p.total(1), 50000000 + 20000000 - 10000000);
  bool seen_labelled = false;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    if (p.values(i)[0] != 5) continue;
    seen_labelled = true;
    std::vector<std::string> labels;
    for (const core::Label& l : p.labels(i))
      labels.push_back(std::string(p.str(l.key)) + "=" + std::string(p.str(l.str)) + "/" +
                       std::to_string(l.num) + "/" + std::string(p.str(l.num_unit)));
    std::sort(labels.begin(), labels.end());
    EXPECT_EQ(labels, (std::vector<std::string>{"alloc_size=/4096/bytes", "thread=worker-1/0/"}));
    EXPECT_EQ(stack_names(p, i), "inlined_helper;main;main");
  }
  EXPECT_TRUE(seen_labelled);
}

TEST(PprofFields, WrittenMessageMeansTheSameProfile) {
  const std::string written = write_pprof_profile(read_every_field());
  ASSERT_GE(written.size(), 2u);
  EXPECT_EQ(uint8_t(written[0]), 0x1f) << "tally writes pprof gzipped";
  EXPECT_EQ(uint8_t(written[1]), 0x8b);
  const std::string inflated = gunzip_bytes(written);
  EXPECT_EQ(profile_text(inflated), kEveryFieldText);

  // The string table starts with "" and holds each string once.
  std::vector<std::string> strings = wire::Message(inflated).strings(S::profile::string_table);
  ASSERT_FALSE(strings.empty());
  EXPECT_EQ(strings[0], "");
  std::vector<std::string> sorted = strings;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

TEST(PprofFields, GzippedInputReadsTheSame) {
  auto p = read_pprof_profile(gzip_bytes(every_field_message()));
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(profile_text(gunzip_bytes(write_pprof_profile(*p))), kEveryFieldText);
}

TEST(PprofFields, WritingIsDeterministic) {
  core::Profile p = read_every_field();
  EXPECT_EQ(write_pprof_profile(p), write_pprof_profile(p));
  // Reading what was written and writing again gives the same bytes.
  auto again = read_pprof_profile(write_pprof_profile(p));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(write_pprof_profile(*again), write_pprof_profile(p));
}

TEST(PprofFields, IdenticalSamplesSumAndAllZeroSamplesGo) {
  // pprof's own merge rules: the same stack with the same labels is one sample; a sample
  // whose values are all zero carries nothing.
  namespace P = S::profile;
  Writer w;
  w.bytes(P::string_table, "").bytes(P::string_table, "samples").bytes(P::string_table, "count")
      .message(P::sample_type, value_type(1, 2))
      .message(P::location, Writer().varint(S::location::id, 1).varint(S::location::address, 0x10))
      .message(P::location, Writer().varint(S::location::id, 2).varint(S::location::address, 0x20))
      .message(P::sample, Writer().packed(S::sample::location_id, {1, 2}).packed(S::sample::value, {3}))
      .message(P::sample, Writer().packed(S::sample::location_id, {2}).packed(S::sample::value, {0}))
      .message(P::sample, Writer().packed(S::sample::location_id, {1, 2}).packed(S::sample::value, {4}));
  auto p = read_pprof_profile(w.str());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(profile_text(gunzip_bytes(write_pprof_profile(*p))),
            "sample_type samples/count\n"
            "default_sample_type \n"
            "period_type /\n"
            "period 0\n"
            "time_nanos 0\n"
            "duration_nanos 0\n"
            "drop_frames \n"
            "keep_frames \n"
            "doc_url \n"
            "sample 7\n"
            "  0x10 in -\n"
            "  0x20 in -\n");
}

}  // namespace
}  // namespace tally::test
