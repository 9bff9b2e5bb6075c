#include "collect/perf_records.h"

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "io/byte_cursor.h"

namespace tally::collect {

namespace {

constexpr auto kLittle = std::endian::little;

// The sample_type bits this decoder can lay out; the others change the record's layout
// in ways tally never asks for (read groups, branch stacks, interrupt registers, AUX).
constexpr uint64_t kSupportedSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
    PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC |
    PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR;

// The sample_id_all trailer's fields, in the kernel's order.
size_t trailer_size(uint64_t sample_type) {
  size_t n = 0;
  for (uint64_t bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
                       PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER})
    if (sample_type & bit) n += 8;
  return n;
}

const char* record_name(uint32_t type) {
  switch (type) {
    case PERF_RECORD_MMAP: return "MMAP";
    case PERF_RECORD_LOST: return "LOST";
    case PERF_RECORD_COMM: return "COMM";
    case PERF_RECORD_EXIT: return "EXIT";
    case PERF_RECORD_THROTTLE: return "THROTTLE";
    case PERF_RECORD_UNTHROTTLE: return "UNTHROTTLE";
    case PERF_RECORD_FORK: return "FORK";
    case PERF_RECORD_SAMPLE: return "SAMPLE";
    case PERF_RECORD_MMAP2: return "MMAP2";
    case PERF_RECORD_LOST_SAMPLES: return "LOST_SAMPLES";
    case PERF_RECORD_SWITCH: return "SWITCH";
    case PERF_RECORD_SWITCH_CPU_WIDE: return "SWITCH_CPU_WIDE";
    default: return "record";
  }
}

// Reads the sample_id_all trailer at the end of a side-band record.
RecordOrigin read_trailer(std::span<const uint8_t> trailer, uint64_t offset, uint64_t sample_type) {
  io::ByteCursor c(trailer, offset);
  RecordOrigin o;
  if (sample_type & PERF_SAMPLE_TID) {
    o.pid = c.u32(kLittle, "pid");
    o.tid = c.u32(kLittle, "tid");
  }
  if (sample_type & PERF_SAMPLE_TIME) o.time = c.u64(kLittle, "time");
  if (sample_type & PERF_SAMPLE_ID) o.id = c.u64(kLittle, "id");
  if (sample_type & PERF_SAMPLE_STREAM_ID) c.skip(8, "stream id");
  if (sample_type & PERF_SAMPLE_CPU) {
    o.cpu = c.u32(kLittle, "cpu");
    c.skip(4, "reserved");
  }
  if (sample_type & PERF_SAMPLE_IDENTIFIER) o.id = c.u64(kLittle, "identifier");
  return o;
}

// A NUL-terminated name padded to 8 bytes; a name without its NUL ends at the body's end.
std::string_view read_name(io::ByteCursor& c) {
  auto rest = c.rest();
  const void* nul = std::memchr(rest.data(), 0, rest.size());
  size_t n = nul ? static_cast<size_t>(static_cast<const uint8_t*>(nul) - rest.data()) : rest.size();
  c.skip(rest.size(), "name");
  return {reinterpret_cast<const char*>(rest.data()), n};
}

std::span<const uint64_t> as_words(std::span<const uint8_t> bytes) {
  // The record is 8-byte aligned (checked by decode_record) and so is every u64 field.
  return {reinterpret_cast<const uint64_t*>(bytes.data()), bytes.size() / 8};
}

SampleRecord decode_sample(io::ByteCursor& c, uint16_t misc, const RecordLayout& layout) {
  const uint64_t st = layout.sample_type;
  SampleRecord s;
  s.misc = misc;
  if (st & PERF_SAMPLE_IDENTIFIER) s.origin.id = c.u64(kLittle, "identifier");
  if (st & PERF_SAMPLE_IP) s.ip = c.u64(kLittle, "ip");
  if (st & PERF_SAMPLE_TID) {
    s.origin.pid = c.u32(kLittle, "pid");
    s.origin.tid = c.u32(kLittle, "tid");
  }
  if (st & PERF_SAMPLE_TIME) s.origin.time = c.u64(kLittle, "time");
  if (st & PERF_SAMPLE_ADDR) c.skip(8, "addr");
  if (st & PERF_SAMPLE_ID) s.origin.id = c.u64(kLittle, "id");
  if (st & PERF_SAMPLE_STREAM_ID) c.skip(8, "stream id");
  if (st & PERF_SAMPLE_CPU) {
    s.origin.cpu = c.u32(kLittle, "cpu");
    c.skip(4, "reserved");
  }
  if (st & PERF_SAMPLE_PERIOD) s.period = c.u64(kLittle, "period");
  if (st & PERF_SAMPLE_CALLCHAIN) {
    uint64_t nr = c.u64(kLittle, "callchain length");
    if (nr > c.remaining() / 8)
      core::fail_at_byte(c.offset() - 8, fmt::format("callchain of {} frames does not fit in "
                                                     "the {} bytes left of the record",
                                                     nr, c.remaining()));
    s.callchain = as_words(c.take(nr * 8, "callchain"));
  }
  if (st & PERF_SAMPLE_RAW) {
    uint32_t size = c.u32(kLittle, "raw size");
    c.skip(size, "raw data");
    // The u32 size plus the data are padded to 8 bytes.
    size_t pad = (8 - (4 + size) % 8) % 8;
    c.skip(pad, "raw padding");
  }
  if (st & PERF_SAMPLE_REGS_USER) {
    s.regs.abi = c.u64(kLittle, "user registers abi");
    if (s.regs.abi != PERF_SAMPLE_REGS_ABI_NONE) {
      s.has_user_regs = true;
      uint64_t mask = layout.sample_regs_user;
      for (int bit = 0; bit < 64; ++bit) {
        if (!(mask >> bit & 1)) continue;
        uint64_t v = c.u64(kLittle, "user register");
        if (bit < static_cast<int>(s.regs.value.size())) s.regs.value[static_cast<size_t>(bit)] = v;
      }
    }
  }
  if (st & PERF_SAMPLE_STACK_USER) {
    uint64_t size = c.u64(kLittle, "user stack size");
    if (size != 0) {
      if (size > c.remaining())
        core::fail_at_byte(c.offset() - 8, fmt::format("user stack of {} bytes does not fit in "
                                                       "the {} bytes left of the record",
                                                       size, c.remaining()));
      auto data = c.take(size, "user stack");
      uint64_t dyn_size = c.u64(kLittle, "user stack dyn_size");
      if (dyn_size > size)
        core::fail_at_byte(c.offset() - 8, fmt::format("user stack dyn_size {} is larger than "
                                                       "its size {}", dyn_size, size));
      s.user_stack = data.first(dyn_size);
      s.user_stack_full = dyn_size == size;
    }
  }
  if (st & PERF_SAMPLE_WEIGHT) c.skip(8, "weight");
  if (st & PERF_SAMPLE_DATA_SRC) c.skip(8, "data source");
  if (st & PERF_SAMPLE_TRANSACTION) c.skip(8, "transaction");
  if (st & PERF_SAMPLE_PHYS_ADDR) c.skip(8, "physical address");
  return s;
}

PerfRecord decode_body(uint32_t type, uint16_t misc, io::ByteCursor& c, RecordOrigin origin,
                       const RecordLayout& layout) {
  switch (type) {
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2: {
      MmapRecord m;
      m.origin = origin;
      m.misc = misc;
      m.pid = c.u32(kLittle, "pid");
      m.tid = c.u32(kLittle, "tid");
      m.start = c.u64(kLittle, "address");
      m.length = c.u64(kLittle, "length");
      m.pgoff = c.u64(kLittle, "page offset");
      if (type == PERF_RECORD_MMAP2) {
        if ((misc & PERF_RECORD_MISC_MMAP_BUILD_ID) && layout.mmap_build_ids) {
          uint8_t size = c.take(1, "build id size")[0];
          c.skip(3, "reserved");
          auto id = c.take(20, "build id");
          if (size > 20)
            core::fail_at_byte(c.offset() - 24, fmt::format("build id size {} is over 20", size));
          m.build_id.reserve(size * 2u);
          for (uint8_t b : id.first(size)) m.build_id += fmt::format("{:02x}", b);
        } else {
          m.dev_major = c.u32(kLittle, "device major");
          m.dev_minor = c.u32(kLittle, "device minor");
          m.inode = c.u64(kLittle, "inode");
          m.inode_generation = c.u64(kLittle, "inode generation");
        }
        m.prot = c.u32(kLittle, "protection");
        m.flags = c.u32(kLittle, "flags");
      } else {
        m.prot = (misc & PERF_RECORD_MISC_MMAP_DATA) ? PROT_READ : PROT_READ | PROT_EXEC;
      }
      m.filename = read_name(c);
      return m;
    }
    case PERF_RECORD_COMM: {
      CommRecord r;
      r.origin = origin;
      r.pid = c.u32(kLittle, "pid");
      r.tid = c.u32(kLittle, "tid");
      r.comm = read_name(c);
      r.exec = (misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
      return r;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      TaskRecord r;
      r.origin = origin;
      r.exit = type == PERF_RECORD_EXIT;
      r.pid = c.u32(kLittle, "pid");
      r.ppid = c.u32(kLittle, "ppid");
      r.tid = c.u32(kLittle, "tid");
      r.ptid = c.u32(kLittle, "ptid");
      r.time = c.u64(kLittle, "time");
      return r;
    }
    case PERF_RECORD_LOST: {
      LostRecord r;
      r.origin = origin;
      r.id = c.u64(kLittle, "id");
      r.lost = c.u64(kLittle, "lost count");
      return r;
    }
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: {
      ThrottleRecord r;
      r.origin = origin;
      r.throttled = type == PERF_RECORD_THROTTLE;
      r.time = c.u64(kLittle, "time");
      r.id = c.u64(kLittle, "id");
      r.stream_id = c.u64(kLittle, "stream id");
      return r;
    }
    case PERF_RECORD_LOST_SAMPLES: {
      LostSamplesRecord r;
      r.origin = origin;
      r.lost = c.u64(kLittle, "lost count");
      return r;
    }
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE: {
      SwitchRecord r;
      r.origin = origin;
      r.out = (misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
      r.preempted = r.out && (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
      if (type == PERF_RECORD_SWITCH_CPU_WIDE) {
        r.other_pid = c.u32(kLittle, "next/prev pid");
        r.other_tid = c.u32(kLittle, "next/prev tid");
      }
      return r;
    }
    default: return OtherRecord{.origin = origin, .type = type};
  }
}

}  // namespace

bool SampleRecord::in_kernel() const {
  uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
  return mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL;
}

bool MmapRecord::executable() const { return (prot & PROT_EXEC) != 0; }

core::Expected<PerfRecord> decode_record(std::span<const uint8_t> bytes, const RecordLayout& layout) {
  const char* name = "record";
  try {
    if (reinterpret_cast<uintptr_t>(bytes.data()) % 8 != 0)
      core::fail_at_byte(0, "record is not 8-byte aligned");
    io::ByteCursor header(bytes);
    uint32_t type = header.u32(kLittle, "record type");
    name = record_name(type);
    uint16_t misc = static_cast<uint16_t>(header.word(2, kLittle, "record misc"));
    auto size = static_cast<uint16_t>(header.word(2, kLittle, "record size"));
    if (size != bytes.size())
      core::fail_at_byte(6, fmt::format("size field says {} bytes, but the record has {}", size,
                                        bytes.size()));
    if (size % 8 != 0) core::fail_at_byte(6, fmt::format("size {} is not a multiple of 8", size));
    if (layout.sample_type & ~kSupportedSampleType)
      core::fail_at_byte(0, fmt::format("sample_type {:#x} has fields tally does not decode",
                                        layout.sample_type & ~kSupportedSampleType));
    auto body = bytes.subspan(sizeof(perf_event_header));
    if (type == PERF_RECORD_SAMPLE) {
      io::ByteCursor c(body, sizeof(perf_event_header));
      // Fields after the ones tally reads (e.g. from a newer kernel) are ignored.
      return PerfRecord(decode_sample(c, misc, layout));
    }
    RecordOrigin origin;
    size_t trailer = layout.sample_id_all ? trailer_size(layout.sample_type) : 0;
    // Kernel-private records (type >= PERF_RECORD_MAX) may have no trailer.
    if (type >= PERF_RECORD_MAX) trailer = 0;
    if (trailer > body.size())
      core::fail_at_byte(8, fmt::format("record of {} bytes is too short for its {}-byte "
                                        "sample_id trailer", size, trailer));
    if (trailer) {
      origin = read_trailer(body.last(trailer), size - trailer, layout.sample_type);
      body = body.first(body.size() - trailer);
    }
    io::ByteCursor c(body, sizeof(perf_event_header));
    return decode_body(type, misc, c, origin, layout);
  } catch (const core::FormatError& e) {
    return e.located(std::string("perf ") + name + " record");
  }
}

uint64_t record_time(std::span<const uint8_t> bytes, const RecordLayout& layout) {
  const uint64_t st = layout.sample_type;
  if (!(st & PERF_SAMPLE_TIME) || bytes.size() < sizeof(perf_event_header)) return 0;
  perf_event_header h;
  std::memcpy(&h, bytes.data(), sizeof h);
  size_t at;
  if (h.type == PERF_RECORD_SAMPLE) {
    at = sizeof h;
    if (st & PERF_SAMPLE_IDENTIFIER) at += 8;
    if (st & PERF_SAMPLE_IP) at += 8;
    if (st & PERF_SAMPLE_TID) at += 8;
  } else {
    if (!layout.sample_id_all || h.type >= PERF_RECORD_MAX) return 0;
    size_t trailer = trailer_size(st);
    if (trailer + sizeof h > bytes.size()) return 0;
    at = bytes.size() - trailer + ((st & PERF_SAMPLE_TID) ? 8 : 0);
  }
  if (at + 8 > bytes.size()) return 0;
  uint64_t t;
  std::memcpy(&t, bytes.data() + at, 8);
  return t;
}

}  // namespace tally::collect
