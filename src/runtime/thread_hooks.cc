#include "runtime/thread_hooks.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include <atomic>

#include "runtime/session.h"
#include "runtime/sprofil_sampler.h"

namespace tally::runtime {
namespace {

using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

constinit std::atomic<PthreadCreate> real_create{nullptr};
__thread int internal_depth __attribute__((tls_model("initial-exec"))) = 0;

PthreadCreate libc_pthread_create() {
  PthreadCreate create = real_create.load(std::memory_order_acquire);
  if (create == nullptr) {
    create = reinterpret_cast<PthreadCreate>(dlsym(RTLD_NEXT, "pthread_create"));
    real_create.store(create, std::memory_order_release);
  }
  return create;
}

struct ThreadStart {
  void* (*start)(void*);
  void* argument;
};

void* trampoline(void* pointer) {
  ThreadStart start = *static_cast<ThreadStart*>(pointer);
  free(pointer);
  register_thread();
  sprofil_thread_started();
  return start.start(start.argument);
}

}  // namespace

InternalThreads::InternalThreads() { ++internal_depth; }
InternalThreads::~InternalThreads() { --internal_depth; }

int create_unsampled_thread(pthread_t* thread, const pthread_attr_t* attributes,
                            void* (*start)(void*), void* argument) {
  PthreadCreate create = libc_pthread_create();
  return create == nullptr ? EAGAIN : create(thread, attributes, start, argument);
}

}  // namespace tally::runtime

extern "C" __attribute__((visibility("default"))) int pthread_create(
    pthread_t* thread, const pthread_attr_t* attributes, void* (*start)(void*), void* argument) {
  using namespace tally::runtime;
  PthreadCreate create = libc_pthread_create();
  if (create == nullptr) return EAGAIN;
  if (internal_depth > 0) return create(thread, attributes, start, argument);
  auto* record = static_cast<ThreadStart*>(malloc(sizeof(ThreadStart)));
  // Out of memory: the thread still starts, only unprofiled.
  if (record == nullptr) return create(thread, attributes, start, argument);
  record->start = start;
  record->argument = argument;
  int result = create(thread, attributes, trampoline, record);
  if (result != 0) free(record);
  return result;
}
