#!/usr/bin/env bash
# same_outputs.sh OLD_TALLY NEW_TALLY [PROFILE...]
#
# Proves that a change to a reader or a report left its outputs as they were: runs `top`,
# `cat --summary`, `traces`, `peek .` and `convert --to pprof` with both binaries on each
# PROFILE (default: every gperftools fixture in $FIXTURES, default /work/shared/fixtures,
# and the deep profile of top_libprofiler_vs_pprof.sh when it is there) and compares their
# standard output, standard error and exit status byte for byte. Prints one line a
# difference and exits non-zero when there is one.
set -euo pipefail

(($# >= 2)) || { echo "usage: $0 OLD_TALLY NEW_TALLY [PROFILE...]" >&2; exit 2; }
old=$1 new=$2
shift 2
profiles=("$@")
if ((${#profiles[@]} == 0)); then
  fixtures=${FIXTURES:-/work/shared/fixtures}
  profiles=("$fixtures"/gperf/*.prof)
  deep=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}/clang-libprofiler.prof
  [[ -s $deep ]] && profiles+=("$deep")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run BINARY TAG PROFILE ARGS...: outputs of one command into $work/TAG.{out,err,rc}.
run() {
  local binary=$1 tag=$2 profile=$3
  shift 3
  local rc=0
  "$binary" "$@" "$profile" >"$work/$tag.out" 2>"$work/$tag.err" || rc=$?
  echo "$rc" >"$work/$tag.rc"
}

differ=0 compared=0
for profile in "${profiles[@]}"; do
  for command in "top" "cat --summary" "traces" "peek ." "convert --to pprof -o -"; do
    read -ra args <<<"$command"
    run "$old" old "$profile" "${args[@]}"
    run "$new" new "$profile" "${args[@]}"
    compared=$((compared + 1))
    for part in out err rc; do
      if ! cmp -s "$work/old.$part" "$work/new.$part"; then
        echo "differ: tally $command $profile (${part})"
        differ=$((differ + 1))
      fi
    done
  done
done
echo "$compared commands on ${#profiles[@]} profiles: $differ differences"
((differ == 0))
