#include "runtime/maps_snapshot.h"

#include <fcntl.h>
#include <unistd.h>

namespace tally::runtime {
namespace {

// Parses hex digits at `p`; advances it.
uintptr_t parse_hex(const char*& p, const char* end) {
  uintptr_t value = 0;
  for (; p < end; ++p) {
    char c = *p;
    unsigned digit;
    if (c >= '0' && c <= '9') {
      digit = static_cast<unsigned>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      digit = static_cast<unsigned>(c - 'a' + 10);
    } else {
      break;
    }
    value = value * 16 + digit;
  }
  return value;
}

}  // namespace

bool MapsSnapshot::add_line(const char* line, size_t length) {
  // "start-end perms offset dev inode path"
  const char* p = line;
  const char* end = line + length;
  MapRange range;
  range.start = parse_hex(p, end);
  if (p >= end || *p != '-') return false;
  ++p;
  range.end = parse_hex(p, end);
  if (p + 5 > end || *p != ' ') return false;
  range.writable = p[2] == 'w';
  range.executable = p[3] == 'x';
  if (count_ == kMaxRanges) return false;
  ranges_[count_++] = range;
  return true;
}

bool MapsSnapshot::capture() {
  count_ = 0;
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buffer[8192];
  size_t used = 0;
  for (;;) {
    ssize_t got = read(fd, buffer + used, sizeof buffer - used);
    if (got < 0) {
      close(fd);
      return false;
    }
    if (got == 0) break;
    used += static_cast<size_t>(got);
    size_t line_start = 0;
    for (size_t i = 0; i < used; ++i) {
      if (buffer[i] == '\n') {
        add_line(buffer + line_start, i - line_start);
        line_start = i + 1;
      }
    }
    // Keep the partial last line; a line longer than the buffer (a huge path) is dropped
    // after its start was parsed.
    if (line_start == 0 && used == sizeof buffer) {
      add_line(buffer, used);
      used = 0;
      // Skip to the end of that line.
      char c;
      while (read(fd, &c, 1) == 1 && c != '\n') {
      }
      continue;
    }
    for (size_t i = line_start; i < used; ++i) buffer[i - line_start] = buffer[i];
    used -= line_start;
  }
  close(fd);
  return true;
}

const MapRange* MapsSnapshot::find(uintptr_t address) const {
  // The kernel lists mappings in address order.
  size_t low = 0;
  size_t high = count_;
  while (low < high) {
    size_t mid = (low + high) / 2;
    if (ranges_[mid].end <= address) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low < count_ && ranges_[low].start <= address && address < ranges_[low].end) {
    return &ranges_[low];
  }
  return nullptr;
}

}  // namespace tally::runtime
