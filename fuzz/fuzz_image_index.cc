// The profile database's index (DIR/index.tsv) on any bytes: ImageIndex::parse, and on
// success its own text must parse back to the same entries.
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "store/image_index.h"

using namespace tally;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto index = store::ImageIndex::parse(text, "fuzz");
  if (!index) {
    FUZZ_CHECK(index.error().message.rfind("fuzz: line ", 0) == 0, "errors name the line");
    return 0;
  }
  auto again = store::ImageIndex::parse(index->text(), "rewritten");
  FUZZ_CHECK(again.has_value(), "tally reads the index it wrote");
  FUZZ_CHECK(again->entries() == index->entries(), "entries survive text()");
  return 0;
}
