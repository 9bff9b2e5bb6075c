#!/usr/bin/env bash
# demo.sh: set up on a fresh Debian 12 machine, build tally (release), record the bundled
# workload (demo/workload.cc) with `tally record` and show where its time went with
# `tally top`; then read the bundled demo profile, convert it between formats, print summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release -DTALLY_TESTS=OFF -DTALLY_BENCH=OFF >/dev/null
cmake --build --preset release
tally=build/release/src/cli/tally
# The binaries demo/split.prof was recorded from (func_a..func_d): convert and top name the
# functions from them, as pprof does with PPROF_BINARY_PATH.
bin=../shared/fixtures/bin
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "== tally record: sample the bundled workload (decode/transform/compress/checksum do"
echo "   40/30/20/10% of its work), then tally top on the profile it wrote"
"$tally" record -o "$out/demo.pb.gz" -- build/release/demo/demo_workload
"$tally" top "$out/demo.pb.gz"
echo "== the bundled gperftools profile (demo/split.prof: func_a/b/c/d burn 40/30/20/10%)"
"$tally" cat --summary demo/split.prof
echo "== as pprof's profile.proto, symbolized from the workload's binary when $bin is there"
echo "   (google/pprof reads it: pprof -top $out/split.pb.gz)"
"$tally" convert demo/split.prof --binary-path "$bin" --to pprof -o "$out/split.pb.gz"
"$tally" cat --summary "$out/split.pb.gz" | sed -n '2,6p'
echo "== as folded stacks, for FlameGraph / inferno / speedscope"
"$tally" convert "$out/split.pb.gz" --to folded -o - 2>/dev/null
echo "== as DCPI, one file per image (leaf counts only: the loss is reported)"
"$tally" convert demo/split.prof --to dcpi -o "$out/dcpi/"
"$tally" cat "$out"/dcpi/split.*.dcpi | head -16
echo "== as a callgrind call graph (callgrind_annotate / KCachegrind open it)"
"$tally" convert "$out/split.pb.gz" --to callgrind -o "$out/split.callgrind"
grep -E '^(events|totals):' "$out/split.callgrind"
echo "== tally top: pprof's table plus the sampling error of each share (symbolized from the"
echo "   workload's binary when $bin is there)"
"$tally" top --binary-path "$bin" demo/split.prof
