// Resolves link-time addresses of one ELF to their function, inline chain and source
// line: DWARF (libdw) first, else the symbol tables (.symtab, .dynsym). One resolver
// owns its own libelf/libdw handles: libdw is not thread-safe on one Dwarf handle, so
// each thread makes its own resolver per ELF.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolize/elf_image.h"
#include "symbolize/find_binary.h"

namespace tally::symbolize {

struct FunctionInfo {
  std::string name;         // demangled
  std::string system_name;  // as in the binary (mangled)
  int64_t start_line = 0;   // the function's declaration line, 0 when unknown
};

// One frame of an address. The pointers stay valid as long as the resolver that made
// them: functions are memoized (one per DIE or symbol) and file names point into libdw's
// own tables, so that resolving an address allocates next to nothing.
struct Frame {
  const FunctionInfo* function = nullptr;
  const char* file = "";  // "" when unknown
  int64_t line = 0;       // 0 when unknown
};

class AddressResolver {
 public:
  explicit AddressResolver(const FoundBinary& found);
  ~AddressResolver();
  AddressResolver(const AddressResolver&) = delete;
  AddressResolver& operator=(const AddressResolver&) = delete;

  bool has_dwarf() const { return dwarf_ != nullptr; }
  // Innermost (inlined) frame first; empty when the address is in no known function.
  std::vector<Frame> resolve(uint64_t address);

 private:
  struct FunctionRange {
    uint64_t low = 0;
    uint64_t high = 0;  // one past the end
    Dwarf_Die die;
  };
  struct CompileUnit {
    Dwarf_Die die;
    bool indexed = false;       // top-level and namespace functions are in `functions`
    bool deep_indexed = false;  // and those nested in functions and classes (lambdas)
    std::vector<FunctionRange> functions;  // by low address
  };
  struct UnitRange {
    uint64_t low = 0;
    uint64_t high = 0;
    size_t unit = 0;
  };
  struct Symbol {
    uint64_t address = 0;
    uint64_t size = 0;
    const char* name = nullptr;  // points into the ELF's string table
    int rank = 0;                // global beats weak beats local at one address
  };

  void index_units();
  void index_functions(CompileUnit& unit, bool deep);
  void collect_functions(Dwarf_Die* parent, bool deep, std::vector<FunctionRange>& out);
  void read_symbols(const ElfImage& image);
  CompileUnit* unit_for(uint64_t address);
  const FunctionRange* function_for(CompileUnit& unit, uint64_t address);
  const Symbol* symbol_for(uint64_t address) const;
  // The function's names and start line, memoized per DIE.
  const FunctionInfo* function_for_die(Dwarf_Die* die);
  // The same for a symbol; `die_start_line` (0: none) when a DWARF function gave way to it.
  const FunctionInfo* function_for_symbol(const Symbol& symbol, int64_t die_start_line = 0);
  const char* call_file(CompileUnit& unit, Dwarf_Die* inlined) const;

  std::unique_ptr<ElfImage> debug_;
  std::unique_ptr<ElfImage> binary_;
  Dwarf* dwarf_ = nullptr;
  std::vector<CompileUnit> units_;
  std::vector<UnitRange> unit_ranges_;  // by low address
  std::vector<Symbol> symbols_;         // by address
  std::unordered_map<Dwarf_Off, FunctionInfo> functions_by_die_;
  std::map<std::pair<const char*, int64_t>, FunctionInfo> functions_by_symbol_;
};

}  // namespace tally::symbolize
