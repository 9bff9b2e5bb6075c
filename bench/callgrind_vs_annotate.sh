#!/usr/bin/env bash
# callgrind_vs_annotate.sh
#
# Times tally's callgrind reader against valgrind's `callgrind_annotate FILE` on the same
# real callgrind file of 100+ MB: valgrind's callgrind on /usr/bin/python3 compiling and
# diffing 60 modules of its standard library, with --dump-instr=yes --collect-jumps=yes and
# --dump-every-bb=3000000, whose ~290 dumps are concatenated into one multi-part file (the
# numbered dumps in order, then the final one), as the format allows. Prints wall and CPU
# time, MB/s of the input, peak RSS and the ratios.
#
# tally's side: `tally cat --summary FILE` (read + summary, what
# callgrind_annotate does) and `tally convert FILE -o /dev/null --to callgrind` (read +
# write) when the CLI reads callgrind (a probe on a tiny file decides), and
# bench/callgrind_parse (callgrind::read_profile alone) when it is built. Each command and
# callgrind_annotate run RUNS times, alternated; the medians are reported.
#
# Builds nothing. Environment:
#   TALLY_BUILD        build directory with src/cli/tally and bench/callgrind_parse
#                      (default: <repo>/build/release; a Release build, for timing)
#   VALGRIND, CALLGRIND_ANNOTATE, PYTHON   the tools (default: on PATH; /usr/bin/python3)
#   TALLY_BENCH_DATA   where the made file is kept between runs
#                      (default: ${TMPDIR:-/tmp}/tally-bench); delete it to make it again
#   RUNS               runs of each command (default: 3)
#
# Checks, so that a fast but wrong reader fails: the Ir total that `tally cat --summary`
# and callgrind_parse print must equal the sum of the file's totals: lines (valgrind writes
# each part's), and their part count the number of dumps; callgrind_annotate's PROGRAM
# TOTALS must equal the last part's summary: (it keeps the last summary: line it reads,
# while summing the functions of every part). annotate warns about the header lines of
# parts 2..N ("line N malformed, ignoring"), a dozen per part; they are counted, not shown.
# MB here is 10^6 bytes.
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

valgrind=${VALGRIND:-$(command -v valgrind || true)}
annotate=${CALLGRIND_ANNOTATE:-$(command -v callgrind_annotate || true)}
python=${PYTHON:-/usr/bin/python3}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
runs=$(runs_wanted 3)

[[ $# -eq 0 ]] || die "usage: $0 (no arguments; see the environment variables in the header)"
parse=$build/bench/callgrind_parse
[[ -n $valgrind && -x $valgrind ]] || die "no valgrind (apt-get install valgrind), or set VALGRIND"
[[ -n $annotate && -x $annotate ]] || die "no callgrind_annotate (package valgrind), or set CALLGRIND_ANNOTATE"
[[ -x $python ]] || die "no $python to profile; set PYTHON to a python3 binary (not a shim script)"
[[ -x /usr/bin/time ]] || command -v python3 >/dev/null ||
  die "need /usr/bin/time or python3 to measure peak memory"

make_work

# --- the input: made once (valgrind takes a few minutes) ---
mkdir -p "$data_dir" || die "cannot create $data_dir"
input=$data_dir/callgrind-python-stdlib.callgrind
if [[ ! -s $input ]]; then
  echo "making $input with valgrind (a few minutes) ..." >&2
  cat >"$work/workload.py" <<'EOF'
import ast, glob, json, re, decimal, difflib
n = 0
for path in sorted(glob.glob('/usr/lib/python3*/*.py'))[:60]:
    src = open(path, encoding='utf-8', errors='replace').read()
    tree = ast.parse(src)
    compile(tree, path, 'exec')
    n += len(json.dumps(ast.dump(tree)[:20000]))
    n += len(re.findall(r'def (\w+)\(', src))
    n += int(decimal.Decimal(len(src)).sqrt())
    n += len(list(difflib.unified_diff(src.splitlines()[:200], src.splitlines()[100:300])))
print(n)
EOF
  mkdir "$work/dumps"
  (cd "$work/dumps" && "$valgrind" --tool=callgrind --dump-instr=yes --collect-jumps=yes \
      --dump-every-bb=3000000 --callgrind-out-file="$work/dumps/callgrind.out" \
      "$python" "$work/workload.py" >"$work/valgrind.out" 2>"$work/valgrind.err") ||
    die "valgrind failed: $(tail -5 "$work/valgrind.err")"
  dumps=$(find "$work/dumps" -name 'callgrind.out.*' | wc -l)
  [[ -s $work/dumps/callgrind.out ]] || die "valgrind wrote no final dump"
  { for ((i = 1; i <= dumps; i++)); do cat "$work/dumps/callgrind.out.$i"; done
    cat "$work/dumps/callgrind.out"; } >"$input.tmp" || die "cannot write $input"
  mv "$input.tmp" "$input"
fi
bytes=$(stat -c %s "$input")
((bytes >= 100000000)) || echo "callgrind_vs_annotate: warning: $input has only $bytes bytes" >&2
expect_parts=$(grep -c '^events:' "$input")
expect_ir=$(awk '/^totals:/ { s += $2 } END { printf "%.0f", s }' "$input")
last_summary=$(awk '/^summary:/ { s = $2 } END { printf "%.0f", s }' "$input")

# --- which tally: the CLI if it reads callgrind, else the parse tool ---
printf '# callgrind format\nversion: 1\npositions: line\nevents: Ir\nfl=a.c\nfn=main\n1 5\ncfn=f\ncalls=1 9\n2 3\nfn=f\n9 3\n' \
  >"$work/probe.callgrind"
labels=()
commands=()  # one command per entry, its words separated by newlines (no path has one)
if [[ -x $tally ]] && "$tally" convert "$work/probe.callgrind" -o "$work/probe.out" --to callgrind \
     >/dev/null 2>&1 && grep -q '^events: Ir' "$work/probe.out"; then
  # Read + summary, as callgrind_annotate does; then read + write.
  labels+=("tally cat --summary")
  commands+=("$tally"$'\n'cat$'\n'--summary$'\n'"$input")
  labels+=("tally convert --to callgrind")
  commands+=("$tally"$'\n'convert$'\n'"$input"$'\n'-o$'\n'/dev/null$'\n'--to$'\n'callgrind)
fi
if [[ -x $parse ]]; then
  labels+=("callgrind_parse (read_profile)")
  commands+=("$parse"$'\n'"$input")
fi
((${#commands[@]} > 0)) || die "neither a tally that converts callgrind at $tally nor $parse; build
  the targets tally and callgrind_parse in $build, or point TALLY_BUILD at a build directory"

# check_reading OUT: the "parts N" and "total Ir N" lines that `tally cat --summary` and
# callgrind_parse print must give the file's part count and Ir total.
check_reading() {
  local got_parts got_ir
  got_parts=$(awk '$1 == "parts" { print $2 }' "$1")
  got_ir=$(awk '$1 == "total" && $2 == "Ir" { print $3 }' "$1")
  if [[ $got_parts != "$expect_parts" || $got_ir != "$expect_ir" ]]; then
    echo "callgrind_vs_annotate: tally's reading disagrees with the file: parts $got_parts" \
         "(expected $expect_parts), Ir $got_ir (expected the totals: sum $expect_ir)" >&2
    cat "$1" >&2
    exit 1
  fi
}

# --- every command and callgrind_annotate, $runs runs each, alternated ---
a_name="callgrind_annotate"
for ((i = 1; i <= runs; i++)); do
  for ((c = 0; c < ${#commands[@]}; c++)); do
    mapfile -t cmd <<<"${commands[c]}"
    measure_run "${labels[c]}" "$work/tally.out" "${cmd[@]}"
    [[ ${labels[c]} == "tally convert"* ]] || check_reading "$work/tally.out"
  done
  echo "running callgrind_annotate (slow), run $i of $runs ..." >&2
  measure_run "$a_name" "$work/annotate.out" "$annotate" "$input"
  annotate_warnings=$(grep -c 'WARNING' "$work/stderr" || true)
  got_total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' "$work/annotate.out")
  [[ $got_total == "$last_summary" ]] ||
    die "callgrind_annotate's PROGRAM TOTALS is '$got_total', not the last summary: $last_summary"
done

# --- report ---
awk -v bytes="$bytes" -v parts="$expect_parts" -v ir="$expect_ir" 'BEGIN {
  printf "input: %.1f MB, %d parts, %.0f Ir (valgrind --tool=callgrind --dump-instr=yes " \
    "--collect-jumps=yes --dump-every-bb=3000000 python3)\n", bytes / 1e6, parts, ir }'
for ((c = 0; c < ${#commands[@]}; c++)); do
  echo
  report_pair "${labels[c]}" "$a_name"
  awk -v bytes="$bytes" -v t="$(run_figure "${labels[c]}" wall)" 'BEGIN {
    printf "MB/s of the input (median wall time): %.1f\n", bytes / 1e6 / t }'
done
echo
echo "(callgrind_annotate warned $annotate_warnings times a run about the later parts' header lines)"
machine_note
