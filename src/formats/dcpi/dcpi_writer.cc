#include <fmt/format.h>

#include "formats/dcpi/dcpi_file.h"
#include "io/byte_sink.h"

namespace tally::dcpi {

std::vector<Chunk> make_chunks(const std::map<uint32_t, uint32_t>& counts) {
  std::vector<Chunk> chunks;
  for (auto [offset, n] : counts) {
    if (!chunks.empty()) {
      Chunk& last = chunks.back();
      uint64_t next = uint64_t(last.offset) + last.counts.size();
      if (offset - next < 2) {
        last.counts.resize(offset - last.offset, 0);
        last.counts.push_back(n);
        continue;
      }
    }
    chunks.push_back({offset, {n}});
  }
  return chunks;
}

core::Expected<std::string> write_dcpi(const DcpiFile& file) {
  uint64_t offsets = file.total_offsets(), samples = file.total_samples();
  if (samples > UINT32_MAX)
    return core::Error{fmt::format("dcpi: {} samples in all do not fit the footer's 32 bits; "
                                   "split the profile (e.g. by epoch)", samples), core::ErrorKind::unsupported};
  io::ByteSink out;
  for (const HeaderLine& l : file.header) out.text(l.key + " " + l.value + "\n");
  // Pad the terminator so that the binary part is 32-bit aligned.
  size_t len = out.size() + std::string_view("samples\n").size();
  out.text("samples" + std::string((4 - len % 4) % 4, ' ') + "\n");
  for (const Chunk& c : file.chunks) {
    out.u32le(c.offset);
    out.u32le(static_cast<uint32_t>(c.counts.size()));
    for (uint32_t v : c.counts) out.u32le(v);
  }
  out.u32le(static_cast<uint32_t>(offsets));
  out.u32le(static_cast<uint32_t>(samples));
  return out.take();
}

}  // namespace tally::dcpi
