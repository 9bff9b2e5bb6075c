#include "daemon/pusher.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "daemon/backoff.h"
#include "io/output.h"

namespace tally::daemon {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSuffix = ".push";

std::string read_whole(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  ok = bool(in);
  return text.str();
}

}  // namespace

uint64_t spooled_samples(const std::string& name) {
  const std::string base = fs::path(name).filename().string();
  const auto dash = base.find('-');
  if (dash == std::string::npos) return 0;
  return std::strtoull(base.c_str() + dash + 1, nullptr, 10);
}

Pusher::Pusher(PushTransport transport, PusherOptions options, Log log)
    : transport_(std::move(transport)), options_(std::move(options)), log_(std::move(log)) {}

core::Expected<std::unique_ptr<Pusher>> Pusher::start(PushTransport transport,
                                                      PusherOptions options, Log log) {
  std::error_code ec;
  fs::create_directories(options.spool_dir, ec);
  if (ec) return core::Error{options.spool_dir + ": cannot create the spool directory: " + ec.message(),
                             core::ErrorKind::io};
  std::unique_ptr<Pusher> pusher(new Pusher(std::move(transport), std::move(options), std::move(log)));
  // What a killed daemon left: its temporaries are incomplete, its .push files are whole.
  for (const auto& entry : fs::directory_iterator(pusher->options_.spool_dir, ec))
    if (entry.path().filename().string().starts_with(".")) fs::remove(entry.path(), ec);
  const std::vector<std::string> left = pusher->spooled();
  for (const std::string& path : left) {
    pusher->stats_.spooled_files++;
    pusher->stats_.spooled_bytes += fs::file_size(path, ec);
    pusher->next_sequence_ = std::max<uint64_t>(
        pusher->next_sequence_, std::strtoull(fs::path(path).filename().c_str(), nullptr, 10) + 1);
  }
  if (!left.empty())
    pusher->log_(fmt::format("push: {} request(s) left in the spool {} will be sent first",
                             left.size(), pusher->options_.spool_dir));
  pusher->worker_ = std::thread([p = pusher.get()] { p->run(); });
  return pusher;
}

Pusher::~Pusher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::vector<std::string> Pusher::spooled() const {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options_.spool_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(".") && name.ends_with(kSuffix)) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

core::Status Pusher::enqueue(const std::string& message, uint64_t samples) {
  std::unique_lock lock(mutex_);
  const std::string path = fmt::format("{}/{:020}-{}{}", options_.spool_dir, next_sequence_++,
                                       samples, kSuffix);
  lock.unlock();
  // io's atomic writer: a temporary file beside it, fsynced, renamed, the directory synced.
  if (auto st = io::write_file_atomically(path, message); !st) {
    lock.lock();
    stats_.dropped_files++;
    stats_.dropped_samples += samples;
    return st;
  }
  lock.lock();
  stats_.spooled_files++;
  stats_.spooled_bytes += message.size();
  enforce_bound();
  lock.unlock();
  wake_.notify_all();
  return core::ok();
}

void Pusher::enforce_bound() {
  if (stats_.spooled_bytes <= options_.spool_max_bytes) return;
  std::vector<std::string> files = spooled();
  uint64_t files_dropped = 0, samples_dropped = 0;
  std::error_code ec;
  // Oldest first; the newest file always stays (a bound smaller than one interval still
  // lets the daemon push).
  // The file being sent stays too: dropping it would count its samples as dropped when the
  // store is taking them.
  for (size_t i = 0; i + 1 < files.size() && stats_.spooled_bytes > options_.spool_max_bytes; ++i) {
    if (files[i] == in_flight_) continue;
    const uint64_t size = fs::file_size(files[i], ec);
    if (ec || !fs::remove(files[i], ec)) continue;
    stats_.spooled_bytes -= std::min(stats_.spooled_bytes, size);
    stats_.spooled_files--;
    ++files_dropped;
    samples_dropped += spooled_samples(files[i]);
  }
  if (files_dropped == 0) return;
  stats_.dropped_files += files_dropped;
  stats_.dropped_samples += samples_dropped;
  log_(fmt::format("push: the spool is full (over {} bytes): dropped the oldest {} request(s), "
                   "{} samples",
                   options_.spool_max_bytes, files_dropped, samples_dropped));
}

void Pusher::run() {
  Backoff backoff(options_.retry_base_seconds, options_.retry_max_seconds);
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    if (stats_.spooled_files == 0) {
      wake_.wait(lock, [&] { return stopping_ || stats_.spooled_files > 0; });
      continue;
    }
    const std::vector<std::string> files = spooled();
    if (files.empty()) {
      stats_.spooled_files = 0;
      stats_.spooled_bytes = 0;
      continue;
    }
    const std::string path = files.front();
    in_flight_ = path;
    lock.unlock();
    bool ok = false;
    const std::string message = read_whole(path, ok);
    PushOutcome outcome;
    if (ok) outcome = transport_.post(message);
    lock.lock();
    in_flight_.clear();
    std::error_code ec;
    if (!ok) {  // it cannot be read: nothing to retry
      if (fs::exists(path, ec)) {
        log_("push: cannot read " + path + "; dropped");
        fs::remove(path, ec);
        stats_.spooled_files--;
        stats_.spooled_bytes -= std::min<uint64_t>(stats_.spooled_bytes, message.size());
      }
      continue;
    }
    if (outcome.kind == PushOutcome::retry) {
      stats_.retries++;
      const double wait = backoff.next();
      if (backoff.failures() <= 1 || backoff.failures() % 5 == 0)
        log_(fmt::format("push failed ({}); {} request(s) spooled, retrying in {:.1f} s",
                         outcome.message, stats_.spooled_files, wait));
      wake_.wait_for(lock, std::chrono::duration<double>(wait), [&] { return stopping_; });
      continue;
    }
    backoff.reset();
    if (outcome.kind == PushOutcome::sent) {
      stats_.pushes++;
      stats_.bytes += message.size();
    } else {
      stats_.refused++;
      log_(fmt::format("push refused, {} samples dropped: {}", spooled_samples(path), outcome.message));
    }
    if (fs::remove(path, ec)) {
      stats_.spooled_files--;
      stats_.spooled_bytes -= std::min<uint64_t>(stats_.spooled_bytes, message.size());
    }
    wake_.notify_all();  // drain() waits for this
  }
}

bool Pusher::drain(double seconds) {
  std::unique_lock lock(mutex_);
  return wake_.wait_for(lock, std::chrono::duration<double>(seconds),
                        [&] { return stats_.spooled_files == 0; });
}

PushStats Pusher::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace tally::daemon
