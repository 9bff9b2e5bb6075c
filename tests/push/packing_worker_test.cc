// The daemon's packing thread: every interval's job on the same long-lived thread, in
// order, and what a job freed given back to the kernel (a thread per interval left a
// malloc arena each, with the megabytes its interval freed still resident).
#include "daemon/packing_worker.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tally::daemon {
namespace {

TEST(PackingWorker, JobsRunInOrderOnOneThreadThatIsNotTheCaller) {
  std::vector<int> order;
  std::vector<pid_t> threads;
  {
    PackingWorker worker;
    for (int i = 0; i < 20; ++i)
      worker.submit([&, i] {
        order.push_back(i);
        threads.push_back(::gettid());
      });
    worker.wait();
    EXPECT_EQ(order.size(), 20u);
    worker.submit([&] { order.push_back(20); });  // the destructor finishes it
  }
  ASSERT_EQ(order.size(), 21u);
  for (int i = 0; i < 21; ++i) EXPECT_EQ(order[size_t(i)], i);
  for (pid_t t : threads) EXPECT_EQ(t, threads[0]);
  EXPECT_NE(threads[0], ::gettid());
}

// A job that throws loses its interval only: the next job still runs.
TEST(PackingWorker, AJobThatThrowsLeavesTheWorkerRunning) {
  PackingWorker worker;
  bool ran = false;
  worker.submit([] { throw std::runtime_error("out of memory, say"); });
  worker.submit([&] { ran = true; });
  worker.wait();
  EXPECT_TRUE(ran);
}

long anonymous_resident_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("RssAnon:")) return std::stol(line.substr(8));
  return -1;
}

// Each job allocates 16 MB in blocks below malloc's mmap threshold, keeps a block
// allocated after them (as the symbol cache keeps what an interval added), and frees the
// rest: without the release the freed megabytes sit below the kept block, resident.
TEST(PackingWorker, WhatAJobFreedLeavesTheResidentSet) {
  std::vector<std::unique_ptr<char[]>> kept;
  PackingWorker worker;
  worker.submit([] {});
  worker.wait();
  const long before = anonymous_resident_kb();
  for (int job = 0; job < 3; ++job) {
    worker.submit([&kept] {
      std::vector<std::unique_ptr<char[]>> blocks;
      blocks.reserve(16 * 32);
      for (int i = 0; i < 16 * 32; ++i) {
        blocks.emplace_back(new char[32 * 1024]);
        std::fill_n(blocks.back().get(), 32 * 1024, char(i));
      }
      kept.emplace_back(new char[40 * 1024]);  // larger than any hole below the blocks
    });
    worker.wait();
  }
  const long grown = anonymous_resident_kb() - before;
  ASSERT_GT(before, 0);
#if !defined(__SANITIZE_ADDRESS__)  // (ASan's allocator has its own arenas and quarantine)
  EXPECT_LT(grown, 4 * 1024) << "kB";
#else
  (void)grown;
#endif
}

}  // namespace
}  // namespace tally::daemon
