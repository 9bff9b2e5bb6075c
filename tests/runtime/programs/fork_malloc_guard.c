// fork_malloc_guard: a program whose forked child must not allocate once it leaves. In a
// multi-threaded program an allocator other than glibc's (ASan's, tcmalloc, jemalloc) can
// be inherited locked by the child, whose exit() then hangs in any malloc: libtally's
// closing line on stderr was one (dprintf allocates a stdio buffer). Here malloc, calloc and
// realloc forward to glibc's and end the process with status 97 when called after the
// child forbids them, which makes such a call visible without waiting for a hang.
// Prints "child exit N"; exits 0 when the child exited 0.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* old, size_t size);

static volatile int malloc_forbidden;
static volatile unsigned long sink;

static void forbidden(void) {
  static const char message[] = "fork_malloc_guard: malloc in the exiting child\n";
  write(2, message, sizeof message - 1);
  _exit(97);
}

void* malloc(size_t size) {
  if (malloc_forbidden) forbidden();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  if (malloc_forbidden) forbidden();
  return __libc_calloc(count, size);
}
void* realloc(void* old, size_t size) {
  if (malloc_forbidden) forbidden();
  return __libc_realloc(old, size);
}

static void __attribute__((noinline)) burn(long iterations) {
  for (long i = 0; i < iterations; ++i) sink = sink * 31 + (unsigned long)i;
}

int main(void) {
  burn(20000000);
  fflush(stdout);
  pid_t child = fork();
  if (child < 0) return 2;
  if (child == 0) {
    burn(20000000);
    malloc_forbidden = 1;
    exit(0);  // runs libtally's destructor: it writes the child's profile and its line
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child) return 2;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  printf("child exit %d\n", code);
  return code == 0 ? 0 : 1;
}
