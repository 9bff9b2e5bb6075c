# shellcheck shell=bash
# measure.sh: sourced at the top of the bench/*.sh scripts, after `set -euo pipefail`.
#
# die MESSAGE: prints "SCRIPT: MESSAGE" on stderr and exits 1.
# repo_root: this checkout; build: $TALLY_BUILD, default <repo>/build/release; tally: the
# tally binary in it.
# require_tally: dies when $tally is not built.
# make_work: sets $work, a scratch directory removed when the script exits.
#
# Every script runs tally and its peer the same number of times, runs_wanted N: $RUNS when
# set, else N (the script's default: 3 where a run is long, 5 or more where it is short),
# alternating them so that a change of load on a shared machine hits both, and reports
# the median of each: measure_run NAME OUT CMD... runs and records one run,
# report_pair TALLY_NAME PEER_NAME prints both medians and the ratios, median VALUES...
# is the median of a list, and machine_note says where and when it ran (load averages at
# the start and at the end: wall times mean little under load, CPU times more).
die() {
  echo "$(basename "$0" .sh): $*" >&2
  exit 1
}
repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TALLY_BUILD:-$repo_root/build/release}
tally=$build/src/cli/tally
require_tally() {
  [[ -x $tally ]] || die "no tally at $tally (build it, or set TALLY_BUILD)"
}
make_work() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/tally-bench-run.XXXXXX")
  trap 'rm -rf "$work"' EXIT
}
bench_started=$(date -u '+%Y-%m-%d %H:%M UTC')
bench_load_start=$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo '?')

# runs_wanted DEFAULT: $RUNS if set, else DEFAULT; a positive integer or the script dies.
runs_wanted() {
  local n=${RUNS:-$1}
  [[ $n =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$n'"
  echo "$n"
}

# median VALUES...: the middle value, or the mean of the two middle ones for an even count.
median() {
  (($# > 0)) || die "median of nothing"
  printf '%s\n' "$@" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# machine_note: one line, the machine, the date, and the load average at start and end.
machine_note() {
  echo "machine: $(nproc) CPUs, $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"); started" \
    "$bench_started, load average $bench_load_start at the start," \
    "$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null) at the end"
}

# measure OUT CMD...: runs CMD with stdout to OUT and sets WALL_NS (wall time, ns), CPU_S
# (user + system, s) and RSS_KB (peak resident memory); if CMD fails, shows its stderr and
# exits. bench/rusage_of from the build (CPU time to the microsecond), else GNU time (CPU
# time in units of 10 ms: too coarse for the short runs).
rusage_of=$build/bench/rusage_of
measure() {
  local out=$1
  shift
  local rc=0
  if [[ -x $rusage_of ]]; then
    "$rusage_of" "$work/rusage" "$@" >"$out" 2>"$work/stderr" || rc=$?
    local cpu_us status
    read -r WALL_NS RSS_KB cpu_us status <"$work/rusage" || die "no result from $rusage_of"
    [[ $rc == 0 || $rc == "$status" ]] || die "$rusage_of failed (exit $rc): $(cat "$work/stderr")"
    CPU_S=$(awk -v u="$cpu_us" 'BEGIN { printf "%.6f", u / 1e6 }')
  elif [[ -x /usr/bin/time ]]; then
    local start end user sys
    start=$(date +%s%N)
    /usr/bin/time -f "%M %U %S" -o "$work/rss" "$@" >"$out" 2>"$work/stderr" || rc=$?
    end=$(date +%s%N)
    WALL_NS=$((end - start))
    read -r RSS_KB user sys < <(tail -n 1 "$work/rss")
    CPU_S=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
  else
    die "need $rusage_of (build the target rusage_of) or GNU time (/usr/bin/time)"
  fi
  if [[ $rc != 0 ]]; then
    echo "'$*' failed (exit $rc); its stderr:" >&2
    head -c 4000 "$work/stderr" >&2
    exit 1
  fi
  [[ $RSS_KB =~ ^[0-9]+$ ]] || die "could not read the peak RSS of '$*'"
}

# The runs recorded so far, per name: wall seconds, CPU seconds, peak RSS in MB (10^6 bytes).
declare -A run_wall=() run_cpu=() run_rss=()

# record_run NAME: adds the last measure's figures to NAME's runs.
record_run() {
  run_wall[$1]+="$(awk -v n="$WALL_NS" 'BEGIN { printf "%.4f", n / 1e9 }') "
  run_cpu[$1]+="$CPU_S "
  run_rss[$1]+="$(awk -v k="$RSS_KB" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }') "
}

# measure_run NAME OUT CMD...: measure, then record_run NAME.
measure_run() {
  local name=$1
  shift
  measure "$@"
  record_run "$name"
}

# run_figure NAME wall|cpu|rss: the median over NAME's runs; run_range: "[min-max]".
run_values() {
  case $2 in
    wall) echo "${run_wall[$1]:-}" ;;
    cpu) echo "${run_cpu[$1]:-}" ;;
    rss) echo "${run_rss[$1]:-}" ;;
    *) die "run_values: no figure '$2'" ;;
  esac
}
run_figure() {
  local values
  read -r -a values <<<"$(run_values "$1" "$2")"
  ((${#values[@]} > 0)) || die "no runs recorded for '$1'"
  median "${values[@]}"
}
run_range() {
  local digits=3
  [[ $2 == rss ]] && digits=1
  run_values "$1" "$2" | tr ' ' '\n' | grep -v '^$' | sort -g |
    awk -v d="$digits" 'NR == 1 { lo = $1 } { hi = $1 } END { printf "[%.*f-%.*f]", d, lo, d, hi }'
}
run_count() { run_values "$1" wall | wc -w; }

# report_pair TALLY_NAME PEER_NAME: each one's median wall time, CPU time and peak RSS over
# its runs, [the lowest-the highest], then the ratios of the medians, peer over tally.
report_pair() {
  local name
  printf '%-34s %4s  %-26s %-26s %-26s\n' "" runs "wall s: median [range]" "CPU s: median [range]" \
    "peak RSS MB: median [range]"
  for name in "$1" "$2"; do
    printf '%-34s %4d  %8.3f %-17s %8.3f %-17s %8.1f %-17s\n' "$name" "$(run_count "$name")" \
      "$(run_figure "$name" wall)" "$(run_range "$name" wall)" \
      "$(run_figure "$name" cpu)" "$(run_range "$name" cpu)" \
      "$(run_figure "$name" rss)" "$(run_range "$name" rss)"
  done
  awk -v tw="$(run_figure "$1" wall)" -v tc="$(run_figure "$1" cpu)" -v tr="$(run_figure "$1" rss)" \
      -v pw="$(run_figure "$2" wall)" -v pc="$(run_figure "$2" cpu)" -v pr="$(run_figure "$2" rss)" 'BEGIN {
    printf "%-34s %4s  %8s %-17s ", "peer / tally (medians)", "", times(pw / tw), ""
    printf "%8s %-17s ", (tc > 0 ? times(pc / tc) : "-"), ""
    printf "%8s\n", times(pr / tr)
  }
  function times(r) { return sprintf(r >= 1 ? "%.1fx" : "%.3fx", r) }'
}
