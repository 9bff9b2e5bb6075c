// speedscope's sample Go CPU profile (shared/conformance/pprof/speedscope/simple.prof, as Go
// 1.10's runtime/pprof wrote it: gzipped, location ids packed, values not packed, location
// and function messages interleaved, no mapping at all) reads with the right content.
//
// Every number below was checked by hand against two independent views of the file:
//   pprof -raw simple.prof      the 9 samples with their values and location ids, the 30
//                               locations with address, function name, file and line,
//                               "PeriodType: cpu nanoseconds", "Period: 10000000"
//   pprof -traces simple.prof   the same stacks by function name, leaf first, and
//                               "Duration: 1.91s, Total samples = 1.50s"
//   gzip -dc simple.prof | protoc --decode_raw
//                               the exact time_nanos (field 9) and duration_nanos (field 10),
//                               25 function messages (field 5) and no mapping (field 3).
#include <gtest/gtest.h>

#include <map>

#include "formats/format.h"
#include "pprof_test_helpers.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

const std::string kFile = "conformance/pprof/speedscope/simple.prof";

core::Profile read_simple() {
  auto p = read_pprof_profile(read_text(shared(kFile)));
  if (!p) throw std::runtime_error(p.error().message);
  return std::move(p).value();
}

TEST(PprofSpeedscopeSimple, HeaderValues) {
  core::Profile p = read_simple();
  ASSERT_EQ(p.sample_types.size(), 2u);
  EXPECT_EQ(p.str(p.sample_types[0].type), "samples");
  EXPECT_EQ(p.str(p.sample_types[0].unit), "count");
  EXPECT_EQ(p.str(p.sample_types[1].type), "cpu");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "nanoseconds");
  EXPECT_EQ(p.str(p.period_type.type), "cpu");
  EXPECT_EQ(p.str(p.period_type.unit), "nanoseconds");
  EXPECT_EQ(p.period, 10'000'000);
  // pprof -raw: "Time: 2018-09-16 20:47:43.468834518 +0000 UTC";
  // date -u -d '2018-09-16 20:47:43' +%s gives 1537130863.
  EXPECT_EQ(p.time_nanos, 1537130863'468834518);
  EXPECT_EQ(p.duration_nanos, 1'911'739'507);  // "Duration: 1.91"
  EXPECT_TRUE(p.comments.empty());
}

TEST(PprofSpeedscopeSimple, TotalsAndCounts) {
  core::Profile p = read_simple();
  // 14 + 26 + 27 + 11 + 25 + 22 + 22 + 1 + 2 samples; "Total samples = 1.50s".
  EXPECT_EQ(p.total(0), 150);
  EXPECT_EQ(p.total(1), 1'500'000'000);
  EXPECT_EQ(p.sample_count(), 9u);   // 9 distinct stacks, none repeated
  EXPECT_EQ(p.locations.size(), 30u);
  EXPECT_EQ(p.functions.size(), 25u);
  // The file has no mapping; pprof -raw shows "1: 0x0/0x0/0x0" because pprof adds a fake one.
  EXPECT_TRUE(p.mappings.empty());
}

TEST(PprofSpeedscopeSimple, StacksByFunctionName) {
  core::Profile p = read_simple();
  // From pprof -traces (names, leaf first) and pprof -raw (the two values of each sample).
  const std::map<std::string, std::pair<int64_t, int64_t>> expected = {
      {"main.beta;main.delta;main.main;runtime.main", {14, 140'000'000}},
      {"main.alpha;main.main;runtime.main", {26, 260'000'000}},
      {"main.gamma;main.main;runtime.main", {27, 270'000'000}},
      {"runtime.duffcopy;runtime.newstack;runtime.morestack", {11, 110'000'000}},
      {"main.beta;main.main;runtime.main", {25, 250'000'000}},
      {"main.delta;main.main;runtime.main", {22, 220'000'000}},
      {"main.alpha;main.delta;main.main;runtime.main", {22, 220'000'000}},
      {"runtime.mach_semaphore_signal;runtime.mach_semrelease;runtime.semawakeup;"
       "runtime.notewakeup;runtime.startm;runtime.wakep;runtime.ready;runtime.goready.func1;"
       "runtime.systemstack;runtime.goready;runtime.goroutineReady;runtime.timerproc",
       {1, 10'000'000}},
      {"runtime.usleep;runtime.sysmon;runtime.mstart1;runtime.mstart", {2, 20'000'000}},
  };
  std::map<std::string, std::pair<int64_t, int64_t>> actual;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    auto v = p.values(i);
    ASSERT_TRUE(actual.emplace(stack_names(p, i), std::make_pair(v[0], v[1])).second);
  }
  EXPECT_EQ(actual, expected);
}

TEST(PprofSpeedscopeSimple, LocationsKeepAddressFileAndLine) {
  core::Profile p = read_simple();
  // pprof -raw: "1: 0x10ae654 M=1 main.beta .../simple.go:18" (the leaf of sample 1) and
  // "11: 0x104d7f8 M=1 runtime.morestack .../asm_amd64.s:480" (the root of sample 4).
  auto find = [&](uint64_t address) -> const core::Location* {
    for (const core::Location& l : p.locations)
      if (l.address == address) return &l;
    return nullptr;
  };
  const core::Location* beta = find(0x10ae654);
  ASSERT_NE(beta, nullptr);
  ASSERT_EQ(beta->lines.size(), 1u);
  EXPECT_EQ(beta->lines[0].line, 18);
  EXPECT_EQ(beta->mapping, 0u);
  const core::Function& f = p.function(beta->lines[0].function);
  EXPECT_EQ(p.str(f.name), "main.beta");
  EXPECT_EQ(p.str(f.system_name), "main.beta");
  EXPECT_EQ(p.str(f.filename), "/Users/jlfwong/code/speedscope/sample/programs/go/simple.go");

  const core::Location* morestack = find(0x104d7f8);
  ASSERT_NE(morestack, nullptr);
  ASSERT_EQ(morestack->lines.size(), 1u);
  EXPECT_EQ(morestack->lines[0].line, 480);
  EXPECT_EQ(p.str(p.function(morestack->lines[0].function).filename),
            "/usr/local/Cellar/go/1.10.1/libexec/src/runtime/asm_amd64.s");
}

TEST(PprofSpeedscopeSimple, DetectedAsPprofAfterInflating) {
  std::string inflated = gunzip_bytes(read_text(shared(kFile)));
  EXPECT_EQ(formats::detect(bytes_of(inflated)), formats::Format::pprof);
}

}  // namespace
}  // namespace tally::test
