// parse_event and miniprof_raw_config: every event form gives the perf_event_attr type,
// config and exclude flags the kernel ABI (linux/perf_event.h) defines for it.
#include <linux/perf_event.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collect/event_spec.h"

namespace tally::collect {
namespace {

struct Expect {
  std::string text;
  uint32_t type;
  uint64_t config;
  std::string name;
};

void expect_event(const Expect& e, CpuVendor vendor = CpuVendor::amd) {
  auto spec = parse_event(e.text, vendor);
  ASSERT_TRUE(spec) << e.text << ": " << spec.error().message;
  EXPECT_EQ(spec->type, e.type) << e.text;
  EXPECT_EQ(spec->config, e.config) << e.text;
  EXPECT_EQ(spec->name, e.name) << e.text;
  EXPECT_EQ(spec->text, e.text);
  EXPECT_FALSE(spec->exclude_user) << e.text;
  EXPECT_FALSE(spec->exclude_kernel) << e.text;
}

TEST(EventSpec, SoftwareEventsAndAliases) {
  const std::vector<Expect> cases = {
      {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock"},
      {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task-clock"},
      {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults"},
      {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "faults"},
      {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches"},
      {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "cs"},
      {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "cpu-migrations"},
      {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "minor-faults"},
      {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "major-faults"},
  };
  for (const auto& c : cases) expect_event(c);
  // Only the two clocks count nanoseconds.
  EXPECT_TRUE(parse_event("cpu-clock")->counts_time());
  EXPECT_TRUE(parse_event("task-clock")->counts_time());
  EXPECT_EQ(parse_event("task-clock")->unit(), "nanoseconds");
  EXPECT_FALSE(parse_event("page-faults")->counts_time());
  EXPECT_EQ(parse_event("cs")->unit(), "count");
  EXPECT_FALSE(parse_event("cpu-clock")->needs_pmu());
}

TEST(EventSpec, HardwareEventsAndAliases) {
  const std::vector<Expect> cases = {
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
      {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cpu-cycles"},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions"},
      {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "cache-references"},
      {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache-misses"},
      {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
       "branch-instructions"},
      {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "branches"},
      {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "branch-misses"},
      {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "bus-cycles"},
      {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "ref-cycles"},
      {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
       "stalled-cycles-frontend"},
      {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
       "stalled-cycles-backend"},
  };
  for (const auto& c : cases) expect_event(c);
  EXPECT_TRUE(parse_event("cycles")->needs_pmu());
  EXPECT_FALSE(parse_event("cycles")->counts_time());
}

// PERF_TYPE_HW_CACHE config: cache id | operation << 8 | result << 16 (perf_event.h).
uint64_t cache_config(uint64_t id, uint64_t op, uint64_t result) {
  return id | op << 8 | result << 16;
}

TEST(EventSpec, GenericCacheEventsWithPerfsAliases) {
  const std::vector<Expect> cases = {
      {"L1-dcache-load-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "L1-dcache-load-misses"},
      {"L1-dcache-loads", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_ACCESS),
       "L1-dcache-loads"},
      {"L1-dcache-stores", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_WRITE,
                    PERF_COUNT_HW_CACHE_RESULT_ACCESS),
       "L1-dcache-stores"},
      {"L1-dcache-prefetch-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_PREFETCH,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "L1-dcache-prefetch-misses"},
      {"l1d-read-miss", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "L1-dcache-load-misses"},
      {"L1-data-write-access", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_WRITE,
                    PERF_COUNT_HW_CACHE_RESULT_ACCESS),
       "L1-dcache-stores"},
      {"L1-icache-load-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "L1-icache-load-misses"},
      {"l1i-speculative-read-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_PREFETCH,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "L1-icache-prefetch-misses"},
      {"LLC-loads", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_ACCESS),
       "LLC-loads"},
      {"LLC-load-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "LLC-load-misses"},
      {"L2-store-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_WRITE,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "LLC-store-misses"},
      {"LLC", PERF_TYPE_HW_CACHE,  // operation and result default to load, access
       cache_config(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_ACCESS),
       "LLC-loads"},
      {"dTLB-load-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "dTLB-load-misses"},
      {"Data-TLB-store-refs", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_WRITE,
                    PERF_COUNT_HW_CACHE_RESULT_ACCESS),
       "dTLB-stores"},
      {"iTLB-load-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "iTLB-load-misses"},
      {"branch-loads", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_BPU, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_ACCESS),
       "branch-loads"},
      {"btb-load-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_BPU, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "branch-load-misses"},
      {"node-loads", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_NODE, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_ACCESS),
       "node-loads"},
      {"node-store-misses", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_NODE, PERF_COUNT_HW_CACHE_OP_WRITE,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "node-store-misses"},
      // perf takes the result before the operation too.
      {"L1-dcache-misses-load", PERF_TYPE_HW_CACHE,
       cache_config(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
                    PERF_COUNT_HW_CACHE_RESULT_MISS),
       "L1-dcache-load-misses"},
  };
  for (const auto& c : cases) expect_event(c);
  EXPECT_TRUE(parse_event("LLC-loads")->needs_pmu());
}

TEST(EventSpec, CacheOperationsACacheDoesNotHaveAreRefused) {
  for (const char* text : {"L1-icache-stores", "iTLB-store-misses", "branch-prefetches"}) {
    auto spec = parse_event(text, CpuVendor::amd);
    ASSERT_FALSE(spec) << text;
    EXPECT_EQ(spec.error().kind, core::ErrorKind::invalid_input);
    EXPECT_NE(spec.error().message.find(text), std::string::npos) << spec.error().message;
  }
}

TEST(EventSpec, RawCodes) {
  expect_event({"r1c2", PERF_TYPE_RAW, 0x1c2, "r1c2"});
  expect_event({"r003C", PERF_TYPE_RAW, 0x3c, "r3c"});
  expect_event({"r10000017e", PERF_TYPE_RAW, 0x10000017e, "r10000017e"});
  EXPECT_TRUE(parse_event("r1c2")->needs_pmu());
}

TEST(EventSpec, Modifiers) {
  struct Case {
    const char* text;
    bool exclude_user, exclude_kernel;
  };
  for (const Case& c : {Case{"cycles:u", false, true}, Case{"cycles:k", true, false},
                        Case{"cycles:uk", false, false}, Case{"cycles:ku", false, false},
                        Case{"task-clock:u", false, true}, Case{"LLC-load-misses:k", true, false},
                        Case{"r1c2:u", false, true}, Case{"0x76:k", true, false}}) {
    auto spec = parse_event(c.text, CpuVendor::amd);
    ASSERT_TRUE(spec) << c.text << ": " << spec.error().message;
    EXPECT_EQ(spec->exclude_user, c.exclude_user) << c.text;
    EXPECT_EQ(spec->exclude_kernel, c.exclude_kernel) << c.text;
    EXPECT_EQ(spec->text, c.text);
    EXPECT_EQ(spec->name.find(':'), std::string::npos) << "the name has no modifier: " << spec->name;
  }
}

TEST(EventSpec, BadSyntaxIsAnErrorNamingTheText) {
  for (const char* text : {"", "cycels", "cycles:", "cycles:x", "cycles:uu", ":u", "r", "rxyz",
                           "r12345678901234567", "0x", "0xg1", "0x12345678901234567",
                           "L1-dcache-", "L1-dcache-load-load", "L1-dcache-bogus",
                           "LLC-misses-misses", "task-clock:p"}) {
    auto spec = parse_event(text, CpuVendor::amd);
    ASSERT_FALSE(spec) << "accepted '" << text << "'";
    EXPECT_EQ(spec.error().kind, core::ErrorKind::invalid_input) << text;
    EXPECT_NE(spec.error().message.find(std::string("'") + text + "'"), std::string::npos)
        << spec.error().message;
  }
  // The unknown-event message lists what is expected.
  auto unknown = parse_event("cycels", CpuVendor::amd);
  EXPECT_NE(unknown.error().message.find("task-clock"), std::string::npos);
  EXPECT_NE(unknown.error().message.find("0xz0000yyzz"), std::string::npos);
}

// miniprof's COUNTER_VALUE 0xz0000yyzz: EventSelect[7:0] in bits 0-7, UnitMask in bits 8-15,
// EventSelect[11:8] in bits 32-35 (AMD PERF_CTL). perf's raw config for the x86 PMUs has the
// same layout (event | umask << 8 | event[11:8] << 32), so the expectation is built from the
// fields the README names.
uint64_t amd_raw(uint64_t event_select, uint64_t unit_mask) {
  return (event_select & 0xFF) | unit_mask << 8 | (event_select >> 8) << 32;
}
uint64_t intel_raw(uint64_t event_select, uint64_t unit_mask) {
  return event_select | unit_mask << 8;  // IA32_PERFEVTSELx: 8-bit event select
}

TEST(MiniprofCounterValue, SpecExamplesOnAmd) {
  // 1) CLK_UNHALTED: EventSelect 0x076, UnitMask 0x00.
  EXPECT_EQ(*miniprof_raw_config(0x76, CpuVendor::amd), amd_raw(0x076, 0x00));
  // 2) L2M: EventSelect 0x07E, UnitMask 0x03.
  EXPECT_EQ(*miniprof_raw_config(0x37E, CpuVendor::amd), amd_raw(0x07E, 0x03));
  // 3) IBSOPS: the README says "z-zz: 0x1CF, yy: 0x01" but gives the value 0x10000017E,
  //    whose bits say EventSelect 0x17E (z = 1 in bits 32-35, zz = 0x7E), UnitMask 0x01.
  //    The README is inconsistent; the value is what users pass, so it is decoded by the
  //    bit layout the README states.
  EXPECT_EQ(*miniprof_raw_config(0x10000017E, CpuVendor::amd), amd_raw(0x17E, 0x01));
  EXPECT_NE(*miniprof_raw_config(0x10000017E, CpuVendor::amd), amd_raw(0x1CF, 0x01));
  // 4) DRAM_ACCESSES (per node): EventSelect 0x0E0, UnitMask 0x08.
  EXPECT_EQ(*miniprof_raw_config(0x8E0, CpuVendor::amd), amd_raw(0x0E0, 0x08));
}

TEST(MiniprofCounterValue, SpecExamplesOnIntel) {
  EXPECT_EQ(*miniprof_raw_config(0x76, CpuVendor::intel), intel_raw(0x76, 0x00));
  EXPECT_EQ(*miniprof_raw_config(0x37E, CpuVendor::intel), intel_raw(0x7E, 0x03));
  EXPECT_EQ(*miniprof_raw_config(0x8E0, CpuVendor::intel), intel_raw(0xE0, 0x08));
  // Example 3's EventSelect 0x17E needs 12 bits: IA32_PERFEVTSELx has 8.
  auto ibs = miniprof_raw_config(0x10000017E, CpuVendor::intel);
  ASSERT_FALSE(ibs);
  EXPECT_EQ(ibs.error().kind, core::ErrorKind::unsupported);
  EXPECT_NE(ibs.error().message.find("0x10000017e"), std::string::npos) << ibs.error().message;
  EXPECT_NE(ibs.error().message.find("Intel"), std::string::npos) << ibs.error().message;
}

TEST(MiniprofCounterValue, ForcedBitsClearedOtherControlBitsKeptReservedRefused) {
  // miniprof ORs 0x530000 (USR, OS, INT, EN) in; perf_event_open owns those bits.
  EXPECT_EQ(*miniprof_raw_config(0x530076, CpuVendor::amd), 0x76u);
  // Edge (18), invert (23) and the counter mask (24-31) are the user's and pass through.
  const uint64_t with_cmask = 0x76 | 1ULL << 18 | 1ULL << 23 | 0x02ULL << 24;
  EXPECT_EQ(*miniprof_raw_config(with_cmask, CpuVendor::amd), with_cmask);
  EXPECT_EQ(*miniprof_raw_config(with_cmask, CpuVendor::intel), with_cmask);
  // Reserved bits (19, 21, 36+) are refused rather than silently dropped.
  for (uint64_t bad : {0x76 | 1ULL << 19, 0x76 | 1ULL << 21, 0x76 | 1ULL << 40}) {
    auto config = miniprof_raw_config(bad, CpuVendor::amd);
    ASSERT_FALSE(config) << std::hex << bad;
    EXPECT_EQ(config.error().kind, core::ErrorKind::invalid_input);
  }
  EXPECT_FALSE(miniprof_raw_config(0x76, CpuVendor::unknown));
}

TEST(MiniprofCounterValue, ParsedAsARawEvent) {
  auto amd = parse_event("0x10000017E", CpuVendor::amd);
  ASSERT_TRUE(amd) << amd.error().message;
  EXPECT_EQ(amd->type, PERF_TYPE_RAW);
  EXPECT_EQ(amd->config, amd_raw(0x17E, 0x01));
  EXPECT_EQ(amd->name, "r10000017e");
  EXPECT_EQ(amd->text, "0x10000017E");
  EXPECT_TRUE(amd->needs_pmu());
  auto intel = parse_event("0x37E", CpuVendor::intel);
  ASSERT_TRUE(intel);
  EXPECT_EQ(intel->config, intel_raw(0x7E, 0x03));
  auto too_wide = parse_event("0x10000017E", CpuVendor::intel);
  ASSERT_FALSE(too_wide);
  EXPECT_EQ(too_wide.error().kind, core::ErrorKind::unsupported);
  EXPECT_NE(too_wide.error().message.find("'0x10000017E'"), std::string::npos);
}

}  // namespace
}  // namespace tally::collect
