#!/usr/bin/env python3
"""merge_gperf_profiles.py OUT IN...

Concatenates gperftools CPU profiles taken of the same program with the same mappings
(ASLR off: `setarch -R`) into one profile: the first one's header, every input's sample
records in order, the trailer, then the first one's mapped-objects text. No stack is
merged with another: the output holds as many records as the inputs together.

Refuses (exit 1, a message naming the file and the byte offset) when an input is not a
64-bit little-endian gperftools profile, when the sampling periods differ, or when an
input's executable mappings (the lines of its maps text with an x permission) differ
from the first input's: its addresses would then mean other code. Mappings that differ
from run to run without changing what the addresses mean (the heap, anonymous memory,
files the compiler reads: r--p/rw-p lines) are allowed to differ.

Written independently of tally's gperftools reader and writer (bench inputs must not be
made by the code that they measure), from the format's description in
shared/specs/gperftools-cpuprofile-fileformat.html.
"""
import os
import struct
import sys

WORD = struct.Struct('<Q')


def fail(path, offset, what):
    sys.exit(f"merge_gperf_profiles: {path}: at byte {offset}: {what}")


def split_profile(path):
    """(period, records as bytes, maps text) of one profile."""
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) < 5 * 8:
        fail(path, 0, f"{len(data)} bytes: too short for the 5-word header")
    header = struct.unpack_from('<5Q', data, 0)
    if header[0] != 0 or header[1] != 3 or header[2] != 0:
        fail(path, 0, f"header words {header[:3]}, expected (0, 3, 0): not a 64-bit "
             "little-endian gperftools CPU profile")
    period = header[3]
    offset = 5 * 8
    records_start = offset
    while True:
        if offset + 16 > len(data):
            fail(path, offset, "the file ends inside the sample records (no trailer)")
        count, depth = struct.unpack_from('<2Q', data, offset)
        if count == 0:
            if depth != 1 or offset + 24 > len(data) or WORD.unpack_from(data, offset + 16)[0] != 0:
                fail(path, offset, f"a record with count 0 and depth {depth}: expected the "
                     "trailer (0, 1, 0)")
            records_end = offset
            offset += 24
            break
        if depth == 0 or offset + 16 + depth * 8 > len(data):
            fail(path, offset, f"a record of depth {depth} that does not fit in the file")
        offset += 16 + depth * 8
    return period, data[records_start:records_end], data[offset:].decode('latin-1')


def executable_mappings(maps_text):
    lines = []
    for line in maps_text.splitlines():
        fields = line.split()
        if len(fields) >= 2 and '-' in fields[0] and 'x' in fields[1]:
            lines.append(line)
    return lines


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: merge_gperf_profiles.py OUT IN...")
    out_path, inputs = sys.argv[1], sys.argv[2:]
    first_period, _, first_maps = split_profile(inputs[0])
    first_code = executable_mappings(first_maps)
    if not first_code:
        fail(inputs[0], 0, "its maps text has no executable mapping")
    tmp_path = out_path + '.tmp'
    with open(tmp_path, 'wb') as out:
        out.write(struct.pack('<5Q', 0, 3, 0, first_period, 0))
        for path in inputs:
            period, records, maps_text = split_profile(path)
            if period != first_period:
                os.unlink(tmp_path)
                fail(path, 24, f"sampling period {period} us, {inputs[0]} has {first_period} us")
            code = executable_mappings(maps_text)
            if code != first_code:
                os.unlink(tmp_path)
                theirs = next((a for a, b in zip(code, first_code) if a != b), None)
                fail(path, 5 * 8 + len(records) + 3 * 8,  # where its maps text starts
                     "its executable mappings differ from those of "
                     f"{inputs[0]} (first difference: {theirs!r}); profile with ASLR off "
                     "(setarch -R) so that every run has the same ones")
            out.write(records)
        out.write(struct.pack('<3Q', 0, 1, 0))
        out.write(first_maps.encode('latin-1'))
    os.replace(tmp_path, out_path)


main()
