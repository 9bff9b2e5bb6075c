#include "formats/gperf/gperf_file.h"
#include "io/byte_sink.h"

namespace tally::gperf {

std::string write_gperf(const GperfFile& file) {
  const Layout& l = file.header.layout;
  io::ByteSink out;
  out.reserve((5 + file.record_slots.size() + 3) * l.word_bytes + file.mapped_objects.size());
  out.word(0, l.word_bytes, l.order);
  out.word(2 + file.header.extra.size(), l.word_bytes, l.order);
  out.word(file.header.version, l.word_bytes, l.order);
  out.word(file.header.period_us, l.word_bytes, l.order);
  for (uint64_t slot : file.header.extra) out.word(slot, l.word_bytes, l.order);
  for (uint64_t slot : file.record_slots) out.word(slot, l.word_bytes, l.order);
  if (file.has_trailer) {
    out.word(0, l.word_bytes, l.order);
    out.word(1, l.word_bytes, l.order);
    out.word(0, l.word_bytes, l.order);
  }
  out.text(file.mapped_objects);
  return out.take();
}

}  // namespace tally::gperf
