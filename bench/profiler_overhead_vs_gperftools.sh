#!/usr/bin/env bash
# profiler_overhead_vs_gperftools.sh [REPEATS]
#
# The cost of profiling a CPU-bound program in-process: the split workload
# (../shared/fixtures/bin/split, 1 and 8 threads) run bare, under LD_PRELOAD=libtally.so and
# under gperftools' libprofiler.so at the same CPUPROFILE_FREQUENCY (100, 1000, 4000 Hz).
# Prints the wall and CPU time of each (the median of REPEATS runs, default 5; each round
# runs every variant once, so that a change of load hits them all), the ratios to the bare
# run, the samples each profiler took (its "PROFILE: interrupts" line, median) and the CPU
# time each sample cost. libprofiler's signals come at most once per kernel
# tick (250/s here), so above that it takes fewer samples: compare the cost per sample.
# libtally runs twice: with its default CFI walk (CPUPROFILE_UNWIND=cfi) and with the
# frame-pointer walk (fp), whose CPU is the last column.
#
# Environment: TALLY_BUILD (default <repo>/build/release), LIBPROFILER (default
# /lib/x86_64-linux-gnu/libprofiler.so), SPLIT (default ../shared/fixtures/bin/split).
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

libtally=$build/src/runtime/libtally.so
libprofiler=${LIBPROFILER:-/lib/x86_64-linux-gnu/libprofiler.so}
split=${SPLIT:-$repo_root/../shared/fixtures/bin/split}
repeats=$(RUNS=${1:-${RUNS:-}} runs_wanted 5)

[[ -f $libtally ]] || die "no libtally.so at $libtally (build tally_runtime, or set TALLY_BUILD)"
[[ -f $libprofiler ]] || die "no libprofiler.so at $libprofiler (set LIBPROFILER)"
[[ -x $split ]] || die "no split workload at $split (set SPLIT)"

make_work

declare -A samples=()
# run_one NAME LIB HZ THREADS [UNWIND]: one run, recorded as NAME; LIB "" runs bare.
run_one() {
  local name=$1 lib=$2 hz=$3 threads=$4 unwind=${5:-cfi} environment=()
  if [[ -n $lib ]]; then
    environment=(env "LD_PRELOAD=$lib" "CPUPROFILE=$work/run.prof" "CPUPROFILE_FREQUENCY=$hz"
                 "CPUPROFILE_UNWIND=$unwind")
  fi
  measure_run "$name" "$work/out" "${environment[@]}" "$split" -r 100 -t "$threads"
  local n
  n=$(sed -n 's/^PROFILE: interrupts\/evictions\/bytes = \([0-9]*\)\/.*/\1/p' "$work/stderr" | tail -n 1)
  samples[$name]+="${n:-0} "
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# CPU microseconds per sample over the bare run.
per_sample() { awk -v p="$1" -v b="$2" -v n="$3" 'BEGIN { if (n > 0) printf "%.1f", (p - b) * 1e6 / n; else print "-" }'; }
fmt() { awk -v v="$1" 'BEGIN { printf "%.2f", v }'; }

echo "medians of $repeats runs"
printf "%-5s %-7s | %-13s | %-30s | %-30s | %s | %s\n" "Hz" "threads" "bare wall/cpu" \
  "libtally wall/cpu (x bare) n us/n" "libprofiler wall/cpu (x bare) n us/n" "cpu tally/profiler" \
  "libtally fp cpu (x bare)"
for threads in 1 8; do
  for ((i = 0; i < repeats; ++i)); do
    run_one "bare $threads" "" 0 "$threads"
    for hz in 100 1000 4000; do
      run_one "libtally $hz $threads" "$libtally" "$hz" "$threads"
      run_one "libtally-fp $hz $threads" "$libtally" "$hz" "$threads" fp
      run_one "libprofiler $hz $threads" "$libprofiler" "$hz" "$threads"
    done
  done
  bare_wall=$(run_figure "bare $threads" wall) bare_cpu=$(run_figure "bare $threads" cpu)
  for hz in 100 1000 4000; do
    t="libtally $hz $threads" g="libprofiler $hz $threads"
    t_wall=$(run_figure "$t" wall) t_cpu=$(run_figure "$t" cpu)
    g_wall=$(run_figure "$g" wall) g_cpu=$(run_figure "$g" cpu)
    f_cpu=$(run_figure "libtally-fp $hz $threads" cpu)
    read -r -a t_samples <<<"${samples[$t]}"
    read -r -a g_samples <<<"${samples[$g]}"
    t_n=$(median "${t_samples[@]}") g_n=$(median "${g_samples[@]}")
    printf "%-5s %-7s | %5s / %5s | %5s/%5s (%s/%s) %6s %5s | %5s/%5s (%s/%s) %6s %5s | %s | %5s (%s)\n" \
      "$hz" "$threads" "$(fmt "$bare_wall")" "$(fmt "$bare_cpu")" \
      "$(fmt "$t_wall")" "$(fmt "$t_cpu")" "$(ratio "$t_wall" "$bare_wall")" "$(ratio "$t_cpu" "$bare_cpu")" "$t_n" \
      "$(per_sample "$t_cpu" "$bare_cpu" "$t_n")" \
      "$(fmt "$g_wall")" "$(fmt "$g_cpu")" "$(ratio "$g_wall" "$bare_wall")" "$(ratio "$g_cpu" "$bare_cpu")" "$g_n" \
      "$(per_sample "$g_cpu" "$bare_cpu" "$g_n")" \
      "$(ratio "$t_cpu" "$g_cpu")" "$(fmt "$f_cpu")" "$(ratio "$f_cpu" "$bare_cpu")"
  done
done
machine_note
