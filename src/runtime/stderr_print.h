// Messages of libtally on standard error without malloc: dprintf allocates a stdio buffer,
// and in the child that a multi-threaded program forks, an allocator other than glibc's
// (ASan's, tcmalloc, jemalloc) may still be locked by a parent thread that was inside it
// at the fork, so the child's exit() would hang in libtally's closing line.
#pragma once

namespace tally::runtime {

// printf-style, formatted into a stack buffer (a longer message is cut at 512 bytes) and
// written with one write(2).
void print_to_stderr(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace tally::runtime
