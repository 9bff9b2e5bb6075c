// The path from perf ring bytes to a profile, on any bytes: the first 16 bytes choose the
// record layout (which sample fields, which user registers, sample_id_all) and where the
// ring's tail is; the rest is the ring's data area. Every record copied out must be whole
// and 8-byte aligned; every decoded sample's spans must lie inside its record; whatever
// decodes goes through the profile builder (fp stacks), whose profile must be consistent.
#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "collect/perf_records.h"
#include "collect/profile_builder.h"
#include "collect/ring_buffer.h"
#include "fuzz_check.h"

using namespace tally;
using namespace tally::collect;

namespace {

// The sample fields the decoder lays out, in bit order; the fuzzer picks a subset.
constexpr uint64_t kFields[] = {
    PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP,        PERF_SAMPLE_TID,        PERF_SAMPLE_TIME,
    PERF_SAMPLE_ADDR,       PERF_SAMPLE_ID,        PERF_SAMPLE_STREAM_ID,  PERF_SAMPLE_CPU,
    PERF_SAMPLE_PERIOD,     PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_RAW,        PERF_SAMPLE_REGS_USER,
    PERF_SAMPLE_STACK_USER, PERF_SAMPLE_WEIGHT,    PERF_SAMPLE_DATA_SRC,   PERF_SAMPLE_TRANSACTION,
    PERF_SAMPLE_PHYS_ADDR};

uint64_t word(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 16) return 0;
  const uint64_t choice = word(data);
  const uint64_t regs_and_tail = word(data + 8);
  RecordLayout layout;
  for (size_t i = 0; i < std::size(kFields); ++i)
    if (choice >> i & 1) layout.sample_type |= kFields[i];
  layout.sample_regs_user = regs_and_tail & 0xffffff;
  layout.sample_id_all = (choice >> 20 & 1) != 0;
  layout.mmap_build_ids = (choice >> 21 & 1) != 0;

  // The data area: the rest of the input, cut to a power of two (the ring's shape).
  size_t ring_size = 1;
  while (ring_size * 2 <= size - 16) ring_size *= 2;
  if (size - 16 < 8) return 0;
  std::vector<uint8_t> ring(data + 16, data + 16 + ring_size);
  const uint64_t tail = regs_and_tail >> 24;
  const uint64_t head = tail + (choice >> 32) % (ring_size + 1);

  RecordBuffer out;
  RingReadResult r = copy_ring_records(ring, tail, head, 0, out);
  FUZZ_CHECK(r.tail == head, "a read always catches up with head");
  FUZZ_CHECK(r.bytes + r.bad_bytes == head - tail, "every byte is consumed or counted bad");

  ProfileBuilderOptions options;
  options.events = {*parse_event("cpu-clock")};
  options.call_graph = CallGraphMode::fp;
  options.kallsyms = "";
  ProfileBuilder builder(options);
  int64_t samples = 0;
  for (const auto& ref : out.records) {
    auto bytes = out.bytes(ref);
    perf_event_header h;
    std::memcpy(&h, bytes.data(), sizeof h);
    FUZZ_CHECK(h.size == bytes.size() && bytes.size() % 8 == 0, "records are whole");
    (void)record_time(bytes, layout);
    auto rec = decode_record(bytes, layout);
    if (!rec) continue;
    if (auto* s = std::get_if<SampleRecord>(&*rec)) {
      auto inside = [&](const void* p, size_t n) {
        auto* b = static_cast<const uint8_t*>(p);
        return n == 0 || (b >= bytes.data() && b + n <= bytes.data() + bytes.size());
      };
      FUZZ_CHECK(inside(s->callchain.data(), s->callchain.size() * 8), "callchain inside");
      FUZZ_CHECK(inside(s->user_stack.data(), s->user_stack.size()), "stack inside");
      builder.on_sample(*s);
      ++samples;
    } else if (auto* m = std::get_if<MmapRecord>(&*rec)) {
      builder.on_mmap(*m);
    } else if (auto* c = std::get_if<CommRecord>(&*rec)) {
      builder.on_comm(*c);
    } else if (auto* t = std::get_if<TaskRecord>(&*rec)) {
      if (t->exit) builder.on_exit(*t);
      else builder.on_fork(*t);
    }
  }
  core::Profile p = builder.finish();
  FUZZ_CHECK(p.total(0) == samples, "every decoded sample is in the profile once");
  for (size_t i = 0; i < p.sample_count(); ++i)
    for (core::LocationId id : p.stack(i))
      FUZZ_CHECK(id >= 1 && id <= p.locations.size(), "stacks refer to existing locations");
  return 0;
}
