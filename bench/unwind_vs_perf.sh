#!/usr/bin/env bash
# unwind_vs_perf.sh [SECONDS]: the cost of DWARF-unwinding one sample, tally against perf,
# on the same code: tests/collect's unwind_spin (a frameless leaf under libc's qsort, in
# a library without frame pointers) recorded by `perf record --call-graph dwarf` at 999 Hz
# for SECONDS (default 10). perf's cost is the CPU time of `perf script -F ip` (unwinds
# and prints each sample's chain) minus that of `perf script -F comm` (reads the same
# records, no unwinding), per sample; tally's is bench_unwind's BM_UnwindKernelSamples
# (the kernel's samples of the same leaf, 16 KiB stacks, unwound in a loop), CPU time per
# sample. TALLY_BUILD selects the build tree (default <repo>/build/release).
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"
seconds=${1:-10}
command -v perf >/dev/null || die "perf is not installed"
spin=$build/tests/collect/unwind_spin
bench=$build/bench/bench_unwind
[[ -x $spin && -x $bench ]] || die "build unwind_spin and bench_unwind in $build first"
make_work

perf record -q -e cpu-clock -F 999 --call-graph dwarf -o "$work/spin.data" -- "$spin" "$seconds" >/dev/null 2>&1 ||
  die "perf record failed (perf_event_paranoid?)"
samples=$(perf script -i "$work/spin.data" -F comm 2>/dev/null | wc -l)
frames=$(perf script -i "$work/spin.data" -F ip 2>/dev/null | grep -c .)
# CPU milliseconds of a command, the mean of 5 runs (perf stat's task-clock).
cpu_ms() { perf stat -r 5 -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '/task-clock/ { print $1 }'; }
base=$(cpu_ms perf script -i "$work/spin.data" -F comm)
with_chains=$(cpu_ms perf script -i "$work/spin.data" -F ip)
perf_us=$(awk -v a="$with_chains" -v b="$base" -v n="$samples" 'BEGIN { printf "%.2f", (a - b) * 1000 / n }')

tally_ns=$("$bench" --benchmark_filter=BM_UnwindKernelSamples --benchmark_format=csv 2>/dev/null |
  awk -F, '/BM_UnwindKernelSamples/ { print $4 }')
[[ -n $tally_ns ]] || die "bench_unwind printed no BM_UnwindKernelSamples row"
tally_us=$(awk -v t="$tally_ns" 'BEGIN { printf "%.2f", t / 1000 }')

echo "perf record --call-graph dwarf: $samples samples, $(awk -v f="$frames" -v n="$samples" 'BEGIN { printf "%.1f", f / n }') frames/sample"
echo "perf script unwinding: ${perf_us} us CPU/sample (${with_chains} ms with chains, ${base} ms without)"
echo "tally DwarfUnwinder:   ${tally_us} us CPU/sample"
awk -v p="$perf_us" -v t="$tally_us" 'BEGIN { printf "perf / tally: %.1fx\n", p / t }'
