#!/usr/bin/env bash
# top_symbolized_vs_pprof.sh
#
# Times `tally top` against `pprof -top` on a large real profile that both must symbolize
# from the binaries: ~1M cpu-clock samples of clang-14 compiling tally's own sources at -O2,
# whose stacks go through libLLVM-14 and libclang-cpp (big shared libraries, .dynsym only
# without their debug packages), libstdc++ and libc. Prints wall and CPU time, peak RSS
# and the ratios, and checks that both tools list the same top rows (name, flat, flat%,
# sum%, cum, cum%).
#
# The input is made once and kept in the data directory (a few minutes):
#   1. `perf record -e cpu-clock:u -F FREQ -g` on clang++-14 -O2 compiling src/**/*.cc one
#      after the other (frame-pointer call chains: clang has none, so the stacks are short
#      and many are distinct, which is what makes the profile hard);
#   2. `perf script -F pid,ip,dso`: per frame the address inside its DSO (perf 6 prints the
#      DSO-relative address, the link-time address for these files) and the DSO's path, no
#      symbols; frames outside any file ([unknown], [vdso]) are dropped;
#   3. a small converter (python, below) lays each DSO out at an address of its own (an
#      ET_EXEC program where it was linked) and writes the first SAMPLES samples as a
#      gperftools CPU profile (the legacy format both tools read) with the layout as
#      /proc/self/maps text;
#   4. `tally convert --symbolize=none --to pprof` turns it into clang-top.pb.gz: mappings
#      with paths, ranges and offsets, locations with raw addresses, no functions.
# Both tools are then timed on clang-top.pb.gz, each symbolizing it itself (pprof runs
# llvm-symbolizer or addr2line and nm on the binaries), RUNS times each (default 3),
# alternated; the medians are reported, and the rows are compared after every run.
#
# Environment:
#   TALLY_BUILD        build directory with src/cli/tally (default <repo>/build/release)
#   PPROF              pprof (default /opt/peers/pprof)
#   CLANG              the compiler to profile (default clang++-14)
#   TALLY_BENCH_DATA   where the input is kept (default ${TMPDIR:-/tmp}/tally-bench);
#                      delete clang-top.* there to make it again
#   SAMPLES            samples to keep (default 1000000); FREQ perf's frequency (10000)
#   NODECOUNT          rows printed by both tools (default 60)
#   COMPARED           resolved rows that must agree (default 15; pprof drops rows under
#                      0.5% of the total, which leaves about 20 here)
#   RUNS               runs of each tool (default 3)
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

pprof=${PPROF:-/opt/peers/pprof}
clang=${CLANG:-clang++-14}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
samples=${SAMPLES:-1000000}
freq=${FREQ:-10000}
nodecount=${NODECOUNT:-60}
runs=$(runs_wanted 3)

[[ $# -eq 0 ]] || die "usage: $0 (no arguments; see the environment variables in the header)"
require_tally
[[ -x $pprof ]] || die "no pprof at $pprof (set PPROF)"

make_work

mkdir -p "$data_dir"
profile=$data_dir/clang-top.pb.gz
if [[ ! -s $profile ]]; then
  command -v perf >/dev/null || die "no perf (apt-get install linux-perf)"
  command -v "$clang" >/dev/null || die "no $clang (apt-get install clang-14), or set CLANG"
  echo "making $profile (perf record of $clang, a few minutes)..." >&2
  perf_data=$data_dir/clang-top.perf.data
  sources=$(cd "$repo_root" && find src -name '*.cc' | sort)
  # One compile after the other; a file that does not compile still gives samples. A
  # recording left by an interrupted run is used again. --no-buildid: perf 6.1's build-id
  # pass over thousands of short-lived clang processes aborts (build-id.c assertion, then a
  # buffer overflow), and the converter below needs no build ids.
  [[ -s $perf_data ]] || (cd "$repo_root" && perf record -q --no-buildid -e cpu-clock:u -F "$freq" -g -o "$perf_data" -- bash -c '
      clang=$1; shift
      for f in "$@"; do "$clang" -O2 -std=c++20 -Isrc -DFMT_SHARED -c "$f" -o /dev/null 2>/dev/null || true; done
    ' compile "$clang" $sources) >/dev/null 2>"$work/perf.err" || {
    cat "$work/perf.err" >&2
    die "perf record failed"
  }
  cat >"$work/convert.py" <<'PY'
# perf script (pid,ip,dso) -> gperftools CPU profile: header, one record per distinct
# stack (count, depth, PCs leaf first), trailer, then the layout as maps text.
import os, struct, sys
out_path, keep, freq = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
layout = {}   # path -> (start, end, bias): address = bias + DSO-relative address
def place(path):
    if path not in layout:
        with open(path, 'rb') as f:
            header = f.read(4096)
        size = (os.path.getsize(path) + 0xfff) & ~0xfff
        if header[16] == 2:  # ET_EXEC: perf prints its link-time addresses; map it there
            phoff, = struct.unpack_from('<Q', header, 32)
            entry_size, count = struct.unpack_from('<HH', header, 54)
            loads = [struct.unpack_from('<IIQQ', header, phoff + i * entry_size)
                     for i in range(count)]
            first = min((vaddr - offset for kind, _, offset, vaddr in loads if kind == 1))
            layout[path] = (first, first + size, 0)
        else:
            start = 0x7e0000000000 + len(layout) * 0x100000000
            layout[path] = (start, start + size, start)
    return layout[path]
stacks = {}
kept = 0
stack = None
def finish():
    global kept
    if stack and kept < keep:
        key = tuple(stack)
        stacks[key] = stacks.get(key, 0) + 1
        kept += 1
for line in sys.stdin:
    if line.startswith('\t'):
        address, _, dso = line.strip().partition(' ')
        path = dso.strip('()')
        if stack is not None and path.startswith('/') and os.path.isfile(path):
            stack.append(place(path)[2] + int(address, 16))
    elif line.strip():
        finish()
        stack = []
finish()
words = [0, 3, 0, 1000000 // freq, 0]
for key, count in stacks.items():
    words += [count, len(key)] + list(key)
words += [0, 1, 0]
with open(out_path, 'wb') as out:
    out.write(struct.pack(f'<{len(words)}Q', *words))
    for path, (start, end, bias) in sorted(layout.items(), key=lambda m: m[1]):
        out.write(f"{start:x}-{end:x} r-xp 00000000 00:00 0 {path}\n".encode())
print(f"{kept} samples, {len(stacks)} distinct stacks, {len(layout)} files", file=sys.stderr)
PY
  # perf 6.1's script, too, may abort part-way through a long recording of many short
  # processes (build-id.c:1010 assertion, then a stack smash; 2.28M of the samples were out
  # by then here): the converter keeps the first SAMPLES, so the profile is whole if it got
  # that many.
  set +o pipefail
  perf script -i "$perf_data" -F pid,ip,dso 2>"$work/perf-script.err" |
    python3 "$work/convert.py" "$data_dir/clang-top.prof" "$samples" "$freq" 2>"$work/convert.err"
  statuses=("${PIPESTATUS[@]}")
  set -o pipefail
  cat "$work/convert.err" >&2
  ((statuses[1] == 0)) || die "converting perf script's output failed"
  kept=$(awk 'NR == 1 { print $1 }' "$work/convert.err")
  if ((statuses[0] != 0)); then
    ((kept == samples)) || die "perf script failed after $kept samples: $(tail -3 "$work/perf-script.err")"
    echo "(perf script stopped with status ${statuses[0]} after the first $samples samples were" \
      "converted: $(grep -v '^$' "$work/perf-script.err" | tail -1))" >&2
  fi
  "$tally" convert "$data_dir/clang-top.prof" --symbolize=none --to pprof -o "$profile" ||
    die "tally convert of the made profile failed"
  rm -f "$perf_data"
fi

# Same top functions. tally names an address it cannot resolve "[libfoo.so+0x1234]" where
# pprof folds all of a file's unresolved addresses into one "[libfoo.so]" row (here the
# functions that libclang-cpp and libLLVM do not export: they have no .symtab), so those
# rows are set aside on both sides; the first COMPARED resolved rows must then agree on
# flat% and cum% (the percentages: the two pick their display unit from the smallest row
# shown, which the folded rows change) and on the name, or be two names of one function:
# pprof asks llvm-symbolizer, which names some of libc's functions by another alias than
# addr2line and tally do ("cfree" for "__GI___libc_free"); such a pair passes when both
# are symbols at the same address of one of the profile's files or their debug files.
compared=${COMPARED:-15}
resolved_rows() {
  sed -n '/flat  flat%/,$p' "$1" | tail -n +2 |
    awk -v tally="$2" '{ name = ""; first = tally ? 7 : 6
                         for (i = first; i <= NF; i++) name = name (name ? " " : "") $i
                         if (name !~ /^\[/) print name "|" $2 "|" $5 }' | head -n "$compared"
}
same_top_rows() {
  resolved_rows "$work/pprof.txt" 0 >"$work/pprof.rows"
  resolved_rows "$work/tally.txt" 1 >"$work/tally.rows"
  [[ $(wc -l <"$work/pprof.rows") -eq $compared ]] ||
    die "pprof printed fewer than $compared resolved rows (lower COMPARED)"
  sed -n 's/^[0-9a-f]*-[0-9a-f]* r-xp [0-9a-f]* [0-9:]* [0-9]* //p' "$data_dir/clang-top.prof" |
    sort -u >"$work/files"
  python3 - "$work/pprof.rows" "$work/tally.rows" "$work/files" <<'PY' || die "tally top and pprof -top list different top functions"
import os, subprocess, sys
pprof_rows = [l.rstrip('\n').split('|') for l in open(sys.argv[1])]
tally_rows = [l.rstrip('\n').split('|') for l in open(sys.argv[2])]
files = [l.strip() for l in open(sys.argv[3]) if l.strip()]
symbols = None
def addresses_of(name):
    global symbols
    if symbols is None:  # name -> {(file, address)}, from each file and its debug file
        symbols = {}
        for path in files:
            paths = [path]
            notes = subprocess.run(['readelf', '-n', path], capture_output=True, text=True).stdout
            for line in notes.splitlines():
                if 'Build ID:' in line:
                    build_id = line.split()[-1]
                    paths.append(f'/usr/lib/debug/.build-id/{build_id[:2]}/{build_id[2:]}.debug')
            for p in filter(os.path.exists, paths):
                out = subprocess.run(['readelf', '-sW', p], capture_output=True, text=True).stdout
                for line in out.splitlines():
                    f = line.split()
                    if len(f) >= 8 and f[3] in ('FUNC', 'IFUNC'):
                        symbols.setdefault(f[7].split('@')[0], set()).add((path, f[1]))
    return symbols.get(name, set())
bad = 0
for (pn, pf, pc), (tn, tf, tc) in zip(pprof_rows, tally_rows):
    same = pn == tn or bool(addresses_of(pn) & addresses_of(tn))
    if not same or (pf, pc) != (tf, tc):
        print(f"pprof: {pn} {pf} {pc}\ntally: {tn} {tf} {tc}", file=sys.stderr)
        bad += 1
    elif pn != tn:
        print(f"(aliases of one function: pprof {pn}, tally {tn})")
sys.exit(1 if bad or len(pprof_rows) != len(tally_rows) else 0)
PY
}
t_name="tally top --nodecount=$nodecount"
p_name="pprof -top -nodecount=$nodecount"
for ((i = 1; i <= runs; i++)); do
  measure_run "$t_name" "$work/tally.txt" "$tally" top --nodecount="$nodecount" "$profile"
  echo "running pprof -top (slow), run $i of $runs ..." >&2
  measure_run "$p_name" "$work/pprof.txt" "$pprof" -top -nodecount="$nodecount" "$profile"
  same_top_rows
done
echo "same $compared top resolved functions (name, flat%, cum%) in both, in every run"
head -n 12 "$work/tally.txt"

report_pair "$t_name" "$p_name"
machine_note
