#!/usr/bin/env bash
# profiler_overhead_vs_gperftools.sh [REPEATS]
#
# The cost of profiling a CPU-bound program in-process: the split workload
# (../shared/fixtures/bin/split, 1 and 8 threads) run bare, under LD_PRELOAD=libtally.so and
# under gperftools' libprofiler.so at the same CPUPROFILE_FREQUENCY (100, 1000, 4000 Hz).
# Prints the wall and CPU time of each (the minimum of REPEATS runs, default 3), the
# ratios to the bare run, the samples each profiler took (its "PROFILE: interrupts" line)
# and the CPU time each sample cost. libprofiler's signals come at most once per kernel
# tick (250/s here), so above that it takes fewer samples: compare the cost per sample.
#
# Environment: TALLY_BUILD (default <repo>/build/release), LIBPROFILER (default
# /lib/x86_64-linux-gnu/libprofiler.so), SPLIT (default ../shared/fixtures/bin/split).
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

libtally=$build/src/runtime/libtally.so
libprofiler=${LIBPROFILER:-/lib/x86_64-linux-gnu/libprofiler.so}
split=${SPLIT:-$repo_root/../shared/fixtures/bin/split}
repeats=${1:-3}

[[ -f $libtally ]] || die "no libtally.so at $libtally (build tally_runtime, or set TALLY_BUILD)"
[[ -f $libprofiler ]] || die "no libprofiler.so at $libprofiler (set LIBPROFILER)"
[[ -x $split ]] || die "no split workload at $split (set SPLIT)"

make_work

# best LIB HZ THREADS: runs REPEATS times; sets BEST_WALL_S, BEST_CPU_S (minima) and
# SAMPLES (of the run with the least CPU). LIB "" runs bare.
best() {
  local lib=$1 hz=$2 threads=$3
  BEST_WALL_S="" BEST_CPU_S="" SAMPLES=0
  for ((i = 0; i < repeats; ++i)); do
    local environment=()
    if [[ -n $lib ]]; then
      environment=(env "LD_PRELOAD=$lib" "CPUPROFILE=$work/run.prof" "CPUPROFILE_FREQUENCY=$hz")
    fi
    measure "$work/out" "${environment[@]}" "$split" -r 100 -t "$threads"
    local wall_s
    wall_s=$(awk -v n="$WALL_NS" 'BEGIN { printf "%.3f", n / 1e9 }')
    if [[ -z $BEST_WALL_S ]] || awk -v a="$wall_s" -v b="$BEST_WALL_S" 'BEGIN { exit !(a < b) }'; then
      BEST_WALL_S=$wall_s
    fi
    if [[ -z $BEST_CPU_S ]] || awk -v a="$CPU_S" -v b="$BEST_CPU_S" 'BEGIN { exit !(a < b) }'; then
      BEST_CPU_S=$CPU_S
      SAMPLES=$(sed -n 's/^PROFILE: interrupts\/evictions\/bytes = \([0-9]*\)\/.*/\1/p' "$work/stderr" | tail -n 1)
      SAMPLES=${SAMPLES:-0}
    fi
  done
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# CPU microseconds per sample over the bare run.
per_sample() { awk -v p="$1" -v b="$2" -v n="$3" 'BEGIN { if (n > 0) printf "%.1f", (p - b) * 1e6 / n; else print "-" }'; }

printf "%-5s %-7s | %-13s | %-30s | %-30s | %s\n" "Hz" "threads" "bare wall/cpu" \
  "libtally wall/cpu (x bare) n us/n" "libprofiler wall/cpu (x bare) n us/n" "cpu tally/profiler"
for threads in 1 8; do
  best "" 0 "$threads"
  bare_wall=$BEST_WALL_S bare_cpu=$BEST_CPU_S
  for hz in 100 1000 4000; do
    best "$libtally" "$hz" "$threads"
    t_wall=$BEST_WALL_S t_cpu=$BEST_CPU_S t_n=$SAMPLES
    best "$libprofiler" "$hz" "$threads"
    g_wall=$BEST_WALL_S g_cpu=$BEST_CPU_S g_n=$SAMPLES
    printf "%-5s %-7s | %5.2f / %5.2f | %5.2f/%5.2f (%s/%s) %6s %5s | %5.2f/%5.2f (%s/%s) %6s %5s | %s\n" \
      "$hz" "$threads" "$bare_wall" "$bare_cpu" \
      "$t_wall" "$t_cpu" "$(ratio "$t_wall" "$bare_wall")" "$(ratio "$t_cpu" "$bare_cpu")" "$t_n" \
      "$(per_sample "$t_cpu" "$bare_cpu" "$t_n")" \
      "$g_wall" "$g_cpu" "$(ratio "$g_wall" "$bare_wall")" "$(ratio "$g_cpu" "$bare_cpu")" "$g_n" \
      "$(per_sample "$g_cpu" "$bare_cpu" "$g_n")" \
      "$(ratio "$t_cpu" "$g_cpu")"
  done
done
