#include "collect/event_spec.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace tally::collect {
namespace {

using core::Error;
using core::ErrorKind;
using core::Expected;

struct NamedConfig {
  std::string_view name;
  uint64_t config;
};

// perf's names (tools/perf/util/parse-events.c), aliases included.
constexpr std::array kSoftwareEvents{
    NamedConfig{"cpu-clock", PERF_COUNT_SW_CPU_CLOCK},
    NamedConfig{"task-clock", PERF_COUNT_SW_TASK_CLOCK},
    NamedConfig{"page-faults", PERF_COUNT_SW_PAGE_FAULTS},
    NamedConfig{"faults", PERF_COUNT_SW_PAGE_FAULTS},
    NamedConfig{"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES},
    NamedConfig{"cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
    NamedConfig{"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    NamedConfig{"migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    NamedConfig{"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN},
    NamedConfig{"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    NamedConfig{"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS},
    NamedConfig{"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS},
};

constexpr std::array kHardwareEvents{
    NamedConfig{"cycles", PERF_COUNT_HW_CPU_CYCLES},
    NamedConfig{"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES},
    NamedConfig{"instructions", PERF_COUNT_HW_INSTRUCTIONS},
    NamedConfig{"cache-references", PERF_COUNT_HW_CACHE_REFERENCES},
    NamedConfig{"cache-misses", PERF_COUNT_HW_CACHE_MISSES},
    NamedConfig{"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    NamedConfig{"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    NamedConfig{"branch-misses", PERF_COUNT_HW_BRANCH_MISSES},
    NamedConfig{"bus-cycles", PERF_COUNT_HW_BUS_CYCLES},
    NamedConfig{"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    NamedConfig{"idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    NamedConfig{"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    NamedConfig{"idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    NamedConfig{"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES},
};

// perf's generic cache events: CACHE[-OP[-RESULT]], each part with perf's aliases
// (tools/perf/util/evsel.c). The first alias is the one names are printed with.
using Aliases = std::array<std::string_view, 5>;
constexpr std::array<Aliases, PERF_COUNT_HW_CACHE_MAX> kCacheNames{{
    {"L1-dcache", "l1-d", "l1d", "L1-data"},
    {"L1-icache", "l1-i", "l1i", "L1-instruction"},
    {"LLC", "L2"},
    {"dTLB", "d-tlb", "Data-TLB"},
    {"iTLB", "i-tlb", "Instruction-TLB"},
    {"branch", "branches", "bpu", "btb", "bpc"},
    {"node"},
}};
constexpr std::array<Aliases, PERF_COUNT_HW_CACHE_OP_MAX> kCacheOps{{
    {"load", "loads", "read"},
    {"store", "stores", "write"},
    {"prefetch", "prefetches", "speculative-read", "speculative-load"},
}};
constexpr std::array<Aliases, PERF_COUNT_HW_CACHE_RESULT_MAX> kCacheResults{{
    {"refs", "Reference", "ops", "access"},
    {"misses", "miss"},
}};
// Which operations each cache has (perf refuses the others, e.g. L1-icache-stores).
constexpr uint32_t op_bit(uint32_t op) { return 1u << op; }
constexpr std::array<uint32_t, PERF_COUNT_HW_CACHE_MAX> kCacheOpsValid{
    op_bit(PERF_COUNT_HW_CACHE_OP_READ) | op_bit(PERF_COUNT_HW_CACHE_OP_WRITE) |
        op_bit(PERF_COUNT_HW_CACHE_OP_PREFETCH),                                     // L1D
    op_bit(PERF_COUNT_HW_CACHE_OP_READ) | op_bit(PERF_COUNT_HW_CACHE_OP_PREFETCH),  // L1I
    op_bit(PERF_COUNT_HW_CACHE_OP_READ) | op_bit(PERF_COUNT_HW_CACHE_OP_WRITE) |
        op_bit(PERF_COUNT_HW_CACHE_OP_PREFETCH),  // LL
    op_bit(PERF_COUNT_HW_CACHE_OP_READ) | op_bit(PERF_COUNT_HW_CACHE_OP_WRITE) |
        op_bit(PERF_COUNT_HW_CACHE_OP_PREFETCH),  // DTLB
    op_bit(PERF_COUNT_HW_CACHE_OP_READ),          // ITLB
    op_bit(PERF_COUNT_HW_CACHE_OP_READ),          // BPU
    op_bit(PERF_COUNT_HW_CACHE_OP_READ) | op_bit(PERF_COUNT_HW_CACHE_OP_WRITE) |
        op_bit(PERF_COUNT_HW_CACHE_OP_PREFETCH),  // NODE
};

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

template <size_t N>
std::optional<uint64_t> find_named(const std::array<NamedConfig, N>& table, std::string_view name) {
  for (const auto& entry : table)
    if (equals_ignoring_case(entry.name, name)) return entry.config;
  return std::nullopt;
}

// The index of the alias list one of whose aliases `text` starts with (followed by '-' or
// the end), the longest match winning ("L1-dcache" must not stop at "L1"); `used` is its length.
template <size_t N>
std::optional<uint32_t> match_alias_prefix(const std::array<Aliases, N>& table,
                                           std::string_view text, size_t& used) {
  std::optional<uint32_t> found;
  used = 0;
  for (uint32_t i = 0; i < N; ++i) {
    for (std::string_view alias : table[i]) {
      if (alias.empty() || alias.size() <= used || alias.size() > text.size()) continue;
      if (text.size() > alias.size() && text[alias.size()] != '-') continue;
      if (!equals_ignoring_case(alias, text.substr(0, alias.size()))) continue;
      found = i;
      used = alias.size();
    }
  }
  return found;
}

// "L1-dcache-load-misses" -> PERF_TYPE_HW_CACHE config (id | op << 8 | result << 16), as
// perf decodes it: the operation defaults to load, the result to access.
std::optional<Expected<EventSpec>> parse_cache_event(std::string_view name) {
  size_t used = 0;
  auto cache = match_alias_prefix(kCacheNames, name, used);
  if (!cache) return std::nullopt;
  std::string_view rest = name.substr(used);
  std::optional<uint32_t> op, result;
  // Each further part is an operation or a result, once each (perf takes them in either order).
  while (!rest.empty()) {
    rest.remove_prefix(1);  // the '-' the prefix match stopped at
    size_t part = 0;
    if (auto as_op = match_alias_prefix(kCacheOps, rest, part); as_op && !op) {
      op = as_op;
    } else if (auto as_result = match_alias_prefix(kCacheResults, rest, part); as_result && !result) {
      result = as_result;
    } else {
      return Expected<EventSpec>(Error{
          fmt::format("event '{}': expected CACHE[-OP[-RESULT]] with OP load, store or prefetch "
                      "and RESULT refs or misses, found '{}'",
                      name, rest.substr(0, rest.find('-'))),
          ErrorKind::invalid_input});
    }
    rest.remove_prefix(part);
  }
  uint32_t op_value = op.value_or(PERF_COUNT_HW_CACHE_OP_READ);
  uint32_t result_value = result.value_or(PERF_COUNT_HW_CACHE_RESULT_ACCESS);
  if ((kCacheOpsValid[*cache] & op_bit(op_value)) == 0)
    return Expected<EventSpec>(
        Error{fmt::format("event '{}': {} has no {} operation", name, kCacheNames[*cache][0],
                          kCacheOps[op_value][0]),
              ErrorKind::invalid_input});
  EventSpec spec;
  spec.type = PERF_TYPE_HW_CACHE;
  spec.config = *cache | uint64_t{op_value} << 8 | uint64_t{result_value} << 16;
  // perf's canonical spelling: L1-dcache-loads, L1-dcache-load-misses.
  spec.name = result_value == PERF_COUNT_HW_CACHE_RESULT_ACCESS
                  ? fmt::format("{}-{}", kCacheNames[*cache][0], kCacheOps[op_value][1])
                  : fmt::format("{}-{}-{}", kCacheNames[*cache][0], kCacheOps[op_value][0],
                                kCacheResults[result_value][0]);
  return Expected<EventSpec>(std::move(spec));
}

std::optional<uint64_t> parse_hex(std::string_view digits) {
  if (digits.empty() || digits.size() > 16) return std::nullopt;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

Error syntax_error(std::string_view text, std::string_view what) {
  return Error{fmt::format("event '{}': {}", text, what), ErrorKind::invalid_input};
}

// The event without its modifiers.
Expected<EventSpec> parse_base(std::string_view text, std::string_view name, CpuVendor vendor) {
  EventSpec spec;
  if (auto config = find_named(kSoftwareEvents, name)) {
    spec.type = PERF_TYPE_SOFTWARE;
    spec.config = *config;
    spec.name = std::string(name);
    return spec;
  }
  if (auto config = find_named(kHardwareEvents, name)) {
    spec.type = PERF_TYPE_HARDWARE;
    spec.config = *config;
    spec.name = std::string(name);
    return spec;
  }
  if (name.size() > 2 && name[0] == '0' && (name[1] == 'x' || name[1] == 'X')) {
    auto value = parse_hex(name.substr(2));
    if (!value)
      return syntax_error(text, "expected miniprof's hexadecimal COUNTER_VALUE 0xz0000yyzz "
                                "(at most 16 hex digits)");
    auto config = miniprof_raw_config(*value, vendor);
    if (!config) return Error{fmt::format("event '{}': {}", text, config.error().message),
                              config.error().kind};
    spec.type = PERF_TYPE_RAW;
    spec.config = *config;
    spec.name = fmt::format("r{:x}", *config);
    return spec;
  }
  if (name.size() > 1 && (name[0] == 'r' || name[0] == 'R')) {
    if (auto value = parse_hex(name.substr(1))) {
      spec.type = PERF_TYPE_RAW;
      spec.config = *value;
      spec.name = fmt::format("r{:x}", *value);
      return spec;
    }
  }
  if (auto cache = parse_cache_event(name)) {
    if (!*cache) return cache->error();
    return std::move(**cache);
  }
  return syntax_error(text,
                      "unknown event; expected a software event (cpu-clock, task-clock, "
                      "page-faults, context-switches, cpu-migrations, minor-faults, major-faults), "
                      "a hardware event (cycles, instructions, cache-references, cache-misses, "
                      "branches, branch-misses, ...), a cache event (L1-dcache-load-misses, "
                      "LLC-loads, dTLB-load-misses, ...), a raw code rNNNN or miniprof's "
                      "0xz0000yyzz, optionally followed by :u, :k or :uk");
}

}  // namespace

CpuVendor this_cpu_vendor() {
  static const CpuVendor vendor = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string line;
    while (std::getline(cpuinfo, line)) {
      if (line.rfind("vendor_id", 0) != 0) continue;
      // Hygon's Dhyana is AMD's Zen with AMD's PMU.
      if (line.find("AuthenticAMD") != std::string::npos ||
          line.find("HygonGenuine") != std::string::npos)
        return CpuVendor::amd;
      if (line.find("GenuineIntel") != std::string::npos) return CpuVendor::intel;
      return CpuVendor::unknown;
    }
    return CpuVendor::unknown;
  }();
  return vendor;
}

bool EventSpec::counts_time() const {
  return type == PERF_TYPE_SOFTWARE &&
         (config == PERF_COUNT_SW_CPU_CLOCK || config == PERF_COUNT_SW_TASK_CLOCK);
}

bool EventSpec::needs_pmu() const {
  return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW;
}

Expected<uint64_t> miniprof_raw_config(uint64_t counter_value, CpuVendor vendor) {
  // PERF_CTL / IA32_PERFEVTSELx bits (AMD BKDG, Intel SDM vol. 3 ch. 18):
  constexpr uint64_t kEventSelectLow = 0xFF;          // EventSelect[7:0]
  constexpr uint64_t kUnitMask = 0xFF00;              // UnitMask
  constexpr uint64_t kEdge = 1ULL << 18;              // edge detect
  constexpr uint64_t kInvert = 1ULL << 23;            // invert counter mask
  constexpr uint64_t kCounterMask = 0xFF000000;       // CntMask
  constexpr uint64_t kEventSelectHigh = 0xFULL << 32; // EventSelect[11:8], AMD only
  // USR (16), OS (17), INT (20), EN (22): miniprof ORs them in; perf_event_open sets them
  // from the exclude flags and itself, so they are dropped here.
  constexpr uint64_t kForcedByMiniprof = 0x530000;
  const uint64_t encodable = kEventSelectLow | kUnitMask | kEdge | kInvert | kCounterMask |
                             (vendor == CpuVendor::amd ? kEventSelectHigh : 0);

  uint64_t value = counter_value & ~kForcedByMiniprof;
  if (vendor == CpuVendor::unknown)
    return Error{fmt::format("COUNTER_VALUE {:#x} is an AMD or Intel PMU encoding, and this "
                             "CPU's vendor is neither",
                             counter_value),
                 ErrorKind::unsupported};
  if (vendor == CpuVendor::intel && (value & kEventSelectHigh) != 0)
    return Error{fmt::format("COUNTER_VALUE {:#x} has EventSelect {:#x}, which Intel's "
                             "IA32_PERFEVTSELx cannot encode (8 bits; EventSelect[11:8] in bits "
                             "32-35 is AMD's)",
                             counter_value,
                             ((value & kEventSelectHigh) >> 24) | (value & kEventSelectLow)),
                 ErrorKind::unsupported};
  if (uint64_t stray = value & ~encodable; stray != 0)
    return Error{fmt::format("COUNTER_VALUE {:#x} sets bits {:#x}, which are reserved or "
                             "not the user's to set in PERF_CTL (expected 0xz0000yyzz: "
                             "EventSelect z-zz, UnitMask yy)",
                             counter_value, stray),
                 ErrorKind::invalid_input};
  // perf's raw config for the x86 PMUs is the control register's own layout.
  return value;
}

Expected<EventSpec> parse_event(std::string_view text, CpuVendor vendor) {
  if (text.empty()) return syntax_error(text, "empty event name");
  std::string_view name = text;
  std::string_view modifiers;
  if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    name = text.substr(0, colon);
    modifiers = text.substr(colon + 1);
    if (name.empty()) return syntax_error(text, "expected an event name before ':'");
  }
  auto spec = parse_base(text, name, vendor);
  if (!spec) return spec;
  if (text.find(':') != std::string_view::npos) {
    bool user = false, kernel = false;
    for (char c : modifiers) {
      if (c == 'u' && !user) {
        user = true;
      } else if (c == 'k' && !kernel) {
        kernel = true;
      } else {
        return syntax_error(text, fmt::format("unknown modifier '{}'; expected :u (user only), "
                                              ":k (kernel only) or :uk (both)",
                                              modifiers));
      }
    }
    if (!user && !kernel) return syntax_error(text, "expected a modifier (u, k) after ':'");
    spec->exclude_user = !user;
    spec->exclude_kernel = !kernel;
  }
  spec->text = std::string(text);
  return spec;
}

}  // namespace tally::collect
