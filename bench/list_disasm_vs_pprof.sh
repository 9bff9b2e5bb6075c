#!/usr/bin/env bash
# list_disasm_vs_pprof.sh [RECORDS]
#
# Times `tally list` and `tally disasm` against `pprof -list` and `pprof -disasm` on the
# same input, with the same binaries and sources:
#  - small: the fixture split.pb.gz (what a user runs interactively; start-up dominates),
#    10 runs of each, mean wall time;
#  - large: a gperftools profile of RECORDS records (default 1,000,000) whose stacks are
#    those of fixtures/gperf/split.prof with the leaf moved to random addresses inside
#    func_a..func_d and the run_rounds call sites, so that every tool symbolizes a few
#    hundred addresses of fixtures/bin/split and aggregates a million samples.
# Both tools get -show/--show '^func_|^run_rounds' for disasm: pprof -disasm misplaces
# samples when its first graph node is in another object (tests/analyze/disasm_peer_test.cc).
# Prints wall and CPU time, peak RSS and the ratios (CPU time too, the steadier figure on a
# loaded machine; GNU time's 10 ms resolution hides it for the small runs), and checks
# that both print the same ROUTINE totals.
#
# Environment: TALLY_BUILD (default <repo>/build/release), PPROF (default /opt/peers/pprof).
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

build=$(cd "$build" && pwd)
tally=$build/src/cli/tally
pprof=${PPROF:-/opt/peers/pprof}
shared=${TALLY_SHARED_DIR:-$repo_root/../shared}
records=${1:-1000000}
fixtures=$shared/fixtures
bin=$fixtures/bin
sources=$shared/peers/workloads

require_tally
[[ -x $pprof ]] || die "no pprof at $pprof (set PPROF)"
[[ -d $fixtures/gperf ]] || die "no fixtures in $fixtures"

make_work

# The large profile: split.prof's header, records and /proc/self/maps, with new records.
python3 - "$fixtures/gperf/split.prof" "$work/big.prof" "$records" "$(nm -n "$bin/split")" <<'PY'
import random, struct, sys
src, out, records, nm = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
data = open(src, "rb").read()
words = struct.unpack_from("<%dQ" % (len(data) // 8), data)
header = words[:5]
i, stacks = 5, []
while words[i:i + 3] != (0, 1, 0):
    count, depth = words[i], words[i + 1]
    stacks.append((count, list(words[i + 2:i + 2 + depth])))
    i += 2 + depth
maps = data[(i + 3) * 8:]
# The executable mapping of split: runtime = start + (link - offset).
exe = next(l for l in maps.decode().splitlines() if "r-xp" in l and l.endswith("/split"))
span, _, offset = exe.split()[:3]
start = int(span.split("-")[0], 16); offset = int(offset, 16)
syms = [(int(a, 16), n) for a, t, n in (l.split() for l in nm.splitlines() if len(l.split()) == 3)]
syms.sort()
ranges = {n: (a, syms[k + 1][0]) for k, (a, n) in enumerate(syms[:-1])}
rnd = random.Random(1)
def runtime(link): return start + link - offset
leaf_funcs = ["func_a"] * 4 + ["func_b"] * 3 + ["func_c"] * 2 + ["func_d"]
body = []
for r in range(records):
    count, stack = stacks[rnd.randrange(len(stacks))]
    f = rnd.choice(leaf_funcs)
    lo, hi = ranges[f]
    stack = [runtime(rnd.randrange(lo, hi))] + stack[1:]
    body.append(struct.pack("<%dQ" % (2 + len(stack)), 1, len(stack), *stack))
with open(out, "wb") as f:
    f.write(struct.pack("<5Q", *header)); f.write(b"".join(body))
    f.write(struct.pack("<3Q", 0, 1, 0)); f.write(maps)
PY

routines() { grep -E '^(Total|ROUTINE|.*\(flat, cum\))' "$1" | sed 's/ in .*\///'; }

# run_pair NAME TALLY_ARGS... -- PPROF_ARGS...: one timed run of each, outputs compared.
run_pair() {
  local name=$1
  shift
  local targs=() pargs=()
  while [[ $1 != -- ]]; do targs+=("$1"); shift; done
  shift
  pargs=("$@")
  measure "$work/$name.tally" "$tally" "${targs[@]}"
  T_WALL=$WALL_NS T_CPU=$CPU_S T_RSS=$RSS_KB
  PPROF_BINARY_PATH=$bin measure "$work/$name.pprof" "$pprof" "${pargs[@]}"
  P_WALL=$WALL_NS P_CPU=$CPU_S P_RSS=$RSS_KB
  diff <(routines "$work/$name.pprof") <(routines "$work/$name.tally") >"$work/diff" ||
    { cat "$work/diff" >&2; die "$name: tally and pprof print different ROUTINE totals"; }
}

report() {
  python3 - "$@" <<'PY'
import sys
name, runs, tw, tc, tr, pw, pc, pr = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
print(f"{name:<28} tally {tw/1e9/runs:7.3f} s wall {tc/runs:7.3f} s cpu {tr/1024:7.1f} MB | "
      f"pprof {pw/1e9/runs:7.3f} s wall {pc/runs:7.3f} s cpu {pr/1024:7.1f} MB | "
      f"{pw/tw:5.1f}x faster {pr/tr:5.1f}x less memory"
      + (f", CPU {pc/tc:5.1f}x" if tc > 0 and pc > 0 else ""))
PY
}

cd "$fixtures/gperf"
# Small: the fixture, 10 runs each.
for kind in list disasm; do
  tw=0 tc=0 pw=0 pc=0
  for _ in $(seq 10); do
    if [[ $kind == list ]]; then
      run_pair small-list list 'func_|run_rounds' --source-path "$sources" split.pb.gz -- \
        -list='func_|run_rounds' -source_path="$sources" split.pb.gz
    else
      run_pair small-disasm disasm . --show '^func_|^run_rounds' split.pb.gz -- \
        -disasm=. -show='^func_|^run_rounds' split.pb.gz
    fi
    tw=$((tw + T_WALL)) pw=$((pw + P_WALL))
    tc=$(awk -v a="$tc" -v b="$T_CPU" 'BEGIN { print a + b }')
    pc=$(awk -v a="$pc" -v b="$P_CPU" 'BEGIN { print a + b }')
  done
  report "$kind split.pb.gz (x10 mean)" 10 "$tw" "$tc" "$T_RSS" "$pw" "$pc" "$P_RSS"
done

# Large: symbolized from fixtures/bin by both tools.
size=$(du -m "$work/big.prof" | cut -f1)
run_pair big-list list 'func_|run_rounds' --source-path "$sources" --binary-path "$bin" "$work/big.prof" -- \
  -list='func_|run_rounds' -source_path="$sources" "$bin/split" "$work/big.prof"
report "list ${records} records (${size} MB)" 1 "$T_WALL" "$T_CPU" "$T_RSS" "$P_WALL" "$P_CPU" "$P_RSS"
run_pair big-disasm disasm . --show '^func_|^run_rounds' --binary-path "$bin" "$work/big.prof" -- \
  -disasm=. -show='^func_|^run_rounds' "$bin/split" "$work/big.prof"
report "disasm ${records} records" 1 "$T_WALL" "$T_CPU" "$T_RSS" "$P_WALL" "$P_CPU" "$P_RSS"
