#include "symbolize/elf_index.h"

#include <dwarf.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <sstream>

#include "symbolize/inflated_elf.h"
#include "symbolize/mini_debug_info.h"
#include "symbolize/plt_entries.h"
#include "symbolize/range_lookup.h"

namespace tally::symbolize {

namespace {

// Whether [p, p + size) lies in one read-only mapping of a file (libelf falls back to
// reading the file into memory when it cannot map it: such pages must never be dropped).
bool is_read_only_file_mapping(const void* p, size_t size) {
  std::ifstream maps("/proc/self/maps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    uintptr_t low = 0, high = 0;
    char dash = 0;
    std::string perms, offset, device;
    uint64_t inode = 0;
    if (!(fields >> std::hex >> low >> dash >> high >> perms >> offset >> device >> std::dec >> inode))
      continue;
    if (at >= low && at < high)
      return size <= high - at && perms.size() >= 2 && perms[1] == '-' && inode != 0;
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// ElfIndex

ElfIndex::ElfIndex(const FoundBinary& found, unsigned workers, unsigned inflate_threads,
                   InflatedCopies* copies, const std::vector<uint64_t>* needed) {
  auto map = [](const std::string& path) -> std::optional<io::Input> {
    auto file = io::Input::open(path);
    if (!file) return std::nullopt;
    return std::move(*file);
  };
  bool from_copy = false;  // the debug file is read from its inflated copy in `copies`
  bool debug_mapped = false;  // ... or libelf maps it as it is (uncompressed)
  if (!found.debug.empty()) {
    debug_ = ElfImage::open(found.debug);
    const std::string copy = debug_ && debug_->has_compressed_dwarf() && copies != nullptr
                                 ? copies->path_of(found.debug)
                                 : "";
    if (auto opened = copy.empty() ? nullptr : ElfImage::open(copy)) {
      // Inflated once already: read like an uncompressed file.
      debug_ = std::move(opened);
      debug_file_ = map(copy);
      from_copy = debug_mapped = true;
    } else if (debug_ && debug_->has_compressed_dwarf()) {
      // Inflated here, in parallel; else libdw inflates every compressed section itself,
      // which is best read into memory rather than keep the compressed pages mapped too.
      if (auto inflated = open_inflated(found.debug, inflate_threads)) {
        debug_ = std::move(inflated);
      } else {
        debug_ = ElfImage::open(found.debug, ElfImage::Access::read);
        if (debug_) debug_file_ = map(found.debug);
      }
    } else if (debug_) {
      debug_file_ = map(found.debug);
      debug_mapped = true;
    }
  }
  if (!found.binary.empty() && found.binary != found.debug) {
    binary_ = ElfImage::open(found.binary);
    if (binary_) binary_file_ = map(found.binary);
  }
  const io::Input* debug_file = debug_file_ ? &*debug_file_ : nullptr;
  const io::Input* binary_file = binary_file_ ? &*binary_file_ : nullptr;
  if (debug_) {
    // The first handle inflates compressed sections in the shared Elf; the others, made
    // one after the other here, find them inflated.
    if (Dwarf* first = dwarf_begin_elf(debug_->elf(), DWARF_C_READ, nullptr)) {
      dwarf_handles_.push_back(first);
      // libdw reads a unit after walking every unit header before it, and each page it
      // touches maps the kernel's fault-around (64 KB) with it: for a few addresses of
      // libc most of its 8.7 MB of DWARF became resident. The daemon's resolvers (and
      // index_units) give the pages back as they go instead.
      size_t size = 0;
      const char* file = debug_mapped && needed != nullptr ? elf_rawfile(debug_->elf(), &size) : nullptr;
      if (file != nullptr && is_read_only_file_mapping(file, size))
        dwarf_map_ = {reinterpret_cast<const uint8_t*>(file), size};
      // Read from the units once per copy: the same file, the same units.
      if (const UnitTable* known = from_copy ? copies->units_of(found.debug) : nullptr) {
        unit_offsets_.assign(known->offsets.begin(), known->offsets.end());
        unit_ranges_ = known->ranges;
      } else {
        index_units(first);
        if (from_copy)
          copies->keep_units(found.debug, {{unit_offsets_.begin(), unit_offsets_.end()}, unit_ranges_});
      }
      if (unit_offsets_.empty()) {
        dwarf_end(first);
        dwarf_handles_.clear();
        dwarf_map_ = {};
      }
      // A dwz file (.gnu_debugaltlink) is opened by each handle when first needed, which
      // reads the shared Elf: done here, one handle after the other, not in the workers.
      for (Dwarf* handle : dwarf_handles_) (void)dwarf_getalt(handle);
      add_dwarf_handles(workers);
      if (!dwarf_handles_.empty()) find_sections();
    }
    read_symbols(*debug_, debug_file, SHT_SYMTAB, symbols_);
    read_symbols(*debug_, debug_file, SHT_DYNSYM, symbols_);
  }
  if (binary_) {
    read_symbols(*binary_, binary_file, SHT_SYMTAB, symbols_);
    read_symbols(*binary_, binary_file, SHT_DYNSYM, symbols_);
  }
  const ElfImage* code = binary_ ? binary_.get() : debug_.get();
  if (code != nullptr && !code->has_symtab() && !(debug_ && debug_->has_symtab()))
    add_mini_debug_info(*code);
  has_full_symbols_ = !unit_offsets_.empty() || mini_debug_ != nullptr ||
                      (debug_ && debug_->has_symtab()) || (binary_ && binary_->has_symtab());
  // An address a sized symbol holds is named by it (match()): when `needed` are all held
  // so, the PLT entries and the call-frame ranges would answer nothing, and of the symbols
  // only those at the nearest start below each needed address count (a few, not the
  // whole table to sort).
  bool all_held = false;
  if (needed != nullptr) {
    std::vector<Symbol> nearest = nearest_below(symbols_, *needed);
    one_per_address(nearest);
    all_held = std::all_of(needed->begin(), needed->end(), [&](uint64_t a) {
      const Symbol* symbol = find_symbol(nearest, a);
      return symbol != nullptr && symbol->size != 0;
    });
    if (all_held) symbols_ = std::move(nearest);
  }
  if (!all_held) one_per_address(symbols_);
  if (code != nullptr && !all_held) {
    const size_t before = symbols_.size();
    add_plt_entries(*code, needed);
    if (symbols_.size() != before) one_per_address(symbols_);
  }
  // The mapped file's own table, as addr2line reads it: .symtab, else .dynsym. Without a
  // separate debug file and without .symtab that is what symbols_ holds already.
  if (debug_ && binary_) {
    read_symbols(*binary_, binary_file, SHT_SYMTAB, own_symbols_);
    if (own_symbols_.empty()) read_symbols(*binary_, binary_file, SHT_DYNSYM, own_symbols_);
    if (all_held) own_symbols_ = nearest_below(own_symbols_, *needed);
    one_per_address(own_symbols_);
  } else if (const ElfImage* own = debug_ ? debug_.get() : binary_.get(); own && own->has_symtab()) {
    read_symbols(*own, debug_ ? debug_file : binary_file, SHT_SYMTAB, own_symbols_);
    if (all_held) own_symbols_ = nearest_below(own_symbols_, *needed);
    one_per_address(own_symbols_);
  } else {
    own_is_all_ = true;
  }
  if (!all_held) {
    open_code_ranges();
  } else if (code != nullptr) {
    image_name_ = code->path().substr(code->path().rfind('/') + 1);
  }
}

// The functions of the binary's MiniDebugInfo: a .symtab of what .dynsym lacks.
void ElfIndex::add_mini_debug_info(const ElfImage& image) {
  auto embedded = open_mini_debug_info(image);
  if (!embedded) {
    mini_debug_problem_ = embedded.error().message;
    return;
  }
  mini_debug_ = std::move(*embedded);
  if (mini_debug_) read_symbols(*mini_debug_, nullptr, SHT_SYMTAB, symbols_);
}

// "free@plt" for each PLT entry, as symbols of their own (no other symbol is at a PLT entry).
void ElfIndex::add_plt_entries(const ElfImage& image, const std::vector<uint64_t>* needed) {
  std::vector<PltEntry> entries = read_plt_entries(image, needed);
  if (entries.empty() || string_tables_.size() >= UINT16_MAX) return;
  size_t bytes = 0;
  for (const PltEntry& entry : entries) bytes += entry.name.size() + 1;
  plt_names_.reserve(bytes);  // never reallocated: the symbols point into it
  const uint16_t table = add_string_table(plt_names_.data());
  for (const PltEntry& entry : entries) {
    const auto offset = static_cast<uint32_t>(plt_names_.size());
    plt_names_.append(entry.name).push_back('\0');
    symbols_.push_back({entry.address, entry.size, offset, table, 0});
  }
}

// The binary's .eh_frame, else the debug file's .debug_frame, read from the mapped file
// (whose pages it gives back as it goes).
void ElfIndex::open_code_ranges() {
  const ElfImage* image = binary_ ? binary_.get() : debug_.get();
  const std::optional<io::Input>& file = binary_ ? binary_file_ : debug_file_;
  if (image == nullptr) return;
  const std::string& path = image->path();
  image_name_ = path.substr(path.rfind('/') + 1);
  auto table = CodeRangeTable::open(*image, file ? &*file : nullptr);
  if (table) {
    code_ranges_ = std::move(*table);
  } else {
    code_range_problem_ = table.error().message;
  }
}

ElfIndex::SymbolMatch ElfIndex::match(uint64_t address) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](uint64_t a, const Symbol& s) { return a < s.address; });
  const Symbol* before = after == symbols_.begin() ? nullptr : &*(after - 1);
  if (before != nullptr && before->size != 0 && address < before->address + before->size)
    return {before, 0};
  std::optional<CodeRange> code = code_ranges_.find(address);
  if (!code) {
    // No call-frame information holds it: a symbol of unknown size runs to the next one.
    if (before != nullptr && before->size == 0) return {before, 0};
    return {};
  }
  // The function's own symbol, which may be shorter than its FDE (a size that leaves out
  // a tail); else a sizeless one inside the function (hand-written assembly).
  if (const Symbol* at_start = symbol_at(code->start)) return {at_start, 0};
  if (before != nullptr && before->size == 0 && before->address > code->start) return {before, 0};
  return {nullptr, code->start};
}

const ElfIndex::Symbol* ElfIndex::symbol_at(uint64_t address) const {
  auto found = std::lower_bound(symbols_.begin(), symbols_.end(), address,
                                [](const Symbol& s, uint64_t a) { return s.address < a; });
  return found != symbols_.end() && found->address == address ? &*found : nullptr;
}

void ElfIndex::add_dwarf_handles(unsigned total) {
  while (!dwarf_handles_.empty() && dwarf_handles_.size() < total) {
    Dwarf* handle = dwarf_begin_elf(debug_->elf(), DWARF_C_READ, nullptr);
    if (handle == nullptr) break;
    dwarf_handles_.push_back(handle);
    (void)dwarf_getalt(handle);
  }
}

void ElfIndex::release_dwarf_pages() const {
  if (dwarf_map_.empty()) return;
  static const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(dwarf_map_.data()) & ~(page - 1);
  const auto end = reinterpret_cast<uintptr_t>(dwarf_map_.data() + dwarf_map_.size());
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void ElfIndex::release_file_pages() const {
  for (const auto* file : {&debug_file_, &binary_file_})
    if (*file) (*file)->release(0, (*file)->bytes().size());
}

// Aliases at one address (libc's local "__clone3" and "clone3", global "free" and
// "__libc_free"): the public spelling, as a person knows the function: by rank (binding,
// then the default version), then a .symtab name that is not a non-default version
// ("cfree@GLIBC_2.2.5"), then the fewest leading underscores; one symbol per address.
void ElfIndex::one_per_address(std::vector<Symbol>& symbols) const {
  auto underscores = [this](const Symbol& symbol) {
    const char* name = this->name(symbol);
    size_t n = 0;
    while (name[n] == '_') ++n;
    return n;
  };
  auto other_version = [this](const Symbol& symbol) {
    const char* at = std::strchr(this->name(symbol), '@');
    return at != nullptr && at[1] != '@' && std::strcmp(at, "@plt") != 0;
  };
  std::stable_sort(symbols.begin(), symbols.end(), [&](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.rank != b.rank) return a.rank > b.rank;
    if (other_version(a) != other_version(b)) return other_version(b);
    return underscores(a) < underscores(b);
  });
  symbols.erase(std::unique(symbols.begin(), symbols.end(),
                            [](const Symbol& a, const Symbol& b) { return a.address == b.address; }),
                symbols.end());
  symbols.shrink_to_fit();
}

ElfIndex::~ElfIndex() {
  for (Dwarf* handle : dwarf_handles_) dwarf_end(handle);
}

void ElfIndex::index_units(Dwarf* dwarf) {
  Dwarf_CU* cu = nullptr;
  Dwarf_CU* next = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cu_die;
  constexpr size_t kUnitsBetweenReleases = 32;  // as AddressResolver::open_unit
  for (size_t walked = 1;
       dwarf_get_units(dwarf, cu, &next, &version, &unit_type, &cu_die, nullptr) == 0; ++walked) {
    cu = next;
    if (walked % kUnitsBetweenReleases == 0) release_dwarf_pages();
    if (unit_type != DW_UT_compile && unit_type != DW_UT_partial) continue;
    size_t index = unit_offsets_.size();
    unit_offsets_.push_back(dwarf_dieoffset(&cu_die));
    Dwarf_Addr base = 0, low = 0, high = 0;
    for (ptrdiff_t offset = 0; (offset = dwarf_ranges(&cu_die, offset, &base, &low, &high)) > 0;) {
      if (high > low) unit_ranges_.push_back({low, high, index});
    }
  }
  release_dwarf_pages();
  std::sort(unit_ranges_.begin(), unit_ranges_.end(),
            [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
}

size_t ElfIndex::unit_of(uint64_t address) const {
  const UnitRange* range = find_range(unit_ranges_, address);
  return range != nullptr ? range->unit : kNoUnit;
}

namespace {

// Which symbols name code, and how strongly (global beats weak beats local at one address).
bool is_function_symbol(unsigned char info, uint16_t section, uint64_t value) {
  int type = GELF_ST_TYPE(info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && section != SHN_UNDEF && value != 0;
}

// Among aliases at one address, the public one: global beats weak beats local, then the
// default version of a symbol beats its other versions ("free" over "cfree@GLIBC_2.2.5").
int16_t symbol_rank(unsigned char info, bool default_version) {
  int binding = GELF_ST_BIND(info);
  return static_cast<int16_t>((binding == STB_GLOBAL ? 2 : binding == STB_WEAK ? 1 : 0) * 2 +
                              (default_version ? 1 : 0));
}

// .dynsym's versions (SHT_GNU_versym, one per symbol, by libelf in host order): bit 15
// marks a version other than the default. Empty when the file has none.
std::span<const uint16_t> symbol_versions(Elf* elf, size_t dynsym_index) {
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != SHT_GNU_versym ||
        header.sh_link != dynsym_index)
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr) return {};
    return {static_cast<const uint16_t*>(data->d_buf), data->d_size / sizeof(uint16_t)};
  }
  return {};
}

bool is_default_version(std::span<const uint16_t> versions, size_t symbol) {
  return symbol >= versions.size() || (versions[symbol] & 0x8000) == 0;
}

}  // namespace

uint16_t ElfIndex::add_string_table(const char* base) {
  string_tables_.push_back(base);
  return static_cast<uint16_t>(string_tables_.size() - 1);
}

void ElfIndex::read_symbols(const ElfImage& image, const io::Input* file, uint32_t table,
                            std::vector<Symbol>& out) {
  Elf* elf = image.elf();
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type != table) continue;
    if (header.sh_entsize == 0 || string_tables_.size() >= UINT16_MAX) continue;
    GElf_Shdr names;
    Elf_Scn* names_scn = elf_getscn(elf, header.sh_link);
    if (names_scn == nullptr || gelf_getshdr(names_scn, &names) == nullptr) continue;
    const std::span<const uint16_t> versions =
        table == SHT_DYNSYM ? symbol_versions(elf, elf_ndxscn(scn)) : std::span<const uint16_t>();
    if (file != nullptr && read_mapped_symbols(image, *file, header, names, versions, out)) continue;
    // Through libelf: any byte order and class.
    Elf_Data* data = elf_getdata(scn, nullptr);
    const char* base = elf_strptr(elf, header.sh_link, 0);
    if (data == nullptr || base == nullptr) continue;
    const uint16_t strings = add_string_table(base);
    size_t count = header.sh_size / header.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr ||
          !is_function_symbol(sym.st_info, sym.st_shndx, sym.st_value) ||
          sym.st_name > UINT32_MAX)
        continue;
      const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
      if (name == nullptr || *name == '\0') continue;
      out.push_back({sym.st_value, sym.st_size, static_cast<uint32_t>(sym.st_name), strings,
                     symbol_rank(sym.st_info, is_default_version(versions, i))});
    }
  }
}

// The same straight from the file's bytes, for the common case (a 64-bit little-endian
// file on a little-endian host), without touching the names: a big library's string
// table is megabytes, of which a profile needs a few names. False when the case is not
// the common one.
bool ElfIndex::read_mapped_symbols(const ElfImage& image, const io::Input& file,
                                   const GElf_Shdr& header, const GElf_Shdr& names,
                                   std::span<const uint16_t> versions, std::vector<Symbol>& out) {
  const char* ident = elf_getident(image.elf(), nullptr);
  const std::span<const uint8_t> bytes = file.bytes();
  auto inside = [&](const GElf_Shdr& section) {
    return section.sh_type != SHT_NOBITS && section.sh_offset <= bytes.size() &&
           section.sh_size <= bytes.size() - section.sh_offset;
  };
  if (std::endian::native != std::endian::little || ident == nullptr ||
      ident[EI_CLASS] != ELFCLASS64 || ident[EI_DATA] != ELFDATA2LSB ||
      header.sh_entsize != sizeof(Elf64_Sym) || !inside(header) || !inside(names) ||
      names.sh_type != SHT_STRTAB || names.sh_size == 0 || names.sh_size > UINT32_MAX ||
      // Every name then ends inside the table.
      bytes[names.sh_offset + names.sh_size - 1] != 0)
    return false;
  const uint16_t strings =
      add_string_table(reinterpret_cast<const char*>(bytes.data() + names.sh_offset));
  const uint8_t* symbols = bytes.data() + header.sh_offset;
  const size_t count = header.sh_size / sizeof(Elf64_Sym);
  out.reserve(out.size() + count);
  for (size_t i = 0; i < count; ++i) {
    Elf64_Sym sym;
    std::memcpy(&sym, symbols + i * sizeof sym, sizeof sym);
    // Name 0 is the empty string: a nameless symbol names nothing.
    if (!is_function_symbol(sym.st_info, sym.st_shndx, sym.st_value) || sym.st_name == 0 ||
        sym.st_name >= names.sh_size)
      continue;
    out.push_back({sym.st_value, sym.st_size, sym.st_name, strings,
                   symbol_rank(sym.st_info, is_default_version(versions, i))});
  }
  file.release(header.sh_offset, header.sh_size);  // copied out
  return true;
}

// The sections LineProgram and DieWalker read, as libdw left them (it inflates compressed
// ones in place when it opens the file). A little-endian file only; else libdw does it all.
void ElfIndex::find_sections() {
  Elf* elf = debug_->elf();
  const char* ident = elf_getident(elf, nullptr);
  size_t names = 0;
  if (ident == nullptr || ident[EI_DATA] != ELFDATA2LSB || elf_getshdrstrndx(elf, &names) != 0)
    return;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr || header.sh_type == SHT_NOBITS ||
        (header.sh_flags & SHF_COMPRESSED) != 0)
      continue;
    const char* name = elf_strptr(elf, names, header.sh_name);
    if (name == nullptr) continue;
    std::span<const uint8_t>* wanted = nullptr;
    if (std::strcmp(name, ".debug_line") == 0) wanted = &line_sections_.line;
    else if (std::strcmp(name, ".debug_info") == 0) wanted = &die_sections_.info;
    else if (std::strcmp(name, ".debug_abbrev") == 0) wanted = &die_sections_.abbrev;
    else if (std::strcmp(name, ".debug_line_str") == 0) wanted = &line_sections_.line_str;
    else if (std::strcmp(name, ".debug_str") == 0) wanted = &line_sections_.str;
    if (wanted == nullptr) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data != nullptr && data->d_buf != nullptr)
      *wanted = {static_cast<const uint8_t*>(data->d_buf), data->d_size};
  }
}

std::vector<ElfIndex::Symbol> ElfIndex::nearest_below(const std::vector<Symbol>& symbols,
                                                     const std::vector<uint64_t>& addresses) {
  // Per address, the highest symbol start at or below it: each symbol is a candidate for the
  // first address at or above it, and an address's answer is at least the one before it.
  std::vector<uint64_t> nearest(addresses.size(), 0);  // 0: none (no function starts at 0)
  for (const Symbol& symbol : symbols) {
    auto at = std::lower_bound(addresses.begin(), addresses.end(), symbol.address);
    if (at == addresses.end()) continue;
    uint64_t& best = nearest[static_cast<size_t>(at - addresses.begin())];
    best = std::max(best, symbol.address);
  }
  for (size_t i = 1; i < nearest.size(); ++i) nearest[i] = std::max(nearest[i], nearest[i - 1]);
  std::vector<Symbol> kept;
  for (const Symbol& symbol : symbols)
    if (std::binary_search(nearest.begin(), nearest.end(), symbol.address)) kept.push_back(symbol);
  return kept;
}

const ElfIndex::Symbol* ElfIndex::find_symbol(const std::vector<Symbol>& symbols,
                                               uint64_t address) {
  auto after = std::upper_bound(symbols.begin(), symbols.end(), address,
                                [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (after == symbols.begin()) return nullptr;
  const Symbol& symbol = *(after - 1);
  // A symbol of unknown size covers everything up to the next one.
  if (symbol.size != 0 && address >= symbol.address + symbol.size) return nullptr;
  return &symbol;
}

}  // namespace tally::symbolize
