#include "symbolize/function_range.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "symbolize/call_frame_ranges.h"
#include "symbolize/plt_entries.h"

namespace tally::symbolize {

namespace {

struct RawSymbol {
  uint64_t address = 0;
  uint64_t section_end = 0;  // 0: no section bound
  std::string name;
  bool function = true;  // STT_FUNC / STT_GNU_IFUNC (or a DWARF subprogram)
};

Elf_Scn* symbol_table(Elf* elf, uint32_t type) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) != nullptr && header.sh_type == type) return scn;
  }
  return nullptr;
}

// Every defined symbol `nm` lists (not sections' and files' own symbols), with the end of
// its section.
void read_table(Elf* elf, Elf_Scn* table, std::vector<RawSymbol>& out) {
  GElf_Shdr header;
  if (gelf_getshdr(table, &header) == nullptr || header.sh_entsize == 0) return;
  Elf_Data* data = elf_getdata(table, nullptr);
  if (data == nullptr) return;
  const size_t count = header.sh_size / header.sh_entsize;
  for (size_t i = 1; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
    const int type = GELF_ST_TYPE(sym.st_info);
    if (type == STT_SECTION || type == STT_FILE || sym.st_shndx == SHN_UNDEF ||
        sym.st_shndx == SHN_ABS || sym.st_shndx == SHN_COMMON || sym.st_shndx >= SHN_LORESERVE)
      continue;
    const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0') continue;
    GElf_Shdr section;
    Elf_Scn* scn = elf_getscn(elf, sym.st_shndx);
    if (scn == nullptr || gelf_getshdr(scn, &section) == nullptr || !(section.sh_flags & SHF_ALLOC))
      continue;
    // "name@@VERSION" as nm prints it is the name; the table holds it without the version.
    out.push_back({sym.st_value, section.sh_addr + section.sh_size, name,
                   type == STT_FUNC || type == STT_GNU_IFUNC});
  }
}

// Without any symbol table: the DWARF subprograms with code.
void read_dwarf_functions(Elf* elf, std::vector<RawSymbol>& out) {
  Dwarf* dwarf = dwarf_begin_elf(elf, DWARF_C_READ, nullptr);
  if (dwarf == nullptr) return;
  struct Collector {
    std::vector<RawSymbol>* out;
  } collector{&out};
  Dwarf_Off offset = 0, next = 0;
  size_t header_size = 0;
  while (dwarf_nextcu(dwarf, offset, &next, &header_size, nullptr, nullptr, nullptr) == 0) {
    Dwarf_Die cu;
    if (dwarf_offdie(dwarf, offset + header_size, &cu) != nullptr) {
      dwarf_getfuncs(
          &cu,
          [](Dwarf_Die* die, void* arg) -> int {
            auto* c = static_cast<Collector*>(arg);
            Dwarf_Addr low = 0, high = 0;
            if (dwarf_lowpc(die, &low) != 0 || dwarf_highpc(die, &high) != 0 || high <= low)
              return DWARF_CB_OK;
            Dwarf_Attribute attribute;
            const char* name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attribute));
            if (name == nullptr) name = dwarf_diename(die);
            if (name != nullptr) c->out->push_back({low, high, name, true});
            return DWARF_CB_OK;
          },
          &collector, 0);
    }
    offset = next;
  }
  dwarf_end(dwarf);
}

// What the symbolizer names without a symbol, under the same names (elf_index.h): PLT
// entries ("free@plt") and functions known by their FDE ("liblzma.so.5!sub_15ae0"). Each
// also ends the range of the symbol before it, which would otherwise run over them.
void add_code_without_symbols(const ElfImage& image, std::vector<RawSymbol>& raw) {
  std::vector<uint64_t> starts;
  for (const RawSymbol& symbol : raw) starts.push_back(symbol.address);
  std::sort(starts.begin(), starts.end());
  auto has_symbol = [&](uint64_t address) {
    return std::binary_search(starts.begin(), starts.end(), address);
  };
  std::vector<uint64_t> plt_starts;
  for (const PltEntry& entry : read_plt_entries(image)) {
    if (has_symbol(entry.address)) continue;
    raw.push_back({entry.address, entry.address + entry.size, entry.name, true});
    plt_starts.push_back(entry.address);
  }
  starts.insert(starts.end(), plt_starts.begin(), plt_starts.end());
  std::sort(starts.begin(), starts.end());
  auto ranges = read_code_ranges(image);
  if (!ranges) return;  // the symbols alone, as before
  const std::string& path = image.path();
  const std::string file = path.substr(path.rfind('/') + 1);
  for (const CodeRange& range : *ranges) {
    if (has_symbol(range.start)) continue;
    raw.push_back({range.start, range.end, fmt::format("{}!sub_{:x}", file, range.start), true});
  }
}

}  // namespace

std::unique_ptr<FunctionRanges> FunctionRanges::load(const FoundBinary& found) {
  auto ranges = std::unique_ptr<FunctionRanges>(new FunctionRanges());
  if (!found.binary.empty()) ranges->binary_ = ElfImage::open(found.binary);
  std::unique_ptr<ElfImage> debug;
  if (!found.debug.empty() && found.debug != found.binary) debug = ElfImage::open(found.debug);
  const ElfImage* main = ranges->binary_ ? ranges->binary_.get() : debug.get();
  if (main == nullptr) return nullptr;
  ranges->path_ = main->path();
  ranges->segments_ = main->load_segments();
  ranges->is_exec_ = main->is_exec();
  GElf_Ehdr header;
  if (gelf_getehdr(main->elf(), &header) != nullptr) ranges->machine_ = header.e_machine;

  std::vector<RawSymbol> raw;
  for (const ElfImage* image : {ranges->binary_.get(), debug.get()}) {
    if (image == nullptr || !raw.empty()) continue;
    if (Elf_Scn* table = symbol_table(image->elf(), SHT_SYMTAB)) read_table(image->elf(), table, raw);
  }
  if (raw.empty() && ranges->binary_) {
    if (Elf_Scn* table = symbol_table(ranges->binary_->elf(), SHT_DYNSYM))
      read_table(ranges->binary_->elf(), table, raw);
  }
  // No function in any table (a PIE's .dynsym holds only what it imports and a few data
  // symbols): the DWARF subprograms, when there is DWARF.
  if (std::none_of(raw.begin(), raw.end(), [](const RawSymbol& s) { return s.function; })) {
    std::vector<RawSymbol> from_dwarf;
    read_dwarf_functions((debug ? debug : ranges->binary_)->elf(), from_dwarf);
    if (!from_dwarf.empty()) raw = std::move(from_dwarf);
  }

  add_code_without_symbols(*main, raw);

  std::sort(raw.begin(), raw.end(), [](const RawSymbol& a, const RawSymbol& b) {
    return a.address != b.address ? a.address < b.address : a.name < b.name;
  });
  for (size_t i = 0; i < raw.size();) {
    SymbolRange range{.start = raw[i].address, .end = raw[i].section_end, .names = {}};
    size_t j = i;
    for (; j < raw.size() && raw[j].address == range.start; ++j) {
      if (range.names.empty() || range.names.back() != raw[j].name) range.names.push_back(raw[j].name);
      range.end = std::max(range.end, raw[j].section_end);
    }
    if (j < raw.size() && raw[j].address < range.end) range.end = raw[j].address;
    if (range.end > range.start) ranges->symbols_.push_back(std::move(range));
    i = j;
  }
  return ranges;
}

const SymbolRange* FunctionRanges::containing(uint64_t address) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](uint64_t a, const SymbolRange& r) { return a < r.start; });
  if (after == symbols_.begin()) return nullptr;
  --after;
  return address < after->end ? &*after : nullptr;
}

std::optional<std::vector<uint8_t>> FunctionRanges::code(uint64_t start, uint64_t end) const {
  if (!binary_ || end <= start) return std::nullopt;
  Elf* elf = binary_->elf();
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_PROGBITS ||
        !(header.sh_flags & SHF_ALLOC) || start < header.sh_addr ||
        start >= header.sh_addr + header.sh_size)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) return std::nullopt;
    const uint64_t first = start - header.sh_addr;
    const uint64_t last = std::min<uint64_t>({end - header.sh_addr, header.sh_size, data->d_size});
    if (last <= first) return std::nullopt;
    const auto* bytes = static_cast<const uint8_t*>(data->d_buf);
    return std::vector<uint8_t>(bytes + first, bytes + last);
  }
  return std::nullopt;
}

}  // namespace tally::symbolize
