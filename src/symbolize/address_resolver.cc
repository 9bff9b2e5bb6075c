#include "symbolize/address_resolver.h"

#include <dwarf.h>
#include <gelf.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "core/demangle.h"
#include "symbolize/range_lookup.h"

namespace tally::symbolize {

namespace {

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

// A C++ (or Rust) mangled linkage name: the DWARF names the function fully. A C function
// renamed for the linker (glibc's "__GI___libc_free" for __libc_free, a hidden alias) is
// not: the symbol table's public name is the one a person knows ("free").
bool has_mangled_name(Dwarf_Die* die) {
  const char* name = string_attribute(die, DW_AT_linkage_name);
  if (name == nullptr) name = string_attribute(die, DW_AT_MIPS_linkage_name);
  return name != nullptr && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

// The attributes FunctionInfo is made of.
bool has_own_name_attributes(Dwarf_Die* die) {
  return dwarf_hasattr(die, DW_AT_name) || dwarf_hasattr(die, DW_AT_linkage_name) ||
         dwarf_hasattr(die, DW_AT_MIPS_linkage_name) || dwarf_hasattr(die, DW_AT_decl_line);
}

// The DIE whose attributes name `die`: dwarf_attr_integrate follows DW_AT_abstract_origin,
// else DW_AT_specification, from a DIE that lacks an attribute. An inlined call or an
// out-of-line copy carries no name of its own, so all of a function's instances share
// the DIE they lead to (and are demangled once).
Dwarf_Die naming_die(Dwarf_Die* die) {
  Dwarf_Die current = *die;
  for (int hops = 0; hops < 16 && !has_own_name_attributes(&current); ++hops) {
    Dwarf_Attribute attribute;
    Dwarf_Attribute* reference = dwarf_attr(&current, DW_AT_abstract_origin, &attribute);
    if (reference == nullptr) reference = dwarf_attr(&current, DW_AT_specification, &attribute);
    Dwarf_Die target;
    if (reference == nullptr || dwarf_formref_die(reference, &target) == nullptr) break;
    current = target;
  }
  return current;
}


}  // namespace
// ---------------------------------------------------------------------------------------
// AddressResolver

AddressResolver::AddressResolver(const ElfIndex& index, unsigned worker)
    : index_(index), dwarf_(index.dwarf(worker)) {
  if (dwarf_ != nullptr) units_.resize(index.unit_count());
}

AddressResolver::CompileUnit* AddressResolver::open_unit(size_t index) {
  if (dwarf_ == nullptr || index >= units_.size()) return nullptr;
  CompileUnit& unit = units_[index];
  if (unit.opened) return &unit;
  if (index_.releases_dwarf_pages() && index > units_walked_) {
    // libdw finds a unit by reading every unit header before it (each page it touches
    // maps 64 KB with it): walked here a few units at a time, the pages given back between.
    constexpr size_t kUnitsBetweenReleases = 32;
    for (size_t k = units_walked_; k < index; ++k) {
      Dwarf_Die skipped;
      if (dwarf_offdie(dwarf_, index_.unit_offset(k), &skipped) == nullptr) break;
      if ((k + 1) % kUnitsBetweenReleases == 0) index_.release_dwarf_pages();
    }
    index_.release_dwarf_pages();
  }
  units_walked_ = std::max(units_walked_, index + 1);
  if (dwarf_offdie(dwarf_, index_.unit_offset(index), &unit.die) == nullptr) return nullptr;
  unit.opened = true;
  Dwarf_Attribute attribute;
  Dwarf_Word offset = 0;
  Dwarf_Die cu_die;
  uint8_t address_size = 0;
  if (!index_.line_sections().line.empty() &&
      dwarf_formudata(dwarf_attr(&unit.die, DW_AT_stmt_list, &attribute), &offset) == 0 &&
      dwarf_diecu(&unit.die, &cu_die, &address_size, nullptr) != nullptr) {
    const char* comp_dir = dwarf_formstring(dwarf_attr(&unit.die, DW_AT_comp_dir, &attribute));
    unit.lines = LineProgram::read(index_.line_sections(), offset, comp_dir, address_size);
  }
  const DieSections& dies = index_.die_sections();
  if (!dies.info.empty() && !dies.abbrev.empty())
    unit.walker = DieWalker::open(dies, dwarf_dieoffset(&unit.die) - dwarf_cuoffset(&unit.die));
  return &unit;
}

void AddressResolver::collect_functions(Dwarf_Die* parent, bool deep,
                                        std::vector<FunctionRange>& out) {
  Dwarf_Die child;
  if (dwarf_child(parent, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      Dwarf_Addr base = 0, low = 0, high = 0;
      // Most are declarations: the abbreviation alone tells (dwarf_ranges reads values).
      for (ptrdiff_t offset = 0;
           has_pc_attributes(&child) &&
           (offset = dwarf_ranges(&child, offset, &base, &low, &high)) > 0;) {
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

// collect_functions' walk through DieWalker: the same DIEs in the same order, libdw only
// for the functions with code. False when the walker gave up.
bool AddressResolver::walk_functions(const DieWalker& walker, uint64_t parent, bool deep,
                                     std::vector<FunctionRange>& out) {
  std::vector<DieEntry> children;
  if (!walker.children(parent, children)) return false;
  for (const DieEntry& child : children) {
    if (child.tag == DW_TAG_subprogram) {
      if (child.has_code) {
        Dwarf_Die die;
        if (dwarf_offdie(dwarf_, child.offset, &die) == nullptr) return false;
        Dwarf_Addr base = 0, low = 0, high = 0;
        for (ptrdiff_t offset = 0; (offset = dwarf_ranges(&die, offset, &base, &low, &high)) > 0;) {
          if (high > low) out.push_back({low, high, die});
        }
      }
      if (deep && child.has_children && !walk_functions(walker, child.offset, deep, out))
        return false;
    } else if (child.has_children &&
               (contains_children_with_code(static_cast<int>(child.tag)) ||
                (deep && (child.tag == DW_TAG_lexical_block || child.tag == DW_TAG_class_type ||
                          child.tag == DW_TAG_structure_type || child.tag == DW_TAG_union_type)))) {
      if (!walk_functions(walker, child.offset, deep, out)) return false;
    }
  }
  return true;
}

void AddressResolver::index_functions(CompileUnit& unit, bool deep) {
  unit.indexed = true;
  unit.deep_indexed = deep;
  unit.functions.clear();
  if (!unit.walker || !walk_functions(*unit.walker, dwarf_dieoffset(&unit.die), deep, unit.functions)) {
    unit.walker.reset();
    unit.functions.clear();
    collect_functions(&unit.die, deep, unit.functions);
  }
  std::sort(unit.functions.begin(), unit.functions.end(),
            [](const FunctionRange& a, const FunctionRange& b) { return a.low < b.low; });
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

// The inlined calls and blocks directly below `scope` (through blocks without addresses
// of their own, which may still enclose ones that have them), numbered in DIE order.
// An inlined call or block without addresses is skipped with everything below it.
void AddressResolver::collect_scopes(ScopeTree& tree, Dwarf_Die* scope,
                                     std::vector<ChildRange>& out) {
  Dwarf_Die child;
  if (dwarf_child(scope, &child) != 0) return;
  do {
    int tag = dwarf_tag(&child);
    if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block) continue;
    if (!has_pc_attributes(&child)) {
      if (tag == DW_TAG_lexical_block) collect_scopes(tree, &child, out);
      continue;
    }
    auto node = static_cast<uint32_t>(tree.nodes.size());
    ScopeNode added;
    added.die = child;
    added.is_call = tag == DW_TAG_inlined_subroutine;
    tree.nodes.push_back(added);
    add_ranges(&child, node, out);
  } while (dwarf_siblingof(&child, &child) == 0);
}

void AddressResolver::add_ranges(Dwarf_Die* die, uint32_t node, std::vector<ChildRange>& out) {
  Dwarf_Addr base = 0, low = 0, high = 0;
  for (ptrdiff_t offset = 0; (offset = dwarf_ranges(die, offset, &base, &low, &high)) > 0;) {
    if (high > low) out.push_back({low, high, 0, node});
  }
}

// collect_scopes through DieWalker. False when the walker gave up.
bool AddressResolver::walk_scopes(const DieWalker& walker, ScopeTree& tree, uint64_t scope,
                                  std::vector<ChildRange>& out) {
  std::vector<DieEntry> children;
  if (!walker.children(scope, children)) return false;
  for (const DieEntry& child : children) {
    if (child.tag != DW_TAG_inlined_subroutine && child.tag != DW_TAG_lexical_block) continue;
    if (!child.has_code) {
      if (child.tag == DW_TAG_lexical_block && !walk_scopes(walker, tree, child.offset, out))
        return false;
      continue;
    }
    ScopeNode added;
    if (dwarf_offdie(dwarf_, child.offset, &added.die) == nullptr) return false;
    added.is_call = child.tag == DW_TAG_inlined_subroutine;
    auto node = static_cast<uint32_t>(tree.nodes.size());
    tree.nodes.push_back(added);
    add_ranges(&added.die, node, out);
  }
  return true;
}

void AddressResolver::expand(CompileUnit& unit, ScopeTree& tree, uint32_t node) {
  Dwarf_Die die = tree.nodes[node].die;
  std::vector<ChildRange> children;
  const size_t nodes_before = tree.nodes.size();
  if (!unit.walker || !walk_scopes(*unit.walker, tree, dwarf_dieoffset(&die), children)) {
    unit.walker.reset();
    tree.nodes.resize(nodes_before);
    children.clear();
    collect_scopes(tree, &die, children);
  }
  // By address; at one start, in DIE order (the first in DIE order wins a tie).
  std::sort(children.begin(), children.end(), [](const ChildRange& a, const ChildRange& b) {
    return a.low != b.low ? a.low < b.low : a.node < b.node;
  });
  uint64_t max_high = 0;
  for (auto& child : children) child.max_high = max_high = std::max(max_high, child.high);
  ScopeNode& expanded = tree.nodes[node];
  expanded.expanded = true;
  expanded.children_begin = static_cast<uint32_t>(tree.children.size());
  tree.children.insert(tree.children.end(), children.begin(), children.end());
  expanded.children_end = static_cast<uint32_t>(tree.children.size());
}

AddressResolver::ScopeTree& AddressResolver::scope_tree(const FunctionRange& function) {
  Dwarf_Die die = function.die;
  auto [it, added] = trees_.try_emplace(dwarf_dieoffset(&die));
  ScopeTree& tree = it->second;
  if (added) {
    ScopeNode root;
    root.die = die;
    tree.nodes.push_back(root);
    tree.has_mangled_name = has_mangled_name(&die);
  }
  return tree;
}

const FunctionInfo* AddressResolver::function_for_die(Dwarf_Die* die) {
  Dwarf_Die named = naming_die(die);
  auto [by_die, added] = functions_by_die_.try_emplace(dwarf_dieoffset(&named), nullptr);
  if (!added) return by_die->second;
  const char* linkage = string_attribute(&named, DW_AT_linkage_name);
  if (linkage == nullptr) linkage = string_attribute(&named, DW_AT_MIPS_linkage_name);
  const char* plain = linkage == nullptr ? string_attribute(&named, DW_AT_name) : nullptr;
  int line = 0;
  if (dwarf_decl_line(&named, &line) != 0) line = 0;
  // Every unit that uses an inline function has its own DIE for it, with the same names
  // (one string in .debug_str): one FunctionInfo, demangled once, for all of them.
  auto [by_name, fresh] = functions_by_name_.try_emplace(NameKey{linkage, plain, line});
  FunctionInfo& function = by_name->second;
  if (fresh) {
    if (linkage != nullptr) {
      function.system_name = linkage;
      function.name = core::demangle(function.system_name);
    } else if (plain != nullptr) {
      function.system_name = plain;
      function.name = plain;
    } else {
      function.name = function.system_name = "??";
    }
    function.start_line = line;
  }
  by_die->second = &function;
  return &function;
}

const FunctionInfo* AddressResolver::function_for_symbol(const Symbol& symbol,
                                                         int64_t die_start_line) {
  const char* symbol_name = index_.name(symbol);
  auto [it, added] = functions_by_symbol_.try_emplace({symbol_name, die_start_line});
  FunctionInfo& function = it->second;
  if (added) {
    // A versioned definition in .symtab reads "__libc_start_main@@GLIBC_2.34": the version
    // is not part of the name (addr2line and pprof show "__libc_start_main").
    // "free@plt" (a PLT entry, plt_entries.h) keeps its suffix.
    const std::string_view name(symbol_name);
    const size_t at = name.ends_with("@plt") ? std::string_view::npos : name.find('@');
    function.system_name = std::string(at == std::string_view::npos || at == 0 ? name : name.substr(0, at));
    function.name = core::demangle(function.system_name);
    function.start_line = die_start_line;
  }
  return &function;
}

const FunctionInfo* AddressResolver::function_outside_dwarf(uint64_t address) {
  ElfIndex::SymbolMatch match = index_.match(address);
  if (match.symbol != nullptr) return function_for_symbol(*match.symbol);
  if (match.code_start == 0) return nullptr;
  // Known by its call-frame information only: named after its start, qualified by its file
  // (two libraries' "sub_1020" are two functions).
  auto [it, added] = functions_by_start_.try_emplace(match.code_start);
  if (added) {
    // (system_name stays empty: the same as the name, not stored twice for 20k functions.)
    it->second.name = fmt::format("{}!sub_{:x}", index_.image_name(), match.code_start);
  }
  return &it->second;
}

const char* AddressResolver::call_file(CompileUnit& unit, Dwarf_Die* inlined) {
  Dwarf_Attribute attribute;
  Dwarf_Word index = 0;
  if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attribute), &index) != 0) return "";
  if (unit.lines) {
    const auto& files = unit.lines->files();
    return index < files.size() ? files[index].c_str() : "";
  }
  Dwarf_Files* files = nullptr;
  size_t count = 0;
  if (dwarf_getsrcfiles(&unit.die, &files, &count) != 0 || index >= count) return "";
  const char* name = dwarf_filesrc(files, index, nullptr, nullptr);
  return name != nullptr ? own_copy(name) : "";
}

const char* AddressResolver::own_copy(const char* libdw_name) {
  return copied_names_.emplace(libdw_name).first->c_str();
}

void AddressResolver::resolve(size_t unit_index, std::span<const uint64_t> addresses,
                              std::vector<Frame>& frames, std::span<uint32_t> ends) {
  CompileUnit* unit = unit_index != ElfIndex::kNoUnit ? open_unit(unit_index) : nullptr;
  if (unit == nullptr) {
    for (size_t i = 0; i < addresses.size(); ++i) {
      resolve_by_symbol(addresses[i], frames);
      ends[i] = static_cast<uint32_t>(frames.size());
    }
    return;
  }
  std::vector<LineRow> rows(addresses.size());
  if (unit->lines && !unit->lines->find_rows(addresses, rows)) unit->lines.reset();
  for (size_t i = 0; i < addresses.size(); ++i) {
    const char* file = "";
    int64_t line = 0;
    if (unit->lines) {
      const auto& files = unit->lines->files();
      if (rows[i].found) {
        if (rows[i].file < files.size()) file = files[rows[i].file].c_str();
        line = rows[i].line;
      }
    } else if (Dwarf_Line* row = dwarf_getsrc_die(&unit->die, addresses[i])) {
      if (const char* name = dwarf_linesrc(row, nullptr, nullptr)) file = own_copy(name);
      int number = 0;
      if (dwarf_lineno(row, &number) == 0) line = number;
    }
    resolve_in_unit(*unit, addresses[i], file, line, frames);
    ends[i] = static_cast<uint32_t>(frames.size());
  }
  // The unit's DIEs, lines and strings are read; what comes back is read again.
  index_.release_dwarf_pages();
}

void AddressResolver::resolve_by_symbol(uint64_t address, std::vector<Frame>& frames) {
  if (const FunctionInfo* function = function_outside_dwarf(address))
    frames.push_back({function, "", 0});
}

void AddressResolver::resolve_in_unit(CompileUnit& unit, uint64_t address, const char* file,
                                      int64_t line, std::vector<Frame>& frames) {
  if (const FunctionRange* function = function_for(unit, address)) {
    ScopeTree& tree = scope_tree(*function);
    // The scopes down to the innermost inlined call holding the address: at each level
    // the first child in DIE order whose ranges hold it.
    chain_.assign(1, 0);
    for (uint32_t node = 0;;) {
      if (!tree.nodes[node].expanded) expand(unit, tree, node);
      const ScopeNode& scope = tree.nodes[node];
      const ChildRange* begin = tree.children.data() + scope.children_begin;
      const ChildRange* end = tree.children.data() + scope.children_end;
      const ChildRange* after = std::upper_bound(
          begin, end, address,
          [](uint64_t a, const ChildRange& r) { return a < r.low; });
      uint32_t best = kNone;
      for (; after != begin && (after - 1)->max_high > address; --after) {
        if (address < (after - 1)->high) best = std::min(best, (after - 1)->node);
      }
      if (best == kNone) break;
      if (tree.nodes[best].is_call) chain_.push_back(best);
      node = best;
    }
    // Innermost first: it gets the line table's position; each caller gets the call
    // site recorded on the inlined call below it.
    for (size_t i = chain_.size(); i-- > 0;) {
      ScopeNode& scope = tree.nodes[chain_[i]];
      if (scope.function == nullptr) scope.function = function_for_die(&scope.die);
      frames.push_back({scope.function, file, line});
      if (i > 0) {
        if (scope.call_file == nullptr) {
          scope.call_file = call_file(unit, &scope.die);
          Dwarf_Attribute attribute;
          Dwarf_Word call_line = 0;
          scope.call_line =
              dwarf_formudata(dwarf_attr(&scope.die, DW_AT_call_line, &attribute), &call_line) == 0
                  ? static_cast<int64_t>(call_line)
                  : 0;
        }
        file = scope.call_file;
        line = scope.call_line;
      }
    }
    // A DWARF name without a mangled linkage name ("run_rounds" of a static C++ function,
    // "main" over main's .cold part, glibc's "__GI___libc_free") gives way to the symbol
    // table's name, as addr2line and llvm-symbolizer do: it is the mangled name, the
    // piece's own name, or the public alias. Only the mapped file's own table counts, as
    // in addr2line: a separate debug file's local symbols ("unlink_chunk.constprop.0" in
    // libc's) do not rename the DWARF function.
    if (!tree.has_mangled_name) {
      if (const Symbol* symbol = index_.own_symbol_for(address))
        frames.back().function = function_for_symbol(*symbol, frames.back().function->start_line);
    }
    return;
  }
  if (const FunctionInfo* function = function_outside_dwarf(address))
    frames.push_back({function, file, line});
}

}  // namespace tally::symbolize
