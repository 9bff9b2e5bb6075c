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
#   RUNS              runs of tally, the best wall time is kept (default: 3); pprof runs once
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
runs=${RUNS:-3}

[[ $# -le 1 ]] || die "usage: $0 [DRAWS]"
[[ $draws =~ ^[1-9][0-9]*$ ]] || die "DRAWS must be a positive integer, got '$draws'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$runs'"
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

# --- tally: best of $runs ---
best_ns=0
best_rss=0
for ((i = 1; i <= runs; i++)); do
  measure "$work/tally.stdout" "$tally" convert "$profile" --to pprof -o "$work/tally.pb.gz"
  if ((best_ns == 0 || WALL_NS < best_ns)); then best_ns=$WALL_NS; tally_cpu=$CPU_S; fi
  if ((RSS_KB > best_rss)); then best_rss=$RSS_KB; fi  # peak RSS: the worst run
done
tally_ns=$best_ns
tally_rss=$best_rss
[[ ! -s $work/stderr ]] || die "tally reported losses converting pprof to pprof: $(cat "$work/stderr")"
check_output "$work/tally.pb.gz" tally
tally_out=$(stat -c %s "$work/tally.pb.gz")

# --- pprof: once (it is slow) ---
echo "running pprof -proto (slow) ..." >&2
measure "$work/pprof.pb.gz" "$pprof" -proto "$profile"
pprof_ns=$WALL_NS
pprof_cpu=$CPU_S
pprof_rss=$RSS_KB
check_output "$work/pprof.pb.gz" pprof
pprof_out=$(stat -c %s "$work/pprof.pb.gz")

# --- report ---
awk -v bytes="$bytes" -v raw="$(stat_of raw_bytes)" -v samples="$(stat_of samples)" \
    -v locations="$(stat_of locations)" -v functions="$(stat_of functions)" -v runs="$runs" \
    -v t_ns="$tally_ns" -v t_cpu="$tally_cpu" -v t_kb="$tally_rss" -v t_out="$tally_out" \
    -v p_ns="$pprof_ns" -v p_cpu="$pprof_cpu" -v p_kb="$pprof_rss" -v p_out="$pprof_out" \
    -v load="$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null)" 'BEGIN {
  mb = bytes / 1e6
  t_s = t_ns / 1e9; p_s = p_ns / 1e9
  t_mb = t_kb * 1024 / 1e6; p_mb = p_kb * 1024 / 1e6
  printf "input: %.1f MB gzipped (%.1f MB uncompressed), %d samples, %d locations, %d functions\n\n", \
    mb, raw / 1e6, samples, locations, functions
  printf "%-38s %9s %8s %8s %14s %11s\n", "command (read + write)", "wall (s)", "MB/s", "CPU (s)", \
    "peak RSS (MB)", "output (MB)"
  printf "%-38s %9.2f %8.1f %8.2f %14.1f %11.1f\n", "tally convert --to pprof (best of " runs ")", \
    t_s, mb / t_s, t_cpu, t_mb, t_out / 1e6
  printf "%-38s %9.2f %8.1f %8.2f %14.1f %11.1f\n", "pprof -proto (1 run)", p_s, mb / p_s, p_cpu, \
    p_mb, p_out / 1e6
  printf "%-38s %8.2fx %8s %7.2fx %13.2fx\n", "pprof / tally", p_s / t_s, "", p_cpu / t_cpu, p_mb / t_mb
  printf "\n(MB/s: MB of the input .pb.gz per second of wall time; load average at the end: %s)\n", load
}'
