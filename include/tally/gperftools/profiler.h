/* Drop-in for gperftools' <gperftools/profiler.h>: with -I<prefix>/include/tally a program
 * written for gperftools builds unchanged against tally's profiler (link with -ltally). */
#include "../profiler.h"
