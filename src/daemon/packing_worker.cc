#include "daemon/packing_worker.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tally::daemon {

PackingWorker::PackingWorker() : thread_([this] { run(); }) {}

PackingWorker::~PackingWorker() {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return !job_ && !busy_; });
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void PackingWorker::submit(std::function<void()> job) {
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return !job_ && !busy_; });
    job_ = std::move(job);
  }
  changed_.notify_all();
}

void PackingWorker::wait() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return !job_ && !busy_; });
}

void PackingWorker::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return stopping_ || job_; });
    if (!job_) return;  // stopping, nothing left
    std::function<void()> job = std::move(job_);
    job_ = nullptr;
    busy_ = true;
    lock.unlock();
    try {
      job();
    } catch (...) {
      // As with std::async before, whose exceptions nobody fetched: that interval is lost
      // (out of memory, say), the daemon goes on.
    }
    job = nullptr;  // what it captured (the interval's profiles) is freed before the trim
    release_free_heap_pages();
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

void release_free_heap_pages() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace tally::daemon
