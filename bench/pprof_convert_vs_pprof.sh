#!/usr/bin/env bash
# pprof_convert_vs_pprof.sh [DRAWS]
#
# Times `tally convert BIG.pb.gz --to pprof -o OUT.pb.gz` (read + write of a pprof profile)
# against google/pprof's `pprof -proto BIG.pb.gz > OUT.pb.gz` on the same synthetic gzipped
# pprof CPU profile, made by gen_pprof_profile from DRAWS sampled stacks (default 11700000:
# 100.2 MB gzipped, 379 MB uncompressed, 4.0M samples). Prints wall and CPU time, MB/s of
# the input .pb.gz, peak RSS, output sizes and the ratios.
#
# Builds nothing. Environment:
#   TALLY_BUILD       build directory with src/cli/tally and bench/gen_pprof_profile
#                     (default: <repo>/build/release; a Release build, for timing)
#   PPROF             google/pprof binary (default: /opt/peers/pprof)
#   TALLY_BENCH_DATA  where generated profiles are kept between runs
#                     (default: ${TMPDIR:-/tmp}/tally-bench)
#   RUNS              runs of each tool, alternated; medians are reported (default: 3)
#
# Both outputs are checked against the generator's own counts (samples, total, locations,
# functions), read back with `tally cat --summary`, so a fast but lossy conversion fails the
# benchmark. MB here is 10^6 bytes. Memory on the default input: pprof peaks at 13 to 18 GB
# (it varies from run to run), tally near 1.4 GB (the input, the model and the output, never
# a libprotobuf message), the generator 3.5 GB.
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

draws=${1:-11700000}
seed=1
pprof=${PPROF:-/opt/peers/pprof}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
runs=$(runs_wanted 3)

[[ $# -le 1 ]] || die "usage: $0 [DRAWS]"
[[ $draws =~ ^[1-9][0-9]*$ ]] || die "DRAWS must be a positive integer, got '$draws'"
gen=$build/bench/gen_pprof_profile
[[ -x $tally ]] || die "no tally binary at $tally; build it first, e.g.
  cmake --preset release && cmake --build build/release --target tally gen_pprof_profile
or point TALLY_BUILD at a build directory"
[[ -x $gen ]] || die "no generator at $gen; build the target gen_pprof_profile in $build"
[[ -x $pprof ]] || die "no google/pprof at $pprof; set PPROF to its path"
[[ -x /usr/bin/time ]] || command -v python3 >/dev/null ||
  die "need /usr/bin/time or python3 to measure peak memory"

make_work

# --- the input: generated once per (draws, seed, generator build) ---
mkdir -p "$data_dir" || die "cannot create $data_dir"
profile=$data_dir/pprof-${draws}-seed${seed}.pb.gz
stats=$profile.stats
if [[ ! -s $profile || ! -s $stats || $gen -nt $profile ]]; then
  echo "generating $profile ..." >&2
  "$gen" "$profile" --draws "$draws" --seed "$seed" >"$stats.tmp" || die "gen_pprof_profile failed"
  mv "$stats.tmp" "$stats"
fi
stat_of() {
  local v
  v=$(awk -v k="$1" '$1 == k { print $2 }' "$stats")
  [[ -n $v ]] || die "$stats has no '$1' line; delete it to regenerate"
  echo "$v"
}
bytes=$(stat -c %s "$profile")
[[ $bytes == "$(stat_of bytes)" ]] || die "$profile has $bytes bytes, $stats says otherwise; delete both"

# check_output FILE WHO: FILE must hold what the generator wrote.
check_output() {
  "$tally" cat --summary "$1" >"$work/summary" 2>"$work/summary.err" ||
    die "$2's output does not read: $(head -c 500 "$work/summary.err")"
  field() { awk -v k="$1" 'index($0, k) == 1 { print $(split(k, _, " ") + 1); exit }' "$work/summary"; }
  local got_samples got_stacks got_locations got_functions
  got_samples=$(field "total samples")
  got_stacks=$(field "distinct stacks")
  got_locations=$(field "locations")
  got_functions=$(field "functions")
  if [[ $got_samples != "$(stat_of total_count)" || $got_stacks != "$(stat_of samples)" ||
        $got_locations != "$(stat_of locations)" || $got_functions != "$(stat_of functions)" ]]; then
    echo "pprof_convert_vs_pprof: $2's output disagrees with the generator:" >&2
    echo "  total $got_samples (expected $(stat_of total_count)), samples $got_stacks" \
         "(expected $(stat_of samples)), locations $got_locations (expected" \
         "$(stat_of locations)), functions $got_functions (expected $(stat_of functions))" >&2
    exit 1
  fi
}

# --- tally and pprof, $runs runs each, alternated ---
t_name="tally convert --to pprof"
p_name="pprof -proto"
for ((i = 1; i <= runs; i++)); do
  measure_run "$t_name" "$work/tally.stdout" "$tally" convert "$profile" --to pprof -o "$work/tally.pb.gz"
  [[ ! -s $work/stderr ]] || die "tally reported losses converting pprof to pprof: $(cat "$work/stderr")"
  check_output "$work/tally.pb.gz" tally
  echo "running pprof -proto (slow), run $i of $runs ..." >&2
  measure_run "$p_name" "$work/pprof.pb.gz" "$pprof" -proto "$profile"
  check_output "$work/pprof.pb.gz" pprof
done
tally_out=$(stat -c %s "$work/tally.pb.gz")
pprof_out=$(stat -c %s "$work/pprof.pb.gz")

# --- report ---
awk -v bytes="$bytes" -v raw="$(stat_of raw_bytes)" -v samples="$(stat_of samples)" \
    -v locations="$(stat_of locations)" -v functions="$(stat_of functions)" 'BEGIN {
  printf "input: %.1f MB gzipped (%.1f MB uncompressed), %d samples, %d locations, %d functions\n\n", \
    bytes / 1e6, raw / 1e6, samples, locations, functions
}'
report_pair "$t_name" "$p_name"
awk -v bytes="$bytes" -v t="$(run_figure "$t_name" wall)" -v p="$(run_figure "$p_name" wall)" \
    -v t_out="$tally_out" -v p_out="$pprof_out" 'BEGIN {
  printf "\nMB/s of the input .pb.gz (median wall time): tally %.1f, pprof %.1f\n", bytes / 1e6 / t, bytes / 1e6 / p
  printf "output: tally %.1f MB, pprof %.1f MB\n", t_out / 1e6, p_out / 1e6
}'
machine_note
