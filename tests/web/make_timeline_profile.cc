// make_timeline_profile FILE: a pprof profile with timestamps whose spans are known, for the
// timeline API tests (issue 23), as tally record --off-cpu labels its samples (tid, comm,
// reason, timestamp in ns since the start; on-CPU samples stamped at the end of their
// 10 ms period, off-CPU ones at the start of their wait). Thread "main" (tid 100) burns
// 0-100 ms in burn, sleeps 100-300 ms in nanosleep (reason sleep), burns 300-400 ms in
// burn_again; thread "worker" (tid 101) waits 0-250 ms in futex_wait (reason futex) and
// runs 250-300 ms in work.
// make_timeline_profile --busy FILE: one thread "busy" (tid 7) that runs 1 ms, is preempted
// 1 ms, for 10 s: 10000 spans, more than the timeline draws unless zoomed.
// make_timeline_profile --long-wait FILE: one thread "waiter" (tid 200) that burns 0-100 ms in
// burn, waits 100-400 ms (300 ms) in pipe_read (reason io), burns 400-500 ms in burn_again:
// a wait that a short time range cuts.
#include <cstdio>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/profile.h"
#include "formats/format.h"

using namespace tally;

namespace {

constexpr int64_t kMs = 1'000'000;

struct Maker {
  core::Profile p;
  core::LocationId location(const std::string& name) {
    for (core::LocationId id = 1; id <= p.locations.size(); ++id)
      if (p.str(p.function(p.location(id).lines[0].function).name) == name) return id;
    const auto f = p.add_function({.name = p.intern(name), .system_name = p.intern(name)});
    return p.add_location({.address = 0x1000 + 0x10 * p.locations.size(), .lines = {{.function = f}}});
  }
  void add(int64_t tid, const std::string& comm, int64_t time, const std::string& leaf,
           std::vector<int64_t> values, const std::string& reason) {
    const core::LocationId stack[] = {location(leaf), location("main")};
    std::vector<core::Label> labels{{.key = p.intern("comm"), .str = p.intern(comm)},
                                    {.key = p.intern("tid"), .num = tid},
                                    {.key = p.intern("timestamp"), .num = time, .num_unit = p.intern("nanoseconds")}};
    if (!reason.empty()) labels.push_back({.key = p.intern("reason"), .str = p.intern(reason)});
    p.add_sample(stack, values, labels);
  }
  void on(int64_t tid, const std::string& comm, int64_t end_ms, const std::string& leaf) {
    add(tid, comm, end_ms * kMs, leaf, {1, 10 * kMs, 0, 10 * kMs}, "");
  }
  void off(int64_t tid, const std::string& comm, int64_t start_ms, int64_t ms, const std::string& leaf,
           const std::string& reason) {
    add(tid, comm, start_ms * kMs, leaf, {1, 0, ms * kMs, ms * kMs}, reason);
  }
};

}  // namespace

int main(int argc, char** argv) {
  const bool busy = argc == 3 && std::string(argv[1]) == "--busy";
  const bool long_wait = argc == 3 && std::string(argv[1]) == "--long-wait";
  if (argc != 2 && !busy && !long_wait) {
    std::fprintf(stderr, "usage: make_timeline_profile [--busy|--long-wait] FILE\n");
    return 2;
  }
  const char* path = argv[argc - 1];
  Maker m;
  core::Profile& p = m.p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds"),
                    p.value_type("off-cpu", "nanoseconds"), p.value_type("wall", "nanoseconds")};
  p.period_type = p.sample_types[1];
  p.period = 10 * kMs;
  p.default_sample_type = p.intern("wall");
  if (busy) {
    for (int64_t t = 0; t < 10'000; t += 2) {
      m.add(7, "busy", (t + 1) * kMs, "burn", {1, kMs, 0, kMs}, "");
      m.off(7, "busy", t + 1, 1, "schedule", "preempted");
    }
  } else if (long_wait) {
    for (int64_t t = 10; t <= 100; t += 10) m.on(200, "waiter", t, "burn");
    m.off(200, "waiter", 100, 300, "pipe_read", "io");
    for (int64_t t = 410; t <= 500; t += 10) m.on(200, "waiter", t, "burn_again");
  } else {
    for (int64_t t = 10; t <= 100; t += 10) m.on(100, "main", t, "burn");
    m.off(100, "main", 100, 200, "nanosleep", "sleep");
    m.off(101, "worker", 0, 250, "futex_wait", "futex");
    for (int64_t t = 310; t <= 400; t += 10) m.on(100, "main", t, "burn_again");
    for (int64_t t = 260; t <= 300; t += 10) m.on(101, "worker", t, "work");
  }
  core::Diagnostics diagnostics;
  auto files = formats::write_profile(std::move(p), formats::Format::pprof, diagnostics);
  if (!files) {
    std::fprintf(stderr, "make_timeline_profile: %s\n", files.error().message.c_str());
    return 1;
  }
  FILE* out = std::fopen(path, "wb");
  if (out == nullptr || std::fwrite(files->front().bytes.data(), 1, files->front().bytes.size(), out) !=
                            files->front().bytes.size() || std::fclose(out) != 0) {
    std::fprintf(stderr, "make_timeline_profile: cannot write %s\n", path);
    return 1;
  }
  return 0;
}
