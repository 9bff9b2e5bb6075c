#!/usr/bin/env bash
# list_disasm_vs_pprof.sh [RECORDS]
#
# Times `tally list` and `tally disasm` against `pprof -list` and `pprof -disasm` on the
# same input, with the same binaries and sources:
#  - small: the fixture split.pb.gz (what a user runs interactively; start-up dominates);
#  - large: a gperftools profile of RECORDS records (default 1,000,000) whose stacks are
#    those of fixtures/gperf/split.prof with the leaf moved to random addresses inside
#    func_a..func_d and the run_rounds call sites, so that every tool symbolizes a few
#    hundred addresses of fixtures/bin/split and aggregates a million samples.
# Both tools get -show/--show '^func_|^run_rounds' for disasm: pprof -disasm misplaces
# samples when its first graph node is in another object (tests/analyze/disasm_peer_test.cc).
# Each comparison runs both tools RUNS times (default 7), alternated, and prints the median
# wall and CPU time and peak RSS of each and the ratios (CPU time is the steadier figure on
# a loaded machine; GNU time's 10 ms resolution hides it for the small runs), and checks
# in every run that both print the same ROUTINE totals.
#
# Environment: TALLY_BUILD (default <repo>/build/release), PPROF (default /opt/peers/pprof),
# RUNS.
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

build=$(cd "$build" && pwd)
tally=$build/src/cli/tally
pprof=${PPROF:-/opt/peers/pprof}
shared=${TALLY_SHARED_DIR:-$repo_root/../shared}
records=${1:-1000000}
runs=$(runs_wanted 7)
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

# compare NAME TALLY_ARGS... -- PPROF_ARGS...: $runs runs of each, alternated, outputs
# compared every time; then the medians.
compare() {
  local name=$1
  shift
  local targs=() pargs=()
  while [[ $1 != -- ]]; do targs+=("$1"); shift; done
  shift
  pargs=("$@")
  for ((i = 1; i <= runs; i++)); do
    measure_run "tally $name" "$work/tally.out" "$tally" "${targs[@]}"
    PPROF_BINARY_PATH=$bin measure_run "pprof $name" "$work/pprof.out" "$pprof" "${pargs[@]}"
    diff <(routines "$work/pprof.out") <(routines "$work/tally.out") >"$work/diff" ||
      { cat "$work/diff" >&2; die "$name: tally and pprof print different ROUTINE totals"; }
  done
  report_pair "tally $name" "pprof $name"
  echo
}

cd "$fixtures/gperf"
# Small: the fixture.
compare "list split.pb.gz" list 'func_|run_rounds' --source-path "$sources" split.pb.gz -- \
  -list='func_|run_rounds' -source_path="$sources" split.pb.gz
compare "disasm split.pb.gz" disasm . --show '^func_|^run_rounds' split.pb.gz -- \
  -disasm=. -show='^func_|^run_rounds' split.pb.gz

# Large: symbolized from fixtures/bin by both tools.
size=$(du -m "$work/big.prof" | cut -f1)
compare "list ${records} records (${size} MB)" list 'func_|run_rounds' --source-path "$sources" \
  --binary-path "$bin" "$work/big.prof" -- \
  -list='func_|run_rounds' -source_path="$sources" "$bin/split" "$work/big.prof"
compare "disasm ${records} records" disasm . --show '^func_|^run_rounds' --binary-path "$bin" \
  "$work/big.prof" -- -disasm=. -show='^func_|^run_rounds' "$bin/split" "$work/big.prof"
machine_note
