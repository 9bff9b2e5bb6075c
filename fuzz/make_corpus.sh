#!/usr/bin/env bash
# make_corpus.sh OUTDIR: seed corpora for the fuzz targets, one folder per target:
#   OUTDIR/fuzz_gperf   the gperftools fixtures (../shared/fixtures/gperf/*.prof), and
#                       pprof's legacy CPU profiles (if golang-github-google-pprof-dev is installed)
#   OUTDIR/fuzz_dcpi    DCPI files made from them with `tally convert --to dcpi`
#   OUTDIR/fuzz_detect  both, plus a gzip-compressed profile
#   OUTDIR/fuzz_folded  folded stacks written by hand, and `tally convert --to folded` of
#                       the symbolized .pb.gz fixtures (once tally can write folded)
#   OUTDIR/fuzz_perfscript  the `perf script` texts (conformance files, fixtures' first 60 kB)
#   OUTDIR/fuzz_pprof   pprof's -proto fixtures, speedscope's Go profile, and `tally convert
#                       --to pprof` of the gperf fixtures, all inflated (the target gunzips
#                       too, but plain bytes let the fuzzer mutate the message itself)
#   OUTDIR/fuzz_dwarf_unwind  zeros and pseudo-random bytes (registers and stack words)
#   OUTDIR/fuzz_callgrind  valgrind's callgrind fixtures (../shared/fixtures/callgrind), the
#                       `pprof -callgrind` ones, and the conformance callgrind files, each
#                       cut at the last line end within 60 kB (run_all.sh's -max_len is 64 KiB)
#   OUTDIR/fuzz_perf_records  a perf ring of every record type tally record reads
#   OUTDIR/fuzz_image_index  a profile database index (DIR/index.tsv) of two images
#   OUTDIR/fuzz_inflated_elf  small objects with zlib-compressed DWARF (cc -g -gz=zlib)
#   OUTDIR/fuzz_reports  some seeds of every reader above, values at the int64 limits (folded
#                       and a hand-encoded pprof), profiles with timestamps when built
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
# pprof's own legacy CPU profiles (golang-github-google-pprof-dev), when installed: older
# profilers' files, one with the signal-trampoline frame that the reader removes.
for prof in /usr/share/gocode/src/github.com/google/pprof/profile/testdata/*.cpu; do
  if [ -e "$prof" ]; then cp "$prof" "$out/fuzz_gperf/pprof-testdata-$(basename "$prof")"; fi
done
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

# The unwinder's inputs are registers and stack words (fuzz_dwarf_unwind.cc aims each by its
# low bits): zeros, and a fixed pseudo-random 2 KiB.
mkdir -p "$out/fuzz_dwarf_unwind"
head -c 2048 /dev/zero > "$out/fuzz_dwarf_unwind/zeros"
LC_ALL=C awk 'BEGIN { srand(6); for (i = 0; i < 2048; ++i) printf "%c", int(rand() * 256) }' \
  > "$out/fuzz_dwarf_unwind/random"
# The fixture binaries' line programs, and their .debug_info + .debug_abbrev back to back
# in halves of one size (fuzz_dwarf_readers splits its input in half for DieWalker).
mkdir -p "$out/fuzz_dwarf_readers"
for elf in "$shared"/fixtures/bin/split "$shared"/fixtures/bin/libtallywork.so; do
  name=$(basename "$elf")
  seeds=$out/fuzz_dwarf_readers
  objcopy --dump-section .debug_line="$seeds/$name.line" "$elf" /dev/null 2>/dev/null || true
  if objcopy --dump-section .debug_info="$seeds/info" --dump-section .debug_abbrev="$seeds/abbrev" \
       "$elf" /dev/null 2>/dev/null; then
    # Two halves of one size: the unit (cut), then the abbreviations, zero-padded.
    head -c 4000 "$seeds/info" > "$seeds/info.cut"
    size=$(( $(wc -c < "$seeds/info.cut") > $(wc -c < "$seeds/abbrev") ?
             $(wc -c < "$seeds/info.cut") : $(wc -c < "$seeds/abbrev") ))
    truncate -s "$size" "$seeds/info.cut" "$seeds/abbrev"
    cat "$seeds/info.cut" "$seeds/abbrev" > "$seeds/$name.dies"
    rm -f "$seeds/info.cut"
  fi
  rm -f "$seeds/info" "$seeds/abbrev"
done
# Real call-frame sections: a fixture's .eh_frame and liblzma's (what a stripped library has).
mkdir -p "$out/fuzz_call_frames"
for elf in "$shared"/fixtures/bin/split /lib/x86_64-linux-gnu/liblzma.so.5; do
  objcopy --dump-section .eh_frame="$out/fuzz_call_frames/$(basename "$elf").eh_frame" \
    "$elf" /dev/null 2>/dev/null || true
done
# libtally's CFI compiler: the same real sections, and the vDSO-sized libz's, behind a
# byte 0 (read as .eh_frame); a -g build's .debug_frame behind a byte 1.
mkdir -p "$out/fuzz_runtime_cfi"
objcopy --dump-section .eh_frame="$out/fuzz_runtime_cfi/libz.raw" \
  /lib/x86_64-linux-gnu/libz.so.1 /dev/null 2>/dev/null || true
for section in "$out"/fuzz_call_frames/*.eh_frame "$out/fuzz_runtime_cfi/libz.raw"; do
  [ -f "$section" ] || continue
  name=$(basename "$section" .raw)
  { printf '\000'; cat "$section"; } > "$out/fuzz_runtime_cfi/${name%.eh_frame}.eh_frame"
done
rm -f "$out/fuzz_runtime_cfi/libz.raw"
debug_frame_work=$(mktemp -d)
printf 'int f(int x);\nint g(int x) { return f(x) + f(x + 1); }\nint h(int *p) { return g(*p) * 3; }\n' \
  > "$debug_frame_work/d.c"
if gcc -O2 -g -fno-asynchronous-unwind-tables -c "$debug_frame_work/d.c" -o "$debug_frame_work/d.o" &&
   objcopy --dump-section .debug_frame="$debug_frame_work/d.debug_frame" "$debug_frame_work/d.o" /dev/null; then
  { printf '\001'; cat "$debug_frame_work/d.debug_frame"; } > "$out/fuzz_runtime_cfi/small.debug_frame"
fi
rm -rf "$debug_frame_work"
mkdir -p "$out/fuzz_perf_records"
# A ring of the records tally record reads (MMAP2 with a build id, COMM exec, FORK, two
# SAMPLEs with callchains, LOST, EXIT), behind the target's 16-byte layout header (IP, TID,
# TIME, CPU, PERIOD, IDENTIFIER, CALLCHAIN, sample_id_all; head = the records' size),
# padded with zeros to a 1 KiB ring.
perf_ring_hex="\
8f0310000802000000000000000000000a00000000407800050000000500000000004000000000000000010000000000\
000000000000000003000000aabbcc000000000000000000000000000000000005000000020000002f62696e2f776f72\
6b6c6f616400000005000000050000000a00000000000000000000000000000001000000000000000300000000204000\
0500000005000000776f726b6c6f6164000000000000000005000000050000000b000000000000000000000000000000\
01000000000000000700000000004000050000000500000006000000050000000c000000000000000500000005000000\
0c0000000000000000000000000000000100000000000000090000000200580001000000000000001010400000000000\
05000000060000000d00000000000000010000000000000040420f0000000000030000000000000000feffffffffffff\
101040000000000020204000000000000900000002004000010000000000000010104000000000000500000005000000\
0e00000000000000000000000000000040420f0000000000000000000000000002000000000038000100000000000000\
020000000000000005000000050000000f00000000000000000000000000000001000000000000000400000000004000\
050000000500000006000000050000001000000000000000050000000600000010000000000000000000000000000000\
0100000000000000"
{ printf "$(printf '%s' "$perf_ring_hex" | sed 's/../\\x&/g')"
  head -c $((1040 - ${#perf_ring_hex} / 2)) /dev/zero; } > "$out/fuzz_perf_records/ring.bin"

# The profile database's index: two images, one known by a hash, an escaped path.
mkdir -p "$out/fuzz_image_index"
printf '# tally profile database: images by id\n# id\tbuild-id\tdevice\tinode\tsize\tmtime-ns\tpath\n%s\n%s\n' \
  "$(printf '85115c0d985f0b0603c2adb7d1a83899a0b46b11\t85115c0d985f0b0603c2adb7d1a83899a0b46b11\t0:0\t0\t0\t0\t/bin/split')" \
  "$(printf '664af5d8ce1908bb\t-\t8:1\t1234\t4096\t1700000000000000000\t/tmp/a b\\\\tc')" \
  > "$out/fuzz_image_index/index.tsv"

# Small ELF objects whose DWARF is zlib-compressed (SHF_COMPRESSED), as -dbg files ship it.
mkdir -p "$out/fuzz_inflated_elf"
printf 'static int twice(int x) { return 2 * x; }\nint f(int x) { return twice(x) + 1; }\n' \
  > "$out/fuzz_inflated_elf/small.c"
for level in 0 2; do
  cc -g -gz=zlib -O$level -c "$out/fuzz_inflated_elf/small.c" \
     -o "$out/fuzz_inflated_elf/small-O$level.o" 2>/dev/null || true
done
rm -f "$out/fuzz_inflated_elf/small.c"

# tally serve's query strings: the first byte picks the endpoint (0 meta, 1 top, 2 flame,
# 3 peek, 4 source, 5 disasm, ...), the rest is the query.
mkdir -p "$out/fuzz_serve_query"
printf '\001si=samples&focus=func_a&granularity=lines' > "$out/fuzz_serve_query/top"
printf '\002hide=run&show=.&side=new' > "$out/fuzz_serve_query/flame"
printf '\003f=%%5Efunc_%%28a%%7Cb%%29%%24&ignore=func_d' > "$out/fuzz_serve_query/peek"
printf '\004f=../../etc/passwd' > "$out/fuzz_serve_query/source"
printf '\001si=a&si=a&=x&&focus=(' > "$out/fuzz_serve_query/bad"

# The reports on every format: the readers' seeds (a few of each), folded stacks at the
# int64 limits, a pprof message with INT64_MIN and INT64_MAX values (written here byte by
# byte: folded text cannot hold a negative count), and, when a release build made
# tests/web/make_timeline_profile, profiles with timestamps, threads and off-CPU reasons.
mkdir -p "$out/fuzz_reports"
cp "$out"/fuzz_detect/* "$out"/fuzz_folded/* "$out/fuzz_reports/"
for seed in $(ls "$out"/fuzz_pprof/* | head -4) $(ls "$out"/fuzz_callgrind/* | head -2) \
            $(ls "$out"/fuzz_perfscript/* | head -2); do
  cp "$seed" "$out/fuzz_reports/"
done
printf 'main;a 9223372036854775807\nmain;b 9223372036854775807\nmain;c 5\n' > "$out/fuzz_reports/limits.folded"
printf 'main;a 9223372036854775807 1\nmain;a;b 9223372036854775807 9223372036854775807\n' \
  > "$out/fuzz_reports/limits-differential.folded"
python3 - "$out/fuzz_reports/limits.pb" <<'PYTHON'
import sys
def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)
def field(number, wire, payload):  # wire 0: varint payload; 2: length-delimited
    return varint(number << 3 | wire) + (payload if wire == 0 else varint(len(payload)) + payload)
message = field(1, 2, field(1, 0, varint(1)) + field(2, 0, varint(2)))  # samples/count
for stack, value in (([2, 1], -2**63), ([3, 1], -2**63), ([4, 1], 2**63 - 1), ([4, 1], 5)):
    locations = b"".join(varint(l) for l in stack)
    message += field(2, 2, field(1, 2, locations) + field(2, 2, varint(value)))
for id in (1, 2, 3, 4):  # location i has one line, of function i, named by string i + 2
    message += field(4, 2, field(1, 0, varint(id)) + field(4, 2, field(1, 0, varint(id))))
    message += field(5, 2, field(1, 0, varint(id)) + field(2, 0, varint(id + 2)))
for s in ("", "samples", "count", "main", "a", "b", "c"):
    message += field(6, 2, s.encode())
open(sys.argv[1], "wb").write(message)
PYTHON
for maker in "$repo"/build/*/tests/web/make_timeline_profile; do
  if [ -x "$maker" ]; then
    # (Not --busy: its 430 kB are beyond run_all.sh's -max_len.)
    for kind in "" --long-wait; do
      made=$out/fuzz_reports/timeline${kind#-}.pb
      "$maker" $kind "$made.gz" >/dev/null 2>&1 && gzip -dc "$made.gz" > "$made"
      rm -f "$made.gz"
    done
    break
  fi
done

echo "make_corpus.sh: $(ls "$out/fuzz_gperf" | wc -l) gperf, $(ls "$out/fuzz_dcpi" | wc -l) dcpi," \
     "$(ls "$out/fuzz_detect" | wc -l) detect, $(ls "$out/fuzz_folded" | wc -l) folded," \
     "$(ls "$out/fuzz_pprof" | wc -l) pprof, $(ls "$out/fuzz_callgrind" | wc -l) callgrind," \
     "$(ls "$out/fuzz_perf_records" | wc -l) perf records, $(ls "$out/fuzz_reports" | wc -l) reports" \
     "seeds in $out"
