#include "symbolize/mini_debug_info.h"

#include <lzma.h>

#include <string>
#include <vector>

#include "symbolize/elf_image.h"

namespace tally::symbolize {
namespace {

// A MiniDebugInfo ELF is a symbol table: tens of MB at most for the largest binaries.
constexpr size_t kMaxInflated = size_t{512} << 20;

core::Error corrupt(const ElfImage& image, const std::string& why) {
  return core::Error{image.path() + ": .gnu_debugdata: " + why};
}

}  // namespace

core::Expected<std::unique_ptr<ElfImage>> open_mini_debug_info(const ElfImage& image) {
  auto section = image.section_data(".gnu_debugdata");
  if (!section) return std::unique_ptr<ElfImage>();
  lzma_stream stream = LZMA_STREAM_INIT;
  if (lzma_stream_decoder(&stream, UINT64_MAX, 0) != LZMA_OK)
    return corrupt(image, "liblzma cannot start a decoder");
  stream.next_in = section->bytes.data();
  stream.avail_in = section->bytes.size();
  std::vector<uint8_t> inflated;
  lzma_ret status = LZMA_OK;
  while (status == LZMA_OK) {
    if (inflated.size() >= kMaxInflated) {
      lzma_end(&stream);
      return corrupt(image, "inflates to more than " + std::to_string(kMaxInflated >> 20) + " MB");
    }
    // Grows with what was produced, never with a size the input claims.
    const size_t had = inflated.size();
    inflated.resize(had == 0 ? size_t{1} << 16 : std::min(had * 2, kMaxInflated));
    stream.next_out = inflated.data() + had;
    stream.avail_out = inflated.size() - had;
    status = lzma_code(&stream, LZMA_FINISH);
    inflated.resize(inflated.size() - stream.avail_out);
  }
  const uint64_t consumed = section->bytes.size() - stream.avail_in;
  lzma_end(&stream);
  if (status != LZMA_STREAM_END)
    return corrupt(image, "not an xz stream (liblzma error " + std::to_string(status) + " after " +
                              std::to_string(consumed) + " bytes)");
  auto embedded = ElfImage::from_memory(std::move(inflated), image.path() + "[.gnu_debugdata]");
  if (!embedded) return corrupt(image, "the inflated data is not an ELF file");
  return embedded;
}

}  // namespace tally::symbolize
