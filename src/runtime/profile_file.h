// The profile being written: the gperftools CPU profile format (header, records, trailer,
// /proc/self/maps), or pprof's profile.proto when the name ends in ".pb.gz".
// Never seen half-written: records go to an unnamed temporary file (O_TMPFILE) in the
// target's directory, which is linked in and renamed over the target only when complete.
// A process that dies, execs or is a forked copy leaves nothing behind.
// Used by the service thread and the stopping thread (writer lock held), never by a signal
// handler.
#pragma once

#include <limits.h>

#include <cstddef>
#include <cstdint>

namespace tally::runtime {

class ProfileFile {
  struct Temp {
    // (Zero-initialized members only: the object lives in .bss, not in the library file.)
    bool open = false;
    int fd = 0;
    bool named = false;  // no O_TMPFILE on this file system: a named file
    int owner_pid = 0;
    char name[PATH_MAX] = {};
  };

 public:
  // A complete profile not yet in place. Publishing may convert it to pprof, which starts
  // threads: it is done after the caller has released its locks.
  struct Completed {
    Temp temp;
    bool pprof = false;
    char path[PATH_MAX] = {};
    // Moves the file over its target name (atomically); closes it.
    bool publish();
  };

  // Creates the temporary file and writes the header. False (errno set) on failure.
  bool open(const char* path, uint64_t period_us);
  bool is_open() const { return temp_.open; }
  const char* path() const { return path_; }

  void append(uint64_t count, const uintptr_t* pcs, int depth);
  // Writes the buffered records to the temporary file.
  bool flush_buffer();
  // A complete profile of everything appended so far, to publish; writing goes on.
  bool snapshot(Completed& completed);
  // Trailer and mapped objects: the file is complete, to publish. Closes this one.
  // `note` (may be null): one more line after the mapped objects, "# tally: ...".
  bool finish(Completed& completed, const char* note = nullptr);
  // A forked child's copy of the parent's file: closed, nothing published or removed.
  void abandon();

  uint64_t bytes() const { return bytes_ + used_; }
  uint64_t records() const { return records_; }

 private:
  bool create_temp(Temp& temp);
  static void discard(Temp& temp);
  static bool write_tail(int fd, const char* note = nullptr);
  void hand_over(Temp& temp, Completed& completed) const;

  Temp temp_;
  char path_[PATH_MAX] = {};
  bool pprof_ = false;
  bool failed_ = false;
  uint64_t bytes_ = 0;
  uint64_t records_ = 0;
  size_t used_ = 0;
  unsigned char buffer_[1 << 16] = {};
};

// Writes all of `bytes` to fd (retrying short writes and EINTR).
bool write_all(int fd, const void* bytes, size_t size);

}  // namespace tally::runtime
