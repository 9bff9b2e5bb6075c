// stress_program SECONDS LIBRARY: 16 threads hammering what can deadlock or crash an
// in-process profiler's signal handler, for SECONDS: 3 threads malloc/realloc/free, 4
// dlopen/call/dlclose LIBRARY (its text mapped and unmapped under the sampler, with its
// code on the stack during samples), 3 fork (the children burn a little and leave by
// exit() or _exit()), 3 fork+exec /bin/true, 3 throwing and catching exceptions through
// a few frames (libgcc's unwinder: dl_iterate_phdr / _dl_find_object and their locks,
// interrupted by the sampler).
// Every thread also burns CPU so that samples land everywhere. Exits 0 when every thread
// finished; prints what each kind did.
// (A fork never overlaps a dlopen/dlclose: glibc's child would inherit its atexit lock
// taken, and the child's exit() would wait forever, profiler or not.)
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

// libtallywork.so (the fixtures' shared library) writes its results here.
extern "C" __attribute__((visibility("default"))) volatile uint64_t tally_sink;
volatile uint64_t tally_sink;

namespace {

std::atomic<bool> stop{false};
std::shared_mutex fork_gate;  // shared: dlopen/dlclose; exclusive: fork
std::atomic<int> forks_waiting{0};  // dlopen threads step aside (readers would starve forks)
std::atomic<uint64_t> allocations{0}, loads{0}, forks{0}, execs{0}, throws{0}, failures{0};
volatile uint64_t sink;

__attribute__((noinline)) void burn(int iterations) {
  for (int i = 0; i < iterations; ++i) sink = sink * 31 + static_cast<uint64_t>(i);
}

__attribute__((noinline)) void allocate_loop(unsigned seed) {
  std::mt19937 random(seed);
  std::vector<void*> blocks(256, nullptr);
  while (!stop.load(std::memory_order_relaxed)) {
    size_t index = random() % blocks.size();
    size_t size = 1 + random() % 65536;
    if (random() % 4 == 0 && blocks[index] != nullptr) {
      void* grown = realloc(blocks[index], size);
      if (grown != nullptr) blocks[index] = grown;
    } else {
      free(blocks[index]);
      blocks[index] = malloc(size);
      if (blocks[index] != nullptr) memset(blocks[index], 1, size < 256 ? size : 256);
    }
    allocations.fetch_add(1, std::memory_order_relaxed);
    burn(200);
  }
  for (void* block : blocks) free(block);
}

__attribute__((noinline)) void throw_from(int depth) {
  burn(500);
  if (depth == 0) throw std::runtime_error("stress");
  throw_from(depth - 1);
  sink = sink + 1;  // not a tail call: every level is a frame to unwind
}

__attribute__((noinline)) void exception_loop(int depth) {
  while (!stop.load(std::memory_order_relaxed)) {
    try {
      throw_from(depth);
    } catch (const std::runtime_error&) {
      throws.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

// dlopen and dlclose (only they take glibc's atexit lock) never overlap a fork.
template <class Call>
auto outside_forks(Call call) {
  while (forks_waiting.load() > 0) std::this_thread::yield();
  std::shared_lock<std::shared_mutex> no_fork(fork_gate);
  return call();
}

__attribute__((noinline)) void dlopen_loop(const char* library) {
  while (!stop.load(std::memory_order_relaxed)) {
    void* handle = outside_forks([&] { return dlopen(library, RTLD_NOW | RTLD_LOCAL); });
    if (handle == nullptr) {
      failures.fetch_add(1);
      std::fprintf(stderr, "dlopen: %s\n", dlerror());
      return;
    }
    using Entry = void (*)(uint64_t);
    if (auto entry = reinterpret_cast<Entry>(dlsym(handle, "lib_entry"))) entry(20000);
    outside_forks([&] { return dlclose(handle); });
    loads.fetch_add(1, std::memory_order_relaxed);
  }
}

__attribute__((noinline)) void fork_loop(bool exec_child) {
  unsigned round = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    ++forks_waiting;
    std::unique_lock<std::shared_mutex> no_dlopen(fork_gate);
    --forks_waiting;
    pid_t child = fork();
    if (child == 0) {
      if (exec_child) {
        execl("/bin/true", "true", static_cast<char*>(nullptr));
        _exit(127);
      }
      void* block = malloc(4096);
      burn(100000);
      free(block);
      if (round % 2 == 0) exit(0);  // exit handlers and destructors run
      _exit(0);
    }
    no_dlopen.unlock();
    if (child < 0) {
      failures.fetch_add(1);
      return;
    }
    int status = 0;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      failures.fetch_add(1);
      std::fprintf(stderr, "child %d ended with status %#x\n", child, status);
    }
    (exec_child ? execs : forks).fetch_add(1, std::memory_order_relaxed);
    ++round;
    burn(20000);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SECONDS LIBRARY\n", argv[0]);
    return 2;
  }
  double seconds = std::atof(argv[1]);
  const char* library = argv[2];
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < 3; ++i) threads.emplace_back(allocate_loop, i + 1);
  for (int i = 0; i < 4; ++i) threads.emplace_back(dlopen_loop, library);
  for (int i = 0; i < 3; ++i) threads.emplace_back(fork_loop, false);
  for (int i = 0; i < 3; ++i) threads.emplace_back(fork_loop, true);
  for (int i = 0; i < 3; ++i) threads.emplace_back(exception_loop, 4 + 2 * i);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& thread : threads) thread.join();
  std::printf("allocations %llu loads %llu forks %llu execs %llu throws %llu failures %llu\n",
              static_cast<unsigned long long>(allocations.load()),
              static_cast<unsigned long long>(loads.load()),
              static_cast<unsigned long long>(forks.load()),
              static_cast<unsigned long long>(execs.load()),
              static_cast<unsigned long long>(throws.load()),
              static_cast<unsigned long long>(failures.load()));
  return failures.load() == 0 ? 0 : 1;
}
