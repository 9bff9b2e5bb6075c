#include "runtime/profile_file.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/pprof_module.h"
#include "runtime/text.h"
#include "runtime/stderr_print.h"

namespace tally::runtime {
namespace {

constexpr uintptr_t kTrailer[3] = {0, 1, 0};

bool ends_with(const char* text, const char* suffix) {
  size_t n = strlen(text);
  size_t m = strlen(suffix);
  return n >= m && strcmp(text + n - m, suffix) == 0;
}

// The directory part of `path` ("." for a bare name).
void directory_of(const char* path, char* out, size_t size) {
  const char* slash = strrchr(path, '/');
  if (slash == nullptr) {
    snprintf(out, size, ".");
  } else if (slash == path) {
    snprintf(out, size, "/");
  } else {
    snprintf(out, size, "%.*s", static_cast<int>(slash - path), path);
  }
}

bool copy_range(int from, int to, uint64_t size) {
  static unsigned char chunk[1 << 16];
  uint64_t offset = 0;
  while (offset < size) {
    size_t want = size - offset < sizeof chunk ? static_cast<size_t>(size - offset) : sizeof chunk;
    ssize_t got = pread(from, chunk, want, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    if (!write_all(to, chunk, static_cast<size_t>(got))) return false;
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

}  // namespace

bool write_all(int fd, const void* bytes, size_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  while (size > 0) {
    ssize_t wrote = write(fd, p, size);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return false;
    p += wrote;
    size -= static_cast<size_t>(wrote);
  }
  return true;
}

bool ProfileFile::create_temp(Temp& temp) {
  temp.open = false;
  char directory[PATH_MAX];
  directory_of(path_, directory, sizeof directory);
  temp.owner_pid = getpid();
  temp.named = false;
  temp.fd = ::open(directory, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
  temp.open = temp.fd >= 0;
  if (temp.open) return true;
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL) return false;
  // A file system without O_TMPFILE: a named file beside the target, removed if unused.
  static unsigned sequence = 0;
  // open() keeps path_ shorter than PATH_MAX - 64.
  snprintf(temp.name, sizeof temp.name, "%.*s.tally-tmp.%d.%u", PATH_MAX - 64, path_,
           temp.owner_pid, sequence++);
  temp.fd = ::open(temp.name, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0666);
  temp.open = temp.named = temp.fd >= 0;
  return temp.open;
}

void ProfileFile::discard(Temp& temp) {
  if (!temp.open) return;
  close(temp.fd);
  temp.open = false;
  if (temp.named && temp.owner_pid == getpid()) unlink(temp.name);
}

void ProfileFile::hand_over(Temp& temp, Completed& completed) const {
  completed.temp = temp;
  temp.open = false;
  completed.pprof = pprof_;
  copy_text(completed.path, sizeof completed.path, path_);
}

bool ProfileFile::Completed::publish() {
  if (!temp.open) return false;
  if (pprof) {
    // The gperftools bytes become profile.proto through tally's own converter, loaded
    // only now (it needs the C++ runtime that libtally itself keeps out of programs).
    char error[512] = "";
    int outcome = write_pprof_from_gperf(temp.fd, path, error, sizeof error);
    if (outcome == 0) {
      discard(temp);
      return true;
    }
    print_to_stderr("tally: cannot write %s as pprof (%s); writing the gperftools format there\n",
            path, error);
  }
  bool published;
  if (temp.named) {
    published = rename(temp.name, path) == 0;
    if (published) temp.named = false;
  } else {
    char link_name[PATH_MAX + 32];
    char fd_path[64];
    snprintf(link_name, sizeof link_name, "%s.tally-tmp.%d", path, getpid());
    snprintf(fd_path, sizeof fd_path, "/proc/self/fd/%d", temp.fd);
    unlink(link_name);
    published = linkat(AT_FDCWD, fd_path, AT_FDCWD, link_name, AT_SYMLINK_FOLLOW) == 0;
    if (published && rename(link_name, path) != 0) {
      unlink(link_name);
      published = false;
    }
  }
  if (!published) print_to_stderr("tally: cannot write %s: %s\n", path, strerror(errno));
  discard(temp);
  return published;
}

bool ProfileFile::open(const char* path, uint64_t period_us) {
  if (strlen(path) >= sizeof path_ - 64) {
    errno = ENAMETOOLONG;
    return false;
  }
  copy_text(path_, sizeof path_, path);
  pprof_ = ends_with(path_, ".pb.gz");
  failed_ = false;
  bytes_ = 0;
  records_ = 0;
  used_ = 0;
  if (!create_temp(temp_)) return false;
  const uintptr_t header[5] = {0, 3, 0, static_cast<uintptr_t>(period_us), 0};
  if (!write_all(temp_.fd, header, sizeof header)) {
    int error = errno;
    discard(temp_);
    errno = error;
    return false;
  }
  bytes_ = sizeof header;
  return true;
}

void ProfileFile::append(uint64_t count, const uintptr_t* pcs, int depth) {
  if (!temp_.open || count == 0) return;
  size_t needed = (2 + static_cast<size_t>(depth)) * sizeof(uintptr_t);
  if (used_ + needed > sizeof buffer_ && !flush_buffer()) return;
  auto* words = reinterpret_cast<uintptr_t*>(buffer_ + used_);
  words[0] = static_cast<uintptr_t>(count);
  words[1] = static_cast<uintptr_t>(depth);
  memcpy(words + 2, pcs, sizeof(uintptr_t) * static_cast<size_t>(depth));
  used_ += needed;
  ++records_;
}

bool ProfileFile::flush_buffer() {
  if (!temp_.open || used_ == 0) return !failed_;
  if (!write_all(temp_.fd, buffer_, used_)) {
    if (!failed_) print_to_stderr("tally: cannot write the profile %s: %s\n", path_, strerror(errno));
    failed_ = true;
  }
  bytes_ += used_;
  used_ = 0;
  return !failed_;
}

bool ProfileFile::write_tail(int fd, const char* note) {
  if (!write_all(fd, kTrailer, sizeof kTrailer)) return false;
  // The mapped objects, as gperftools writes them: /proc/self/maps verbatim.
  int maps = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (maps < 0) return true;  // a profile without them is still valid
  static unsigned char chunk[1 << 16];
  bool ok = true;
  for (;;) {
    ssize_t got = read(maps, chunk, sizeof chunk);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (!write_all(fd, chunk, static_cast<size_t>(got))) {
      ok = false;
      break;
    }
  }
  close(maps);
  // Readers of the maps skip a line that is not a mapping (pprof, google-pprof, tally).
  if (ok && note != nullptr && *note != '\0') ok = write_all(fd, note, strlen(note));
  return ok;
}

bool ProfileFile::snapshot(Completed& completed) {
  if (!temp_.open || !flush_buffer()) return false;
  Temp snapshot;
  if (!create_temp(snapshot)) return false;
  if (!copy_range(temp_.fd, snapshot.fd, bytes_) || !write_tail(snapshot.fd)) {
    discard(snapshot);
    return false;
  }
  hand_over(snapshot, completed);
  return true;
}

bool ProfileFile::finish(Completed& completed, const char* note) {
  if (!temp_.open) return false;
  bool ok = flush_buffer();
  if (ok && lseek(temp_.fd, 0, SEEK_END) >= 0 && write_tail(temp_.fd, note)) {
    hand_over(temp_, completed);
    return true;
  }
  print_to_stderr("tally: cannot write the profile %s: %s\n", path_, strerror(errno));
  discard(temp_);
  return false;
}

void ProfileFile::abandon() {
  if (temp_.open) {
    close(temp_.fd);
    temp_.open = false;
  }
  used_ = 0;
}

}  // namespace tally::runtime
