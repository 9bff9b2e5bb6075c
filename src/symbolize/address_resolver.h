// Resolves link-time addresses of one ELF to their function, inline chain and source
// line: DWARF (libdw) first, else the symbol tables (.symtab, .dynsym).
//
// The work is split so that threads share what is the same for all of them: an ElfIndex
// (the file opened and its compressed debug sections inflated once, the symbols, where each
// compile unit's code lies) is built once per ELF and only read afterwards; an
// AddressResolver belongs to one thread (libdw is not thread-safe on one Dwarf handle, so
// each thread has its own handle, made by the index on the shared file) and decodes a
// compile unit only when it is asked for an address in it. symbolize() hands each compile
// unit's addresses to one thread, so every unit is decoded once.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "io/input.h"
#include "symbolize/die_walker.h"
#include "symbolize/elf_index.h"
#include "symbolize/line_program.h"

namespace tally::symbolize {

struct FunctionInfo {
  std::string name;         // demangled
  std::string system_name;  // as in the binary (mangled); empty: the same as `name`
  int64_t start_line = 0;   // the function's declaration line, 0 when unknown
  // Left to symbolize(), which interns frames into the profile single-threaded: the
  // profile's function for this function with the last file it was seen with.
  mutable const char* interned_file = nullptr;
  mutable uint32_t interned_id = 0;  // a core::FunctionId
};

// One frame of an address. The pointers stay valid as long as the resolver that made
// them, even once its index is gone: functions are memoized (one per name or symbol, their
// names copied) and file names point into the unit's file table (LineProgram's, or a copy
// of libdw's), so that resolving an address allocates next to nothing.
struct Frame {
  const FunctionInfo* function = nullptr;
  const char* file = "";  // "" when unknown
  int64_t line = 0;       // 0 when unknown
};

// One thread's resolver for one ELF.
class AddressResolver {
 public:
  // Uses the index's handle for `worker`: one resolver per worker and index.
  AddressResolver(const ElfIndex& index, unsigned worker);
  AddressResolver(const AddressResolver&) = delete;
  AddressResolver& operator=(const AddressResolver&) = delete;

  bool has_dwarf() const { return dwarf_ != nullptr; }
  // Resolves `addresses`, ascending, all of which the index places in compile unit `unit`
  // (ElfIndex::kNoUnit: in none): appends each one's frames to `frames`, innermost
  // (inlined) frame first, none when the address is in no known function, and sets
  // ends[i] to the size of `frames` after addresses[i]'s. A unit's addresses are best
  // given in one call: its line program then runs once for all of them.
  void resolve(size_t unit, std::span<const uint64_t> addresses, std::vector<Frame>& frames,
               std::span<uint32_t> ends);

 private:
  using Symbol = ElfIndex::Symbol;
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

  struct FunctionRange {
    uint64_t low = 0;
    uint64_t high = 0;  // one past the end
    Dwarf_Die die;
  };
  struct CompileUnit {
    Dwarf_Die die;
    bool opened = false;        // `die` is set
    // Its line program when this reader handles it, else libdw reads lines and files.
    std::optional<LineProgram> lines;
    // Its DIEs for the wide walks when DieWalker handles them, else libdw walks.
    std::optional<DieWalker> walker;
    bool indexed = false;       // top-level and namespace functions are in `functions`
    bool deep_indexed = false;  // and those nested in functions and classes (lambdas)
    std::vector<FunctionRange> functions;  // by low address
  };
  // A function's scopes with addresses, each read once and only when a lookup passes
  // through it: the function itself (node 0), its inlined calls and its lexical blocks,
  // each with the ranges of the scopes directly below it sorted by address, so that
  // addresses find their inline chains by binary searches instead of walking DIEs.
  struct ScopeNode {
    Dwarf_Die die;
    bool is_call = false;   // an inlined call (a frame); else the function or a block
    bool expanded = false;  // its children are in ScopeTree::children
    uint32_t children_begin = 0, children_end = 0;  // in ScopeTree::children
    const FunctionInfo* function = nullptr;         // memoized
    const char* call_file = nullptr;                // memoized: where it was inlined
    int64_t call_line = 0;
  };
  struct ChildRange {
    uint64_t low = 0;
    uint64_t high = 0;
    uint64_t max_high = 0;  // the largest `high` of this child and those sorted before it
    uint32_t node = 0;
  };
  struct ScopeTree {
    std::vector<ScopeNode> nodes;
    std::vector<ChildRange> children;
    bool has_mangled_name = false;  // the function's own DIE names it (else the symbol does)
  };

  CompileUnit* open_unit(size_t index);
  // The frames of an address in `unit`, whose line table row gave `file` and `line`.
  void resolve_in_unit(CompileUnit& unit, uint64_t address, const char* file, int64_t line,
                       std::vector<Frame>& frames);
  void resolve_by_symbol(uint64_t address, std::vector<Frame>& frames);
  void index_functions(CompileUnit& unit, bool deep);
  void collect_functions(Dwarf_Die* parent, bool deep, std::vector<FunctionRange>& out);
  bool walk_functions(const DieWalker& walker, uint64_t parent, bool deep,
                      std::vector<FunctionRange>& out);
  const FunctionRange* function_for(CompileUnit& unit, uint64_t address);
  ScopeTree& scope_tree(const FunctionRange& function);
  void expand(CompileUnit& unit, ScopeTree& tree, uint32_t node);
  void collect_scopes(ScopeTree& tree, Dwarf_Die* scope, std::vector<ChildRange>& out);
  bool walk_scopes(const DieWalker& walker, ScopeTree& tree, uint64_t scope,
                   std::vector<ChildRange>& out);
  void add_ranges(Dwarf_Die* die, uint32_t node, std::vector<ChildRange>& out);
  // The function's names and start line, memoized per DIE that carries them.
  const FunctionInfo* function_for_die(Dwarf_Die* die);
  // The same for a symbol; `die_start_line` (0: none) when a DWARF function gave way to it.
  const FunctionInfo* function_for_symbol(const Symbol& symbol, int64_t die_start_line = 0);
  // What names an address no DWARF function holds (ElfIndex::match), memoized.
  const FunctionInfo* function_outside_dwarf(uint64_t address);
  const char* call_file(CompileUnit& unit, Dwarf_Die* inlined);
  // A file name libdw made, copied: frames outlive the index and its libdw handles.
  const char* own_copy(const char* libdw_name);

  const ElfIndex& index_;
  Dwarf* dwarf_ = nullptr;  // the index's handle for this resolver's worker
  std::vector<CompileUnit> units_;  // one per index unit, opened when first needed
  // When the index releases its DWARF pages: the units below this one are known to libdw
  // (open_unit walks to a unit giving the pages back every so many units).
  size_t units_walked_ = 0;
  std::unordered_map<Dwarf_Off, ScopeTree> trees_;  // by the function DIE's offset
  std::vector<uint32_t> chain_;                     // scratch: a lookup's scope path
  struct NameKey {
    const char* linkage_name;  // into .debug_str (or the DIE): equal strings, equal pointers
    const char* name;          // when there is no linkage name
    int line;
    bool operator==(const NameKey&) const = default;
  };
  struct NameKeyHash {
    size_t operator()(const NameKey& k) const {
      return std::hash<const void*>()(k.linkage_name) * 31 + std::hash<const void*>()(k.name) * 7 +
             static_cast<size_t>(k.line);
    }
  };
  std::unordered_map<Dwarf_Off, const FunctionInfo*> functions_by_die_;
  std::unordered_map<NameKey, FunctionInfo, NameKeyHash> functions_by_name_;
  std::map<std::pair<const char*, int64_t>, FunctionInfo> functions_by_symbol_;
  std::unordered_map<uint64_t, FunctionInfo> functions_by_start_;  // known by their FDE only
  std::unordered_set<std::string> copied_names_;  // own_copy's
};

}  // namespace tally::symbolize
