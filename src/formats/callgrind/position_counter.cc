#include "formats/callgrind/position_counter.h"

namespace tally::callgrind {

CountingThread::CountingThread(PositionCounter& counter) : counter_(counter) {
  block_.reserve(kBlock);
  thread_ = std::thread([this] { loop(); });
}

CountingThread::~CountingThread() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void CountingThread::hand_off() {
  std::vector<CountOp> next;
  {
    std::unique_lock lock(mutex_);
    // A bound on the blocks waiting, so that memory does not grow with the file.
    changed_.wait(lock, [&] { return pending_.size() < kPendingBlocks || error_; });
    if (error_) std::rethrow_exception(error_);
    pending_.push_back(std::move(block_));
    if (!spare_.empty()) {
      next = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  changed_.notify_all();
  next.clear();
  next.reserve(kBlock);
  block_ = std::move(next);
}

void CountingThread::finish() {
  if (!block_.empty()) hand_off();
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
  if (error_) std::rethrow_exception(error_);
}

void CountingThread::loop() {
  for (;;) {
    std::vector<CountOp> block;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || closing_ || !pending_.empty(); });
      if (stop_ || pending_.empty()) return;  // stopped, or closing with all counted
      block = std::move(pending_.front());
      pending_.erase(pending_.begin());
    }
    changed_.notify_all();
    try {
      for (const CountOp& op : block) counter_.count(op);
    } catch (...) {  // std::bad_alloc: finish() or the next hand_off rethrows it
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
      changed_.notify_all();
      return;
    }
    std::lock_guard lock(mutex_);
    spare_.push_back(std::move(block));
  }
}

}  // namespace tally::callgrind
