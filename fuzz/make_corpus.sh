#!/usr/bin/env bash
# make_corpus.sh OUTDIR: seed corpora for the fuzz targets, one folder per target:
#   OUTDIR/fuzz_gperf   the gperftools fixtures (../shared/fixtures/gperf/*.prof)
#   OUTDIR/fuzz_dcpi    DCPI files made from them with `tally convert --to dcpi`
#   OUTDIR/fuzz_detect  both, plus a gzip-compressed profile
# The tally binary is $TALLY, else `tally` on PATH, else the first one built under build/.
# The fixtures are in $TALLY_SHARED_DIR, else ../shared beside the repository.
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
out=$1
repo=$(cd "$(dirname "$0")/.." && pwd)
shared=${TALLY_SHARED_DIR:-$repo/../shared}
tally=${TALLY:-}
if [ -z "$tally" ]; then tally=$(command -v tally || true); fi
if [ -z "$tally" ]; then
  for candidate in "$repo"/build/*/src/cli/tally; do
    if [ -x "$candidate" ]; then tally=$candidate; break; fi
  done
fi
if [ -z "$tally" ] || [ ! -x "$tally" ]; then
  echo "make_corpus.sh: no tally binary: build one or set TALLY=/path/to/tally" >&2
  exit 1
fi
fixtures=("$shared"/fixtures/gperf/*.prof)
if [ ! -e "${fixtures[0]}" ]; then
  echo "make_corpus.sh: no gperf fixtures in $shared/fixtures/gperf" >&2
  exit 1
fi

mkdir -p "$out/fuzz_gperf" "$out/fuzz_dcpi" "$out/fuzz_detect"
for prof in "${fixtures[@]}"; do
  name=$(basename "$prof" .prof)
  cp "$prof" "$out/fuzz_gperf/$name.prof"
  cp "$prof" "$out/fuzz_detect/$name.prof"
  # One file per image with samples: into a folder, whichever the converter writes.
  tmp=$(mktemp -d)
  "$tally" convert "$prof" -o "$tmp/$name/" --to dcpi 2>/dev/null
  for dcpi in "$tmp/$name"/*.dcpi; do
    cp "$dcpi" "$out/fuzz_dcpi/$name.$(basename "$dcpi")"
    cp "$dcpi" "$out/fuzz_detect/$name.$(basename "$dcpi")"
  done
  rm -rf "$tmp"
done
gzip -c "${fixtures[0]}" > "$out/fuzz_detect/$(basename "${fixtures[0]}").gz"
echo "make_corpus.sh: $(ls "$out/fuzz_gperf" | wc -l) gperf, $(ls "$out/fuzz_dcpi" | wc -l) dcpi," \
     "$(ls "$out/fuzz_detect" | wc -l) detect seeds in $out"
