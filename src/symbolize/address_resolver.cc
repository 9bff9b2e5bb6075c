#include "symbolize/address_resolver.h"

#include <dwarf.h>
#include <gelf.h>

#include <algorithm>

#include "symbolize/demangle.h"

namespace tally::symbolize {

namespace {

// How far back the range lookups look past the nearest lower start: ranges nest or
// overlap only a little (a function split in hot and cold parts, a CU with gaps).
constexpr size_t kOverlapScan = 16;

// Where compilers put function definitions: at the top of the CU or in a namespace.
// Classes hold only declarations (a member's definition is a top-level DIE with
// DW_AT_specification), so the first walk skips them: they are most of a C++ CU's DIEs
// (a deeper walk, on a miss, looks inside classes and functions).
bool contains_children_with_code(int tag) {
  return tag == DW_TAG_namespace || tag == DW_TAG_module;
}

bool has_pc_attributes(Dwarf_Die* die) {
  return dwarf_hasattr(die, DW_AT_low_pc) || dwarf_hasattr(die, DW_AT_ranges);
}

const char* string_attribute(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attribute;
  return dwarf_formstring(dwarf_attr_integrate(die, name, &attribute));
}

bool has_linkage_name(Dwarf_Die* die) {
  return string_attribute(die, DW_AT_linkage_name) != nullptr ||
         string_attribute(die, DW_AT_MIPS_linkage_name) != nullptr;
}

template <class Range>
const Range* find_range(const std::vector<Range>& ranges, uint64_t address) {
  auto after = std::upper_bound(ranges.begin(), ranges.end(), address,
                                [](uint64_t a, const Range& r) { return a < r.low; });
  for (size_t scanned = 0; after != ranges.begin() && scanned < kOverlapScan; ++scanned) {
    --after;
    if (address < after->high) return &*after;
  }
  return nullptr;
}

// Appends to `chain` the inlined calls under `scope` that hold `address`, outermost
// first; false when none of the blocks below holds it.
bool find_inlined_calls(Dwarf_Die* scope, uint64_t address, std::vector<Dwarf_Die>& chain) {
  Dwarf_Die child;
  if (dwarf_child(scope, &child) != 0) return false;
  do {
    int tag = dwarf_tag(&child);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) continue;
    if (!has_pc_attributes(&child)) {
      // A block without addresses of its own may still enclose ones that have them.
      if (tag == DW_TAG_lexical_block && find_inlined_calls(&child, address, chain)) return true;
      continue;
    }
    if (dwarf_haspc(&child, address) <= 0) continue;
    if (tag == DW_TAG_inlined_subroutine) chain.push_back(child);
    find_inlined_calls(&child, address, chain);
    return true;
  } while (dwarf_siblingof(&child, &child) == 0);
  return false;
}

}  // namespace

AddressResolver::AddressResolver(const FoundBinary& found) {
  if (!found.debug.empty()) debug_ = ElfImage::open(found.debug);
  if (!found.binary.empty() && found.binary != found.debug) binary_ = ElfImage::open(found.binary);
  if (debug_) {
    dwarf_ = dwarf_begin_elf(debug_->elf(), DWARF_C_READ, nullptr);
    if (dwarf_ != nullptr) index_units();
    read_symbols(*debug_);
  }
  if (binary_) read_symbols(*binary_);
  // Aliases at one address (libc's local "__clone3" and "clone3"): the public spelling,
  // with the fewest leading underscores, as addr2line and pprof show it.
  auto underscores = [](const char* name) {
    size_t n = 0;
    while (name[n] == '_') ++n;
    return n;
  };
  std::stable_sort(symbols_.begin(), symbols_.end(), [&](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.rank != b.rank) return a.rank > b.rank;
    return underscores(a.name) < underscores(b.name);
  });
  // One symbol per address: the best ranked one.
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end(),
                             [](const Symbol& a, const Symbol& b) { return a.address == b.address; }),
                 symbols_.end());
}

AddressResolver::~AddressResolver() {
  if (dwarf_ != nullptr) dwarf_end(dwarf_);
}

void AddressResolver::index_units() {
  Dwarf_CU* cu = nullptr;
  Dwarf_CU* next = nullptr;
  Dwarf_Half version = 0;
  uint8_t unit_type = 0;
  Dwarf_Die cu_die;
  while (dwarf_get_units(dwarf_, cu, &next, &version, &unit_type, &cu_die, nullptr) == 0) {
    cu = next;
    if (unit_type != DW_UT_compile && unit_type != DW_UT_partial) continue;
    size_t index = units_.size();
    units_.push_back({cu_die, false, false, {}});
    Dwarf_Addr base = 0, low = 0, high = 0;
    for (ptrdiff_t offset = 0; (offset = dwarf_ranges(&cu_die, offset, &base, &low, &high)) > 0;) {
      if (high > low) unit_ranges_.push_back({low, high, index});
    }
  }
  std::sort(unit_ranges_.begin(), unit_ranges_.end(),
            [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
}

void AddressResolver::collect_functions(Dwarf_Die* parent, bool deep,
                                        std::vector<FunctionRange>& out) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Addr base = 0, low = 0, high = 0;
      for (ptrdiff_t offset = 0; (offset = dwarf_ranges(&child, offset, &base, &low, &high)) > 0;) {
        if (high > low) out.push_back({low, high, child});
      }
      if (deep) collect_functions(&child, deep, out);
    } else if (contains_children_with_code(tag) ||
               (deep && (tag == DW_TAG_lexical_block || tag == DW_TAG_class_type ||
                         tag == DW_TAG_structure_type || tag == DW_TAG_union_type))) {
      collect_functions(&child, deep, out);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

void AddressResolver::index_functions(CompileUnit& unit, bool deep) {
  unit.indexed = true;
  unit.deep_indexed = deep;
  unit.functions.clear();
  collect_functions(&unit.die, deep, unit.functions);
  std::sort(unit.functions.begin(), unit.functions.end(),
            [](const FunctionRange& a, const FunctionRange& b) { return a.low < b.low; });
}

AddressResolver::CompileUnit* AddressResolver::unit_for(uint64_t address) {
  const UnitRange* range = find_range(unit_ranges_, address);
  return range != nullptr ? &units_[range->unit] : nullptr;
}

const AddressResolver::FunctionRange* AddressResolver::function_for(CompileUnit& unit,
                                                                    uint64_t address) {
  if (!unit.indexed) index_functions(unit, false);
  const FunctionRange* found = find_range(unit.functions, address);
  // A function defined inside another (a lambda's operator(), a local class's member)
  // has its DIE below the enclosing one: look there only when the cheap index misses.
  if (found == nullptr && !unit.deep_indexed) {
    index_functions(unit, true);
    found = find_range(unit.functions, address);
  }
  return found;
}

void AddressResolver::read_symbols(const ElfImage& image) {
  Elf* elf = image.elf();
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    if (header.sh_type != SHT_SYMTAB && header.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || header.sh_entsize == 0) continue;
    size_t count = header.sh_size / header.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
      int type = GELF_ST_TYPE(sym.st_info);
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
          sym.st_value == 0)
        continue;
      const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
      if (name == nullptr || *name == '\0') continue;
      int binding = GELF_ST_BIND(sym.st_info);
      int rank = binding == STB_GLOBAL ? 2 : binding == STB_WEAK ? 1 : 0;
      symbols_.push_back({sym.st_value, sym.st_size, name, rank});
    }
  }
}

const AddressResolver::Symbol* AddressResolver::symbol_for(uint64_t address) const {
  auto after = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                                [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (after == symbols_.begin()) return nullptr;
  const Symbol& symbol = *(after - 1);
  // A symbol of unknown size covers everything up to the next one.
  if (symbol.size != 0 && address >= symbol.address + symbol.size) return nullptr;
  return &symbol;
}

const FunctionInfo* AddressResolver::function_for_die(Dwarf_Die* die) {
  auto [it, added] = functions_by_die_.try_emplace(dwarf_dieoffset(die));
  FunctionInfo& function = it->second;
  if (!added) return &function;
  const char* linkage = string_attribute(die, DW_AT_linkage_name);
  if (linkage == nullptr) linkage = string_attribute(die, DW_AT_MIPS_linkage_name);
  const char* plain = string_attribute(die, DW_AT_name);
  if (linkage != nullptr) {
    function.system_name = linkage;
    function.name = demangle(function.system_name);
  } else if (plain != nullptr) {
    function.system_name = plain;
    function.name = plain;
  } else {
    function.name = function.system_name = "??";
  }
  int line = 0;
  if (dwarf_decl_line(die, &line) == 0) function.start_line = line;
  return &function;
}

const FunctionInfo* AddressResolver::function_for_symbol(const Symbol& symbol,
                                                         int64_t die_start_line) {
  auto [it, added] = functions_by_symbol_.try_emplace({symbol.name, die_start_line});
  FunctionInfo& function = it->second;
  if (added) {
    // A versioned definition in .symtab reads "__libc_start_main@@GLIBC_2.34": the version
    // is not part of the name (addr2line and pprof show "__libc_start_main").
    const std::string_view name(symbol.name);
    const size_t at = name.find('@');
    function.system_name = std::string(at == std::string_view::npos || at == 0 ? name : name.substr(0, at));
    function.name = demangle(function.system_name);
    function.start_line = die_start_line;
  }
  return &function;
}

const char* AddressResolver::call_file(CompileUnit& unit, Dwarf_Die* inlined) const {
  Dwarf_Attribute attribute;
  Dwarf_Word index = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attribute), &index) != 0) return "";
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(&unit.die, &files, &count) != 0 || index >= count) return "";
  const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
  return name != nullptr ? name : "";
}

std::vector<Frame> AddressResolver::resolve(uint64_t address) {
  std::vector<Frame> frames;
  CompileUnit* unit = dwarf_ != nullptr ? unit_for(address) : nullptr;
  const char* file = "";
  int64_t line = 0;
  if (unit != nullptr) {
    if (Dwarf_Line* row = dwarf_getsrc_die(&unit->die, address)) {
      if (const char* name = dwarf_linesrc(row, nullptr, nullptr)) file = name;
      int number = 0;
      if (dwarf_lineno(row, &number) == 0) line = number;
    }
    if (const FunctionRange* function = function_for(*unit, address)) {
      // The chain of concrete scopes down to the innermost inlined call holding the address.
      std::vector<Dwarf_Die> chain{function->die};
      Dwarf_Die scope = function->die;
      find_inlined_calls(&scope, address, chain);
      // Innermost first: it gets the line table's position; each caller gets the call
      // site recorded on the inlined call below it.
      for (size_t i = chain.size(); i-- > 0;) {
        frames.push_back({function_for_die(&chain[i]), file, line});
        if (i > 0) {
          file = call_file(*unit, &chain[i]);
          Dwarf_Attribute attribute;
          Dwarf_Word call_line = 0;
          line = dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &attribute), &call_line) == 0
                     ? static_cast<int64_t>(call_line)
                     : 0;
        }
      }
      // A DWARF name without linkage name ("run_rounds" of a static C++ function, "main"
      // over main's .cold part) gives way to the symbol table's name, as addr2line and
      // llvm-symbolizer do: it is the mangled name or the piece's own name.
      if (!has_linkage_name(&chain[0])) {
        if (const Symbol* symbol = symbol_for(address))
          frames.back().function = function_for_symbol(*symbol, frames.back().function->start_line);
      }
      return frames;
    }
  }
  if (const Symbol* symbol = symbol_for(address)) frames.push_back({function_for_symbol(*symbol), file, line});
  return frames;
}

}  // namespace tally::symbolize
