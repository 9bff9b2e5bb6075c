// core::Profile -> DCPI: one file per image (mapping) with samples, leaf counts only, and
// the round trips profile -> DCPI -> profile -> DCPI and DCPI -> profile -> DCPI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "dcpi_histogram.h"
#include "dcpi_read_helpers.h"
#include "formats/dcpi/dcpi_convert.h"

namespace tally::dcpi::test {
namespace {

using testing::HasSubstr;

// A profile as gperftools conversions make them: samples/count and cpu/nanoseconds.
core::Profile cpu_profile() {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 10'000'000;
  p.time_nanos = (int64_t{930832200} + 42) * 1'000'000'000;  // 1999-07-01 12:30:42 UTC
  return p;
}

void add(core::Profile& p, std::vector<core::LocationId> stack, int64_t count) {
  int64_t values[2] = {count, count * p.period};
  p.add_sample(stack, values);
}

core::LocationId at(core::Profile& p, core::MappingId m, uint64_t address) {
  return p.add_location({.mapping = m, .address = address, .lines = {}});
}

std::string written(const DcpiFile& f) {
  auto bytes = write_dcpi(f);
  EXPECT_TRUE(bytes) << bytes.error().message;
  return bytes ? *bytes : std::string();
}

bool any_warning_has(const core::Diagnostics& d, const std::string& text) {
  for (const std::string& w : d.warnings())
    if (w.find(text) != std::string::npos) return true;
  return false;
}

TEST(DcpiFromProfile, OneImageGetsItsHeaderFromTheProfile) {
  core::Profile p = cpu_profile();
  core::MappingId m = p.add_mapping({.start = 0x400000, .limit = 0x500000, .offset = 0x1000,
                                     .file = p.intern("/bin/app")});
  add(p, {at(p, m, 0x400100)}, 3);
  add(p, {at(p, m, 0x400104)}, 1);
  add(p, {at(p, m, 0x400200)}, 2);
  core::Diagnostics diagnostics;
  auto images = from_profile(p, diagnostics);
  ASSERT_TRUE(images) << images.error().message;
  ASSERT_EQ(images->size(), 1u);
  const DcpiFile& f = (*images)[0].file;
  EXPECT_EQ(header_value(f, "version"), "pdb-0.07");
  EXPECT_EQ(header_value(f, "path"), "/bin/app");
  EXPECT_EQ(header_value(f, "tstart"), "400000");
  EXPECT_EQ(header_value(f, "tsize"), "1048576");
  EXPECT_EQ(header_value(f, "event"), "cpu");
  EXPECT_EQ(header_value(f, "period"), "10000000");
  EXPECT_EQ(header_value(f, "eventunit"), "nanoseconds");
  EXPECT_EQ(header_value(f, "tfileoffset"), "1000");
  EXPECT_EQ(header_value(f, "epoch"), "9907011230");  // minutes: the seconds are cut
  EXPECT_EQ(histogram_of(f), (Histogram{{0x400100, 3}, {0x400104, 1}, {0x400200, 2}}));
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.warnings()[0];
  // The result is a valid file by the reader's rules.
  EXPECT_TRUE(read_string(written(f)));
}

TEST(DcpiFromProfile, ProfileToDcpiToProfileToDcpiIsByteIdentical) {
  core::Profile p = cpu_profile();
  core::MappingId m = p.add_mapping({.start = 0x7f0000001000, .limit = 0x7f0000009000,
                                     .offset = 0x1000, .file = p.intern("/lib/libwork.so")});
  add(p, {at(p, m, 0x7f0000001010)}, 3);
  add(p, {at(p, m, 0x7f0000001012)}, 4);  // one address without samples between
  add(p, {at(p, m, 0x7f0000001100)}, 9);
  add(p, {at(p, m, 0x7f0000008fff)}, 1);  // the last byte of the mapping
  core::Diagnostics d1;
  auto first = from_profile(p, d1);
  ASSERT_TRUE(first) << first.error().message;
  ASSERT_EQ(first->size(), 1u);
  const std::string a = written((*first)[0].file);

  core::Diagnostics d2;
  auto reread = read_string(a, d2);
  ASSERT_TRUE(reread) << reread.error().message;
  auto back = to_profile(*reread, "a.dcpi", d2);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->total(0), 17);
  auto second = from_profile(*back, d2);
  ASSERT_TRUE(second) << second.error().message;
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ(written((*second)[0].file), a);
  EXPECT_EQ((*second)[0].name, (*first)[0].name);
  EXPECT_TRUE(d2.empty()) << d2.warnings()[0];
}

TEST(DcpiFromProfile, DcpiToProfileToDcpiKeepsEveryHeaderLineAndCount) {
  std::vector<std::string> lines = {
      "version pdb-0.06", "image 00c0ffee",    "path /usr/shlib/libc.so", "foo bar",
      "epoch 9907011230", "platform alpha",    "event dmiss",             "period 4096",
      "tstart 3ff80000000", "tsize 1048576",   "cpuspeed 600",            "cpuamask 0f",
      "samples later",    "cpucount 2"};
  std::vector<RawChunk> chunks = {{0, {1}}, {4, {2, 0, 3}}, {1048572, {0xffff}}};
  core::Diagnostics d;
  auto f = read_string(canonical_file(lines, chunks), d);
  ASSERT_TRUE(f) << f.error().message;
  auto p = to_profile(*f, "in.dcpi", d);
  ASSERT_TRUE(p) << p.error().message;
  auto images = from_profile(*p, d);
  ASSERT_TRUE(images) << images.error().message;
  ASSERT_EQ(images->size(), 1u);
  const DcpiFile& out = (*images)[0].file;
  std::vector<std::string> out_lines;
  for (const HeaderLine& l : out.header) out_lines.push_back(l.key + " " + l.value);
  EXPECT_EQ(out_lines, lines);
  EXPECT_EQ(histogram_of(out), histogram_of(*f));
}

TEST(DcpiFromProfile, ALongEpochIsKept) {
  std::vector<std::string> lines = with_line("epoch", "epoch 20240229123059");
  core::Diagnostics d;
  auto f = read_string(canonical_file(lines, {{0, {1}}}), d);
  ASSERT_TRUE(f) << f.error().message;
  auto p = to_profile(*f, "in.dcpi", d);
  ASSERT_TRUE(p) << p.error().message;
  auto images = from_profile(*p, d);
  ASSERT_TRUE(images) << images.error().message;
  EXPECT_EQ(header_value((*images)[0].file, "epoch"), "20240229123059");
}

TEST(DcpiFromProfile, TimesTheTwoDigitYearCannotNameUseTheLongEpoch) {
  // YYMMDDHHMM covers 1969..2068 only; outside it the epoch must not wrap to another century.
  struct Case {
    int64_t unix_seconds;  // from `date -u -d '...' +%s`
    std::string epoch;
  };
  for (const Case& c : {Case{3166585689, "20700506070809"}, Case{-315521755, "19600102030405"},
                        Case{0, "7001010000"}, Case{3124223940 + 59, "6812312359"}}) {
    core::Profile p = cpu_profile();
    p.time_nanos = c.unix_seconds * 1'000'000'000;
    core::MappingId m = p.add_mapping({.start = 0x1000, .limit = 0x2000, .offset = 0,
                                       .file = p.intern("/bin/a")});
    add(p, {at(p, m, 0x1000)}, 1);
    core::Diagnostics diagnostics;
    auto images = from_profile(p, diagnostics);
    ASSERT_TRUE(images) << images.error().message;
    EXPECT_EQ(header_value((*images)[0].file, "epoch"), c.epoch) << c.unix_seconds;
  }
}

TEST(DcpiFromProfile, SeveralImagesGiveOneFileEachWithLeafCountsOnly) {
  core::Profile p = cpu_profile();
  core::MappingId app = p.add_mapping({.start = 0x400000, .limit = 0x401000, .offset = 0,
                                       .file = p.intern("/bin/app")});
  core::MappingId lib = p.add_mapping({.start = 0x7f0000000000, .limit = 0x7f0000010000,
                                       .offset = 0, .file = p.intern("/lib/libx.so")});
  p.add_mapping({.start = 0x7f1000000000, .limit = 0x7f1000001000, .offset = 0,
                 .file = p.intern("/lib/unused.so")});
  core::LocationId a1 = at(p, app, 0x400010), a2 = at(p, app, 0x400020);
  core::LocationId b1 = at(p, lib, 0x7f0000000100), b2 = at(p, lib, 0x7f0000000200);
  add(p, {a1}, 5);
  add(p, {a1, b1}, 2);      // a1 called from the library
  add(p, {b1, a2}, 4);
  add(p, {b2, b1, a2}, 1);
  add(p, {a2}, 3);
  add(p, {b1}, 0);          // no samples: nothing to write
  core::Diagnostics diagnostics;
  auto images = from_profile(p, diagnostics);
  ASSERT_TRUE(images) << images.error().message;
  ASSERT_EQ(images->size(), 2u) << "an image without samples gets no file";
  std::map<std::string, Histogram> by_path;
  std::set<std::string> names;
  for (const Image& image : *images) {
    by_path[header_value(image.file, "path")] = histogram_of(image.file);
    names.insert(image.name);
    EXPECT_TRUE(read_string(written(image.file))) << image.name;
  }
  EXPECT_EQ(names.size(), 2u) << "file names must differ";
  EXPECT_EQ(by_path["/bin/app"], (Histogram{{0x400010, 7}, {0x400020, 3}}));
  EXPECT_EQ(by_path["/lib/libx.so"], (Histogram{{0x7f0000000100, 4}, {0x7f0000000200, 1}}));
  EXPECT_TRUE(any_warning_has(diagnostics, "call stacks dropped"));
  for (const std::string& name : names)
    EXPECT_THAT(name, testing::AnyOf(HasSubstr("app"), HasSubstr("libx.so")));
}

TEST(DcpiFromProfile, OneFrameStacksGiveNoCallStackWarning) {
  core::Profile p = cpu_profile();
  core::MappingId m = p.add_mapping({.start = 0x1000, .limit = 0x2000, .offset = 0,
                                     .file = p.intern("/bin/a")});
  add(p, {at(p, m, 0x1000)}, 1);
  core::Diagnostics diagnostics;
  auto images = from_profile(p, diagnostics);
  ASSERT_TRUE(images) << images.error().message;
  EXPECT_FALSE(any_warning_has(diagnostics, "call stacks dropped"));
}

TEST(DcpiFromProfile, SamplesOutsideEveryMappingAreReported) {
  core::Profile p = cpu_profile();
  core::MappingId m = p.add_mapping({.start = 0x1000, .limit = 0x2000, .offset = 0,
                                     .file = p.intern("/bin/a")});
  add(p, {at(p, m, 0x1800)}, 2);
  add(p, {at(p, 0, 0x9000)}, 3);
  core::Diagnostics diagnostics;
  auto images = from_profile(p, diagnostics);
  ASSERT_TRUE(images) << images.error().message;
  ASSERT_EQ(images->size(), 1u);
  EXPECT_EQ(histogram_of((*images)[0].file), (Histogram{{0x1800, 2}}));
  EXPECT_TRUE(any_warning_has(diagnostics, "outside"));
}

TEST(DcpiFromProfile, CountsAreSummedPerLeafAddress) {
  core::Profile p = cpu_profile();
  core::MappingId m = p.add_mapping({.start = 0x1000, .limit = 0x2000, .offset = 0,
                                     .file = p.intern("/bin/a")});
  // Two locations with the same address (e.g. different inline frames) are one address.
  core::LocationId l1 = at(p, m, 0x1010), l2 = at(p, m, 0x1010);
  add(p, {l1}, 2);
  add(p, {l2}, 5);
  core::Diagnostics diagnostics;
  auto images = from_profile(p, diagnostics);
  ASSERT_TRUE(images) << images.error().message;
  EXPECT_EQ(histogram_of((*images)[0].file), (Histogram{{0x1010, 7}}));
}

TEST(DcpiFromProfile, AnAddressMoreThan4GiBIntoItsMappingIsUnsupported) {
  core::Profile p = cpu_profile();
  core::MappingId m = p.add_mapping({.start = 0x1000, .limit = 0x300000000, .offset = 0,
                                     .file = p.intern("/bin/huge")});
  add(p, {at(p, m, 0x1000 + 0x100000000)}, 1);
  core::Diagnostics diagnostics;
  auto images = from_profile(p, diagnostics);
  ASSERT_FALSE(images);
  EXPECT_EQ(images.error().kind, core::ErrorKind::unsupported);
}

TEST(DcpiFromProfile, AnAddressBeforeItsMappingIsUnsupported) {
  core::Profile p = cpu_profile();
  core::MappingId m = p.add_mapping({.start = 0x2000, .limit = 0x3000, .offset = 0,
                                     .file = p.intern("/bin/a")});
  add(p, {at(p, m, 0x1fff)}, 1);  // a DCPI offset cannot be negative
  core::Diagnostics diagnostics;
  auto images = from_profile(p, diagnostics);
  ASSERT_FALSE(images);
  EXPECT_EQ(images.error().kind, core::ErrorKind::unsupported);
  EXPECT_THAT(images.error().message, HasSubstr("0x1fff"));
}

}  // namespace
}  // namespace tally::dcpi::test
