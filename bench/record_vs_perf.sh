#!/usr/bin/env bash
# record_vs_perf.sh [ROUNDS] [RUNS]: the cost of recording. Times a CPU-bound workload
# (the fixtures' shlib_main-nofp -r ROUNDS, default 150: an executable and a library
# without frame pointers, ~1.5 s of CPU) bare, under `tally record`, and under
# `perf record` at the same rate (cpu-clock, 999 Hz) and call-graph mode: -g fp, and
# -g dwarf with the same 16 KiB stack copy. perf record only stores the stack copies; its
# DWARF unwinding happens when the data is read, so `perf record + perf report` (the
# profile a user reads) is timed too. tally's run includes writing its symbolized pprof.
# Wall time and CPU time (recorder + workload, user + system) are the medians of RUNS runs
# (default 5), shown as ratios to the bare workload. TALLY_BUILD selects the build tree
# (default <repo>/build/release).
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"
rounds=${1:-150}
runs=${2:-5}
workload=${TALLY_SHARED_DIR:-$repo_root/../shared}/fixtures/bin/shlib_main-nofp
require_tally
[[ -x $workload ]] || die "no workload at $workload"
command -v perf >/dev/null || die "perf is not installed"
make_work

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# time_runs NAME CMD...: RUNS runs; sets WALL (s) and CPU (s), the medians.
time_runs() {
  local name=$1 walls=() cpus=()
  shift
  for ((i = 0; i < runs; ++i)); do
    measure "$work/out" "$@"
    walls+=("$(awk -v n="$WALL_NS" 'BEGIN { print n / 1e9 }')")
    cpus+=("$CPU_S")
  done
  WALL=$(printf '%s\n' "${walls[@]}" | median)
  CPU=$(printf '%s\n' "${cpus[@]}" | median)
  printf '%-36s wall %6.2f s  cpu %6.2f s' "$name" "$WALL" "$CPU"
}

# perf record and then perf report: what it takes to read perf's profile.
cat >"$work/perf_then_report" <<EOF
#!/bin/sh
perf record -q -o "$work/perf.data" "\$@" >/dev/null 2>&1 &&
  perf report -i "$work/perf.data" --stdio --no-children --sort sym >/dev/null 2>&1
EOF
chmod +x "$work/perf_then_report"

time_runs "bare" "$workload" -r "$rounds"
echo
bare_wall=$WALL bare_cpu=$CPU
row() {
  awk -v w="$WALL" -v c="$CPU" -v bw="$bare_wall" -v bc="$bare_cpu" \
    'BEGIN { printf "   x%.3f wall  x%.3f cpu\n", w / bw, c / bc }'
}
for mode in fp dwarf; do
  if [[ $mode == fp ]]; then perf_graph=(-g); else perf_graph=(--call-graph dwarf,16384); fi
  tally_graph=(-g "$mode")
  [[ $mode == dwarf ]] && tally_graph=(-g dwarf,16384)
  time_runs "tally record -g $mode" "$tally" record -e cpu-clock -F 999 "${tally_graph[@]}" \
    -o "$work/tally.pb.gz" -- "$workload" -r "$rounds"
  row
  time_runs "perf record -g $mode" perf record -q -e cpu-clock -F 999 "${perf_graph[@]}" \
    -o "$work/perf.data" -- "$workload" -r "$rounds"
  row
  time_runs "perf record + report -g $mode" "$work/perf_then_report" -e cpu-clock -F 999 \
    "${perf_graph[@]}" -- "$workload" -r "$rounds"
  row
done
