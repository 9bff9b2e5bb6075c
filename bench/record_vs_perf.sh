#!/usr/bin/env bash
# record_vs_perf.sh [ROUNDS] [RUNS]: the cost of recording. Times a CPU-bound workload
# (the fixtures' shlib_main-nofp -r ROUNDS, default 150: an executable and a library
# without frame pointers, ~1.5 s of CPU) bare, under `tally record`, and under
# `perf record` at the same rate (cpu-clock, 999 Hz) and call-graph mode: -g fp, and
# -g dwarf with the same 16 KiB stack copy. perf record only stores the stack copies; its
# DWARF unwinding happens when the data is read, so `perf record + perf report` (the
# profile a user reads) is timed too. tally's run includes writing its symbolized pprof.
# Wall time and CPU time (recorder + workload, user + system) are the medians of RUNS runs
# (default 5; every variant once per round, so that a change of load hits them all), shown
# as ratios to the bare workload. TALLY_BUILD selects the build tree (default
# <repo>/build/release).
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"
rounds=${1:-150}
runs=$(RUNS=${2:-${RUNS:-}} runs_wanted 5)
workload=${TALLY_SHARED_DIR:-$repo_root/../shared}/fixtures/bin/shlib_main-nofp
require_tally
[[ -x $workload ]] || die "no workload at $workload"
command -v perf >/dev/null || die "perf is not installed"
make_work

# perf record and then perf report: what it takes to read perf's profile.
cat >"$work/perf_then_report" <<EOF
#!/bin/sh
perf record -q -o "$work/perf.data" "\$@" >/dev/null 2>&1 &&
  perf report -i "$work/perf.data" --stdio --no-children --sort sym >/dev/null 2>&1
EOF
chmod +x "$work/perf_then_report"

variants=(bare)
for mode in fp dwarf; do
  variants+=("tally record -g $mode" "perf record -g $mode" "perf record + report -g $mode")
done
for ((i = 1; i <= runs; i++)); do
  measure_run bare "$work/out" "$workload" -r "$rounds"
  for mode in fp dwarf; do
    if [[ $mode == fp ]]; then perf_graph=(-g); tally_graph=(-g fp)
    else perf_graph=(--call-graph "dwarf,16384"); tally_graph=(-g "dwarf,16384"); fi
    measure_run "tally record -g $mode" "$work/out" "$tally" record -e cpu-clock -F 999 \
      "${tally_graph[@]}" -o "$work/tally.pb.gz" -- "$workload" -r "$rounds"
    measure_run "perf record -g $mode" "$work/out" perf record -q -e cpu-clock -F 999 \
      "${perf_graph[@]}" -o "$work/perf.data" -- "$workload" -r "$rounds"
    measure_run "perf record + report -g $mode" "$work/out" "$work/perf_then_report" \
      -e cpu-clock -F 999 "${perf_graph[@]}" -- "$workload" -r "$rounds"
  done
done

bare_wall=$(run_figure bare wall) bare_cpu=$(run_figure bare cpu)
echo "medians of $runs runs; ratios to the bare workload"
for name in "${variants[@]}"; do
  awk -v n="$name" -v w="$(run_figure "$name" wall)" -v c="$(run_figure "$name" cpu)" \
      -v bw="$bare_wall" -v bc="$bare_cpu" 'BEGIN {
    printf "%-36s wall %6.2f s  cpu %6.2f s   x%.3f wall  x%.3f cpu\n", n, w, c, w / bw, c / bc }'
done
machine_note
