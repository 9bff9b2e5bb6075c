#!/usr/bin/env bash
# unwind_vs_perf.sh [SECONDS]: the cost of DWARF-unwinding one sample, tally against perf,
# on the same code: tests/collect's unwind_spin (a frameless leaf under libc's qsort, in
# a library without frame pointers) recorded by `perf record --call-graph dwarf` at 999 Hz
# for SECONDS (default 10). perf's cost is the CPU time of `perf script -F ip` (unwinds
# and prints each sample's chain) minus that of `perf script -F comm` (reads the same
# records, no unwinding), per sample; tally's is bench_unwind's BM_UnwindKernelSamples
# (the kernel's samples of the same leaf, 16 KiB stacks, unwound in a loop), CPU time per
# sample. Both sides are measured RUNS times (default 5): perf's two commands alternated,
# each run's CPU time from perf stat's task-clock, and bench_unwind with as many
# repetitions; the medians are compared. TALLY_BUILD selects the build tree (default
# <repo>/build/release).
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"
seconds=${1:-10}
runs=$(runs_wanted 5)
command -v perf >/dev/null || die "perf is not installed"
spin=$build/tests/collect/unwind_spin
bench=$build/bench/bench_unwind
[[ -x $spin && -x $bench ]] || die "build unwind_spin and bench_unwind in $build first"
make_work

perf record -q -e cpu-clock -F 999 --call-graph dwarf -o "$work/spin.data" -- "$spin" "$seconds" >/dev/null 2>&1 ||
  die "perf record failed (perf_event_paranoid?)"
samples=$(perf script -i "$work/spin.data" -F comm 2>/dev/null | wc -l)
frames=$(perf script -i "$work/spin.data" -F ip 2>/dev/null | grep -c .)
# CPU milliseconds of one run of a command (perf stat's task-clock).
cpu_ms() { perf stat -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'; }
base_runs=() chain_runs=()
for ((i = 1; i <= runs; i++)); do
  base_runs+=("$(cpu_ms perf script -i "$work/spin.data" -F comm)")
  chain_runs+=("$(cpu_ms perf script -i "$work/spin.data" -F ip)")
done
base=$(median "${base_runs[@]}")
with_chains=$(median "${chain_runs[@]}")
perf_us=$(awk -v a="$with_chains" -v b="$base" -v n="$samples" 'BEGIN { printf "%.2f", (a - b) * 1000 / n }')

read -r tally_ns tally_frames < <("$bench" --benchmark_filter='^BM_UnwindKernelSamples$' \
  --benchmark_repetitions="$runs" --benchmark_report_aggregates_only=true --benchmark_format=csv 2>/dev/null |
  awk -F, '/BM_UnwindKernelSamples_median/ { print $4, $12 }')
[[ -n ${tally_ns:-} ]] || die "bench_unwind printed no BM_UnwindKernelSamples_median row"
tally_us=$(awk -v t="$tally_ns" 'BEGIN { printf "%.2f", t / 1000 }')
perf_frames=$(awk -v f="$frames" -v n="$samples" 'BEGIN { printf "%.1f", f / n }')

echo "perf record --call-graph dwarf: $samples samples, $perf_frames frames/sample"
echo "perf script unwinding: ${perf_us} us CPU/sample (medians of $runs: ${with_chains} ms with chains, ${base} ms without)"
echo "tally DwarfUnwinder:   ${tally_us} us CPU/sample at $(printf '%.1f' "$tally_frames") frames/sample (median of $runs repetitions)"
awk -v p="$perf_us" -v t="$tally_us" -v pf="$perf_frames" -v tf="$tally_frames" 'BEGIN {
  printf "perf / tally: %.1fx per sample, %.1fx per frame\n", p / t, (p / pf) / (t / tf) }'
machine_note
