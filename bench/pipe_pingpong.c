// pipe_pingpong [ROUND_TRIPS]: two threads pass one byte back and forth over two pipes,
// ROUND_TRIPS times (default 100000): every round trip blocks each thread once, so the run
// is nearly all context switches (bench/off_cpu_overhead.sh).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int ping[2], pong[2];
static long round_trips = 100000;

static void* answer(void* arg) {
  (void)arg;
  char byte;
  for (long i = 0; i < round_trips; ++i) {
    if (read(ping[0], &byte, 1) != 1 || write(pong[1], &byte, 1) != 1) abort();
  }
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) round_trips = atol(argv[1]);
  if (pipe(ping) != 0 || pipe(pong) != 0) return 1;
  pthread_t thread;
  if (pthread_create(&thread, NULL, answer, NULL) != 0) return 1;
  char byte = 0;
  for (long i = 0; i < round_trips; ++i) {
    if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1) abort();
  }
  pthread_join(thread, NULL);
  printf("%ld round trips\n", round_trips);
  return 0;
}
