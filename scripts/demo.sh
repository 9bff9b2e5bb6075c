#!/usr/bin/env bash
# demo.sh: set up on a fresh Debian 12 machine, build tally (release), and run the main job
# on the bundled demo profile: read it, convert it to DCPI and back, print summaries.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release -DTALLY_TESTS=OFF -DTALLY_BENCH=OFF >/dev/null
cmake --build --preset release
tally=build/release/src/cli/tally
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
echo "== the bundled gperftools profile (demo/split.prof: func_a/b/c/d burn 40/30/20/10%)"
"$tally" cat --summary demo/split.prof
echo "== converted to DCPI, one file per image"
"$tally" convert demo/split.prof --to dcpi -o "$out/dcpi/"
echo "== back to a gperftools profile from the executable's DCPI file"
"$tally" convert "$out"/dcpi/split.*.dcpi --to gperf -o "$out/split-leaf.prof"
"$tally" cat --summary "$out/split-leaf.prof"
