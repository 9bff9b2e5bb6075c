#!/usr/bin/env bash
# stat_vs_perf.sh [SECONDS] [INTERVAL_MS]
#
# tally stat against perf stat -a -A -I, counting the same two software events (cpu-clock,
# context-switches) on every CPU:
#   1. the collector's own cost: each one alone for SECONDS (default 5) at INTERVAL_MS
#      (default 10, perf's minimum): CPU seconds and peak RSS of the tool, ratio;
#   2. its timing: the interval lengths it achieved (tally's CLOCK_MONOTONIC timestamps,
#      perf's time column) over all those runs: mean and worst deviation from INTERVAL_MS;
#   3. the slowdown of a workload (../shared/fixtures/bin/split, ~1.1 s) run bare, under
#      tally stat -I 100 and under perf stat -a -A -I 100: wall time (CPU time is not
#      compared here: perf stat -I leaves its workload unreaped, so its CPU time is not
#      charged to perf; part 1 compares the tools' own CPU time).
# Each part runs every tool RUNS times (default 5), alternated; medians are reported.
#
# Environment: TALLY_BUILD (default <repo>/build/release), PERF (default: perf in PATH), RUNS.
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

perf=${PERF:-$(command -v perf || true)}
workload=$repo_root/../shared/fixtures/bin/split
seconds=${1:-5}
interval=${2:-10}
runs=$(runs_wanted 5)

require_tally
[[ -n $perf && -x $perf ]] || die "no perf (install linux-perf, or set PERF)"
[[ -x $workload ]] || die "no workload at $workload"

make_work

events=(-e CLK cpu-clock 0 0 0 -e CS cs 0 0 0)

# 1 and 2: the tools alone. Interval lengths in ms: tally's timestamps (ns) of CPU 0,
# event 0 (the last interval, cut short at the end, dropped); perf's time column (s).
t_name="tally stat -I $interval"
p_name="perf stat -a -A -I $interval"
: >"$work/tally.intervals"
: >"$work/perf.intervals"
for ((i = 1; i <= runs; i++)); do
  measure_run "$t_name" "$work/tally.txt" "$tally" stat "${events[@]}" -I "$interval" \
    --duration "$seconds" --clock monotonic
  [[ -s $work/tally.txt ]] || die "tally stat printed nothing"
  awk -F'\t' '$1 == 0 && $2 == 0 { if (p) printf "%.6f\n", ($3 - p) / 1e6; p = $3 }' \
    "$work/tally.txt" | sed '$d' >>"$work/tally.intervals"
  measure_run "$p_name" "$work/perf.txt" "$perf" stat -a -A -I "$interval" -e cpu-clock,cs -x, \
    -o "$work/perf.csv" -- sleep "$seconds"
  awk -F, '/CPU0,/ && /cpu-clock/ { t = $1 + 0; if (p) printf "%.6f\n", (t - p) * 1e3; p = t }' \
    "$work/perf.csv" >>"$work/perf.intervals"
done
[[ -s $work/tally.intervals && -s $work/perf.intervals ]] || die "no intervals to compare"

# 3: the workload's wall time, bare and under each tool.
for ((i = 1; i <= runs; i++)); do
  measure_run bare "$work/out.txt" "$workload"
  measure_run under_tally "$work/out.txt" "$tally" stat "${events[@]}" -I 100 -- "$workload"
  measure_run under_perf "$work/out.txt" "$perf" stat -a -A -I 100 -e cpu-clock,cs -x, \
    -o "$work/p.csv" -- "$workload"
done

report_pair "$t_name" "$p_name"
python3 - "$seconds" "$interval" "$runs" "$work/tally.intervals" "$work/perf.intervals" \
  "$(run_figure bare wall)" "$(run_figure under_tally wall)" "$(run_figure under_perf wall)" <<'PY'
import statistics, sys
seconds, interval, runs = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
def deviations(path):
    values = [float(x) for x in open(path)]
    return statistics.mean(values), max(abs(v - interval) for v in values), len(values)
tm, tw, tn = deviations(sys.argv[4])
pm, pw, pn = deviations(sys.argv[5])
bare, ut, up = map(float, sys.argv[6:9])
print(f"(each alone for {seconds:g} s at -I {interval:g} ms, 2 events on every CPU)")
print(f"intervals over the {runs} runs: tally {tn}, mean {tm:.3f} ms, worst {tw:.3f} ms off; "
      f"perf {pn}, mean {pm:.3f} ms, worst {pw:.3f} ms off")
print(f"workload (split), median wall time of {runs}: bare {bare:.3f} s, "
      f"under tally stat -I 100 {ut:.3f} s ({ut/bare:.3f}x), "
      f"under perf stat -a -A -I 100 {up:.3f} s ({up/bare:.3f}x)")
PY
machine_note
