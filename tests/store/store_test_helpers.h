// Shared by the store tests: a small aggregate of two images (an executable known by its
// file identity, a library known by its build id) and reading files back.
#pragma once

#include <string>

#include "store/aggregate.h"
#include "store/image_id.h"

namespace tally::store::test {

inline IndexEntry exe_entry(const std::string& path = "/opt/app/bin/server") {
  ImageKey k{.path = path, .build_id = "", .dev_major = 8, .dev_minor = 1, .inode = 77,
             .size = 123456, .mtime_ns = 1};
  return {image_id(k), k};
}

inline IndexEntry lib_entry() {
  ImageKey k{.path = "/usr/lib/libwork.so", .build_id = "1234abcd", .dev_major = 8,
             .dev_minor = 1, .inode = 78, .size = 5000, .mtime_ns = 2};
  return {image_id(k), k};
}

inline Aggregate cpu_clock_aggregate(bool stacks = true) {
  return Aggregate({{"cpu-clock", "nanoseconds"}}, stacks);
}

}  // namespace tally::store::test
