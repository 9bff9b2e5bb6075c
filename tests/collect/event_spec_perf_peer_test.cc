// parse_event against perf's own event parser: `perf stat -vv -e EVENT` prints the
// perf_event_attr it builds (type, config, exclude flags; zero fields omitted). Every
// perf-syntax form tally accepts must give the same fields.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "collect/event_spec.h"
#include "support/test_support.h"

namespace tally::collect {
namespace {

// The first perf_event_attr block perf prints, as name -> value text.
std::map<std::string, std::string> perf_attr(const std::string& perf, const std::string& event) {
  auto result = test::run({perf, "stat", "-vv", "-e", event, "true"});
  std::istringstream lines(result.err + result.out);
  std::map<std::string, std::string> fields;
  std::string line;
  bool inside = false;
  while (std::getline(lines, line)) {
    if (line.rfind("perf_event_attr:", 0) == 0) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.rfind("----", 0) == 0) break;
    std::istringstream words(line);
    std::string name, value;
    if (words >> name >> value) fields[name] = value;
  }
  return fields;
}

uint64_t field(const std::map<std::string, std::string>& fields, const std::string& name) {
  auto it = fields.find(name);
  return it == fields.end() ? 0 : std::stoull(it->second, nullptr, 0);
}

TEST(EventSpecPerfPeer, SameAttrAsPerfForEveryPerfForm) {
  const std::string perf = test::find_program("perf");
  TALLY_REQUIRE_PEER(perf, "perf");
  for (const char* text :
       {"cpu-clock", "task-clock", "page-faults", "faults", "context-switches", "cs",
        "cpu-migrations", "migrations", "minor-faults", "major-faults", "cycles", "cpu-cycles",
        "instructions", "cache-references", "cache-misses", "branch-instructions", "branches",
        "branch-misses", "bus-cycles", "ref-cycles", "stalled-cycles-frontend",
        "stalled-cycles-backend", "L1-dcache-loads", "L1-dcache-load-misses", "L1-dcache-stores",
        "L1-dcache-store-misses", "L1-dcache-prefetches", "L1-dcache-prefetch-misses",
        "l1d-read-miss", "L1-icache-loads", "L1-icache-load-misses", "LLC-loads",
        "LLC-load-misses", "LLC-stores", "LLC-prefetch-misses", "L2-store-misses",
        "dTLB-loads", "dTLB-load-misses", "dTLB-store-misses", "iTLB-loads", "iTLB-load-misses",
        "branch-loads", "branch-load-misses", "node-loads", "node-load-misses", "node-stores",
        "r1c2", "r10000017e", "cycles:u", "cycles:k", "cycles:uk", "task-clock:u",
        "LLC-load-misses:k", "r76:u"}) {
    auto ours = parse_event(text, CpuVendor::amd);
    ASSERT_TRUE(ours) << text << ": " << ours.error().message;
    auto theirs = perf_attr(perf, text);
    ASSERT_FALSE(theirs.empty()) << "perf printed no perf_event_attr for " << text;
    EXPECT_EQ(ours->type, field(theirs, "type")) << text;
    EXPECT_EQ(ours->config, field(theirs, "config")) << text;
    EXPECT_EQ(ours->exclude_user, field(theirs, "exclude_user") == 1) << text;
    EXPECT_EQ(ours->exclude_kernel, field(theirs, "exclude_kernel") == 1) << text;
  }
}

}  // namespace
}  // namespace tally::collect
