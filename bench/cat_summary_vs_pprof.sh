#!/usr/bin/env bash
# cat_summary_vs_pprof.sh [RECORDS]
#
# Times `tally cat --summary FILE` against google/pprof's `pprof -top -symbolize=none FILE` on
# the same synthetic gperftools CPU profile: RECORDS records of 32-frame stacks (default
# 1000000, about 270 MB), made by gen_gperf_profile. Prints wall time, throughput and peak
# RSS of both, and the ratios. Issue 2's aim for tally on the default input: < 1 s, < 300 MB.
#
# Builds nothing. Environment:
#   TALLY_BUILD       build directory with src/cli/tally and bench/gen_gperf_profile
#                     (default: <repo>/build/release; a Release build, for timing)
#   PPROF             google/pprof binary (default: /opt/peers/pprof)
#   TALLY_BENCH_DATA  where generated profiles are kept between runs
#                     (default: ${TMPDIR:-/tmp}/tally-bench)
#   RUNS              runs of each tool, alternated; medians are reported (default: 3)
#
# The tally and pprof totals are checked against the generator's own counts, so a fast but
# wrong reader fails the benchmark. MB here is 10^6 bytes.
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

records=${1:-1000000}
depth=32
seed=1
pprof=${PPROF:-/opt/peers/pprof}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
runs=$(runs_wanted 3)

[[ $# -le 1 ]] || die "usage: $0 [RECORDS]"
[[ $records =~ ^[1-9][0-9]*$ ]] || die "RECORDS must be a positive integer, got '$records'"
gen=$build/bench/gen_gperf_profile
[[ -x $tally ]] || die "no tally binary at $tally; build it first, e.g.
  cmake --preset release && cmake --build build/release --target tally gen_gperf_profile
or point TALLY_BUILD at a build directory"
[[ -x $gen ]] || die "no generator at $gen; build the target gen_gperf_profile in $build"
[[ -x $pprof ]] || die "no google/pprof at $pprof; set PPROF to its path"
command -v python3 >/dev/null || [[ -x /usr/bin/time ]] ||
  die "need /usr/bin/time or python3 to measure peak memory"

make_work

# --- the input: generated once per (records, depth, seed, generator build) ---
mkdir -p "$data_dir" || die "cannot create $data_dir"
profile=$data_dir/gperf-${records}x${depth}-seed${seed}.prof
stats=$profile.stats
if [[ ! -s $profile || ! -s $stats || $gen -nt $profile ]]; then
  echo "generating $profile ..." >&2
  "$gen" "$profile" --records "$records" --depth "$depth" --seed "$seed" >"$stats.tmp" ||
    die "gen_gperf_profile failed"
  mv "$stats.tmp" "$stats"
fi
stat_of() {
  local v
  v=$(awk -v k="$1" '$1 == k { print $2 }' "$stats")
  [[ -n $v ]] || die "$stats has no '$1' line; delete it to regenerate"
  echo "$v"
}
expect_samples=$(stat_of samples)
expect_stacks=$(stat_of distinct_stacks)
expect_pcs=$(stat_of distinct_pcs)
bytes=$(stat -c %s "$profile")
[[ $bytes == "$(stat_of bytes)" ]] || die "$profile has $bytes bytes, $stats says otherwise; delete both"

# --- tally and pprof, $runs runs each, alternated ---
summary_field() {  # the number after a "tally cat --summary" label
  awk -v k="$1" 'index($0, k) == 1 { print $(split(k, _, " ") + 1); exit }' "$work/tally.out"
}
check_tally() {
  local got_samples got_stacks got_pcs
  got_samples=$(summary_field "total samples")
  got_stacks=$(summary_field "distinct stacks")
  got_pcs=$(summary_field "locations")
  if [[ $got_samples != "$expect_samples" || $got_stacks != "$expect_stacks" ||
        $got_pcs != "$expect_pcs" ]]; then
    echo "cat_summary_vs_pprof: tally's summary disagrees with the generator:" >&2
    echo "  samples $got_samples (expected $expect_samples), distinct stacks $got_stacks" \
         "(expected $expect_stacks), locations $got_pcs (expected $expect_pcs)" >&2
    cat "$work/tally.out" >&2
    exit 1
  fi
}
# "Showing nodes accounting for X, P% of TOTAL total": TOTAL is samples x period (10 ms).
check_pprof() {
  local total_line
  total_line=$(grep -m 1 'Showing nodes accounting for' "$work/pprof.out") ||
    die "pprof's output has no 'Showing nodes accounting for' line: $(head -c 500 "$work/pprof.out")"
  awk -v line="$total_line" -v samples="$expect_samples" 'BEGIN {
    n = split(line, w, " "); total = w[n - 1]
    split("ns us ms s mins hrs days", units, " ")
    split("1e-9 1e-6 1e-3 1 60 3600 86400", scales, " ")
    for (i in units) scale[units[i]] = scales[i]
    if (!match(total, /^[0-9.]+/) || !(substr(total, RLENGTH + 1) in scale)) {
      print "cannot parse the pprof total " total > "/dev/stderr"; exit 1
    }
    seconds = substr(total, 1, RLENGTH) * scale[substr(total, RLENGTH + 1)]
    expected = samples * 0.01
    if (seconds < expected * 0.999 || seconds > expected * 1.001) {
      printf "pprof total %s differs from the generator: %d samples x 10 ms = %.2fs\n", \
        total, samples, expected > "/dev/stderr"; exit 1
    }
  }' || die "pprof's total is wrong or unreadable (line: $total_line)"
}
t_name="tally cat --summary"
p_name="pprof -top -symbolize=none"
for ((i = 1; i <= runs; i++)); do
  measure_run "$t_name" "$work/tally.out" "$tally" cat --summary "$profile"
  check_tally
  echo "running pprof (slow), run $i of $runs ..." >&2
  measure_run "$p_name" "$work/pprof.out" "$pprof" -top -symbolize=none "$profile"
  check_pprof
done

# --- report ---
awk -v bytes="$bytes" -v records="$records" -v stacks="$expect_stacks" -v pcs="$expect_pcs" \
    -v samples="$expect_samples" 'BEGIN {
  printf "input: %d records x 32 frames, %.1f MB, %d samples, %d distinct stacks, %d PCs\n\n", \
    records, bytes / 1e6, samples, stacks, pcs
}'
report_pair "$t_name" "$p_name"
t_s=$(run_figure "$t_name" wall)
t_mb=$(run_figure "$t_name" rss)
awk -v bytes="$bytes" -v t="$t_s" -v p="$(run_figure "$p_name" wall)" 'BEGIN {
  printf "\nMB/s of the input (median wall time): tally %.1f, pprof %.1f\n", bytes / 1e6 / t, bytes / 1e6 / p }'
if ((records == 1000000)); then
  awk -v t="$t_s" -v m="$t_mb" 'BEGIN {
    printf "aim (issue 2): tally < 1 s and < 300 MB on 1M records: %s\n", (t < 1 && m < 300) ? "met" : "MISSED" }'
fi
machine_note
