// Events as users write them (`-e` of tally record / daemon, COUNTER_VALUE of tally stat),
// parsed into what perf_event_open needs: type, config and the exclude flags.
//
// Accepted forms (issue 6 / issue 8):
//   software clocks and counts   cpu-clock, task-clock, page-faults (faults), context-switches (cs),
//                                cpu-migrations, minor-faults, major-faults
//   hardware events              cycles (cpu-cycles), instructions, cache-references, cache-misses,
//                                branch-instructions (branches), branch-misses, bus-cycles,
//                                ref-cycles, stalled-cycles-frontend, stalled-cycles-backend
//   generic cache events         L1-dcache-load-misses, LLC-load-misses, dTLB-load-misses, ...
//                                (perf's CACHE-OP-RESULT names: L1-dcache, L1-icache, LLC, dTLB,
//                                iTLB, branch, node x loads/stores/prefetches x misses/accesses)
//   raw PMU codes                rNNNN (hex, perf's form)
//   miniprof notation            0xz0000yyzz (EventSelect z-zz, UnitMask yy; shared/specs/miniprof-README.txt),
//                                mapped onto the PMU's raw config for the machine's CPU vendor
//   modifiers                    :u (user only), :k (kernel only), :uk / :ku (both)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/error.h"

namespace tally::collect {

enum class CpuVendor { unknown, amd, intel };

// The vendor of this machine's CPUs (/proc/cpuinfo vendor_id), read once.
CpuVendor this_cpu_vendor();

struct EventSpec {
  std::string text;  // as the user wrote it: "cycles:u", "0x37E"
  std::string name;  // the name reports show and profiles store as sample type: "cycles", "r1c2"
  uint32_t type = 0;    // PERF_TYPE_HARDWARE, _SOFTWARE, _HW_CACHE, _RAW
  uint64_t config = 0;  // perf_event_attr.config
  bool exclude_user = false;
  bool exclude_kernel = false;
  // cpu-clock / task-clock: counts are nanoseconds of CPU time (unit "nanoseconds");
  // every other event counts occurrences (unit "count").
  bool counts_time() const;
  std::string_view unit() const { return counts_time() ? "nanoseconds" : "count"; }
  // Needs a hardware PMU (hardware, cache and raw events): on a VM without one, opening
  // it fails with "not supported on this machine".
  bool needs_pmu() const;
};

// Parses one event as -e takes it. Errors name the text and say what was expected
// (ErrorKind::invalid_input for bad syntax, ErrorKind::unsupported for a miniprof value
// the vendor's PMU cannot encode).
core::Expected<EventSpec> parse_event(std::string_view text, CpuVendor vendor = this_cpu_vendor());

// miniprof's COUNTER_VALUE (0xz0000yyzz: EventSelect[11:8] in bits 32-35, UnitMask in bits
// 8-15, EventSelect[7:0] in bits 0-7) as the raw perf config of `vendor`'s PMU. The bits
// miniprof forces (0x530000: USR, OS, INT, EN) are the kernel's to set and are cleared;
// exclude flags come from EXCLUDE_KERNEL / EXCLUDE_USER instead.
core::Expected<uint64_t> miniprof_raw_config(uint64_t counter_value, CpuVendor vendor);

}  // namespace tally::collect
