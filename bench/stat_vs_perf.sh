#!/usr/bin/env bash
# stat_vs_perf.sh [SECONDS] [INTERVAL_MS]
#
# tally stat against perf stat -a -A -I, counting the same two software events (cpu-clock,
# context-switches) on every CPU:
#   1. the collector's own cost: each one alone for SECONDS (default 5) at INTERVAL_MS
#      (default 10, perf's minimum): CPU seconds and peak RSS of the tool, ratio;
#   2. its timing: the interval lengths it achieved (tally's CLOCK_MONOTONIC timestamps,
#      perf's time column): mean and worst deviation from INTERVAL_MS;
#   3. the slowdown of a workload (../shared/fixtures/bin/split, ~1.1 s) run bare, under
#      tally stat -I 100 and under perf stat -a -A -I 100: best wall time of 3 runs each
#      (CPU time is not compared here: perf stat -I leaves its workload unreaped, so its
#      CPU time is not charged to perf; part 1 compares the tools' own CPU time).
#
# Environment: TALLY_BUILD (default <repo>/build/release), PERF (default: perf in PATH).
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

perf=${PERF:-$(command -v perf || true)}
workload=$repo_root/../shared/fixtures/bin/split
seconds=${1:-5}
interval=${2:-10}

require_tally
[[ -n $perf && -x $perf ]] || die "no perf (install linux-perf, or set PERF)"
[[ -x $workload ]] || die "no workload at $workload"

make_work

events=(-e CLK cpu-clock 0 0 0 -e CS cs 0 0 0)

# 1 and 2: the tools alone.
measure "$work/tally.txt" "$tally" stat "${events[@]}" -I "$interval" --duration "$seconds" \
  --clock monotonic
tally_cpu=$CPU_S tally_rss=$RSS_KB
measure "$work/perf.txt" "$perf" stat -a -A -I "$interval" -e cpu-clock,cs -x, \
  -o "$work/perf.csv" -- sleep "$seconds"
perf_cpu=$CPU_S perf_rss=$RSS_KB
[[ -s $work/tally.txt ]] || die "tally stat printed nothing"

# Interval lengths in ms: tally's timestamps (ns) of CPU 0, event 0; perf's time column (s).
awk -F'\t' '$1 == 0 && $2 == 0 { if (p) printf "%.6f\n", ($3 - p) / 1e6; p = $3 }' \
  "$work/tally.txt" | sed '$d' >"$work/tally.intervals"
awk -F, '/CPU0,/ && /cpu-clock/ { t = $1 + 0; if (p) printf "%.6f\n", (t - p) * 1e3; p = t }' \
  "$work/perf.csv" >"$work/perf.intervals"
[[ -s $work/tally.intervals && -s $work/perf.intervals ]] || die "no intervals to compare"

# 3: the workload's wall time, best of 3.
best_wall() {
  local best=0
  for _ in 1 2 3; do
    measure "$work/out.txt" "$@"
    if [[ $best == 0 || $WALL_NS -lt $best ]]; then best=$WALL_NS; fi
  done
  echo "$best"
}
bare=$(best_wall "$workload")
under_tally=$(best_wall "$tally" stat "${events[@]}" -I 100 -- "$workload")
under_perf=$(best_wall "$perf" stat -a -A -I 100 -e cpu-clock,cs -x, -o "$work/p.csv" -- "$workload")

python3 - "$seconds" "$interval" "$tally_cpu" "$tally_rss" "$perf_cpu" "$perf_rss" \
  "$work/tally.intervals" "$work/perf.intervals" "$bare" "$under_tally" "$under_perf" <<'PY'
import statistics, sys
seconds, interval = float(sys.argv[1]), float(sys.argv[2])
tc, tr, pc, pr = map(float, sys.argv[3:7])
def deviations(path):
    values = [float(x) for x in open(path)]
    return statistics.mean(values), max(abs(v - interval) for v in values), len(values)
tm, tw, tn = deviations(sys.argv[7])
pm, pw, pn = deviations(sys.argv[8])
bare, ut, up = map(float, sys.argv[9:12])
print(f"alone for {seconds:g} s at -I {interval:g} ms, 2 events on every CPU:")
print(f"  tally stat      : {tc:6.3f} s cpu {tr/1024:6.1f} MB peak RSS, "
      f"{tn} intervals, mean {tm:.3f} ms, worst {tw:.3f} ms off")
print(f"  perf stat -a -A : {pc:6.3f} s cpu {pr/1024:6.1f} MB peak RSS, "
      f"{pn} intervals, mean {pm:.3f} ms, worst {pw:.3f} ms off")
print(f"  ratio           : perf uses {pc/max(tc, 1e-3):.1f}x the CPU, {pr/tr:.1f}x the memory")
print(f"workload (split), best wall time of 3: bare {bare/1e9:.3f} s, "
      f"under tally stat -I 100 {ut/1e9:.3f} s ({ut/bare:.3f}x), "
      f"under perf stat -a -A -I 100 {up/1e9:.3f} s ({up/bare:.3f}x)")
PY
