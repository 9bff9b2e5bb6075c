# measure.sh: sourced at the top of the bench/*_vs_*.sh scripts, after `set -euo pipefail`.
#
# die MESSAGE: prints "SCRIPT: MESSAGE" on stderr and exits 1.
# repo_root: this checkout; build: $TALLY_BUILD, default <repo>/build/release; tally: the
# tally binary in it.
# require_tally: dies when $tally is not built.
# make_work: sets $work, a scratch directory removed when the script exits.
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

# measure OUT CMD...: runs CMD with stdout to OUT and sets WALL_NS (wall time, ns), CPU_S
# (user + system, s) and RSS_KB (peak resident memory); if CMD fails, shows its stderr and
# exits. GNU time when installed, else a python3 wrapper around getrusage.
measure() {
  local out=$1
  shift
  local start end rc=0
  if [[ -x /usr/bin/time ]]; then
    start=$(date +%s%N)
    /usr/bin/time -f "%M %U %S" -o "$work/rss" "$@" >"$out" 2>"$work/stderr" || rc=$?
    end=$(date +%s%N)
    WALL_NS=$((end - start))
    local user sys
    read -r RSS_KB user sys < <(tail -n 1 "$work/rss")
    CPU_S=$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')
  else
    local result
    result=$(python3 -c '
import resource, subprocess, sys, time
with open(sys.argv[1], "wb") as out, open(sys.argv[2], "wb") as err:
    start = time.perf_counter_ns()
    rc = subprocess.call(sys.argv[3:], stdout=out, stderr=err)
    wall = time.perf_counter_ns() - start
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, r.ru_maxrss, r.ru_utime + r.ru_stime, rc)
' "$out" "$work/stderr" "$@") || die "python3 measurement wrapper failed"
    read -r WALL_NS RSS_KB CPU_S rc <<<"$result"
  fi
  if [[ $rc != 0 ]]; then
    echo "'$*' failed (exit $rc); its stderr:" >&2
    head -c 4000 "$work/stderr" >&2
    exit 1
  fi
  [[ $RSS_KB =~ ^[0-9]+$ ]] || die "could not read the peak RSS of '$*'"
}
