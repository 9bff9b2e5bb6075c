// run_parallel: a loop over [0, count) on a few threads, each taking the next index.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace tally::symbolize {

// Runs work(worker, i) for i in [0, count) on up to `threads` threads (worker: which
// thread, below `threads`), each thread taking the next i.
template <class Work>
void run_parallel(size_t count, unsigned threads, Work&& work) {
  std::atomic<size_t> next{0};
  auto worker = [&](unsigned id) {
    for (size_t i; (i = next.fetch_add(1)) < count;) work(id, i);
  };
  unsigned pool_size = static_cast<unsigned>(std::min<size_t>(threads, count));
  if (pool_size <= 1) {
    worker(0);
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < pool_size; ++i) pool.emplace_back(worker, i);
  for (auto& thread : pool) thread.join();
}

}  // namespace tally::symbolize
