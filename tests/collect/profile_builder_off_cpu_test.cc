// ProfileBuilder --off-cpu with records made here (no kernel): a switch-out stack seen
// before is looked up by its raw frames in one address-space generation of its process, so
// the same addresses after an exec (other mappings) must be located again; each span is a
// sample of its own time, with the stack of its switch-out sample.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <map>
#include <string>
#include <vector>

#include "collect/event_spec.h"
#include "collect/profile_builder.h"

namespace tally::collect {
namespace {

constexpr uint32_t kPid = 100;

ProfileBuilderOptions off_cpu_options() {
  ProfileBuilderOptions options;
  options.events = {*parse_event("cpu-clock"), *parse_event("context-switches")};
  options.call_graph = CallGraphMode::fp;
  options.kallsyms = "";
  options.off_cpu = true;
  options.switch_event = 1;
  options.timestamps = false;
  return options;
}

void map(ProfileBuilder& b, const std::string& path) {
  MmapRecord m;
  m.pid = m.tid = kPid;
  m.start = 0x400000;
  m.length = 0x1000;
  m.prot = PROT_READ | PROT_EXEC;
  m.filename = path;
  b.on_mmap(m);
}

// A switch-out at `out` back in at `in`, from user frames 0x400100 <- 0x400200.
void wait_span(ProfileBuilder& b, uint64_t out, uint64_t in) {
  const std::vector<uint64_t> chain{static_cast<uint64_t>(PERF_CONTEXT_USER), 0x400100, 0x400201};
  SampleRecord s;
  s.origin = {.pid = kPid, .tid = kPid, .time = out};
  s.misc = PERF_RECORD_MISC_USER;
  s.event = 1;
  s.ip = 0x400100;
  s.period = 1;
  s.callchain = chain;
  b.on_sample(s);
  SwitchRecord r;
  r.origin = {.pid = kPid, .tid = kPid, .time = out};
  r.out = true;
  b.on_switch(r);
  r.origin.time = in;
  r.out = false;
  b.on_switch(r);
}

TEST(ProfileBuilderOffCpu, SameFramesAfterAnExecAreLocatedInTheNewMappings) {
  ProfileBuilder b(off_cpu_options());
  b.recording_started(0);
  map(b, "/bin/before");
  wait_span(b, 1000, 3000);   // 2000 ns
  wait_span(b, 4000, 5000);   // 1000 ns, the same stack again
  CommRecord exec;
  exec.pid = exec.tid = kPid;
  exec.comm = "after";
  exec.exec = true;
  exec.origin.time = 5500;
  b.on_comm(exec);
  map(b, "/bin/after");
  wait_span(b, 6000, 10000);  // 4000 ns, same addresses, other file
  b.recording_ended(20000);
  EXPECT_EQ(b.stats().frames, 6u);
  const core::Profile p = b.finish();
  const int off_cpu = p.sample_type_index("off-cpu");
  ASSERT_GE(off_cpu, 0);
  std::map<std::string, int64_t> by_leaf_file;  // off-CPU ns by the leaf's mapping file
  for (size_t i = 0; i < p.sample_count(); ++i) {
    const int64_t ns = p.values(i)[static_cast<size_t>(off_cpu)];
    if (ns == 0) continue;
    ASSERT_EQ(p.stack(i).size(), 2u);
    const core::Location& leaf = p.location(p.stack(i)[0]);
    ASSERT_NE(leaf.mapping, 0u);
    EXPECT_EQ(leaf.address, 0x400100u);
    by_leaf_file[std::string(p.str(p.mapping(leaf.mapping).file))] += ns;
  }
  EXPECT_EQ(by_leaf_file, (std::map<std::string, int64_t>{{"/bin/before", 3000}, {"/bin/after", 4000}}));
}

}  // namespace
}  // namespace tally::collect
