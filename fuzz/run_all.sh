#!/usr/bin/env bash
# run_all.sh BUILD_DIR [SECONDS]: runs every libFuzzer target of a fuzz build (the "fuzz"
# preset) for SECONDS each (default 30) on seeds from make_corpus.sh, and fails if any
# finds a crash, a sanitizer report, a broken invariant, a hang or a memory blow-up.
# The corpus grows in BUILD_DIR/fuzz-corpus/TARGET across runs; crashing inputs are kept
# in BUILD_DIR/fuzz-artifacts/TARGET/ (replay: BUILD_DIR/fuzz/TARGET FILE).
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [SECONDS]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=${2:-30}
here=$(cd "$(dirname "$0")" && pwd)
targets=(fuzz_gperf fuzz_dcpi fuzz_detect fuzz_folded fuzz_perfscript fuzz_pprof fuzz_callgrind
         fuzz_dwarf_unwind fuzz_dwarf_readers fuzz_perf_records fuzz_image_index
         fuzz_inflated_elf fuzz_call_frames fuzz_serve_query fuzz_runtime_cfi fuzz_reports)

seeds=$(mktemp -d)
status_dir=$(mktemp -d)
trap 'rm -rf "$seeds" "$status_dir"' EXIT
TALLY=${TALLY:-$build/src/cli/tally} "$here/make_corpus.sh" "$seeds"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
# Targets run side by side, one per core (FUZZ_JOBS, default the number of cores): each
# still gets SECONDS of one core, and CI's fuzz stage takes a fraction of the time.
jobs=${FUZZ_JOBS:-$(nproc)}

run_target() {
  local target=$1 binary=$build/fuzz/$1
  local corpus=$build/fuzz-corpus/$1 artifacts=$build/fuzz-artifacts/$1
  local log=$build/fuzz-$1.log
  if [ ! -x "$binary" ]; then
    echo "run_all.sh: $binary is missing (build with the \"fuzz\" preset)" >&2
    echo 1 >"$status_dir/$target"
    return
  fi
  mkdir -p "$corpus" "$artifacts"
  local dict=()
  if [ -f "$here/$target.dict" ]; then dict=(-dict="$here/$target.dict"); fi
  if "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" \
       "$corpus" "$seeds/$target" >"$log" 2>&1; then
    echo "=== $target: ${seconds} s: $(grep -E "^stat::number_of_executed_units" "$log" | tail -1)"
    echo 0 >"$status_dir/$target"
  else
    { echo "run_all.sh: $target FAILED; the end of its log ($log):"
      tail -40 "$log"
      ls -l "$artifacts"; } >&2
    echo 1 >"$status_dir/$target"
  fi
}

for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_target "$target" &
done
wait

failed=()
for target in "${targets[@]}"; do
  [ "$(cat "$status_dir/$target" 2>/dev/null)" = 0 ] || failed+=("$target")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_all.sh: failing targets: ${failed[*]}" >&2
  exit 1
fi
echo "run_all.sh: ${#targets[@]} targets ran ${seconds} s each without finding a crash"
