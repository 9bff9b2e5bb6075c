// The thread that symbolizes and spools each push interval, started once and kept for the
// daemon's life. A thread per interval (std::async) left the malloc arena of each: the
// next interval's thread often started before the last one had ended and gave its arena
// back, so glibc made another, and each arena kept the ~6 MB its interval freed, resident
// (measured: two such arenas, 11 of the daemon's 17 MB of anonymous memory after 60 s).
// On one thread the intervals share one arena, and after each job the free pages of all
// arenas go back to the kernel (malloc_trim: some milliseconds once per interval).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace tally::daemon {

class PackingWorker {
 public:
  PackingWorker();
  ~PackingWorker();  // finishes the job in hand, then stops the thread
  PackingWorker(const PackingWorker&) = delete;
  PackingWorker& operator=(const PackingWorker&) = delete;

  // Runs `job` on the worker thread after the job before it finished (one at a time, in
  // order); waits for that one first.
  void submit(std::function<void()> job);
  // Waits until no job is pending or running.
  void wait();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> job_;  // submitted, not started yet
  bool busy_ = false;          // a job is running
  bool stopping_ = false;
  std::thread thread_;
};

// Gives the free pages of every malloc arena back to the kernel (glibc's malloc_trim);
// nothing elsewhere.
void release_free_heap_pages();

}  // namespace tally::daemon
