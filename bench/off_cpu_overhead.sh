#!/usr/bin/env bash
# off_cpu_overhead.sh [ROUND_TRIPS] [RUNS]: the cost of tally record --off-cpu, which is per
# context switch. Times bench/pipe_pingpong (two threads, ROUND_TRIPS round trips over two
# pipes, default 100000: ~200k switch-outs) bare, under `tally record` without and with
# --off-cpu (-g fp, and the default -g dwarf), and under `perf record -e sched:sched_switch
# -g` (perf's way to the same stacks; it needs tracefs, mounted by this script when root
# and missing), alone and with cpu-clock beside it as tally has (on-CPU samples at 999 Hz:
# their events are switched out and in with every thread, a cost of its own). Wall and CPU time (recorder + workload, user + system) are medians of RUNS
# runs (default 5, every variant once per round). perf runs with -B (no build-id
# collection: perf 6.1 here crashed in it, util/build-id.c:1010), which only spares it work. Prints the ratios to the bare workload,
# perf record followed by perf report (perf's profile is read afterwards; tally writes its
# own at once), the off-CPU spans and lost records tally reported, and the cost per context switch:
# (CPU of --off-cpu - CPU without) / spans recorded. TALLY_BUILD selects the build tree;
# TALLY_BEFORE=PATH another tally binary (e.g. a build before a change) whose --off-cpu -g fp
# runs in the same rounds, so that before and after see the same load.
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"
round_trips=${1:-100000}
runs=$(RUNS=${2:-${RUNS:-}} runs_wanted 5)
workload=$build/bench/pipe_pingpong
require_tally
[[ -x $workload ]] || die "no workload at $workload (build the target pipe_pingpong)"
command -v perf >/dev/null || die "perf is not installed"
if [[ ! -d /sys/kernel/tracing/events/sched ]]; then
  [[ $(id -u) == 0 ]] || die "tracefs is not mounted and only root can mount it (perf needs it)"
  mount -t tracefs nodev /sys/kernel/tracing || die "cannot mount tracefs"
  echo "mounted tracefs on /sys/kernel/tracing (perf's sched:sched_switch needs it)"
fi
make_work

# perf record and then perf report: perf stores raw samples, and reading them is part of
# getting the profile tally writes at once.
cat >"$work/perf_then_report" <<EOS
#!/bin/sh
perf record -q -B -o "$work/perf.data" "\$@" >/dev/null 2>&1 &&
  perf report -i "$work/perf.data" --stdio --no-children --sort sym >/dev/null 2>&1
EOS
chmod +x "$work/perf_then_report"

declare -A spans=() lost=()
# note_tally NAME: adds the spans and lost records of the last tally run to NAME's lists.
note_tally() {
  spans[$1]+="$(sed -n 's/.*off-CPU: \([0-9]*\) spans from.*/\1/p' "$work/stderr" | head -n 1) "
  lost[$1]+="$( (grep -o 'lost [0-9]* records' "$work/stderr" || echo 'lost 0') | awk '{ print $2 }') "
}

variants=(bare "tally record -g fp" "tally record --off-cpu -g fp"
          "tally record --off-cpu --no-timestamps -g fp" "tally record --off-cpu -g dwarf"
          "perf record -e sched:sched_switch -g" "perf record -e cpu-clock,sched:sched_switch -g"
          "perf record + report -e sched:sched_switch -g")
[[ -n ${TALLY_BEFORE:-} ]] && variants+=("before: tally record --off-cpu -g fp")
# The BPF probe (issue 23; built when TALLY_HAVE_BPF, runs as root): the same spans and
# stacks accounted in the kernel at sched_switch, one ring-buffer record per span.
bpf_probe=$build/bench/off_cpu_bpf_record
[[ -x $bpf_probe && $(id -u) == 0 ]] && variants+=("bpf probe off_cpu_bpf_record")
for ((i = 1; i <= runs; i++)); do
  measure_run bare "$work/out" "$workload" "$round_trips"
  measure_run "tally record -g fp" "$work/out" "$tally" record -g fp -o "$work/t.pb.gz" -- \
    "$workload" "$round_trips"
  measure_run "tally record --off-cpu -g fp" "$work/out" "$tally" record --off-cpu -g fp \
    -o "$work/t.pb.gz" -- "$workload" "$round_trips"
  note_tally "tally record --off-cpu -g fp"
  if [[ -n ${TALLY_BEFORE:-} ]]; then
    measure_run "before: tally record --off-cpu -g fp" "$work/out" "$TALLY_BEFORE" record --off-cpu \
      -g fp -o "$work/t.pb.gz" -- "$workload" "$round_trips"
    note_tally "before: tally record --off-cpu -g fp"
  fi
  if [[ " ${variants[*]} " == *" bpf probe "* ]]; then
    measure_run "bpf probe off_cpu_bpf_record" "$work/out" "$bpf_probe" "$workload" "$round_trips"
  fi
  measure_run "tally record --off-cpu --no-timestamps -g fp" "$work/out" "$tally" record --off-cpu \
    --no-timestamps -g fp -o "$work/t.pb.gz" -- "$workload" "$round_trips"
  note_tally "tally record --off-cpu --no-timestamps -g fp"
  measure_run "tally record --off-cpu -g dwarf" "$work/out" "$tally" record --off-cpu \
    -o "$work/t.pb.gz" -- "$workload" "$round_trips"
  note_tally "tally record --off-cpu -g dwarf"
  measure_run "perf record -e sched:sched_switch -g" "$work/out" perf record -q -B \
    -e sched:sched_switch -g -o "$work/perf.data" -- "$workload" "$round_trips"
  measure_run "perf record -e cpu-clock,sched:sched_switch -g" "$work/out" perf record -q -B \
    -e sched:sched_switch -e cpu-clock/freq=999/ -g -o "$work/perf.data" -- "$workload" "$round_trips"
  measure_run "perf record + report -e sched:sched_switch -g" "$work/out" "$work/perf_then_report" \
    -e sched:sched_switch -g -- "$workload" "$round_trips"
done

bare_wall=$(run_figure bare wall) bare_cpu=$(run_figure bare cpu)
echo "pipe_pingpong $round_trips round trips; medians of $runs runs; ratios to the bare workload"
for name in "${variants[@]}"; do
  extra=""
  if [[ -n ${spans[$name]:-} ]]; then
    read -r -a s <<<"${spans[$name]}"
    read -r -a l <<<"${lost[$name]}"
    extra="  spans $(median "${s[@]}")  lost records $(median "${l[@]}")"
  fi
  awk -v n="$name" -v w="$(run_figure "$name" wall)" -v c="$(run_figure "$name" cpu)" \
      -v bw="$bare_wall" -v bc="$bare_cpu" -v e="$extra" 'BEGIN {
    printf "%-38s wall %6.2f s  cpu %6.2f s   x%.2f wall  x%.2f cpu%s\n", n, w, c, w / bw, c / bc, e }'
done
read -r -a s <<<"${spans["tally record --off-cpu -g fp"]}"
awk -v on="$(run_figure "tally record --off-cpu -g fp" cpu)" -v off="$(run_figure "tally record -g fp" cpu)" \
    -v perf="$(run_figure "perf record -e sched:sched_switch -g" cpu)" -v bare="$bare_cpu" \
    -v perf2="$(run_figure "perf record -e cpu-clock,sched:sched_switch -g" cpu)" \
    -v n="$(median "${s[@]}")" 'BEGIN {
  printf "cost per context switch recorded (-g fp, CPU of recorder + workload over the bare workload, per tally span):\n"
  printf "  tally --off-cpu %.2f us (%.2f us over tally without --off-cpu); perf sched_switch %.2f us, perf cpu-clock + sched_switch %.2f us\n",
    (on - bare) / n * 1e6, (on - off) / n * 1e6, (perf - bare) / n * 1e6, (perf2 - bare) / n * 1e6 }'
machine_note
