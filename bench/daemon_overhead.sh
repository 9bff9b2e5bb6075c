#!/usr/bin/env bash
# daemon_overhead.sh [IDLE_SECONDS] [ROUNDS]: what `tally daemon` costs at its default
# settings (cpu-clock at 99 Hz per CPU, frame-pointer stacks, a flush every 300 s), as
# ratios:
#   - the daemon's CPU time as a share of one CPU, on the machine as it is ("idle": no
#     workload of ours) for IDLE_SECONDS (default 30), and while a CPU-bound workload keeps
#     every CPU busy (../shared/fixtures/bin/split -t NCPUS -r ROUNDS, default 300);
#   - the workload's slowdown: its CPU time (user + system, which the sampling interrupts
#     add to) and its wall time with the daemon running over those without, runs
#     alternated, the median of RUNS each (default 5; wall time means little on a shared
#     machine);
#   - the same for `perf record -a -g -F 99` (the peer: system-wide sampling to a file,
#     RUNS runs too), when perf is installed.
# CPU time is the kernel's on-CPU time of the process (/proc/PID/schedstat, nanoseconds).
# Needs root (system-wide sampling). TALLY_BUILD selects the build tree (default
# <repo>/build/release). DAEMON_ARGS: options added to the daemon's (e.g. --off-cpu, whose
# cost is per context switch); PEER=0 skips perf.
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"
idle_seconds=${1:-30}
rounds=${2:-300}
runs=$(runs_wanted 5)
split=$repo_root/../shared/fixtures/bin/split
require_tally
[[ -x $split ]] || die "$split is missing (../shared/fixtures)"
[[ $(id -u) == 0 ]] || die "run as root: the daemon samples every CPU"
cpus=$(nproc)
work=$(mktemp -d)
daemon_pid=
cleanup() {
  [[ -n $daemon_pid ]] && kill -KILL "$daemon_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

oncpu_ns() { awk '{ print $1 }' "/proc/$1/schedstat"; }
now_ns() { date +%s%N; }
share() { awk -v c="$1" -v w="$2" 'BEGIN { printf "%.3f%%", 100 * c / w }'; }
# Runs the workload; prints "WALL_NS CPU_NS" (CPU: the children's user + system time).
workload() {
  python3 - "$split" "$cpus" "$rounds" <<'PY'
import resource, subprocess, sys, time
before = resource.getrusage(resource.RUSAGE_CHILDREN)
start = time.perf_counter_ns()
subprocess.run([sys.argv[1], "-t", sys.argv[2], "-r", sys.argv[3]], stdout=subprocess.DEVNULL, check=True)
wall = time.perf_counter_ns() - start
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
print(wall, int(cpu * 1e9))
PY
}

start_daemon() {
  rm -rf "$work/db" "$work/daemon.log"
  # shellcheck disable=SC2086  # DAEMON_ARGS is a list of options
  "$tally" daemon --db "$work/db" --log "$work/daemon.log" ${DAEMON_ARGS:-} &
  daemon_pid=$!
  for _ in $(seq 100); do
    "$tally" flush --db "$work/db" >/dev/null 2>&1 && return
    sleep 0.1
  done
  die "the daemon did not start: $(cat "$work/daemon.log")"
}
stop_daemon() {
  kill -TERM "$daemon_pid"
  wait "$daemon_pid" || true
  daemon_pid=
}

# Idle: the daemon alone.
start_daemon
c0=$(oncpu_ns "$daemon_pid"); w0=$(now_ns)
sleep "$idle_seconds"
c1=$(oncpu_ns "$daemon_pid"); w1=$(now_ns)
idle_share=$(share $((c1 - c0)) $((w1 - w0)))
stop_daemon

# Under the workload: alternate runs with and without the daemon.
without_wall=() without_cpu=() with_wall=() with_cpu=() busy_cpu=0 busy_wall=0
for ((i = 1; i <= runs; i++)); do
  read -r w c < <(workload)
  without_wall+=("$w"); without_cpu+=("$c")
  start_daemon
  c0=$(oncpu_ns "$daemon_pid"); w0=$(now_ns)
  read -r w c < <(workload)
  with_wall+=("$w"); with_cpu+=("$c")
  c1=$(oncpu_ns "$daemon_pid"); w1=$(now_ns)
  busy_cpu=$((busy_cpu + c1 - c0)); busy_wall=$((busy_wall + w1 - w0))
  "$tally" flush --db "$work/db" >/dev/null
  flush_line=$(grep 'tally flush' "$work/daemon.log" | tail -1)
  stop_daemon
done
busy_share=$(share "$busy_cpu" "$busy_wall")
ratio_line() {  # LABEL BASE_WALL BASE_CPU WALL CPU
  awk -v l="$1" -v bw="$2" -v bc="$3" -v w="$4" -v c="$5" 'BEGIN {
    printf "  %s: CPU %.2f s -> %.2f s (%.4fx), wall %.2f s -> %.2f s (%.4fx)\n", l, bc / 1e9, c / 1e9, c / bc, bw / 1e9, w / 1e9, w / bw }'
}

echo "tally daemon (defaults: cpu-clock 99 Hz/CPU, -g fp)${DAEMON_ARGS:+ $DAEMON_ARGS}:"
echo "  idle ${idle_seconds} s:            daemon CPU $idle_share of one CPU"
echo "  split -t $cpus -r $rounds:     daemon CPU $busy_share of one CPU"
ratio_line "workload slowdown (median of $runs)" "$(median "${without_wall[@]}")" "$(median "${without_cpu[@]}")" \
  "$(median "${with_wall[@]}")" "$(median "${with_cpu[@]}")"
echo "  ${flush_line#*tally daemon: }"

if [[ ${PEER:-1} != 0 ]] && command -v perf >/dev/null; then
  # --no-buildid: perf 6.1's build-id pass, after the recording, may abort (build-id.c
  # assertion) on the many short processes of a shared machine; it is not timed here.
  perf record -a -g -F 99 -q --no-buildid -o "$work/perf.data" -- sleep "$idle_seconds" >/dev/null 2>&1 &
  perf_pid=$!
  sleep 1
  # perf record's own process (the child is sleep).
  c0=$(oncpu_ns "$perf_pid"); w0=$(now_ns)
  sleep $((idle_seconds - 2))
  c1=$(oncpu_ns "$perf_pid"); w1=$(now_ns)
  wait "$perf_pid" || true
  perf_idle=$(share $((c1 - c0)) $((w1 - w0)))
  # Alternated with runs of its own without a profiler, as the daemon's were.
  perf_wall=() perf_cpu=() base_wall=() base_cpu=() perf_busy_cpu=0 perf_busy_wall=0
  for ((i = 1; i <= runs; i++)); do
    read -r w c < <(workload)
    base_wall+=("$w"); base_cpu+=("$c")
    perf record -a -g -F 99 -q --no-buildid -o "$work/perf.data" -- sleep 3600 >/dev/null 2>&1 &
    p=$!
    sleep 1
    c0=$(oncpu_ns "$p"); w0=$(now_ns)
    read -r w c < <(workload)
    perf_wall+=("$w"); perf_cpu+=("$c")
    c1=$(oncpu_ns "$p"); w1=$(now_ns)
    perf_busy_cpu=$((perf_busy_cpu + c1 - c0)); perf_busy_wall=$((perf_busy_wall + w1 - w0))
    kill -INT "$p"; wait "$p" || true
  done
  echo "perf record -a -g -F 99 (peer):"
  echo "  idle ${idle_seconds} s:            perf CPU $perf_idle of one CPU"
  echo "  split -t $cpus -r $rounds:     perf CPU $(share "$perf_busy_cpu" "$perf_busy_wall") of one CPU"
  ratio_line "workload slowdown (median of $runs)" "$(median "${base_wall[@]}")" "$(median "${base_cpu[@]}")" \
    "$(median "${perf_wall[@]}")" "$(median "${perf_cpu[@]}")"
fi
machine_note
