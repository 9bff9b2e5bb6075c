// Reading a perf ring: records copied out in order, records and headers that wrap around
// the end of the data area joined, corrupt headers skipped and counted; and a real ring of
// a cpu-clock event on this process, read through RingBuffer and decoded.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <cstring>

#include "collect/perf_open.h"
#include "collect/perf_records.h"
#include "collect/ring_buffer.h"
#include "perf_record_bytes.h"
#include "support/test_support.h"

namespace tally::collect {
namespace {

using test::RecordBytes;

// Writes `words` into a ring data area at byte position `pos`, wrapping as the kernel does.
void put(std::vector<uint8_t>& ring, uint64_t pos, const std::vector<uint64_t>& words) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
  for (size_t i = 0; i < words.size() * 8; ++i) ring[(pos + i) % ring.size()] = bytes[i];
}

std::vector<uint64_t> lost_record(uint64_t id, uint64_t count) {
  RecordBytes r(PERF_RECORD_LOST, 0);
  return r.u64(id).u64(count).words();
}

uint64_t lost_count(const RecordBuffer& out, size_t i) {
  RecordLayout bare;
  auto rec = decode_record(out.bytes(out.records[i]), bare);
  EXPECT_TRUE(rec) << rec.error().message;
  return rec ? std::get<LostRecord>(*rec).lost : 0;
}

TEST(RingRecords, InOrderAndTailAdvanced) {
  std::vector<uint8_t> ring(256);
  put(ring, 0, lost_record(1, 10));
  put(ring, 24, lost_record(1, 11));
  RecordBuffer out;
  RingReadResult r = copy_ring_records(ring, 0, 48, 3, out);
  EXPECT_EQ(r.tail, 48u);
  EXPECT_EQ(r.bytes, 48u);
  EXPECT_EQ(r.bad_bytes, 0u);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[1].ring, 3u);
  EXPECT_EQ(lost_count(out, 0), 10u);
  EXPECT_EQ(lost_count(out, 1), 11u);
}

TEST(RingRecords, RecordWrappingAroundTheEndIsJoined) {
  std::vector<uint8_t> ring(64);
  // Positions grow forever; the ring index is position % 64. 48 + 24 crosses the end.
  const uint64_t tail = 64 * 5 + 48;
  put(ring, tail, lost_record(1, 0x1122334455667788));
  RecordBuffer out;
  RingReadResult r = copy_ring_records(ring, tail, tail + 24, 0, out);
  EXPECT_EQ(r.tail, tail + 24);
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(lost_count(out, 0), 0x1122334455667788u);
}

TEST(RingRecords, HeaderSplitAcrossTheEnd) {
  std::vector<uint8_t> ring(64);
  const uint64_t tail = 60;  // the 8-byte header itself wraps
  put(ring, tail, lost_record(1, 99));
  RecordBuffer out;
  RingReadResult r = copy_ring_records(ring, tail, tail + 24, 0, out);
  EXPECT_EQ(r.bad_bytes, 0u);
  ASSERT_EQ(out.records.size(), 1u);
  EXPECT_EQ(lost_count(out, 0), 99u);
}

TEST(RingRecords, CorruptSizeSkipsToHead) {
  for (uint16_t size : {uint16_t(0), uint16_t(4), uint16_t(12), uint16_t(200)}) {
    std::vector<uint8_t> ring(256);
    put(ring, 0, lost_record(1, 10));
    put(ring, 24, RecordBytes(PERF_RECORD_LOST, 0).u64(1).u64(2).words(size));
    RecordBuffer out;
    RingReadResult r = copy_ring_records(ring, 0, 72, 0, out);
    EXPECT_EQ(r.tail, 72u) << size;
    EXPECT_EQ(out.records.size(), 1u) << size;  // the good record before it is kept
    EXPECT_EQ(r.bytes, 24u) << size;
    EXPECT_EQ(r.bad_bytes, 48u) << size;
  }
}

TEST(RingRecords, MoreThanTheRingBetweenTailAndHead) {
  std::vector<uint8_t> ring(64);
  RecordBuffer out;
  RingReadResult r = copy_ring_records(ring, 0, 1000, 0, out);
  EXPECT_EQ(r.tail, 1000u);
  EXPECT_EQ(r.bad_bytes, 1000u);
  EXPECT_TRUE(out.records.empty());
}

TEST(RingRecords, FragmentShorterThanAHeader) {
  std::vector<uint8_t> ring(64);
  put(ring, 0, lost_record(1, 10));
  RecordBuffer out;
  RingReadResult r = copy_ring_records(ring, 0, 28, 0, out);
  EXPECT_EQ(out.records.size(), 1u);
  EXPECT_EQ(r.tail, 28u);
  EXPECT_EQ(r.bad_bytes, 4u);
}

TEST(RingBuffer, RealRingOfThisProcess) {
  auto event = parse_event("task-clock");
  ASSERT_TRUE(event);
  SamplingOptions options;
  options.call_graph = CallGraphMode::fp;
  options.frequency = 4000;
  perf_event_attr attr = sampling_attr(*event, options);
  attr.exclude_kernel = 1;  // works whatever perf_event_paranoid allows up to 2
  auto fd = open_event(attr, *event, 0, -1);
  if (!fd) TALLY_SKIP_OR_FAIL_IN_CI("perf_event_open not permitted here: " << fd.error().message);
  auto ring = RingBuffer::map(fd->get(), 8);  // 32 KiB: it wraps during the test
  ASSERT_TRUE(ring) << ring.error().message;
  ASSERT_EQ(ioctl(fd->get(), PERF_EVENT_IOC_ENABLE, 0), 0);
  const RecordLayout layout{.sample_type = attr.sample_type,
                            .sample_regs_user = attr.sample_regs_user,
                            .sample_id_all = attr.sample_id_all != 0};
  uint64_t samples = 0, bytes = 0;
  volatile uint64_t sink = 0;
  // 400 ms of this thread's CPU time (the machine may be busy: wall time means little),
  // at most 20 s of wall time.
  auto thread_cpu_ns = [] {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  };
  const int64_t cpu_until = thread_cpu_ns() + 400'000'000;
  const auto wall_until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (thread_cpu_ns() < cpu_until && std::chrono::steady_clock::now() < wall_until) {
    for (int i = 0; i < 200000; ++i) sink = sink + uint64_t(i) * 7;
    RecordBuffer out;
    RingReadResult r = ring->read(0, out);
    EXPECT_EQ(r.bad_bytes, 0u);
    bytes += r.bytes;
    for (const auto& ref : out.records) {
      auto rec = decode_record(out.bytes(ref), layout);
      ASSERT_TRUE(rec) << rec.error().message;
      if (auto* s = std::get_if<SampleRecord>(&*rec)) {
        ++samples;
        EXPECT_EQ(s->origin.pid, uint32_t(getpid()));
        EXPECT_GT(s->period, 0u);
        EXPECT_FALSE(s->callchain.empty());
      }
    }
  }
  EXPECT_GT(samples, 50u);
  EXPECT_GT(bytes, 32u * 1024) << "the ring should have wrapped at least once";
}

}  // namespace
}  // namespace tally::collect
