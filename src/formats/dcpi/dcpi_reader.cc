#include <fmt/format.h>

#include "formats/dcpi/dcpi_file.h"
#include "io/byte_cursor.h"

namespace tally::dcpi {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

// Reads header lines up to and including the "samples" terminator; returns the offset of
// the first binary byte.
size_t read_header(std::string_view text, std::vector<HeaderLine>& header) {
  size_t pos = 0;
  uint64_t line_no = 0;
  while (true) {
    ++line_no;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      core::fail_at_line(line_no, "the header ends without its 'samples' line (a line "
                                  "'samples' followed by a newline must end the header)");
    std::string_view line = text.substr(pos, end - pos);
    size_t key_end = 0;
    while (key_end < line.size() && !is_space(line[key_end])) ++key_end;
    std::string_view key = line.substr(0, key_end);
    size_t value_begin = key_end;
    while (value_begin < line.size() && is_space(line[value_begin])) ++value_begin;
    std::string_view value = line.substr(value_begin);
    if (key.empty())
      core::fail_at_line(line_no, line.empty() ? "empty line in the header; expected 'key value'"
                                               : "header line starts with a space; expected "
                                                 "'key value'");
    if (key == "samples" && value.empty()) return end + 1;
    if (key_end == line.size())
      core::fail_at_line(line_no, fmt::format("header line '{}' has no value; expected "
                                              "'{} <value>'", key, key));
    if (value.empty())
      core::fail_at_line(line_no, fmt::format("header line '{}' has only spaces after the key",
                                              key));
    header.push_back({std::string(key), std::string(value)});
    pos = end + 1;
  }
}

}  // namespace

core::Expected<DcpiFile> read_dcpi(std::span<const uint8_t> bytes, const std::string& source,
                                   core::Diagnostics& diagnostics) {
  DcpiFile file;
  size_t binary_start = 0;
  try {
    binary_start = read_header(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), file.header);
  } catch (const core::FormatError& e) {
    return e.located(source);
  }
  auto fields = parse_fields(file, source);
  if (!fields) return fields.error();

  try {
    if (bytes.size() - binary_start < 8)
      core::fail_at_byte(binary_start, fmt::format("expected the 8-byte footer (total_offsets, "
                                                   "total_samples) but only {} bytes remain",
                                                   bytes.size() - binary_start));
    const size_t footer_at = bytes.size() - 8;
    io::ByteCursor chunks(bytes.subspan(binary_start, footer_at - binary_start), binary_start);
    uint64_t next_free = 0;  // first offset not covered by earlier chunks
    bool first = true;
    while (!chunks.at_end()) {
      uint64_t at = chunks.offset();
      uint32_t offset = chunks.u32(std::endian::little, "chunk offset");
      uint32_t number = chunks.u32(std::endian::little, "chunk length");
      if (number == 0) core::fail_at_byte(at + 4, "chunk has 0 counts; each chunk has at least one");
      if (!first && offset < next_free)
        core::fail_at_byte(at, fmt::format("chunk at offset 0x{:x} overlaps or precedes the "
                                           "previous chunk (which ends at 0x{:x}); chunks must be "
                                           "increasing and disjoint", offset, next_free));
      if (uint64_t(number) * 4 > chunks.remaining())
        core::fail_at_byte(at + 4, fmt::format("chunk says {} counts follow, but only {} bytes "
                                               "remain before the footer", number,
                                               chunks.remaining()));
      Chunk c;
      c.offset = offset;
      c.counts.resize(number);
      for (uint32_t& v : c.counts) v = chunks.u32(std::endian::little, "count");
      next_free = uint64_t(offset) + number;
      first = false;
      file.chunks.push_back(std::move(c));
    }
    io::ByteCursor footer(bytes.subspan(footer_at), footer_at);
    uint32_t total_offsets = footer.u32(std::endian::little, "footer");
    uint32_t total_samples = footer.u32(std::endian::little, "footer");
    if (total_offsets != file.total_offsets())
      core::fail_at_byte(footer_at, fmt::format("footer says {} addresses have samples, the "
                                                "chunks have {}", total_offsets,
                                                file.total_offsets()));
    if (total_samples != file.total_samples())
      core::fail_at_byte(footer_at + 4, fmt::format("footer says {} samples in all, the chunks "
                                                    "sum to {}", total_samples,
                                                    file.total_samples()));
    if (!file.chunks.empty() && next_free > fields->tsize)
      diagnostics.warn(fmt::format("{}: samples at offsets up to 0x{:x} lie beyond the image's "
                                   "text size (tsize {})", source, next_free - 1, fields->tsize));
  } catch (const core::FormatError& e) {
    return e.located(source);
  }
  return file;
}

}  // namespace tally::dcpi
