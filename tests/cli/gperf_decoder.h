// A deliberately tiny, independent decoder and encoder of gperftools CPU profiles in the
// fixtures' layout (64-bit little-endian words), written from the spec so that the CLI
// tests check tally's output against something other than tally's own reader.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tally::test {

struct DecodedRecord {
  uint64_t offset = 0;  // byte offset of the record's count slot
  uint64_t count = 0;
  std::vector<uint64_t> pcs;
};

struct DecodedGperf {
  std::vector<uint64_t> header;  // every header slot, slot 0 included
  uint64_t period_us = 0;
  std::vector<DecodedRecord> records;
  uint64_t text_offset = 0;  // first byte after the trailer
  std::string maps_text;     // everything after the trailer
  uint64_t total_samples() const;
};

// Throws std::runtime_error when the bytes are not a complete 64-bit LE profile.
DecodedGperf decode_gperf64le(const std::vector<uint8_t>& bytes);

// header 0, 3, 0, period, 0; the records; trailer 0, 1, 0; then `maps_text`.
std::string encode_gperf64le(uint64_t period_us, const std::vector<DecodedRecord>& records,
                             const std::string& maps_text);

// One executable line of /proc/self/maps, as parsed with sscanf.
struct MapsRange {
  uint64_t start = 0, limit = 0;
  std::string perms, path;
};
std::vector<MapsRange> parse_maps(const std::string& text);

// Stacks summed over identical PC lists, after dropping a leaf the unwinder reported twice
// (second PC equal to the first), as pprof and tally's header comment describe.
std::map<std::vector<uint64_t>, uint64_t> merged_stacks(const DecodedGperf& profile);

}  // namespace tally::test
