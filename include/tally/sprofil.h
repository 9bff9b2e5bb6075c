/* tally/sprofil.h: sprofil(2) and profil(3), execution-time histograms of several text
 * regions at once, with the semantics of HP-UX's sprofil(2) (../shared/specs/sprofil.2.txt),
 * exported by libtally (-ltally).
 *
 * struct prof has glibc's <sys/profil.h> layout, so one array can be handed to glibc's
 * sprofil() and to tally_sprofil(). HP-UX code may spell pr_off as pr_offset (a void *).
 * C11 or C++ (the pr_offset spelling is an anonymous union).
 * To use both glibc's sprofil() and tally's in one file, include <sys/profil.h> first:
 * its struct prof is then the one used here (without the pr_offset spelling). Included
 * alone, this header stands in for <sys/profil.h> (and keeps it from being included later).
 *
 * Semantics in brief (README.md, "sprofil and profil", has them all):
 *  - pr_base[i] counts the clock ticks at which a thread's pc was at pr_off + x with
 *    x * pr_scale / (counter size * 65536) == i: a counter holds counter size * 65536 /
 *    pr_scale bytes of text. Counters stop at their maximum instead of wrapping.
 *  - An entry with pr_off 0 and pr_scale 2 is the overflow bin: its one counter counts
 *    every pc outside the other regions. It must be the last entry.
 *  - Overlapping regions: of the regions holding the pc, the one with the largest pr_off
 *    counts it; on a tie, the first in the array.
 *  - A call replaces the regions of the previous one; profp NULL or profcnt 0 disables.
 *    When a call returns, no tick is counted into the buffers it replaced any more.
 *  - *tvp receives the sampling interval: one kernel tick of CPU time.
 *  - Every thread's pc counts (a CPU-time timer per thread, sending SIGPROF; other SIGPROF
 *    goes on to the handler tally's replaced); increments are atomic.
 *  - Returns 0, or -1 with errno: E2BIG (profcnt negative or above TALLY_PROFIL_MAX),
 *    EINVAL (invalid flags or entry), EFAULT (pr_base NULL), ENOMEM, or the error of the
 *    timer or signal set-up.
 */
#ifndef TALLY_SPROFIL_H
#define TALLY_SPROFIL_H

#include <stddef.h>
#include <sys/time.h>

#ifndef _PROFIL_H
#define _PROFIL_H 1 /* glibc's include guard: this header stands in for <sys/profil.h> */

struct prof {
  void *pr_base;          /* the counters */
  size_t pr_size;         /* their size in bytes */
  union {                 /* the pc at the start of the region */
    size_t pr_off;        /* glibc's name */
    void *pr_offset;      /* HP-UX's name */
  };
  unsigned long pr_scale; /* pc scaling, fixed point with 16 fraction bits */
};

enum {
  PROF_USHORT = 0,     /* 16-bit counters (the default) */
  PROF_UINT = 1 << 0,  /* 32-bit counters */
  PROF_FAST = 1 << 1   /* accepted; no effect (as in glibc): the kernel tick is the rate */
};
#endif

/* Macros, not enumerators: they combine with glibc's enum values without C++20's warning
 * about operations between different enumeration types. */
#define PROF_UINT64 (1 << 2)        /* 64-bit counters (HP-UX) */
#define TALLY_PROFIL_MAX (1 << 20)  /* most entries tally_sprofil() takes (_SC_PROFIL_MAX) */

#ifdef __cplusplus
extern "C" {
#endif

#define TALLY_SPROFIL_EXPORT __attribute__((visibility("default")))

/* sprofil(2): profile the regions of profp[0..profcnt-1]; flags: PROF_USHORT, PROF_UINT or
 * PROF_UINT64, optionally with PROF_FAST. */
TALLY_SPROFIL_EXPORT int tally_sprofil(struct prof *profp, int profcnt, struct timeval *tvp,
                                       unsigned int flags);

/* profil(3): one region of 16-bit counters, no overflow bin. buf NULL, scale 0 or 1, or a
 * bufsiz below one counter disables profiling. */
TALLY_SPROFIL_EXPORT int tally_profil(unsigned short *buf, size_t bufsiz, size_t offset,
                                      unsigned int scale);

/* Writes the histogram of profp[0..profcnt-1] (the same array and flags given to
 * tally_sprofil) as a DCPI profile file (dcpiformat(4)) that `tally cat`, `tally top` and
 * `tally convert` read: each region is a list of chunks, each nonzero counter a count at
 * the first address of its bin that the region owns; the image holding the lowest region
 * names the file's path and build id, so reports show function names. The overflow bin's
 * count goes to a "sprofiloverflow" header line. The file is written to a temporary file
 * renamed into place. Returns 0, or -1 with errno (EINVAL as tally_sprofil, EOVERFLOW if
 * the regions span more than 4 GiB or a count exceeds 32 bits, or the error of the I/O). */
TALLY_SPROFIL_EXPORT int tally_sprofil_write_dcpi(const struct prof *profp, int profcnt,
                                                  unsigned int flags, const char *path);

#ifdef __cplusplus
}
#endif

#endif /* TALLY_SPROFIL_H */
