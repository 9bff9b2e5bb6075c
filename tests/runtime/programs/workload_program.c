/* An ordinary program that knows nothing of any profiler: the target of the LD_PRELOAD
 * tests. Each mode burns CPU in functions named after what the test checks.
 *
 * usage: workload_program MODE
 *   threads    main_work 0.2 s, and 3 threads each burning thread_work 0.2 s
 *   fork       parent_work 0.2 s; fork: the child burns child_work 0.3 s, prints how many
 *              threads it has ("child threads N") and calls exit(0); the parent waits,
 *              burns parent_work 0.2 s more and returns from main
 *   exec       runs itself twice as a child process in "child" mode, burns parent_work
 *   child      child_work 0.3 s
 *   exit       exit_work 0.3 s, then exit() from a second thread while main is blocked
 *   toggle     sends itself $CPUPROFILESIGNAL around two windows: untoggled_work,
 *              [first_window_work], between_work, [second_window_work], after_work
 *   sleep      sleep_work sleeps 0.4 s (nanosleep), busy_work burns 0.2 s
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "burn_cpu.h"


NOINLINE void main_work(double s) { BURN(s); }
NOINLINE void thread_work(double s) { BURN(s); }
NOINLINE void parent_work(double s) { BURN(s); }
NOINLINE void child_work(double s) { BURN(s); }
NOINLINE void exit_work(double s) { BURN(s); }
NOINLINE void untoggled_work(double s) { BURN(s); }
NOINLINE void first_window_work(double s) { BURN(s); }
NOINLINE void between_work(double s) { BURN(s); }
NOINLINE void second_window_work(double s) { BURN(s); }
NOINLINE void after_work(double s) { BURN(s); }
NOINLINE void busy_work(double s) { BURN(s); }

NOINLINE void sleep_work(double seconds) {
  struct timespec pause = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

/* "Threads:" of /proc/self/status. */
static int thread_count(void) {
  FILE* status = fopen("/proc/self/status", "r");
  char line[256];
  int threads = -1;
  while (status != NULL && fgets(line, sizeof line, status) != NULL) {
    if (strncmp(line, "Threads:", 8) == 0) threads = atoi(line + 8);
  }
  if (status != NULL) fclose(status);
  return threads;
}

static void* thread_main(void* unused) {
  (void)unused;
  thread_work(0.2);
  return NULL;
}

static void* exit_from_thread(void* unused) {
  (void)unused;
  exit_work(0.3);
  exit(0);
}

static void toggle(int signal) {
  kill(getpid(), signal);
  sleep_work(0.3); /* the profiler's writer thread acts on it */
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "threads") == 0) {
    pthread_t threads[3];
    for (int i = 0; i < 3; ++i) pthread_create(&threads[i], NULL, thread_main, NULL);
    main_work(0.2);
    for (int i = 0; i < 3; ++i) pthread_join(threads[i], NULL);
  } else if (strcmp(mode, "fork") == 0) {
    parent_work(0.2);
    pid_t child = fork();
    if (child == 0) {
      child_work(0.3);
      printf("child threads %d\n", thread_count());
      exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    parent_work(0.2);
    printf("child %d\n", (int)child);
  } else if (strcmp(mode, "exec") == 0) {
    for (int i = 0; i < 2; ++i) {
      pid_t child = fork();
      if (child == 0) {
        execl("/proc/self/exe", argv[0], "child", (char*)NULL);
        _exit(127);
      }
      int status;
      waitpid(child, &status, 0);
      printf("child %d\n", (int)child);
    }
    parent_work(0.2);
  } else if (strcmp(mode, "child") == 0) {
    child_work(0.3);
  } else if (strcmp(mode, "exit") == 0) {
    pthread_t thread;
    pthread_create(&thread, NULL, exit_from_thread, NULL);
    pthread_join(thread, NULL); /* never returns: the thread calls exit() */
  } else if (strcmp(mode, "toggle") == 0) {
    const char* text = getenv("CPUPROFILESIGNAL");
    int signal = text ? atoi(text) : 0;
    if (signal <= 0) return 2;
    untoggled_work(0.2);
    toggle(signal);
    first_window_work(0.3);
    toggle(signal);
    between_work(0.2);
    toggle(signal);
    second_window_work(0.3);
    toggle(signal);
    after_work(0.2);
  } else if (strcmp(mode, "sleep") == 0) {
    sleep_work(0.4);
    busy_work(0.2);
  } else {
    fprintf(stderr, "usage: %s threads|fork|exec|child|exit|toggle|sleep\n", argv[0]);
    return 2;
  }
  return 0;
}
