// symbolize::inflate_elf on any bytes (a debug file is untrusted input): it lays out again
// a 64-bit ELF whose compressed sections it inflates, or refuses. What it makes must be an
// ELF libelf reads, with the section count of the input and no section compressed.
#include <gelf.h>
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "fuzz_check.h"
#include "symbolize/inflated_elf.h"

using namespace tally;

// Ends the libelf handle when it goes out of scope (elf_end takes nullptr too).
using ElfHandle = std::unique_ptr<Elf, decltype(&elf_end)>;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto image = symbolize::inflate_elf({data, size}, 2);
  if (!image) return 0;
  elf_version(EV_CURRENT);
  std::vector<uint8_t> input(data, data + size);
  ElfHandle original(elf_memory(reinterpret_cast<char*>(input.data()), input.size()), &elf_end);
  ElfHandle made(elf_memory(reinterpret_cast<char*>(image->data()), image->size()), &elf_end);
  // Garbage that merely looks like ELF to inflate_elf may stay garbage; what libelf reads
  // as ELF must stay readable.
  const bool original_is_elf = original && elf_kind(original.get()) == ELF_K_ELF;
  FUZZ_CHECK(made && (elf_kind(made.get()) == ELF_K_ELF || !original_is_elf),
             "libelf reads the image");
  if (elf_kind(made.get()) != ELF_K_ELF) return 0;
  size_t made_count = 0, original_count = 0;
  FUZZ_CHECK(elf_getshdrnum(made.get(), &made_count) == 0, "the image has section headers");
  if (original_is_elf && elf_getshdrnum(original.get(), &original_count) == 0)
    FUZZ_CHECK(made_count == original_count, "every section is kept");
  for (Elf_Scn* scn = elf_nextscn(made.get(), nullptr); scn != nullptr;
       scn = elf_nextscn(made.get(), scn)) {
    GElf_Shdr header;
    FUZZ_CHECK(gelf_getshdr(scn, &header) != nullptr, "every section header reads");
    FUZZ_CHECK((header.sh_flags & SHF_COMPRESSED) == 0, "nothing is left compressed");
  }
  return 0;
}
