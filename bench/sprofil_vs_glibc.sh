#!/usr/bin/env bash
# sprofil_vs_glibc.sh [RUNS] [REGIONS]
#
# The overhead of tally_sprofil() against glibc's sprofil() on the same workload and the
# same regions (bench/sprofil_workload.cc): the workload's CPU time with no profiling,
# with glibc's and with tally's, RUNS runs of each interleaved (default 7), medians and
# ratios, and the ticks each counted. Both tick once per kernel tick of CPU time, so
# the difference is the handler's cost per tick (bench_sprofil measures it alone).
#
# Environment: TALLY_BUILD (default <repo>/build/release).
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

runs=$(RUNS=${1:-${RUNS:-}} runs_wanted 7)
regions=${2:-1000}
workload=$build/bench/sprofil_workload
[[ -x $workload ]] || die "no $workload (build target sprofil_workload)"

declare -A cpu ticks
for ((r = 0; r < runs; ++r)); do
  for mode in none glibc tally; do
    out=$("$workload" "$mode" "$regions") || die "sprofil_workload $mode failed (exit $?)"
    read -r c t used_regions <<<"$out"
    cpu[$mode]+="$c "
    ticks[$mode]+="$t "
  done
done
for mode in none glibc tally; do
  read -r -a values <<<"${cpu[$mode]}"
  m=$(median "${values[@]}")
  declare "median_$mode=$m"
  printf '%-6s CPU %8.4f s (median of %d)  ticks: %s\n' "$mode" "$m" "$runs" "${ticks[$mode]}"
done
echo "regions: $used_regions (+ the overflow bin)"
awk -v n="$median_none" -v g="$median_glibc" -v t="$median_tally" 'BEGIN {
  printf "glibc / none %.4f   tally / none %.4f   tally / glibc %.4f\n", g / n, t / n, t / g }'
machine_note
