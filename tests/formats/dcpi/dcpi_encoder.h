// A tiny DCPI encoder written from dcpiformat(4) alone, independent of src/formats/dcpi:
// header text + "samples" terminator + little-endian uint32 chunks + footer. The tests
// build their input files with it and derive every expected byte from it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tally::dcpi::test {

// One uint32 in little-endian byte order.
inline std::string le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[static_cast<size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

struct RawChunk {
  uint32_t offset = 0;
  std::vector<uint32_t> counts;
};

// The lines of a valid header with every required line once, in the spec's order.
inline std::vector<std::string> required_lines() {
  return {"version pdb-0.07", "image 1a2b3c4d",  "epoch 9907011230",
          "platform alpha",   "event cycles",    "period 62976",
          "tstart 120000000", "tsize 4096",      "cpuspeed 500"};
}

// Header lines joined by newlines (no terminator).
inline std::string lines_text(const std::vector<std::string>& lines) {
  std::string s;
  for (const std::string& l : lines) s += l + "\n";
  return s;
}

// The terminator line padded with spaces so that `header_bytes` plus it is a multiple of 4
// (the spec's advice for an aligned binary section).
inline std::string padded_terminator(size_t header_bytes) {
  size_t len = header_bytes + 8;  // "samples\n"
  return "samples" + std::string((4 - len % 4) % 4, ' ') + "\n";
}

inline std::string chunks_bytes(const std::vector<RawChunk>& chunks) {
  std::string s;
  for (const RawChunk& c : chunks) {
    s += le32(c.offset) + le32(static_cast<uint32_t>(c.counts.size()));
    for (uint32_t v : c.counts) s += le32(v);
  }
  return s;
}

// The footer the spec asks for: addresses with at least one sample, sum of all counts.
inline std::string true_footer(const std::vector<RawChunk>& chunks) {
  uint32_t offsets = 0, samples = 0;
  for (const RawChunk& c : chunks)
    for (uint32_t v : c.counts) {
      offsets += v != 0;
      samples += v;
    }
  return le32(offsets) + le32(samples);
}

// A whole, valid, aligned file.
inline std::string canonical_file(const std::vector<std::string>& lines,
                                  const std::vector<RawChunk>& chunks) {
  std::string head = lines_text(lines);
  return head + padded_terminator(head.size()) + chunks_bytes(chunks) + true_footer(chunks);
}

}  // namespace tally::dcpi::test
