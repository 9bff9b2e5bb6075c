// The records a perf ring buffer holds (PERF_RECORD_SAMPLE and the side-band records
// MMAP2, COMM, FORK, EXIT, LOST, THROTTLE, UNTHROTTLE, LOST_SAMPLES, SWITCH), decoded from their
// bytes. The bytes come from the kernel but are still checked like any input: every field
// is read within the record's own size, and a record whose size field disagrees with its
// content is refused, never read past.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "collect/user_regs.h"
#include "core/error.h"

namespace tally::collect {

// How the events of one ring were opened: what a sample record carries and whether
// side-band records end with the sample_id_all trailer. Every event sharing a ring must
// use the same layout (tally opens them all with the same sample_type).
struct RecordLayout {
  uint64_t sample_type = 0;       // perf_event_attr.sample_type
  uint64_t sample_regs_user = 0;  // perf_event_attr.sample_regs_user
  bool sample_id_all = false;     // perf_event_attr.sample_id_all
  // perf_event_attr.build_id: MMAP2 records flagged PERF_RECORD_MISC_MMAP_BUILD_ID hold a
  // build id. Without it the flag is the kernel's leak (perf_event_mmap_output sets it on
  // a record shared by every event and never clears it, up to at least 6.18): the body
  // holds device and inode like any other, and is read as such.
  bool mmap_build_ids = false;
};

// Who and when, for any record: a sample's own fields, or a side-band record's
// sample_id_all trailer (all zero when the layout has none).
struct RecordOrigin {
  uint32_t pid = 0, tid = 0;
  uint64_t time = 0;  // the events' clock, nanoseconds
  uint32_t cpu = 0;
  uint64_t id = 0;    // the event's id (PERF_EVENT_IOC_ID), which names the -e event
};

// PERF_RECORD_SAMPLE. The spans point into the record's bytes: valid during the callback
// that receives the record only.
struct SampleRecord {
  RecordOrigin origin;
  uint16_t misc = 0;     // PERF_RECORD_MISC_USER / _KERNEL / ... (cpumode) and flags
  size_t event = 0;      // index of the event in the sampler's list (set by the Sampler)
  uint64_t ip = 0;
  uint64_t period = 0;   // events counted since the previous sample: the sample's weight
  // As the kernel wrote it, PERF_CONTEXT_KERNEL / PERF_CONTEXT_USER markers included (see
  // collect/callchain.h to split it); empty without PERF_SAMPLE_CALLCHAIN.
  std::span<const uint64_t> callchain;
  bool has_user_regs = false;  // regs.abi != NONE: the sample caught a user context
  UserRegs regs;
  std::span<const uint8_t> user_stack;  // the dyn_size bytes copied from regs.sp() upward
  // dyn_size reached the size asked for: the stack may go on beyond the copy (an unwind
  // that stops at its end was cut short by -g dwarf,SIZE).
  bool user_stack_full = false;
  bool in_kernel() const;               // cpumode is kernel or guest kernel
};

// PERF_RECORD_MMAP2 (PERF_RECORD_MMAP too, with no device, inode or protection).
struct MmapRecord {
  RecordOrigin origin;
  uint16_t misc = 0;
  uint32_t pid = 0, tid = 0;
  uint64_t start = 0, length = 0, pgoff = 0;
  uint32_t dev_major = 0, dev_minor = 0;
  uint64_t inode = 0, inode_generation = 0;
  // Lower-case hex: from the record (RecordLayout::mmap_build_ids) or, in the Sampler's
  // records, read from the mapped file (FileBuildIds); "" when neither gave one.
  std::string build_id;
  uint32_t prot = 0, flags = 0;
  std::string_view filename;  // points into the record
  bool executable() const;    // PROT_EXEC, or a plain MMAP record without data flag
};

// PERF_RECORD_COMM: a thread's name changed, or (exec) the process exec'd.
struct CommRecord {
  RecordOrigin origin;
  uint32_t pid = 0, tid = 0;
  std::string_view comm;  // points into the record
  bool exec = false;      // PERF_RECORD_MISC_COMM_EXEC
};

// PERF_RECORD_FORK / PERF_RECORD_EXIT (the same layout).
struct TaskRecord {
  RecordOrigin origin;
  bool exit = false;
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
};

// PERF_RECORD_LOST: the ring was full, `lost` records of event `id` were dropped.
struct LostRecord {
  RecordOrigin origin;
  uint64_t id = 0, lost = 0;
};

// PERF_RECORD_THROTTLE / _UNTHROTTLE: the kernel slowed the event down (too many
// interrupts, kernel.perf_event_max_sample_rate) / let it go again.
struct ThrottleRecord {
  RecordOrigin origin;
  bool throttled = true;
  uint64_t time = 0, id = 0, stream_id = 0;
};

// PERF_RECORD_LOST_SAMPLES: samples the kernel dropped before writing them (e.g. when
// it could not copy the user stack).
struct LostSamplesRecord {
  RecordOrigin origin;
  uint64_t lost = 0;
};

// PERF_RECORD_SWITCH / PERF_RECORD_SWITCH_CPU_WIDE (attr.context_switch): the thread of
// `origin` left the CPU (out) or came back to it (in). `preempted`: it left while still
// runnable (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, kernel 4.17+), not because it blocked.
struct SwitchRecord {
  RecordOrigin origin;
  bool out = false;
  bool preempted = false;
  uint32_t other_pid = 0, other_tid = 0;  // CPU-wide only: the thread switched to / from
};

// Any record type tally does not use (kept so that counts stay honest).
struct OtherRecord {
  RecordOrigin origin;
  uint32_t type = 0;
};

using PerfRecord = std::variant<SampleRecord, MmapRecord, CommRecord, TaskRecord, LostRecord,
                                ThrottleRecord, LostSamplesRecord, SwitchRecord, OtherRecord>;

// Decodes one whole record: `bytes` starts at its perf_event_header, holds exactly
// header.size bytes and is 8-byte aligned (as records are in the ring). Errors (ErrorKind::invalid_input) name the record type and the byte
// offset within the record where it stopped making sense.
core::Expected<PerfRecord> decode_record(std::span<const uint8_t> bytes, const RecordLayout& layout);

// The time of a record without decoding all of it (for ordering records of several
// rings); 0 when the record carries none.
uint64_t record_time(std::span<const uint8_t> bytes, const RecordLayout& layout);

}  // namespace tally::collect
