#include "symbolize/debuginfod_workers.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <new>

#include "io/output.h"

namespace tally::symbolize {

namespace {

using Clock = std::chrono::steady_clock;

// A worker that has sent nothing for the timeout and this long is stuck outside the
// library's waits (its callback comes about once a second): it is killed.
constexpr auto kWatchdogGrace = std::chrono::seconds(5);
// Progress messages at most this often per worker.
constexpr auto kProgressEvery = std::chrono::milliseconds(100);

// In memory the workers share with the parent (MAP_SHARED): the next request to take, and
// whether the server has failed.
struct Shared {
  std::atomic<size_t> next{0};
  std::atomic<bool> give_up{false};
};
static_assert(std::atomic<size_t>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "shared between processes, the atomics must not hide a lock");

enum class Kind : uint8_t { started, progress, result };

// A worker's messages on its pipe: the size of the rest (uint32), the kind, the request,
// then what the kind carries.
class Message {
 public:
  Message(Kind kind, uint32_t request) {
    put(uint32_t{0});
    put(kind);
    put(request);
  }
  template <typename T>
  Message& put(const T& value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof value);
    return *this;
  }
  Message& put_text(const std::string& text) {
    put(static_cast<uint32_t>(text.size()));
    bytes_ += text;
    return *this;
  }
  const std::string& bytes() {
    const auto size = static_cast<uint32_t>(bytes_.size() - sizeof(uint32_t));
    std::memcpy(bytes_.data(), &size, sizeof size);
    return bytes_;
  }

 private:
  std::string bytes_;
};

// Reads a message's fields in order; false once past its end.
class Fields {
 public:
  explicit Fields(std::string_view bytes) : rest_(bytes) {}
  template <typename T>
  bool get(T& value) {
    if (rest_.size() < sizeof value) return false;
    std::memcpy(&value, rest_.data(), sizeof value);
    rest_.remove_prefix(sizeof value);
    return true;
  }
  bool get_text(std::string& text) {
    uint32_t size = 0;
    if (!get(size) || rest_.size() < size) return false;
    text.assign(rest_.substr(0, size));
    rest_.remove_prefix(size);
    return true;
  }

 private:
  std::string_view rest_;
};

// Where a queue runner reports: a worker's pipe, or the parent's own results.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual bool started(size_t request) = 0;
  virtual bool progress(size_t request, uint64_t received, uint64_t size) = 0;
  virtual bool result(size_t request, const DebuginfodFetch& fetch) = 0;
};

// Takes requests from the shared queue until it is empty or the server has failed.
void run_queue(Shared& shared, const std::vector<DebuginfodRequest>& requests,
               double timeout_seconds, Sink& sink) {
  DebuginfodClient client;
  for (;;) {
    const size_t i = shared.next.fetch_add(1);
    if (i >= requests.size() || shared.give_up.load()) return;
    if (!sink.started(i)) return;
    Clock::time_point last_sent = Clock::now();
    const DebuginfodClient::OnProgress on_progress = [&](uint64_t received, uint64_t size) {
      const auto now = Clock::now();
      if (now - last_sent < kProgressEvery) return;
      last_sent = now;
      if (!sink.progress(i, received, size)) shared.give_up.store(true);
    };
    const DebuginfodFetch fetch = client.fetch(requests[i].build_id, requests[i].file,
                                               timeout_seconds, shared.give_up, on_progress);
    if (server_failed(fetch)) shared.give_up.store(true);
    if (!sink.result(i, fetch)) return;
  }
}

// A worker process's side: each event a message on the pipe (false when the parent is
// gone).
class PipeSink : public Sink {
 public:
  explicit PipeSink(int fd) : fd_(fd) {}
  bool started(size_t request) override {
    return io::write_all(fd_, Message(Kind::started, static_cast<uint32_t>(request)).bytes());
  }
  bool progress(size_t request, uint64_t received, uint64_t size) override {
    return io::write_all(fd_, Message(Kind::progress, static_cast<uint32_t>(request))
                              .put(received)
                              .put(size)
                              .bytes());
  }
  bool result(size_t request, const DebuginfodFetch& f) override {
    const uint8_t flags = (f.timed_out ? 1 : 0) | (f.cancelled ? 2 : 0) | (f.downloaded ? 4 : 0);
    return io::write_all(fd_, Message(Kind::result, static_cast<uint32_t>(request))
                              .put(static_cast<int32_t>(f.error))
                              .put(flags)
                              .put(f.bytes)
                              .put_text(f.path)
                              .put_text(f.url)
                              .bytes());
  }

 private:
  int fd_;
};

// Without worker processes (fork failed): the requests one by one, here.
class LocalSink : public Sink {
 public:
  LocalSink(std::vector<std::optional<DebuginfodFetch>>& results, const DebuginfodEvents& events)
      : results_(results), events_(events) {}
  bool started(size_t request) override {
    events_.started(0, request);
    return true;
  }
  bool progress(size_t, uint64_t received, uint64_t size) override {
    events_.progress(0, received, size);
    return true;
  }
  bool result(size_t request, const DebuginfodFetch& fetch) override {
    results_[request] = fetch;
    events_.finished(0);
    return true;
  }

 private:
  std::vector<std::optional<DebuginfodFetch>>& results_;
  const DebuginfodEvents& events_;
};

struct Worker {
  pid_t pid = -1;
  int fd = -1;  // the read end of its pipe; -1 once it has closed
  std::string buffer;
  std::optional<size_t> busy;  // the request it is on
  Clock::time_point last_heard;
};

// Handles the complete messages at the front of the worker's buffer.
void take_messages(unsigned index, Worker& worker, Shared& shared,
                   std::vector<std::optional<DebuginfodFetch>>& results,
                   const DebuginfodEvents& events) {
  for (;;) {
    uint32_t size = 0;
    if (worker.buffer.size() < sizeof size) return;
    std::memcpy(&size, worker.buffer.data(), sizeof size);
    if (worker.buffer.size() < sizeof size + size) return;
    Fields fields(std::string_view(worker.buffer).substr(sizeof size, size));
    Kind kind{};
    uint32_t request = 0;
    if (fields.get(kind) && fields.get(request) && request < results.size()) {
      if (kind == Kind::started) {
        worker.busy = request;
        events.started(index, request);
      } else if (uint64_t received = 0, total = 0;
                 kind == Kind::progress && fields.get(received) && fields.get(total)) {
        events.progress(index, received, total);
      } else if (kind == Kind::result) {
        DebuginfodFetch f;
        int32_t error = 0;
        uint8_t flags = 0;
        if (fields.get(error) && fields.get(flags) && fields.get(f.bytes) &&
            fields.get_text(f.path) && fields.get_text(f.url)) {
          f.error = error;
          f.timed_out = flags & 1;
          f.cancelled = flags & 2;
          f.downloaded = flags & 4;
          if (server_failed(f)) shared.give_up.store(true);
          results[request] = std::move(f);
        }
        worker.busy.reset();
        events.finished(index);
      }
    }
    worker.buffer.erase(0, sizeof size + size);
  }
}

}  // namespace

bool server_failed(const DebuginfodFetch& f) {
  if (f.timed_out) return true;
  switch (f.error) {
    case ECONNREFUSED: case EHOSTUNREACH: case ENETUNREACH: case ECONNRESET: case ETIME:
      return true;
    default:
      return false;
  }
}

std::vector<std::optional<DebuginfodFetch>> fetch_in_workers(
    const std::vector<DebuginfodRequest>& requests, unsigned workers, double timeout_seconds,
    const DebuginfodEvents& events) {
  std::vector<std::optional<DebuginfodFetch>> results(requests.size());
  void* memory = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return results;
  Shared& shared = *new (memory) Shared;

  std::vector<Worker> pool;
  for (unsigned w = 0; w < workers; ++w) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) break;
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ends[0]);
      for (const Worker& other : pool) ::close(other.fd);
      PipeSink sink(ends[1]);
      run_queue(shared, requests, timeout_seconds, sink);
      ::_exit(0);  // no atexit handlers, no stdio buffers of the parent's flushed twice
    }
    ::close(ends[1]);
    if (pid < 0) {
      ::close(ends[0]);
      break;
    }
    pool.push_back({pid, ends[0], {}, {}, Clock::now()});
  }
  if (pool.empty()) {
    LocalSink sink(results, events);
    run_queue(shared, requests, timeout_seconds, sink);
  }

  const auto watchdog = std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(timeout_seconds)) + kWatchdogGrace;
  for (;;) {
    std::vector<pollfd> polled;
    std::vector<unsigned> polled_worker;
    for (unsigned w = 0; w < pool.size(); ++w) {
      if (pool[w].fd < 0) continue;
      polled.push_back({pool[w].fd, POLLIN, 0});
      polled_worker.push_back(w);
    }
    if (polled.empty()) break;
    if (::poll(polled.data(), polled.size(), 250) < 0 && errno != EINTR) break;
    const auto now = Clock::now();
    for (size_t k = 0; k < polled.size(); ++k) {
      Worker& worker = pool[polled_worker[k]];
      if (polled[k].revents != 0) {
        char chunk[16384];
        const ssize_t n = ::read(worker.fd, chunk, sizeof chunk);
        if (n > 0) {
          worker.buffer.append(chunk, static_cast<size_t>(n));
          worker.last_heard = now;
          take_messages(polled_worker[k], worker, shared, results, events);
        } else if (n == 0 || errno != EINTR) {
          ::close(worker.fd);
          worker.fd = -1;
          if (worker.busy) events.finished(polled_worker[k]);
          continue;
        }
      }
      if (worker.busy && timeout_seconds > 0 && now - worker.last_heard > watchdog) {
        ::kill(worker.pid, SIGKILL);
        DebuginfodFetch stuck;
        stuck.error = ETIME;
        stuck.timed_out = true;
        results[*worker.busy] = stuck;
        worker.busy.reset();
        shared.give_up.store(true);
        events.finished(polled_worker[k]);
      }
    }
  }
  for (const Worker& worker : pool) {
    int status = 0;
    while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  shared.~Shared();
  ::munmap(memory, sizeof(Shared));
  return results;
}

}  // namespace tally::symbolize
