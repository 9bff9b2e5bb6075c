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
         fuzz_inflated_elf)

seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
TALLY=${TALLY:-$build/src/cli/tally} "$here/make_corpus.sh" "$seeds"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
failed=()
for target in "${targets[@]}"; do
  binary=$build/fuzz/$target
  if [ ! -x "$binary" ]; then
    echo "run_all.sh: $binary is missing (build with the \"fuzz\" preset)" >&2
    failed+=("$target")
    continue
  fi
  corpus=$build/fuzz-corpus/$target
  artifacts=$build/fuzz-artifacts/$target
  log=$build/fuzz-$target.log
  mkdir -p "$corpus" "$artifacts"
  dict=()
  if [ -f "$here/$target.dict" ]; then dict=(-dict="$here/$target.dict"); fi
  echo "=== $target: ${seconds} s (log: $log)"
  if "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" \
       "$corpus" "$seeds/$target" >"$log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^#[0-9]+.*DONE" "$log" | tail -2 || true
  else
    echo "run_all.sh: $target FAILED; the end of its log:" >&2
    tail -40 "$log" >&2
    ls -l "$artifacts" >&2
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run_all.sh: failing targets: ${failed[*]}" >&2
  exit 1
fi
echo "run_all.sh: ${#targets[@]} targets ran ${seconds} s each without finding a crash"
