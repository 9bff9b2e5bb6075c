#include "runtime/stderr_print.h"

#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>

namespace tally::runtime {

void print_to_stderr(const char* format, ...) {
  char line[512];
  va_list arguments;
  va_start(arguments, format);
  const int length = vsnprintf(line, sizeof line, format, arguments);
  va_end(arguments);
  if (length <= 0) return;
  size_t left = static_cast<size_t>(length) < sizeof line ? static_cast<size_t>(length) : sizeof line - 1;
  const char* at = line;
  const int saved_errno = errno;  // callers print strerror(errno) and may test errno after
  while (left > 0) {
    const ssize_t n = write(2, at, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    at += n;
    left -= static_cast<size_t>(n);
  }
  errno = saved_errno;
}

}  // namespace tally::runtime
