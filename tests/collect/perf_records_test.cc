// The perf record decoder on hand-built records: every record type tally uses, the
// sample_id_all trailer, each sample field, and records whose sizes lie (a callchain, a
// user stack or a build id longer than the record, a size field that disagrees).
#include <linux/perf_event.h>
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstring>

#include "collect/callchain.h"
#include "collect/perf_records.h"
#include "perf_record_bytes.h"

namespace tally::collect {
namespace {

using test::as_bytes;
using test::RecordBytes;

constexpr uint64_t kSampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
const RecordLayout kFp{.sample_type = kSampleType | PERF_SAMPLE_CALLCHAIN,
                       .sample_regs_user = 0,
                       .sample_id_all = true};
// The same, for events opened with attr.build_id (whose MMAP2 records may hold build ids).
const RecordLayout kFpBuildIds{.sample_type = kSampleType | PERF_SAMPLE_CALLCHAIN,
                               .sample_regs_user = 0,
                               .sample_id_all = true,
                               .mmap_build_ids = true};
// Registers AX (bit 0), SP (bit 7) and IP (bit 8) only, to keep the records small.
constexpr uint64_t kRegsMask = (1u << PERF_REG_X86_AX) | (1u << PERF_REG_X86_SP) | (1u << PERF_REG_X86_IP);
const RecordLayout kDwarf{
    .sample_type = kSampleType | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
    .sample_regs_user = kRegsMask,
    .sample_id_all = true};

// The trailer of kFp / kDwarf: pid, tid, time, cpu, identifier.
RecordBytes& trailer(RecordBytes& r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
                     uint64_t id) {
  return r.u32(pid).u32(tid).u64(time).u32(cpu).u32(0).u64(id);
}

RecordBytes fp_sample(std::vector<uint64_t> chain) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.u64(77).u64(0x401000).u32(100).u32(101).u64(5'000'000).u32(1).u32(0).u64(1'001'234);
  r.u64(chain.size());
  for (uint64_t pc : chain) r.u64(pc);
  return r;
}

// Decodes `words`, which are kept alive until the test ends: a decoded record's names and
// spans point into its bytes.
template <class T>
T decoded(std::vector<uint64_t> words, const RecordLayout& layout) {
  static std::vector<std::vector<uint64_t>> kept;
  kept.push_back(std::move(words));
  auto rec = decode_record(as_bytes(kept.back()), layout);
  EXPECT_TRUE(rec) << rec.error().message;
  if (!rec) return T{};
  EXPECT_TRUE(std::holds_alternative<T>(*rec));
  return std::holds_alternative<T>(*rec) ? std::get<T>(*rec) : T{};
}

std::string error_of(const std::vector<uint64_t>& words, const RecordLayout& layout) {
  auto rec = decode_record(as_bytes(words), layout);
  EXPECT_FALSE(rec);
  return rec ? std::string() : rec.error().message;
}

TEST(PerfRecords, SampleWithCallchain) {
  auto words = fp_sample({PERF_CONTEXT_USER, 0x401000, 0x402345, 0x7f0000001234}).words();
  auto rec = decode_record(as_bytes(words), kFp);
  ASSERT_TRUE(rec) << rec.error().message;
  const auto& s = std::get<SampleRecord>(*rec);
  EXPECT_EQ(s.origin.id, 77u);
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.origin.pid, 100u);
  EXPECT_EQ(s.origin.tid, 101u);
  EXPECT_EQ(s.origin.time, 5'000'000u);
  EXPECT_EQ(s.origin.cpu, 1u);
  EXPECT_EQ(s.period, 1'001'234u);
  EXPECT_FALSE(s.in_kernel());
  ASSERT_EQ(s.callchain.size(), 4u);
  EXPECT_EQ(s.callchain[0], PERF_CONTEXT_USER);
  EXPECT_EQ(s.callchain[3], 0x7f0000001234u);
  EXPECT_FALSE(s.has_user_regs);
  EXPECT_TRUE(s.user_stack.empty());
  EXPECT_EQ(record_time(as_bytes(words), kFp), 5'000'000u);
}

TEST(PerfRecords, SampleWithUserRegistersAndStack) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
  r.u64(9).u64(0xffffffff81000010).u32(7).u32(8).u64(42).u32(0).u32(0).u64(1000);
  r.u64(3).u64(PERF_CONTEXT_KERNEL).u64(0xffffffff81000010).u64(0xffffffff81000200);
  r.u64(PERF_SAMPLE_REGS_ABI_64).u64(0xaaaa).u64(0x7ffd0000).u64(0x401234);  // AX, SP, IP
  const uint8_t stack[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  r.u64(24).bytes(stack, 24).u64(16);  // size 24, 16 bytes valid
  auto words = r.words();
  auto rec = decode_record(as_bytes(words), kDwarf);
  ASSERT_TRUE(rec) << rec.error().message;
  const auto& s = std::get<SampleRecord>(*rec);
  EXPECT_TRUE(s.in_kernel());
  EXPECT_TRUE(s.has_user_regs);
  EXPECT_EQ(s.regs.abi, uint64_t(PERF_SAMPLE_REGS_ABI_64));
  EXPECT_EQ(s.regs.value[PERF_REG_X86_AX], 0xaaaau);
  EXPECT_EQ(s.regs.sp(), 0x7ffd0000u);
  EXPECT_EQ(s.regs.ip(), 0x401234u);
  EXPECT_EQ(s.regs.bp(), 0u);  // not in the mask
  ASSERT_EQ(s.user_stack.size(), 16u);
  EXPECT_EQ(s.user_stack[0], 1);
  EXPECT_EQ(s.user_stack[15], 16);
  EXPECT_FALSE(s.user_stack_full);

  SplitCallchain split;
  split_callchain(s.callchain, s.in_kernel(), split);
  EXPECT_EQ(split.kernel, (std::vector<uint64_t>{0xffffffff81000010, 0xffffffff81000200}));
  EXPECT_TRUE(split.user.empty());
}

TEST(PerfRecords, SampleOfAKernelThreadHasNoUserRegisters) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
  r.u64(9).u64(0xffffffff81000010).u32(0).u32(0).u64(42).u32(0).u32(0).u64(1000);
  r.u64(0);                               // empty callchain
  r.u64(PERF_SAMPLE_REGS_ABI_NONE);       // no registers follow
  r.u64(0);                               // stack size 0: no data, no dyn_size
  auto s = decoded<SampleRecord>(r.words(), kDwarf);
  EXPECT_FALSE(s.has_user_regs);
  EXPECT_TRUE(s.user_stack.empty());
  EXPECT_TRUE(s.callchain.empty());
}

TEST(PerfRecords, FullStackCopyIsFlagged) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.u64(9).u64(0x401000).u32(1).u32(1).u64(42).u32(0).u32(0).u64(1000).u64(0);
  r.u64(PERF_SAMPLE_REGS_ABI_64).u64(1).u64(2).u64(3);
  const uint8_t stack[8] = {};
  r.u64(8).bytes(stack, 8).u64(8);
  EXPECT_TRUE(decoded<SampleRecord>(r.words(), kDwarf).user_stack_full);
}

TEST(PerfRecords, Mmap2WithBuildId) {
  RecordBytes r(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
  r.u32(300).u32(301).u64(0x7f0000000000).u64(0x21000).u64(0x1000);
  const uint8_t id[20] = {0xde, 0xad, 0xbe, 0xef, 0x01};
  r.bytes("\x05\0\0\0", 4).bytes(id, 20);  // build_id_size 5, reserved, build_id[20]
  r.u32(PROT_READ | PROT_EXEC).u32(MAP_PRIVATE).name("/usr/lib/libfoo.so.1");
  trailer(r, 300, 301, 999, 1, 55);
  auto words = r.words();
  auto m = decoded<MmapRecord>(words, kFpBuildIds);
  EXPECT_EQ(m.pid, 300u);
  EXPECT_EQ(m.tid, 301u);
  EXPECT_EQ(m.start, 0x7f0000000000u);
  EXPECT_EQ(m.length, 0x21000u);
  EXPECT_EQ(m.pgoff, 0x1000u);
  EXPECT_EQ(m.build_id, "deadbeef01");
  EXPECT_EQ(m.dev_major, 0u);
  EXPECT_TRUE(m.executable());
  EXPECT_EQ(m.filename, "/usr/lib/libfoo.so.1");
  EXPECT_EQ(m.origin.pid, 300u);
  EXPECT_EQ(m.origin.time, 999u);
  EXPECT_EQ(m.origin.cpu, 1u);
  EXPECT_EQ(m.origin.id, 55u);
  EXPECT_EQ(record_time(as_bytes(words), kFp), 999u);
}

TEST(PerfRecords, Mmap2WithDeviceAndInode) {
  RecordBytes r(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
  r.u32(1).u32(1).u64(0x400000).u64(0x1000).u64(0);
  r.u32(8).u32(3).u64(123456).u64(7);  // maj, min, ino, ino_generation
  r.u32(PROT_READ).u32(MAP_PRIVATE).name("/data/file");
  trailer(r, 1, 1, 5, 0, 1);
  auto m = decoded<MmapRecord>(r.words(), kFp);
  EXPECT_EQ(m.dev_major, 8u);
  EXPECT_EQ(m.dev_minor, 3u);
  EXPECT_EQ(m.inode, 123456u);
  EXPECT_EQ(m.inode_generation, 7u);
  EXPECT_TRUE(m.build_id.empty());
  EXPECT_FALSE(m.executable());
  EXPECT_EQ(m.filename, "/data/file");
}

TEST(PerfRecords, BuildIdLongerThanItsFieldIsRefused) {
  RecordBytes r(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
  r.u32(1).u32(1).u64(0x400000).u64(0x1000).u64(0);
  const uint8_t id[20] = {};
  r.bytes("\x15\0\0\0", 4).bytes(id, 20);  // 21 > 20
  r.u32(PROT_EXEC).u32(0).name("x");
  trailer(r, 1, 1, 5, 0, 1);
  EXPECT_NE(error_of(r.words(), kFpBuildIds).find("build id size 21"), std::string::npos);
}

// What kernel 6.18 wrote into perf's own ring while another program held an event with
// attr.build_id open: the build id flag, over a body of device fe:00 and inode 248139.
// Events opened without attr.build_id read it as device and inode.
TEST(PerfRecords, LeakedBuildIdFlagOnEventsWithoutBuildIdsIsIgnored) {
  RecordBytes r(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
  r.u32(8239).u32(8239).u64(0x55fc012d6000).u64(0x4000).u64(0x2000);
  r.u32(0xfe).u32(0).u64(248139).u64(0);  // maj, min, ino, ino_generation
  r.u32(PROT_READ | PROT_EXEC).u32(MAP_PRIVATE).name("/usr/bin/true");
  trailer(r, 8239, 8239, 5, 0, 1);
  auto m = decoded<MmapRecord>(r.words(), kFp);
  EXPECT_EQ(m.dev_major, 0xfeu);
  EXPECT_EQ(m.dev_minor, 0u);
  EXPECT_EQ(m.inode, 248139u);
  EXPECT_TRUE(m.build_id.empty());
  EXPECT_EQ(m.prot, unsigned(PROT_READ | PROT_EXEC));
  EXPECT_EQ(m.filename, "/usr/bin/true");
  // Read as a build id, the device major would be its size: 254, over the 20 bytes.
  EXPECT_NE(error_of(r.words(), kFpBuildIds).find("build id size 254"), std::string::npos);
}

TEST(PerfRecords, PlainMmapIsExecutableUnlessData) {
  for (uint16_t misc : {uint16_t(PERF_RECORD_MISC_USER), uint16_t(PERF_RECORD_MISC_MMAP_DATA)}) {
    RecordBytes r(PERF_RECORD_MMAP, misc);
    r.u32(2).u32(2).u64(0x1000).u64(0x1000).u64(0).name("/bin/true");
    trailer(r, 2, 2, 5, 0, 1);
    auto m = decoded<MmapRecord>(r.words(), kFp);
    EXPECT_EQ(m.executable(), misc == PERF_RECORD_MISC_USER);
    EXPECT_EQ(m.filename, "/bin/true");
  }
}

TEST(PerfRecords, CommWithExecFlagAndUnterminatedName) {
  RecordBytes r(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
  r.u32(10).u32(11).bytes("workload", 8);  // no NUL: the name ends with the body
  trailer(r, 10, 11, 77, 0, 3);
  auto c = decoded<CommRecord>(r.words(), kFp);
  EXPECT_TRUE(c.exec);
  EXPECT_EQ(c.pid, 10u);
  EXPECT_EQ(c.tid, 11u);
  EXPECT_EQ(c.comm, "workload");
  EXPECT_EQ(c.origin.time, 77u);
}

TEST(PerfRecords, ForkAndExit) {
  for (uint32_t type : {uint32_t(PERF_RECORD_FORK), uint32_t(PERF_RECORD_EXIT)}) {
    RecordBytes r(type, 0);
    r.u32(20).u32(10).u32(21).u32(11).u64(1234);
    trailer(r, 20, 21, 1234, 1, 3);
    auto t = decoded<TaskRecord>(r.words(), kFp);
    EXPECT_EQ(t.exit, type == PERF_RECORD_EXIT);
    EXPECT_EQ(t.pid, 20u);
    EXPECT_EQ(t.ppid, 10u);
    EXPECT_EQ(t.tid, 21u);
    EXPECT_EQ(t.ptid, 11u);
    EXPECT_EQ(t.time, 1234u);
  }
}

TEST(PerfRecords, LostThrottleLostSamples) {
  RecordBytes lost(PERF_RECORD_LOST, 0);
  trailer(lost.u64(77).u64(12), 0, 0, 1, 0, 77);
  auto l = decoded<LostRecord>(lost.words(), kFp);
  EXPECT_EQ(l.id, 77u);
  EXPECT_EQ(l.lost, 12u);

  for (uint32_t type : {uint32_t(PERF_RECORD_THROTTLE), uint32_t(PERF_RECORD_UNTHROTTLE)}) {
    RecordBytes t(type, 0);
    trailer(t.u64(500).u64(77).u64(78), 0, 0, 500, 1, 77);
    auto th = decoded<ThrottleRecord>(t.words(), kFp);
    EXPECT_EQ(th.throttled, type == PERF_RECORD_THROTTLE);
    EXPECT_EQ(th.time, 500u);
    EXPECT_EQ(th.id, 77u);
    EXPECT_EQ(th.stream_id, 78u);
  }

  RecordBytes ls(PERF_RECORD_LOST_SAMPLES, 0);
  trailer(ls.u64(3), 0, 0, 1, 0, 77);
  EXPECT_EQ(decoded<LostSamplesRecord>(ls.words(), kFp).lost, 3u);
}

// attr.context_switch: SWITCH (per task: only the trailer) and SWITCH_CPU_WIDE (the other
// thread's pid/tid first), out flagged in misc, preempted with SWITCH_OUT_PREEMPT.
TEST(PerfRecords, SwitchRecords) {
  RecordBytes out(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
  trailer(out, 10, 11, 1000, 1, 77);
  auto o = decoded<SwitchRecord>(out.words(), kFp);
  EXPECT_TRUE(o.out);
  EXPECT_TRUE(o.preempted);
  EXPECT_EQ(o.origin.tid, 11u);
  EXPECT_EQ(o.origin.time, 1000u);

  RecordBytes in(PERF_RECORD_SWITCH_CPU_WIDE, 0);
  trailer(in.u32(20).u32(21), 10, 11, 2000, 1, 77);
  auto i = decoded<SwitchRecord>(in.words(), kFp);
  EXPECT_FALSE(i.out);
  EXPECT_FALSE(i.preempted);
  EXPECT_EQ(i.other_pid, 20u);
  EXPECT_EQ(i.other_tid, 21u);
  EXPECT_EQ(i.origin.time, 2000u);

  // Blocked, not preempted: the flag alone.
  RecordBytes blocked(PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT);
  trailer(blocked, 10, 11, 3000, 0, 77);
  EXPECT_FALSE(decoded<SwitchRecord>(blocked.words(), kFp).preempted);

  // A CPU-wide switch without the other thread's ids: refused, with what was missing.
  RecordBytes short_wide(PERF_RECORD_SWITCH_CPU_WIDE, 0);
  trailer(short_wide, 10, 11, 4000, 0, 77);
  EXPECT_NE(error_of(short_wide.words(), kFp).find("next/prev pid"), std::string::npos)
      << error_of(short_wide.words(), kFp);
}

TEST(PerfRecords, UnknownTypesAreKept) {
  RecordBytes r(PERF_RECORD_NAMESPACES, 0);
  trailer(r.u64(0).u64(0), 0, 0, 1, 0, 1);
  EXPECT_EQ(decoded<OtherRecord>(r.words(), kFp).type, uint32_t(PERF_RECORD_NAMESPACES));
}

TEST(PerfRecords, WithoutSampleIdAllSideBandRecordsHaveNoOrigin) {
  RecordLayout bare = kFp;
  bare.sample_id_all = false;
  RecordBytes r(PERF_RECORD_COMM, 0);
  r.u32(10).u32(11).name("x");
  auto c = decoded<CommRecord>(r.words(), bare);
  EXPECT_EQ(c.comm, "x");
  EXPECT_EQ(c.origin.time, 0u);
  EXPECT_EQ(record_time(as_bytes(r.words()), bare), 0u);
}

// --- records whose sizes lie ---

TEST(PerfRecords, CallchainLongerThanTheRecord) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.u64(77).u64(0x401000).u32(100).u32(101).u64(5).u32(1).u32(0).u64(1);
  r.u64(1'000'000'000).u64(0x401000);  // nr says a billion frames
  std::string e = error_of(r.words(), kFp);
  EXPECT_NE(e.find("callchain of 1000000000 frames"), std::string::npos) << e;
  EXPECT_NE(e.find("SAMPLE"), std::string::npos) << e;
}

TEST(PerfRecords, UserStackLargerThanTheRecord) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.u64(9).u64(0x401000).u32(1).u32(1).u64(42).u32(0).u32(0).u64(1000).u64(0);
  r.u64(PERF_SAMPLE_REGS_ABI_64).u64(1).u64(2).u64(3);
  r.u64(~uint64_t(0));  // size: 2^64 - 1
  EXPECT_NE(error_of(r.words(), kDwarf).find("user stack of"), std::string::npos);
}

TEST(PerfRecords, DynSizeLargerThanTheCopy) {
  RecordBytes r(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  r.u64(9).u64(0x401000).u32(1).u32(1).u64(42).u32(0).u32(0).u64(1000).u64(0);
  r.u64(PERF_SAMPLE_REGS_ABI_64).u64(1).u64(2).u64(3);
  const uint8_t stack[8] = {};
  r.u64(8).bytes(stack, 8).u64(16);
  EXPECT_NE(error_of(r.words(), kDwarf).find("dyn_size 16"), std::string::npos);
}

TEST(PerfRecords, SizeFieldMustMatchTheRecord) {
  auto words = fp_sample({PERF_CONTEXT_USER, 0x401000}).words(8 * 20);  // says 160 bytes
  EXPECT_NE(error_of(words, kFp).find("size field says 160 bytes"), std::string::npos);
}

TEST(PerfRecords, RecordTooShortForItsFields) {
  // Every strict prefix of a valid sample (its size field rewritten to match) is refused.
  auto full = fp_sample({PERF_CONTEXT_USER, 0x401000, 0x402000}).words();
  for (size_t n = 1; n < full.size(); ++n) {
    std::vector<uint64_t> cut(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
    auto* h = reinterpret_cast<perf_event_header*>(cut.data());
    h->size = static_cast<uint16_t>(n * 8);
    EXPECT_FALSE(decode_record(as_bytes(cut), kFp)) << n << " words";
  }
}

TEST(PerfRecords, SideBandRecordShorterThanItsTrailer) {
  RecordBytes r(PERF_RECORD_LOST, 0);
  r.u64(1);
  EXPECT_NE(error_of(r.words(), kFp).find("sample_id trailer"), std::string::npos);
}

TEST(PerfRecords, UnalignedRecordsAreRefused) {
  auto words = fp_sample({}).words();
  std::vector<uint8_t> shifted(words.size() * 8 + 1);
  std::memcpy(shifted.data() + 1, words.data(), words.size() * 8);
  auto rec = decode_record({shifted.data() + 1, words.size() * 8}, kFp);
  ASSERT_FALSE(rec);
  EXPECT_NE(rec.error().message.find("aligned"), std::string::npos);
}

TEST(PerfRecords, SampleTypesTallyCannotLayOutAreRefused) {
  RecordLayout branch = kFp;
  branch.sample_type |= PERF_SAMPLE_BRANCH_STACK;
  EXPECT_NE(error_of(fp_sample({}).words(), branch).find("does not decode"), std::string::npos);
}

TEST(Callchain, SplitAtContextMarkers) {
  std::vector<uint64_t> chain = {PERF_CONTEXT_KERNEL, 0xffffffff81000001, 0xffffffff81000002,
                                 PERF_CONTEXT_USER,   0x401000,           0x402000,
                                 PERF_CONTEXT_GUEST,  0x1234};
  SplitCallchain split;
  split_callchain(chain, true, split);
  EXPECT_EQ(split.kernel, (std::vector<uint64_t>{0xffffffff81000001, 0xffffffff81000002}));
  EXPECT_EQ(split.user, (std::vector<uint64_t>{0x401000, 0x402000}));
  EXPECT_EQ(split.other, 1u);
  // Frames before any marker follow the sample's mode.
  split_callchain(std::vector<uint64_t>{0x401000, 0x402000}, false, split);
  EXPECT_EQ(split.user.size(), 2u);
  EXPECT_TRUE(split.kernel.empty());
}

}  // namespace
}  // namespace tally::collect
