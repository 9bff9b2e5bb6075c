// Robustness of the path from ring bytes to a profile: every truncation and thousands of
// byte corruptions of valid records of every type, read as a ring and decoded; whatever
// decodes is handed to the profile builder. Each input must end in a clear error or a
// well-formed record, never a crash or a read outside the record (ASan checks that).
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "collect/perf_records.h"
#include "collect/profile_builder.h"
#include "collect/ring_buffer.h"
#include "perf_record_bytes.h"

namespace tally::collect {
namespace {

using test::RecordBytes;

constexpr uint64_t kRegsMask = (1u << PERF_REG_X86_SP) | (1u << PERF_REG_X86_IP);
const RecordLayout kLayout{
    .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                   PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                   PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
    .sample_regs_user = kRegsMask,
    .sample_id_all = true,
    .mmap_build_ids = true};

RecordBytes& trailer(RecordBytes& r) { return r.u32(5).u32(6).u64(100).u32(0).u32(0).u64(1); }

std::vector<std::vector<uint64_t>> valid_records() {
  std::vector<std::vector<uint64_t>> out;
  {
    RecordBytes r(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
    const uint8_t id[20] = {1, 2, 3};
    r.u32(5).u32(5).u64(0x400000).u64(0x10000).u64(0).bytes("\x03\0\0\0", 4).bytes(id, 20);
    r.u32(PROT_READ | PROT_EXEC).u32(0).name("/bin/workload");
    out.push_back(trailer(r).words());
  }
  {
    RecordBytes r(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
    out.push_back(trailer(r.u32(5).u32(6).name("workload")).words());
  }
  {
    RecordBytes r(PERF_RECORD_FORK, 0);
    out.push_back(trailer(r.u32(7).u32(5).u32(7).u32(6).u64(90)).words());
  }
  {
    RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
    r.u64(1).u64(0x401000).u32(5).u32(6).u64(120).u32(1).u32(0).u64(1000000);
    r.u64(0);
    r.u64(PERF_SAMPLE_REGS_ABI_64).u64(0x7ffc0000).u64(0x401000);
    const uint8_t stack[32] = {0x10, 0x20, 0x40, 0, 0, 0, 0, 0};
    r.u64(32).bytes(stack, 32).u64(24);
    out.push_back(r.words());
  }
  {
    RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
    r.u64(1).u64(0xffffffff81000000).u32(5).u32(6).u64(130).u32(0).u32(0).u64(999);
    r.u64(4).u64(PERF_CONTEXT_KERNEL).u64(0xffffffff81000000).u64(PERF_CONTEXT_USER).u64(0x401000);
    r.u64(PERF_SAMPLE_REGS_ABI_NONE).u64(0);
    out.push_back(r.words());
  }
  {
    RecordBytes r(PERF_RECORD_LOST, 0);
    out.push_back(trailer(r.u64(1).u64(3)).words());
  }
  {
    RecordBytes r(PERF_RECORD_THROTTLE, 0);
    out.push_back(trailer(r.u64(1).u64(1).u64(1)).words());
  }
  {
    RecordBytes r(PERF_RECORD_EXIT, 0);
    out.push_back(trailer(r.u32(7).u32(5).u32(7).u32(6).u64(200)).words());
  }
  return out;
}

// Reads `ring` (a power-of-two data area) from `tail` to `head`, decodes every record and
// feeds the builder; returns how many records decoded.
size_t consume(const std::vector<uint8_t>& ring, uint64_t tail, uint64_t head, ProfileBuilder& builder) {
  RecordBuffer out;
  copy_ring_records(ring, tail, head, 0, out);
  size_t decoded = 0;
  for (const auto& ref : out.records) {
    auto bytes = out.bytes(ref);
    EXPECT_EQ(bytes.size() % 8, 0u);
    auto rec = decode_record(bytes, kLayout);
    if (!rec) {
      EXPECT_FALSE(rec.error().message.empty());
      continue;
    }
    ++decoded;
    std::visit(
        [&](const auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, SampleRecord>) {
            // Every span lies inside the record.
            auto inside = [&](const void* p, size_t n) {
              auto* b = static_cast<const uint8_t*>(p);
              return n == 0 || (b >= bytes.data() && b + n <= bytes.data() + bytes.size());
            };
            EXPECT_TRUE(inside(r.callchain.data(), r.callchain.size() * 8));
            EXPECT_TRUE(inside(r.user_stack.data(), r.user_stack.size()));
            builder.on_sample(r);
          } else if constexpr (std::is_same_v<T, MmapRecord>) {
            builder.on_mmap(r);
          } else if constexpr (std::is_same_v<T, CommRecord>) {
            builder.on_comm(r);
          } else if constexpr (std::is_same_v<T, TaskRecord>) {
            if (r.exit) builder.on_exit(r);
            else builder.on_fork(r);
          }
        },
        *rec);
  }
  return decoded;
}

ProfileBuilderOptions builder_options() {
  auto event = parse_event("cpu-clock");
  ProfileBuilderOptions options;
  options.events = {*event};
  options.call_graph = CallGraphMode::fp;
  options.kallsyms = "";
  return options;
}

std::vector<uint8_t> ring_of(const std::vector<std::vector<uint64_t>>& records, uint64_t& used) {
  std::vector<uint8_t> ring(1024);
  used = 0;
  for (const auto& r : records) {
    std::memcpy(ring.data() + used, r.data(), r.size() * 8);
    used += r.size() * 8;
  }
  return ring;
}

TEST(PerfRecordsRobustness, ValidRingDecodesWhole) {
  auto records = valid_records();
  uint64_t used;
  auto ring = ring_of(records, used);
  ProfileBuilder builder(builder_options());
  EXPECT_EQ(consume(ring, 0, used, builder), records.size());
  core::Profile p = builder.finish();
  EXPECT_EQ(p.total(0), 2);  // two samples
}

TEST(PerfRecordsRobustness, EveryTruncation) {
  auto records = valid_records();
  uint64_t used;
  auto ring = ring_of(records, used);
  ProfileBuilder builder(builder_options());
  for (uint64_t head = 0; head <= used; ++head) consume(ring, 0, head, builder);
  // Each record alone, cut at every 8-byte boundary with its size field saying the cut size.
  for (const auto& r : records) {
    for (size_t words = 1; words < r.size(); ++words) {
      std::vector<uint64_t> cut(r.begin(), r.begin() + static_cast<ptrdiff_t>(words));
      reinterpret_cast<perf_event_header*>(cut.data())->size = static_cast<uint16_t>(words * 8);
      auto rec = decode_record({reinterpret_cast<const uint8_t*>(cut.data()), words * 8}, kLayout);
      if (!rec) {
        EXPECT_NE(rec.error().message.find("byte"), std::string::npos);
      }
    }
  }
  (void)builder.finish();
}

TEST(PerfRecordsRobustness, ByteFlips) {
  auto records = valid_records();
  uint64_t used;
  const auto clean = ring_of(records, used);
  std::mt19937_64 random(20261124);
  ProfileBuilder builder(builder_options());
  for (int round = 0; round < 5000; ++round) {
    auto ring = clean;
    int flips = 1 + int(random() % 4);
    for (int f = 0; f < flips; ++f) ring[random() % used] ^= uint8_t(1u << (random() % 8));
    consume(ring, 0, used, builder);
    // Also from a tail that is not on a record boundary, wrapping around the end.
    consume(ring, random() % ring.size(), random() % ring.size() + ring.size(), builder);
  }
  core::Profile p = builder.finish();
  EXPECT_GE(p.sample_count(), 1u);
}

}  // namespace
}  // namespace tally::collect
