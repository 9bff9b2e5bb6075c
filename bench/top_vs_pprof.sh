#!/usr/bin/env bash
# top_vs_pprof.sh [PROFILE]
#
# Times `tally top --nodecount=20 PROFILE` against `pprof -top -nodecount=20 PROFILE` on a
# large pprof profile (default: the 100 MB synthetic one pprof_convert_vs_pprof.sh generates,
# ${TALLY_BENCH_DATA:-/tmp/tally-bench}/pprof-11700000-seed1.pb.gz). Prints wall and CPU
# time, peak RSS (medians of RUNS runs of each, alternated, default 3) and the ratios, and
# checks both list the same rows (name, flat, cum) in every run.
#
# Environment: TALLY_BUILD (default <repo>/build/release), PPROF (default /opt/peers/pprof),
# TALLY_BENCH_DATA, RUNS. pprof needs 13 to 18 GB of memory on the default input.
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

pprof=${PPROF:-/opt/peers/pprof}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
profile=${1:-$data_dir/pprof-11700000-seed1.pb.gz}
runs=$(runs_wanted 3)

require_tally
[[ -x $pprof ]] || die "no pprof at $pprof (set PPROF)"
[[ -f $profile ]] || die "no profile $profile (run pprof_convert_vs_pprof.sh once to make it)"

make_work

# Same rows: flat, flat%, sum%, cum, cum% and name (tally's ± column removed). The
# "(inline)" / "(partial-inline)" labels are compared apart: pprof labels a node after
# dropping the edges under -edgefraction (0.1% of the total), tally from every edge, so on
# this profile tally labels a few rows that pprof leaves bare (pprof -edgefraction=0 labels
# them as tally does); such rows are counted and shown, not failed.
rows() { sed -n '/flat  flat%/,$p' "$1" | tail -n +2; }
unlabelled() { sed -E 's/ \((partial-)?inline\)$//'; }
same_rows() {
  rows "$work/pprof.txt" | awk '{$1=$1; print}' >"$work/pprof.rows"
  rows "$work/tally.txt" | awk '{s = ""; for (i = 1; i <= NF; i++) if (i != 6) s = s (s ? " " : "") $i; print s}' \
    >"$work/tally.rows"
  diff <(unlabelled <"$work/pprof.rows") <(unlabelled <"$work/tally.rows") >/dev/null ||
    die "tally top and pprof -top list different rows"
  label_differences=$(diff "$work/pprof.rows" "$work/tally.rows" | grep -c '^>' || true)
}

t_name="tally top --nodecount=20"
p_name="pprof -top -nodecount=20"
for ((i = 1; i <= runs; i++)); do
  measure_run "$t_name" "$work/tally.txt" "$tally" top --nodecount=20 "$profile"
  echo "running pprof -top (slow), run $i of $runs ..." >&2
  measure_run "$p_name" "$work/pprof.txt" "$pprof" -top -nodecount=20 "$profile"
  same_rows
done
echo "input: $profile ($(stat -c %s "$profile") bytes); the same 20 rows in both"
if ((label_differences > 0)); then
  echo "($label_differences of them with an inline label in tally's table only:"
  { diff "$work/pprof.rows" "$work/tally.rows" || true; } | sed -n 's/^> /  /p'
  echo " pprof drops edges under -edgefraction before labelling)"
fi
report_pair "$t_name" "$p_name"
machine_note
