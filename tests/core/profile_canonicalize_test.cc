// Profile::canonicalize: equal functions/mappings/locations become one, samples that then
// match are merged, ids are renumbered by first use, unused entries and strings dropped.
// The same content built with any internal numbering must come out identical.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/profile.h"

namespace tally::core {
namespace {

using Stack = std::vector<LocationId>;
using Values = std::vector<int64_t>;

Stack stack_of(const Profile& p, size_t i) { return {p.stack(i).begin(), p.stack(i).end()}; }

// Compares everything a writer could emit, ids included.
void expect_same_structure(const Profile& a, const Profile& b) {
  ASSERT_EQ(a.strings.size(), b.strings.size());
  for (StringId i = 0; i < a.strings.size(); ++i) EXPECT_EQ(a.strings[i], b.strings[i]) << i;
  EXPECT_EQ(a.sample_types, b.sample_types);
  EXPECT_EQ(a.default_sample_type, b.default_sample_type);
  EXPECT_EQ(a.period_type, b.period_type);
  EXPECT_EQ(a.period, b.period);
  EXPECT_EQ(a.time_nanos, b.time_nanos);
  EXPECT_EQ(a.duration_nanos, b.duration_nanos);
  EXPECT_EQ(a.drop_frames, b.drop_frames);
  EXPECT_EQ(a.keep_frames, b.keep_frames);
  EXPECT_EQ(a.doc_url, b.doc_url);
  EXPECT_EQ(a.comments, b.comments);
  EXPECT_EQ(a.attributes, b.attributes);
  EXPECT_EQ(a.mappings, b.mappings);
  EXPECT_EQ(a.locations, b.locations);
  EXPECT_EQ(a.functions, b.functions);
  ASSERT_EQ(a.sample_count(), b.sample_count());
  for (size_t i = 0; i < a.sample_count(); ++i) {
    EXPECT_EQ(stack_of(a, i), stack_of(b, i)) << "sample " << i;
    EXPECT_EQ(Values(a.values(i).begin(), a.values(i).end()),
              Values(b.values(i).begin(), b.values(i).end()))
        << "sample " << i;
    EXPECT_EQ(std::vector<Label>(a.labels(i).begin(), a.labels(i).end()),
              std::vector<Label>(b.labels(i).begin(), b.labels(i).end()))
        << "sample " << i;
  }
}

Profile with_samples_type() {
  Profile p;
  p.sample_types = {p.value_type("samples", "count")};
  return p;
}

TEST(Canonicalize, MergesEqualEntitiesAndThenTheSamplesThatBecameIdentical) {
  Profile p = with_samples_type();
  Mapping exe{.start = 0x400000, .limit = 0x500000, .file = p.intern("a.out")};
  MappingId m1 = p.add_mapping(exe);
  MappingId m2 = p.add_mapping(exe);
  FunctionId main1 = p.add_function({.name = p.intern("main")});
  FunctionId main2 = p.add_function({.name = p.intern("main")});
  FunctionId foo = p.add_function({.name = p.intern("foo")});
  LocationId foo_a = p.add_location({.mapping = m1, .address = 0x401000, .lines = {{.function = foo}}});
  LocationId foo_b = p.add_location({.mapping = m2, .address = 0x401000, .lines = {{.function = foo}}});
  LocationId main_a = p.add_location({.mapping = m1, .address = 0x402000, .lines = {{.function = main1}}});
  LocationId main_b = p.add_location({.mapping = m2, .address = 0x402000, .lines = {{.function = main2}}});
  p.add_sample(Stack{foo_a, main_a}, Values{5});
  p.add_sample(Stack{foo_a}, Values{1});
  p.add_sample(Stack{foo_b, main_b}, Values{7});  // same frames under other ids
  p.canonicalize();

  ASSERT_EQ(p.mappings.size(), 1u);
  EXPECT_EQ(p.mappings[0].start, 0x400000u);
  EXPECT_EQ(p.str(p.mappings[0].file), "a.out");
  ASSERT_EQ(p.functions.size(), 2u);
  EXPECT_EQ(p.str(p.functions[0].name), "foo");
  EXPECT_EQ(p.str(p.functions[1].name), "main");
  ASSERT_EQ(p.locations.size(), 2u);
  EXPECT_EQ(p.locations[0], (Location{.mapping = 1, .address = 0x401000, .lines = {{.function = 1}}}));
  EXPECT_EQ(p.locations[1], (Location{.mapping = 1, .address = 0x402000, .lines = {{.function = 2}}}));
  ASSERT_EQ(p.sample_count(), 2u);
  EXPECT_EQ(stack_of(p, 0), (Stack{1, 2}));
  EXPECT_EQ(p.values(0)[0], 12);
  EXPECT_EQ(stack_of(p, 1), (Stack{1}));
  EXPECT_EQ(p.values(1)[0], 1);
}

TEST(Canonicalize, LocationsThatDifferOnlyInLineOrFoldingStayApart) {
  Profile p = with_samples_type();
  FunctionId f = p.add_function({.name = p.intern("f")});
  LocationId l1 = p.add_location({.address = 0x10, .lines = {{.function = f, .line = 1}}});
  LocationId l2 = p.add_location({.address = 0x10, .lines = {{.function = f, .line = 2}}});
  LocationId l3 = p.add_location({.is_folded = true, .address = 0x10, .lines = {{.function = f, .line = 1}}});
  p.add_sample(Stack{l1}, Values{1});
  p.add_sample(Stack{l2}, Values{2});
  p.add_sample(Stack{l3}, Values{4});
  p.canonicalize();
  EXPECT_EQ(p.locations.size(), 3u);
  EXPECT_EQ(p.functions.size(), 1u);
  ASSERT_EQ(p.sample_count(), 3u);
  EXPECT_EQ(p.values(2)[0], 4);
}

TEST(Canonicalize, DoesNotMergeSamplesWithDifferentLabels) {
  Profile p = with_samples_type();
  LocationId a = p.add_location({.address = 0x10, .lines = {}});
  LocationId a_again = p.add_location({.address = 0x10, .lines = {}});
  Label worker{.key = p.intern("thread"), .str = p.intern("worker")};
  p.add_sample(Stack{a}, Values{1}, std::vector<Label>{worker});
  p.add_sample(Stack{a_again}, Values{2});
  p.add_sample(Stack{a_again}, Values{4}, std::vector<Label>{worker});
  p.canonicalize();
  ASSERT_EQ(p.sample_count(), 2u);
  ASSERT_EQ(p.labels(0).size(), 1u);
  EXPECT_EQ(p.str(p.labels(0)[0].str), "worker");
  EXPECT_EQ(p.values(0)[0], 5);
  EXPECT_TRUE(p.labels(1).empty());
  EXPECT_EQ(p.values(1)[0], 2);
}

// Five locations used in an order unlike their ids, with inline frames, an unmapped
// location, an unused location, an unused function and unused (duplicate) mappings.
class CanonicalNumbering : public ::testing::Test {
 protected:
  void SetUp() override {
    p = with_samples_type();
    MappingId m1 = p.add_mapping({.start = 0x1000, .limit = 0x2000, .file = p.intern("m1")});
    MappingId m2 = p.add_mapping({.start = 0x3000, .limit = 0x4000, .file = p.intern("m2")});
    MappingId m3 = p.add_mapping({.start = 0x5000, .limit = 0x6000, .file = p.intern("m3")});
    p.add_mapping(p.mapping(m2));  // duplicate of an unused mapping
    FunctionId fa = p.add_function({.name = p.intern("a")});
    FunctionId fb = p.add_function({.name = p.intern("b")});
    FunctionId fc = p.add_function({.name = p.intern("c")});
    FunctionId fd = p.add_function({.name = p.intern("d")});
    FunctionId fe = p.add_function({.name = p.intern("e")});
    LocationId l1 = p.add_location({.mapping = m3, .address = 0x5100, .lines = {{.function = fb}}});
    // `a` inlined into `e`: innermost first.
    LocationId l2 = p.add_location({.mapping = m1, .address = 0x1100, .lines = {{.function = fa}, {.function = fe}}});
    LocationId l3 = p.add_location({.mapping = 0, .address = 0x9000, .lines = {{.function = fa}}});
    p.add_location({.mapping = m2, .address = 0x3100, .lines = {{.function = fd}}});  // unused
    LocationId l5 = p.add_location({.mapping = m3, .address = 0x5200, .lines = {{.function = fc}}});
    p.add_sample(Stack{l5, l2}, Values{1});      // leaf first
    p.add_sample(Stack{l3, l5, l1}, Values{2});
  }
  Profile p;
};

TEST_F(CanonicalNumbering, LocationsAreNumberedByFirstUseLeafToRoot) {
  p.canonicalize();
  ASSERT_EQ(p.locations.size(), 4u);  // the unused one is dropped
  EXPECT_EQ(p.locations[0].address, 0x5200u);
  EXPECT_EQ(p.locations[1].address, 0x1100u);
  EXPECT_EQ(p.locations[2].address, 0x9000u);
  EXPECT_EQ(p.locations[3].address, 0x5100u);
  ASSERT_EQ(p.sample_count(), 2u);
  EXPECT_EQ(stack_of(p, 0), (Stack{1, 2}));
  EXPECT_EQ(stack_of(p, 1), (Stack{3, 1, 4}));
  EXPECT_EQ(p.values(1)[0], 2);
}

TEST_F(CanonicalNumbering, FunctionsAreNumberedByFirstUseFromTheLocations) {
  p.canonicalize();
  std::vector<std::string> names;
  for (const Function& f : p.functions) names.emplace_back(p.str(f.name));
  EXPECT_EQ(names, (std::vector<std::string>{"c", "a", "e", "b"}));  // d is unused
  EXPECT_EQ(p.locations[0].lines, (LineList{{.function = 1}}));
  EXPECT_EQ(p.locations[1].lines, (LineList{{.function = 2}, {.function = 3}}));
  EXPECT_EQ(p.locations[2].lines, (LineList{{.function = 2}}));
  EXPECT_EQ(p.locations[3].lines, (LineList{{.function = 4}}));
}

TEST_F(CanonicalNumbering, MainMappingStaysFirstThenUsedOnesInOrderOfUseThenUnusedOnes) {
  p.canonicalize();
  std::vector<std::string> files;
  for (const Mapping& m : p.mappings) files.emplace_back(p.str(m.file));
  // m1 is mapping 1 (the main binary, pprof's rule); m3 is used first after it; m2 is
  // used only by the dropped location, and its duplicate disappears.
  EXPECT_EQ(files, (std::vector<std::string>{"m1", "m3", "m2"}));
  EXPECT_EQ(p.locations[0].mapping, 2u);
  EXPECT_EQ(p.locations[1].mapping, 1u);
  EXPECT_EQ(p.locations[2].mapping, 0u);
  EXPECT_EQ(p.locations[3].mapping, 2u);
}

TEST_F(CanonicalNumbering, UnusedStringsAreDroppedAndUsedOnesKept) {
  p.intern("never used");
  p.canonicalize();
  std::set<std::string> in_table;
  for (StringId i = 0; i < p.strings.size(); ++i) in_table.emplace(p.strings[i]);
  EXPECT_EQ(in_table.size(), p.strings.size()) << "no string twice";
  EXPECT_EQ(p.strings[0], "");
  EXPECT_EQ(in_table, (std::set<std::string>{"", "samples", "count", "m1", "m2", "m3", "a",
                                              "b", "c", "e"}));
}

TEST_F(CanonicalNumbering, IsIdempotent) {
  Label label{.key = p.intern("thread"), .str = p.intern("main")};
  p.add_sample(Stack{1}, Values{3}, std::vector<Label>{label});
  p.comments = {p.intern("a comment")};
  p.canonicalize();
  Profile once = p;
  p.canonicalize();
  expect_same_structure(p, once);
}

// A reader's profile: locations numbered as the stacks first use them, every one used.
// canonicalize() then leaves the stacks as they are, but still renumbers the functions and
// mappings by first use and drops the unused ones.
TEST(FirstUseOrder, LocationsAlreadyInItKeepTheirIds) {
  Profile p = with_samples_type();
  MappingId main = p.add_mapping({.start = 0x1000, .limit = 0x2000, .file = p.intern("main")});
  p.add_mapping({.start = 0x7000, .limit = 0x8000, .file = p.intern("unused")});
  MappingId lib = p.add_mapping({.start = 0x3000, .limit = 0x4000, .file = p.intern("lib")});
  FunctionId unused = p.add_function({.name = p.intern("unused")});
  FunctionId f = p.add_function({.name = p.intern("f")});
  FunctionId g = p.add_function({.name = p.intern("g")});
  (void)unused;
  LocationId l1 = p.add_location({.mapping = lib, .address = 0x3100, .lines = {{.function = g}}});
  LocationId l2 = p.add_location({.mapping = main, .address = 0x1100, .lines = {{.function = f}}});
  LocationId l3 = p.add_location({.mapping = lib, .address = 0x3200, .lines = {{.function = g}}});
  p.add_sample(Stack{l1, l2}, Values{1});
  p.add_sample(Stack{l3, l1, l2}, Values{2});
  p.canonicalize();
  ASSERT_EQ(p.locations.size(), 3u);
  EXPECT_EQ(p.locations[0].address, 0x3100u);
  EXPECT_EQ(p.locations[1].address, 0x1100u);
  EXPECT_EQ(p.locations[2].address, 0x3200u);
  EXPECT_EQ(stack_of(p, 0), (Stack{1, 2}));
  EXPECT_EQ(stack_of(p, 1), (Stack{3, 1, 2}));
  std::vector<std::string> functions, files;
  for (const Function& fn : p.functions) functions.emplace_back(p.str(fn.name));
  for (const Mapping& m : p.mappings) files.emplace_back(p.str(m.file));
  EXPECT_EQ(functions, (std::vector<std::string>{"g", "f"}));
  EXPECT_EQ(files, (std::vector<std::string>{"main", "lib", "unused"}));
  EXPECT_EQ(p.locations[0].lines, (LineList{{.function = 1}}));
  EXPECT_EQ(p.locations[1].lines, (LineList{{.function = 2}}));
  EXPECT_EQ(p.locations[0].mapping, 2u);
  EXPECT_EQ(p.locations[1].mapping, 1u);
}

// In id order but for one location no stack uses (a reader that numbered a frame it then
// dropped), or one a later stack uses before a lower id: renumbered as always.
TEST(FirstUseOrder, AnUnusedOrLateLocationIsStillRenumbered) {
  for (bool unused_last : {true, false}) {
    Profile p = with_samples_type();
    FunctionId f = p.add_function({.name = p.intern("f")});
    LocationId l1 = p.add_location({.address = 0x10, .lines = {{.function = f}}});
    LocationId l2 = p.add_location({.address = 0x20, .lines = {{.function = f}}});
    LocationId l3 = p.add_location({.address = 0x30, .lines = {{.function = f}}});
    p.add_sample(Stack{l1}, Values{1});
    if (unused_last) p.add_sample(Stack{l2, l1}, Values{2});  // l3 unused
    else p.add_sample(Stack{l3, l2}, Values{2});               // l3 before l2
    p.canonicalize();
    if (unused_last) {
      ASSERT_EQ(p.locations.size(), 2u);
      EXPECT_EQ(stack_of(p, 1), (Stack{2, 1}));
      EXPECT_EQ(p.locations[1].address, 0x20u);
    } else {
      ASSERT_EQ(p.locations.size(), 3u);
      EXPECT_EQ(stack_of(p, 1), (Stack{2, 3}));
      EXPECT_EQ(p.locations[1].address, 0x30u);
      EXPECT_EQ(p.locations[2].address, 0x20u);
    }
  }
}

TEST(Canonicalize, KeepsTheTextOfEveryStringField) {
  Profile p;
  p.intern("junk before");  // shifts every id, so a missed remap shows as wrong text
  p.sample_types = {p.value_type("cpu", "nanoseconds")};
  p.intern("junk between");
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 10000000;
  p.default_sample_type = p.intern("cpu");
  p.drop_frames = p.intern("^runtime\\.");
  p.keep_frames = p.intern("^main$");
  p.doc_url = p.intern("https://example.com/doc");
  p.comments = {p.intern("first comment"), p.intern("second comment")};
  MappingId m = p.add_mapping({.start = 1, .limit = 2, .file = p.intern("/lib/x.so"),
                               .build_id = p.intern("abc123")});
  FunctionId f = p.add_function({.name = p.intern("ns::f()"), .system_name = p.intern("_ZN2ns1fEv"),
                                 .filename = p.intern("f.cc"), .start_line = 3});
  LocationId l = p.add_location({.mapping = m, .address = 1, .lines = {{.function = f, .line = 9}}});
  Label label{.key = p.intern("bytes"), .num = 8, .num_unit = p.intern("kilobytes")};
  Label thread{.key = p.intern("thread"), .str = p.intern("io")};
  p.add_sample(Stack{l}, Values{100}, std::vector<Label>{label, thread});
  p.intern("junk after");
  p.canonicalize();

  EXPECT_EQ(p.str(p.sample_types[0].type), "cpu");
  EXPECT_EQ(p.str(p.sample_types[0].unit), "nanoseconds");
  EXPECT_EQ(p.str(p.period_type.type), "cpu");
  EXPECT_EQ(p.str(p.period_type.unit), "nanoseconds");
  EXPECT_EQ(p.period, 10000000);
  EXPECT_EQ(p.str(p.default_sample_type), "cpu");
  EXPECT_EQ(p.str(p.drop_frames), "^runtime\\.");
  EXPECT_EQ(p.str(p.keep_frames), "^main$");
  EXPECT_EQ(p.str(p.doc_url), "https://example.com/doc");
  ASSERT_EQ(p.comments.size(), 2u);
  EXPECT_EQ(p.str(p.comments[0]), "first comment");
  EXPECT_EQ(p.str(p.comments[1]), "second comment");
  EXPECT_EQ(p.str(p.mappings[0].file), "/lib/x.so");
  EXPECT_EQ(p.str(p.mappings[0].build_id), "abc123");
  EXPECT_EQ(p.str(p.functions[0].name), "ns::f()");
  EXPECT_EQ(p.str(p.functions[0].system_name), "_ZN2ns1fEv");
  EXPECT_EQ(p.str(p.functions[0].filename), "f.cc");
  ASSERT_EQ(p.labels(0).size(), 2u);
  for (const Label& got : p.labels(0)) {
    if (p.str(got.key) == "bytes") {
      EXPECT_EQ(got.num, 8);
      EXPECT_EQ(p.str(got.num_unit), "kilobytes");
      EXPECT_EQ(got.str, 0u);
    } else {
      EXPECT_EQ(p.str(got.key), "thread");
      EXPECT_EQ(p.str(got.str), "io");
    }
  }
  for (StringId i = 0; i < p.strings.size(); ++i)
    EXPECT_EQ(p.strings[i].find("junk"), std::string_view::npos) << p.strings[i];
}

TEST(Canonicalize, SortsLabelsStringOnesFirstThenNumericOnesEachByKey) {
  Profile p = with_samples_type();
  LocationId l = p.add_location({.address = 1, .lines = {}});
  Label size{.key = p.intern("size"), .num = 64};
  Label bytes_first{.key = p.intern("bytes"), .num = 2};
  Label bytes_second{.key = p.intern("bytes"), .num = 1};
  Label thread{.key = p.intern("thread"), .str = p.intern("io")};
  Label host{.key = p.intern("host"), .str = p.intern("h1")};
  p.add_sample(Stack{l}, Values{1}, std::vector<Label>{size, thread, bytes_first, host, bytes_second});
  p.canonicalize();
  ASSERT_EQ(p.labels(0).size(), 5u);
  std::vector<std::string> keys;
  for (const Label& x : p.labels(0)) keys.emplace_back(p.str(x.key));
  EXPECT_EQ(keys, (std::vector<std::string>{"host", "thread", "bytes", "bytes", "size"}));
  EXPECT_EQ(p.labels(0)[2].num, 2);  // values under one key keep their order
  EXPECT_EQ(p.labels(0)[3].num, 1);
}

TEST(Canonicalize, MergesSamplesWhoseLabelsDifferOnlyInOrder) {
  Profile p = with_samples_type();
  LocationId l = p.add_location({.address = 1, .lines = {}});
  Label thread{.key = p.intern("thread"), .str = p.intern("io")};
  Label host{.key = p.intern("host"), .str = p.intern("h1")};
  p.add_sample(Stack{l}, Values{1}, std::vector<Label>{thread, host});
  p.add_sample(Stack{l}, Values{2}, std::vector<Label>{host, thread});
  p.canonicalize();
  ASSERT_EQ(p.sample_count(), 1u);
  EXPECT_EQ(p.values(0)[0], 3);
}

TEST(Canonicalize, UnusedMappingsFollowTheMainAndUsedOnesInAddressOrder) {
  Profile p = with_samples_type();
  p.add_mapping({.start = 0x9000, .limit = 0xa000, .file = p.intern("high")});
  p.add_mapping({.start = 0x1000, .limit = 0x3000, .file = p.intern("low-long")});
  MappingId used = p.add_mapping({.start = 0x5000, .limit = 0x6000, .file = p.intern("used")});
  p.add_mapping({.start = 0x1000, .limit = 0x2000, .file = p.intern("low-short")});
  LocationId l = p.add_location({.mapping = used, .address = 0x5010, .lines = {}});
  p.add_sample(Stack{l}, Values{1});
  p.canonicalize();
  std::vector<std::string> files;
  for (const Mapping& m : p.mappings) files.emplace_back(p.str(m.file));
  // "high" is mapping 1, the main binary: it stays first even without samples.
  EXPECT_EQ(files, (std::vector<std::string>{"high", "used", "low-short", "low-long"}));
  EXPECT_EQ(p.locations[0].mapping, 2u);
}

TEST(Canonicalize, RejectsDanglingIds) {
  Profile stack_to_nowhere = with_samples_type();
  stack_to_nowhere.add_location({.address = 1, .lines = {}});
  stack_to_nowhere.add_sample(Stack{2}, Values{1});
  EXPECT_THROW(stack_to_nowhere.canonicalize(), std::logic_error);

  Profile stack_with_zero = with_samples_type();
  stack_with_zero.add_location({.address = 1, .lines = {}});
  stack_with_zero.add_sample(Stack{0}, Values{1});
  EXPECT_THROW(stack_with_zero.canonicalize(), std::logic_error);

  Profile location_to_nowhere = with_samples_type();
  location_to_nowhere.add_location({.mapping = 3, .address = 1, .lines = {}});
  EXPECT_THROW(location_to_nowhere.canonicalize(), std::logic_error);

  Profile line_to_nowhere = with_samples_type();
  line_to_nowhere.add_location({.address = 1, .lines = {{.function = 1}}});
  EXPECT_THROW(line_to_nowhere.canonicalize(), std::logic_error);
}

TEST(Canonicalize, EmptyProfileKeepsItsSampleTypes) {
  Profile p = with_samples_type();
  p.intern("unused");
  p.canonicalize();
  EXPECT_EQ(p.sample_count(), 0u);
  EXPECT_TRUE(p.locations.empty());
  EXPECT_EQ(p.strings.size(), 3u);  // "", "samples", "count"
  EXPECT_EQ(p.str(p.sample_types[0].type), "samples");
}

// --- The same content, numbered two different ways ---

struct FrameSpec {
  std::string mapping;  // "" for none
  uint64_t address;
  std::vector<std::string> functions;  // innermost first
};
struct SampleSpec {
  std::vector<FrameSpec> stack;  // leaf first
  int64_t value;
  std::string thread;  // "" for no label
};

const std::vector<SampleSpec>& content() {
  static const FrameSpec leaf{"a.out", 0x401010, {"leaf"}};
  static const FrameSpec helper{"a.out", 0x401100, {"helper", "caller"}};
  static const FrameSpec start{"libc.so.6", 0x7f0010, {"__libc_start_main"}};
  static const FrameSpec copy{"libc.so.6", 0x7f0200, {"memcpy"}};
  static const FrameSpec unknown{"", 0xdead, {}};
  static const std::vector<SampleSpec> samples = {
      {{leaf, helper, start}, 5, "main"},
      {{copy, helper, start}, 3, ""},
      {{leaf, helper, start}, 2, "worker"},
      {{unknown}, 4, ""},
      {{copy, leaf, helper, start}, 6, ""},
  };
  return samples;
}

Mapping mapping_for(Profile& p, const std::string& file) {
  uint64_t start = file == "a.out" ? 0x400000 : file == "libc.so.6" ? 0x7f0000 : 0x7ff000;
  return {.start = start, .limit = start + 0x10000, .file = p.intern(file)};
}

void set_header(Profile& p) {
  p.sample_types = {p.value_type("samples", "count")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 1000000;
  p.comments = {p.intern("built by the test")};
}

std::vector<Label> labels_for(Profile& p, const std::string& thread) {
  if (thread.empty()) return {};
  return {{.key = p.intern("thread"), .str = p.intern(thread)}};
}

// Each entity made once, in order of first use: nearly canonical already.
Profile build_tidy() {
  Profile p;
  set_header(p);
  std::map<std::string, MappingId> mappings;
  std::map<std::string, FunctionId> functions;
  std::map<uint64_t, LocationId> locations;
  for (const SampleSpec& s : content()) {
    Stack stack;
    for (const FrameSpec& f : s.stack) {
      auto [it, fresh] = locations.try_emplace(f.address, 0);
      if (fresh) {
        Location l{.address = f.address, .lines = {}};
        if (!f.mapping.empty()) {
          auto [m, new_mapping] = mappings.try_emplace(f.mapping, 0);
          if (new_mapping) m->second = p.add_mapping(mapping_for(p, f.mapping));
          l.mapping = m->second;
        }
        for (const std::string& name : f.functions) {
          auto [fn, new_function] = functions.try_emplace(name, 0);
          if (new_function) fn->second = p.add_function({.name = p.intern(name)});
          l.lines.push_back({.function = fn->second});
        }
        it->second = p.add_location(l);
      }
      stack.push_back(it->second);
    }
    p.add_sample(stack, Values{s.value}, labels_for(p, s.thread));
  }
  p.add_mapping(mapping_for(p, "[vdso]"));
  return p;
}

// The mapping of the first frame that has one: build_tidy creates it first.
std::string main_binary() {
  for (const SampleSpec& s : content())
    for (const FrameSpec& f : s.stack)
      if (!f.mapping.empty()) return f.mapping;
  return "";
}

// Junk strings first, everything created in reverse and twice over, a fresh location for
// every frame, unused entities, and each sample split in two with the remainder last.
Profile build_messy() {
  Profile p;
  for (const char* junk : {"zzz", "memcpy", "thread", "worker", "a.out"}) p.intern(junk);
  // Mapping 1 names the main binary: part of the content, so both profiles agree on it.
  p.add_mapping(mapping_for(p, main_binary()));
  p.add_mapping(mapping_for(p, "[vdso]"));
  p.add_mapping(mapping_for(p, "[vdso]"));
  FunctionId never = p.add_function({.name = p.intern("never_called")});
  p.add_location({.address = 0xbad, .lines = {{.function = never}}});
  set_header(p);

  std::map<std::string, std::vector<MappingId>> mappings;
  std::map<std::string, std::vector<FunctionId>> functions;
  for (const char* file : {"libc.so.6", "a.out"})
    for (int copy = 0; copy < 2; ++copy) mappings[file].push_back(p.add_mapping(mapping_for(p, file)));
  for (const char* name : {"memcpy", "__libc_start_main", "caller", "helper", "leaf"})
    for (int copy = 0; copy < 2; ++copy) functions[name].push_back(p.add_function({.name = p.intern(name)}));

  size_t use = 0;  // alternates between the two copies of each entity
  auto make_stack = [&](const SampleSpec& s) {
    Stack stack;
    for (const FrameSpec& f : s.stack) {
      Location l{.address = f.address, .lines = {}};
      if (!f.mapping.empty()) l.mapping = mappings[f.mapping][use++ % 2];
      for (const std::string& name : f.functions) l.lines.push_back({.function = functions[name][use++ % 2]});
      stack.push_back(p.add_location(l));
    }
    return stack;
  };
  for (const SampleSpec& s : content()) p.add_sample(make_stack(s), Values{s.value - 1}, labels_for(p, s.thread));
  for (const SampleSpec& s : content()) p.add_sample(make_stack(s), Values{1}, labels_for(p, s.thread));
  return p;
}

TEST(Canonicalize, SameContentWithDifferentNumberingGivesIdenticalStructures) {
  Profile tidy = build_tidy();
  Profile messy = build_messy();
  ASSERT_NE(messy.locations.size(), tidy.locations.size());  // the inputs really differ
  tidy.canonicalize();
  messy.canonicalize();
  EXPECT_EQ(tidy.sample_count(), 5u);
  EXPECT_EQ(tidy.locations.size(), 5u);
  EXPECT_EQ(tidy.functions.size(), 5u);
  EXPECT_EQ(tidy.mappings.size(), 3u);
  expect_same_structure(tidy, messy);
  for (size_t i = 0; i < content().size(); ++i)
    EXPECT_EQ(messy.values(i)[0], content()[i].value) << "sample " << i;
}

}  // namespace
}  // namespace tally::core
