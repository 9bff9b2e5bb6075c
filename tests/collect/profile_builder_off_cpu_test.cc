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

void map(ProfileBuilder& b, const std::string& path, uint32_t pid = kPid) {
  MmapRecord m;
  m.pid = m.tid = pid;
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

// Spans of the BPF recorder carry a raw stack id: spans with the same one have the same
// frames, and the builder derives their stack once. Once per process and generation of its
// maps: the same raw stack in another process, or after an exec, is located in its maps.
TEST(ProfileBuilderOffCpu, KernelSpansOfOneRawStackAreLocatedPerProcessAndMaps) {
  ProfileBuilderOptions options = off_cpu_options();
  options.events = {*parse_event("cpu-clock")};
  options.switch_event = SIZE_MAX;
  options.kernel_spans = true;
  ProfileBuilder b(options);
  b.recording_started(0);
  constexpr uint32_t kOther = 200;
  map(b, "/bin/one");
  map(b, "/bin/two", kOther);
  CommRecord exec;
  exec.pid = exec.tid = kPid;
  exec.comm = "three";
  exec.exec = true;
  b.recording_ended(100000);
  const std::vector<uint64_t> frames{0x400100, 0x400201};
  auto span = [&](uint32_t pid, uint64_t out, uint64_t in) {
    b.on_kernel_span({.pid = pid, .tid = pid, .start = out, .end = in, .frames = frames, .user_words = {}, .raw_stack = 1});
  };
  span(kPid, 1000, 2000);     // 1000 ns in /bin/one
  span(kPid, 3000, 5000);     // 2000 ns, the same
  span(kOther, 1000, 5000);   // 4000 ns in /bin/two
  b.on_comm(exec);
  map(b, "/bin/three");
  span(kPid, 6000, 14000);    // 8000 ns in /bin/three
  EXPECT_EQ(b.stats().frames, 8u);
  const core::Profile p = b.finish();
  const int off_cpu = p.sample_type_index("off-cpu");
  ASSERT_GE(off_cpu, 0);
  std::map<std::string, int64_t> by_leaf_file;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    const int64_t ns = p.values(i)[static_cast<size_t>(off_cpu)];
    if (ns == 0) continue;
    ASSERT_EQ(p.stack(i).size(), 2u);
    const core::Location& leaf = p.location(p.stack(i)[0]);
    ASSERT_NE(leaf.mapping, 0u);
    by_leaf_file[std::string(p.str(p.mapping(leaf.mapping).file))] += ns;
  }
  EXPECT_EQ(by_leaf_file, (std::map<std::string, int64_t>{
                              {"/bin/one", 3000}, {"/bin/two", 4000}, {"/bin/three", 8000}}));
}

}  // namespace
}  // namespace tally::collect
