// The procedure linkage table's entries named as objdump and perf name them, "free@plt":
// no symbol table describes them, but each entry jumps through a GOT slot, and the
// dynamic relocation that fills that slot names the function. Decoded from the x86-64
// entries' `jmp *slot(%rip)` (with or without endbr64 and bnd prefixes) in .plt, .plt.sec
// and .plt.got; other machines give none.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tally::symbolize {

class ElfImage;

struct PltEntry {
  uint64_t address = 0;  // link-time address of the entry
  uint64_t size = 0;
  std::string name;  // "free@plt"
};

// By address; entries whose slot no relocation names (the first, resolver entry) are left
// out. Malformed tables give fewer entries, never an error: the names are a convenience.
// With `needed` (link-time addresses), .plt.got is read only when one of them is in it:
// its slots are named by .rela.dyn, which in a big binary is tens of MB (28 MB of mostly
// RELATIVE relocations in an ASan build of tally), all made resident and decoded for a
// handful of entries no address of the daemon's interval was in.
std::vector<PltEntry> read_plt_entries(const ElfImage& image,
                                       const std::vector<uint64_t>* needed = nullptr);

}  // namespace tally::symbolize
