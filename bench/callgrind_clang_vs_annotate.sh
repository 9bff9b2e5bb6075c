#!/usr/bin/env bash
# callgrind_clang_vs_annotate.sh
#
# Times `tally cat --summary FILE` and `tally top FILE` against valgrind's
# `callgrind_annotate FILE` on a callgrind file with a position per instruction, the shape
# a user profiling a large C++ program has: valgrind --tool=callgrind --dump-instr=yes
# --dump-line=yes on clang -cc1 compiling one of tally's sources at -O2 (about 29 MB,
# 2.5M cost lines, 2.3M positions, 24k functions, one part). Prints wall and CPU time, peak
# RSS and the ratios (callgrind_annotate / tally) of the medians.
#
# Builds nothing. Environment:
#   TALLY_BUILD        build directory with src/cli/tally (default: <repo>/build/release)
#   VALGRIND, CALLGRIND_ANNOTATE   the tools (default: on PATH)
#   CLANG              the clang++ whose -cc1 is profiled (default: clang++ on PATH, else
#                      the newest /usr/lib/llvm-*/bin/clang++)
#   SOURCE             the file compiled (default: <repo>/src/analyze/top_text.cc)
#   TALLY_BENCH_DATA   where the made file (clang-instr.callgrind) and its cc1 command line
#                      (clang-instr.cc1.cmd) are kept between runs (default:
#                      ${TMPDIR:-/tmp}/tally-bench); delete them to make them again
#   RUNS               runs of each command (default: 3), alternated
#
# Checks, so that a fast but wrong reader fails: the Ir total of `tally cat --summary`, the
# total of `tally top` and callgrind_annotate's PROGRAM TOTALS must all equal the file's
# summary: line.
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

valgrind=${VALGRIND:-$(command -v valgrind || true)}
annotate=${CALLGRIND_ANNOTATE:-$(command -v callgrind_annotate || true)}
clang=${CLANG:-$(command -v clang++ || ls -d /usr/lib/llvm-*/bin/clang++ 2>/dev/null | sort -V | tail -n 1 || true)}
source_file=${SOURCE:-$repo_root/src/analyze/top_text.cc}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
runs=$(runs_wanted 3)

[[ $# -eq 0 ]] || die "usage: $0 (no arguments; see the environment variables in the header)"
require_tally
[[ -n $annotate && -x $annotate ]] || die "no callgrind_annotate (package valgrind), or set CALLGRIND_ANNOTATE"

make_work

# --- the input: made once (valgrind on clang takes several minutes) ---
mkdir -p "$data_dir" || die "cannot create $data_dir"
input=$data_dir/clang-instr.callgrind
if [[ ! -s $input ]]; then
  [[ -n $valgrind && -x $valgrind ]] || die "no valgrind (apt-get install valgrind), or set VALGRIND"
  [[ -n $clang && -x $clang ]] || die "no clang++ (apt-get install clang), or set CLANG"
  [[ -f $source_file ]] || die "no $source_file to compile; set SOURCE"
  # The cc1 command the driver would run: valgrind then follows one process, the compiler.
  "$clang" -### -O2 -std=c++20 -I "$repo_root/src" -c "$source_file" -o "$work/out.o" \
    2>"$work/driver.txt" || die "$clang -### failed: $(tail -3 "$work/driver.txt")"
  grep -m 1 '"-cc1"' "$work/driver.txt" >"$data_dir/clang-instr.cc1.cmd" ||
    die "no -cc1 line in the output of $clang -###"
  echo "making $input with valgrind on clang -cc1 (several minutes) ..." >&2
  (cd "$work" && eval "\"$valgrind\" --tool=callgrind --dump-instr=yes --dump-line=yes \
      --callgrind-out-file=\"$input.tmp\" $(cat "$data_dir/clang-instr.cc1.cmd")" \
      >"$work/valgrind.out" 2>"$work/valgrind.err") ||
    die "valgrind failed: $(tail -5 "$work/valgrind.err")"
  mv "$input.tmp" "$input"
fi
bytes=$(stat -c %s "$input")
expect_ir=$(awk '/^summary:/ { print $2; exit }' "$input")
[[ -n $expect_ir ]] || die "$input has no summary: line"

# --- tally's two reports and callgrind_annotate, $runs runs each, alternated ---
a_name="callgrind_annotate"
for ((i = 1; i <= runs; i++)); do
  measure_run "tally cat --summary" "$work/cat.out" "$tally" cat --summary "$input"
  got=$(awk '$1 == "total" && $2 == "Ir" { print $3 }' "$work/cat.out")
  [[ $got == "$expect_ir" ]] || die "tally cat --summary says total Ir $got, the file $expect_ir"
  measure_run "tally top" "$work/top.out" "$tally" top "$input"
  got=$(awk '/ total$/ { print $(NF - 1); exit }' "$work/top.out")
  [[ $got == "$expect_ir" ]] || die "tally top says a total of '$got', the file $expect_ir"
  echo "running callgrind_annotate (slow), run $i of $runs ..." >&2
  measure_run "$a_name" "$work/annotate.out" "$annotate" "$input"
  got=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$work/annotate.out")
  [[ $got == "$expect_ir" ]] || die "callgrind_annotate's PROGRAM TOTALS is '$got', the file $expect_ir"
done

# --- report ---
awk -v bytes="$bytes" -v ir="$expect_ir" -v lines="$(grep -c '^[0-9+*-]' "$input")" 'BEGIN {
  printf "input: %.1f MB, %d cost lines, %.0f Ir (valgrind --tool=callgrind --dump-instr=yes " \
    "--dump-line=yes on clang -cc1 -O2)\n", bytes / 1e6, lines, ir }'
for name in "tally cat --summary" "tally top"; do
  echo
  report_pair "$name" "$a_name"
done
echo
machine_note
