#include <algorithm>

#include "formats/gperf/gperf_file.h"
#include "io/byte_cursor.h"

namespace tally::gperf {

namespace {

struct Candidate {
  Layout layout;
  uint64_t slots_after_count;
};

// The spec: accept the word size and byte order whose header reads 0, >= 3, 0, period > 0.
// Several may fit (a 32-bit little-endian header read big-endian has slot 1 = 0x03000000):
// the header must also fit in the file, and the smallest header wins.
bool find_layout(std::span<const uint8_t> bytes, Candidate& best) {
  const Layout layouts[] = {{4, std::endian::little}, {4, std::endian::big},
                            {8, std::endian::little}, {8, std::endian::big}};
  bool found = false;
  for (const Layout& l : layouts) {
    if (bytes.size() < 4 * uint64_t(l.word_bytes)) continue;
    auto slot = [&](unsigned i) {
      return io::ByteCursor::decode(bytes.data() + i * l.word_bytes, l.word_bytes, l.order);
    };
    uint64_t count = slot(0), after = slot(1), version = slot(2), period = slot(3);
    if (count != 0 || after < 3 || version != 0 || period == 0) continue;
    if (after > bytes.size() / l.word_bytes - 2) continue;  // header larger than the file
    if (!found || after < best.slots_after_count) {
      best = {l, after};
      found = true;
    }
  }
  return found;
}

}  // namespace

std::string layout_name(const Layout& layout) {
  return std::to_string(layout.word_bytes * 8) + "-bit " +
         (layout.order == std::endian::little ? "little-endian" : "big-endian");
}

bool looks_like_gperf(std::span<const uint8_t> bytes) {
  Candidate c;
  return find_layout(bytes, c);
}

RecordScanner::RecordScanner(std::span<const uint8_t> bytes) : bytes_(bytes) {
  Candidate c;
  if (!find_layout(bytes, c))
    core::fail_at_byte(0, "not a gperftools CPU profile: expected a header of slots 0, >= 3, 0, "
                          "period > 0 in 32- or 64-bit words of either byte order");
  header_.layout = c.layout;
  header_.slots_after_count = c.slots_after_count;
  header_.version = word(2);
  header_.period_us = word(3);
  // The size check in find_layout bounds this allocation by the file's length.
  for (uint64_t i = 4; i < 2 + c.slots_after_count; ++i) header_.extra.push_back(word(i));
  pos_ = header_.size_bytes();
}

uint64_t RecordScanner::word(uint64_t index) const {
  return io::ByteCursor::decode(bytes_.data() + index * header_.layout.word_bytes,
                                header_.layout.word_bytes, header_.layout.order);
}

bool RecordScanner::next(Record& record) {
  if (done_) return false;
  const unsigned w = header_.layout.word_bytes;
  const uint64_t size = bytes_.size();
  if (pos_ == size) {  // no trailer: a profile cut short, e.g. by a killed process
    done_ = true;
    return false;
  }
  if (size - pos_ < 2 * uint64_t(w))
    core::fail_at_byte(pos_, "expected a record (count, number of PCs) or the trailer, but only " +
                                 std::to_string(size - pos_) + " bytes remain");
  uint64_t count = word(pos_ / w);
  uint64_t num_pcs = word(pos_ / w + 1);
  uint64_t room = (size - pos_) / w - 2;
  if (num_pcs > room)
    core::fail_at_byte(pos_ + w, "record says " + std::to_string(num_pcs) +
                                     " PCs follow, but only " + std::to_string(room) +
                                     " words remain in the file");
  if (num_pcs == 0) core::fail_at_byte(pos_ + w, "record has 0 PCs; the format requires >= 1");
  const uint64_t first = pos_ / w + 2;
  if (count == 0) {
    if (num_pcs == 1 && word(first) == 0) {  // trailer 0, 1, 0
      pos_ += 3 * uint64_t(w);
      done_ = has_trailer_ = true;
      return false;
    }
    core::fail_at_byte(pos_, "record has sample count 0; the format requires >= 1 (only the "
                             "trailer 0, 1, 0 has count 0)");
  }
  const uint8_t* at = bytes_.data() + first * w;
  if (w == 8 && header_.layout.order == std::endian::native &&
      reinterpret_cast<uintptr_t>(at) % alignof(uint64_t) == 0) {
    // The file's own words, as they are (a mapped file is page-aligned): no copy of a
    // deep profile's tens of megabytes of PCs.
    record.pcs = {reinterpret_cast<const uint64_t*>(at), num_pcs};
  } else {
    pcs_.resize(num_pcs);
    for (uint64_t i = 0; i < num_pcs; ++i) pcs_[i] = word(first + i);
    record.pcs = pcs_;
  }
  record.offset = pos_;
  record.count = count;
  pos_ += (2 + num_pcs) * w;
  return true;
}

std::string_view RecordScanner::mapped_objects() const {
  if (!done_) return {};
  return {reinterpret_cast<const char*>(bytes_.data()) + pos_, bytes_.size() - pos_};
}

core::Expected<GperfFile> read_gperf(std::span<const uint8_t> bytes, const std::string& source,
                                     core::Diagnostics& diagnostics) {
  try {
    RecordScanner scanner(bytes);
    GperfFile file;
    file.header = scanner.header();
    Record r;
    while (scanner.next(r)) {
      file.record_slots.push_back(r.count);
      file.record_slots.push_back(r.pcs.size());
      file.record_slots.insert(file.record_slots.end(), r.pcs.begin(), r.pcs.end());
      ++file.record_count;
    }
    file.has_trailer = scanner.has_trailer();
    if (!file.has_trailer) warn_missing_trailer(diagnostics, source, scanner.offset());
    file.mapped_objects = std::string(scanner.mapped_objects());
    return file;
  } catch (const core::FormatError& e) {
    return e.located(source);
  }
}

void warn_missing_trailer(core::Diagnostics& diagnostics, const std::string& source,
                          uint64_t end) {
  diagnostics.warn(source + ": byte " + std::to_string(end) +
                   ": the profile ends without its trailer (0, 1, 0); it was probably cut "
                   "short, and has no list of mapped objects");
}

}  // namespace tally::gperf
