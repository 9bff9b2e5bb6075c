#include "gperf_decoder.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace tally::test {

namespace {

uint64_t word_at(const std::vector<uint8_t>& bytes, uint64_t index) {
  if ((index + 1) * 8 > bytes.size()) throw std::runtime_error("profile ends inside a word");
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | bytes[index * 8 + static_cast<uint64_t>(i)];
  return v;
}

void put_word(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i) & 0xff));
}

}  // namespace

uint64_t DecodedGperf::total_samples() const {
  uint64_t n = 0;
  for (const auto& r : records) n += r.count;
  return n;
}

DecodedGperf decode_gperf64le(const std::vector<uint8_t>& bytes) {
  DecodedGperf d;
  if (word_at(bytes, 0) != 0 || word_at(bytes, 2) != 0) throw std::runtime_error("bad header");
  const uint64_t header_slots = 2 + word_at(bytes, 1);
  for (uint64_t i = 0; i < header_slots; ++i) d.header.push_back(word_at(bytes, i));
  d.period_us = d.header.at(3);
  uint64_t w = header_slots;
  while (true) {
    DecodedRecord r;
    r.offset = w * 8;
    r.count = word_at(bytes, w);
    uint64_t n = word_at(bytes, w + 1);
    if (r.count == 0 && n == 1 && word_at(bytes, w + 2) == 0) {
      w += 3;
      break;
    }
    for (uint64_t i = 0; i < n; ++i) r.pcs.push_back(word_at(bytes, w + 2 + i));
    w += 2 + n;
    d.records.push_back(std::move(r));
  }
  d.text_offset = w * 8;
  d.maps_text.assign(bytes.begin() + static_cast<std::ptrdiff_t>(d.text_offset), bytes.end());
  return d;
}

std::string encode_gperf64le(uint64_t period_us, const std::vector<DecodedRecord>& records,
                             const std::string& maps_text) {
  std::string out;
  for (uint64_t slot : {uint64_t(0), uint64_t(3), uint64_t(0), period_us, uint64_t(0)})
    put_word(out, slot);
  for (const auto& r : records) {
    put_word(out, r.count);
    put_word(out, r.pcs.size());
    for (uint64_t pc : r.pcs) put_word(out, pc);
  }
  for (uint64_t slot : {uint64_t(0), uint64_t(1), uint64_t(0)}) put_word(out, slot);
  return out + maps_text;
}

std::vector<MapsRange> parse_maps(const std::string& text) {
  std::vector<MapsRange> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    uint64_t start = 0, limit = 0;
    char perms[8] = {};
    int path_at = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %7s %*x %*x:%*x %*u %n", &start,
                    &limit, perms, &path_at) < 3)
      continue;
    MapsRange m{start, limit, perms, path_at > 0 ? line.substr(static_cast<size_t>(path_at)) : ""};
    while (!m.path.empty() && m.path.back() == ' ') m.path.pop_back();
    out.push_back(std::move(m));
  }
  return out;
}

std::map<std::vector<uint64_t>, uint64_t> merged_stacks(const DecodedGperf& profile) {
  std::map<std::vector<uint64_t>, uint64_t> stacks;
  for (const auto& r : profile.records) {
    std::vector<uint64_t> pcs = r.pcs;
    if (pcs.size() > 1 && pcs[0] == pcs[1]) pcs.erase(pcs.begin() + 1);
    stacks[pcs] += r.count;
  }
  return stacks;
}

}  // namespace tally::test
