#!/usr/bin/env bash
# make_corpus.sh OUTDIR: seed corpora for the fuzz targets, one folder per target:
#   OUTDIR/fuzz_gperf   the gperftools fixtures (../shared/fixtures/gperf/*.prof)
#   OUTDIR/fuzz_dcpi    DCPI files made from them with `tally convert --to dcpi`
#   OUTDIR/fuzz_detect  both, plus a gzip-compressed profile
#   OUTDIR/fuzz_folded  folded stacks written by hand, and `tally convert --to folded` of
#                       the symbolized .pb.gz fixtures (once tally can write folded)
#   OUTDIR/fuzz_perfscript  the `perf script` texts (conformance files, fixtures' first 60 kB)
#   OUTDIR/fuzz_pprof   pprof's -proto fixtures, speedscope's Go profile, and `tally convert
#                       --to pprof` of the gperf fixtures, all inflated (the target gunzips
#                       too, but plain bytes let the fuzzer mutate the message itself)
#   OUTDIR/fuzz_callgrind  valgrind's callgrind fixtures (../shared/fixtures/callgrind), the
#                       `pprof -callgrind` ones, and the conformance callgrind files, each
#                       cut at the last line end within 60 kB (run_all.sh's -max_len is 64 KiB)
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

mkdir -p "$out/fuzz_folded"
printf 'main;a;b 5\nmain;a;c 3\n' > "$out/fuzz_folded/plain.folded"
printf '# comment\r\nmain;std::map<int, std::vector<a;b>>::find;foo(int; char) 3\r\n\r\nx::operator<;y 1\r\n' \
  > "$out/fuzz_folded/brackets-crlf.folded"
printf 'java;Thread.run;Foo bar (Baz.java:12) 42\nperf;do_syscall_64_[k];a<b;c 7\n' > "$out/fuzz_folded/spaces.folded"
printf 'main;a 3 5\nmain;b 0 2\n' > "$out/fuzz_folded/differential.folded"
for pb in "$shared"/fixtures/gperf/*.pb.gz; do
  "$tally" convert "$pb" -o "$out/fuzz_folded/$(basename "$pb" .pb.gz).folded" --to folded \
    2>/dev/null || rm -f "$out/fuzz_folded/$(basename "$pb" .pb.gz).folded"
done

mkdir -p "$out/fuzz_perfscript"
for txt in "$shared"/conformance/perf-script/*/*.txt "$shared"/fixtures/perf/*.perf-script.txt; do
  head -c 60000 "$txt" > "$out/fuzz_perfscript/$(basename "$txt")"
done

mkdir -p "$out/fuzz_pprof"
for pb in "$shared"/fixtures/gperf/*.pb.gz "$shared"/conformance/pprof/*/*.prof; do
  gzip -dc "$pb" > "$out/fuzz_pprof/$(basename "$pb" | sed 's/\.pb\.gz$//; s/\.prof$//').pb"
done
for prof in "${fixtures[@]}"; do
  "$tally" convert "$prof" -o - --to pprof 2>/dev/null | gzip -dc \
    > "$out/fuzz_pprof/$(basename "$prof" .prof).tally.pb"
done
cp "$out/fuzz_pprof/split.pb" "$out/fuzz_detect/split.pb"

mkdir -p "$out/fuzz_callgrind"
# At most 60 kB, ending at a line end: a cut inside a line is a syntax error the fuzzer
# would have to undo before it reaches the rest of the grammar.
first_60k_lines() {
  head -c 60000 "$1" | awk -v whole="$(($(stat -c %s "$1") <= 60000))" \
    '{ lines[NR] = $0 } END { n = whole ? NR : NR - 1; for (i = 1; i <= n; ++i) print lines[i] }'
}
for cg in "$shared"/fixtures/callgrind/callgrind.out.* "$shared"/fixtures/gperf/*.pprof-callgrind.txt \
          "$shared"/conformance/callgrind/*/*.callgrind "$shared"/conformance/callgrind/*/*.log; do
  case $cg in *.txt) [[ $cg == *.pprof-callgrind.txt ]] || continue ;; esac
  first_60k_lines "$cg" > "$out/fuzz_callgrind/$(basename "$(dirname "$cg")").$(basename "$cg")"
done
cp "$out/fuzz_callgrind/callgrind.callgrind.out.split.jumps" "$out/fuzz_detect/split.callgrind"

echo "make_corpus.sh: $(ls "$out/fuzz_gperf" | wc -l) gperf, $(ls "$out/fuzz_dcpi" | wc -l) dcpi," \
     "$(ls "$out/fuzz_detect" | wc -l) detect, $(ls "$out/fuzz_folded" | wc -l) folded," \
     "$(ls "$out/fuzz_pprof" | wc -l) pprof, $(ls "$out/fuzz_callgrind" | wc -l) callgrind seeds in $out"
