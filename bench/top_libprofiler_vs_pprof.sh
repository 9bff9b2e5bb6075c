#!/usr/bin/env bash
# top_libprofiler_vs_pprof.sh [PROFILE]
#
# Times `tally top PROFILE` against `pprof -top PROFILE` on the deep-stack gperftools CPU
# profile a libprofiler user has (issue 21): clang -cc1 -O2 under libprofiler at 4000 Hz,
# 80k+ samples, 70k+ distinct stacks, depth up to 253, stacks through libLLVM-14 and
# libclang-cpp (.dynsym only). Both tools symbolize it from the binaries on this machine.
# Default input: ${TALLY_BENCH_DATA:-/tmp/tally-bench}/clang-libprofiler.prof, made by
# make_clang_libprofiler_profile.sh when absent (a few minutes). Prints the input's shape,
# wall and CPU time and peak RSS (medians of RUNS runs of each, alternated, default 5) and
# the ratios.
#
# Checks, so that a fast but wrong answer fails: in every run both tools print the same
# total ("of N total"), equal to the samples times the period that `tally cat --summary`
# reads from the file; and every row that both name alike (pprof folds the addresses of a
# library without symbols into one "[libLLVM-14.so.1]" row, tally names them sub_...; those
# rows are left out) has the same flat and cum in both, at least 10 such rows, but for at
# most 1 in 10: pprof gives an address past the end of a .dynsym symbol to that symbol
# (nm prints no sizes), tally to the function its unwind table (FDE) puts it in, so a
# function may differ by a sample or two (here clang::TemplateDeclInstantiator::
# VisitFunctionDecl: 7.75 ms flat in pprof, 7.50 ms in tally, one sample at +0x7237 that
# tally names sub_...). Those rows are printed.
#
# Environment: TALLY_BUILD (default <repo>/build/release), PPROF (default /opt/peers/pprof),
# TALLY_BENCH_DATA, RUNS.
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

pprof=${PPROF:-/opt/peers/pprof}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
profile=${1:-$data_dir/clang-libprofiler.prof}
runs=$(runs_wanted 5)

(($# <= 1)) || die "usage: $0 [PROFILE]"
require_tally
[[ -x $pprof ]] || die "no pprof at $pprof (set PPROF)"
if [[ ! -s $profile ]]; then
  [[ $# -eq 0 ]] || die "no profile $profile"
  "$(dirname "${BASH_SOURCE[0]}")/make_clang_libprofiler_profile.sh" >/dev/null ||
    die "making $profile failed"
fi

make_work

# --- the input's shape, as tally reads it ---
"$tally" cat --summary "$profile" >"$work/summary.txt" || die "tally cat --summary $profile failed"
# The first word after KEY on its line ("total samples   86661 count" -> 86661).
summary() { awk -v k="$1" 'index($0, k) == 1 { $0 = substr($0, length(k) + 1); print $1; exit }' "$work/summary.txt"; }
samples=$(summary "total samples")
stacks=$(summary "distinct stacks")
depth=$(summary "max depth")
total_ns=$(summary "total cpu")
[[ $samples =~ ^[0-9]+$ && $total_ns =~ ^[0-9]+$ ]] || die "cannot read tally cat --summary's totals"

# pprof prints the total in a unit of its choice ("of 21665.25ms total"): back to ns.
total_ns_of() {
  sed -n 's/.* of \([0-9.]*\)\([a-z]*\) total.*/\1 \2/p' "$1" | head -n 1 | awk '{
    f = ($2 == "ns") ? 1 : ($2 == "us") ? 1e3 : ($2 == "ms") ? 1e6 : ($2 == "s") ? 1e9 : ($2 == "mins") ? 60e9 : ($2 == "hrs") ? 3600e9 : -1
    if (f > 0) printf "%.0f\n", $1 * f }'
}
# name|flat|cum of the rows, tally's ± column left out.
named_rows() {
  sed -n '/flat  flat%/,$p' "$1" | tail -n +2 | awk -v tally="$2" '{
    first = tally ? 7 : 6; name = ""
    for (i = first; i <= NF; i++) name = name (name ? " " : "") $i
    if (name !~ /^\[/) print name "|" $1 "|" $4 }' | LC_ALL=C sort -t '|' -k 1,1
}
check_outputs() {
  local t p
  t=$(total_ns_of "$work/tally.txt")
  p=$(total_ns_of "$work/pprof.txt")
  [[ $t == "$total_ns" ]] || die "tally top's total is $t ns, the file's $total_ns ns"
  [[ $p == "$total_ns" ]] || die "pprof -top's total is $p ns, the file's $total_ns ns"
  named_rows "$work/tally.txt" 1 >"$work/tally.rows"
  named_rows "$work/pprof.txt" 0 >"$work/pprof.rows"
  # Rows of the same name in both: same flat and cum, but for a few (see the header).
  LC_ALL=C join -t '|' "$work/pprof.rows" "$work/tally.rows" >"$work/both.rows" || true
  compared=$(wc -l <"$work/both.rows")
  ((compared >= 10)) || die "only $compared rows named alike in both outputs (need 10)"
  awk -F '|' '$2 != $4 || $3 != $5' "$work/both.rows" >"$work/differing.rows"
  differing=$(wc -l <"$work/differing.rows")
  ((differing * 10 <= compared)) || {
    sed 's/^/  /' "$work/differing.rows" >&2
    die "$differing of $compared rows named alike differ (name|pprof flat|cum|tally flat|cum above)"
  }
}

t_name="tally top"
p_name="pprof -top"
for ((i = 1; i <= runs; i++)); do
  measure_run "$t_name" "$work/tally.txt" "$tally" top "$profile"
  echo "running pprof -top (slow), run $i of $runs ..." >&2
  measure_run "$p_name" "$work/pprof.txt" "$pprof" -top "$profile"
  check_outputs
done
echo "input: $profile ($(stat -c %s "$profile") bytes): $samples samples, $stacks distinct stacks," \
  "max depth $depth"
echo "both totals $total_ns ns (the file's); of $compared rows named alike, $differing differ" \
  "(name|pprof flat|cum|tally flat|cum):"
sed 's/^/  /' "$work/differing.rows"
report_pair "$t_name" "$p_name"
machine_note
