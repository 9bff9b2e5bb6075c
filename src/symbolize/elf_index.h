// What every thread needs about one ELF (and its separate debug file), built once and
// read-only afterwards: the files opened and their compressed debug sections inflated, the
// symbols, the function ranges of the call-frame information, and where each compile unit's
// code lies. The resolvers (address_resolver.h) read it from many threads.
#pragma once

#include <elfutils/libdw.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/input.h"
#include "symbolize/call_frame_ranges.h"
#include "symbolize/die_walker.h"
#include "symbolize/elf_image.h"
#include "symbolize/find_binary.h"
#include "symbolize/inflated_copies.h"
#include "symbolize/line_program.h"

namespace tally::symbolize {

// What every thread needs about one ELF, built once and read-only afterwards (safe to
// share between threads).
class ElfIndex {
 public:
  static constexpr size_t kNoUnit = std::numeric_limits<size_t>::max();

  // 24 bytes: big libraries have 100k symbols. The name is an offset into one of the
  // index's string tables, which stay in the file's mapping until the name is read.
  struct Symbol {
    uint64_t address = 0;
    uint64_t size = 0;
    uint32_t name = 0;   // offset in string table `table`
    uint16_t table = 0;  // index in string_tables_
    int16_t rank = 0;    // the public alias at one address ranks highest (one_per_address)
  };

  // `workers`: how many threads will resolve in this file (each gets its own handle);
  // `inflate_threads`: how many compressed debug sections may be inflated at once.
  // `copies`: a compressed debug file is read from its inflated copy there (made once).
  // `needed`: the only addresses that will be asked (ascending); the PLT entries and the
  // call-frame ranges are then not read when sized symbols hold them all (nor their
  // problems reported).
  ElfIndex(const FoundBinary& found, unsigned workers, unsigned inflate_threads = 1,
           InflatedCopies* copies = nullptr, const std::vector<uint64_t>* needed = nullptr);
  ~ElfIndex();
  ElfIndex(const ElfIndex&) = delete;
  ElfIndex& operator=(const ElfIndex&) = delete;

  // Worker `worker`'s libdw handle on the shared file (nullptr: no DWARF). Only that worker
  // may use it.
  Dwarf* dwarf(unsigned worker) const {
    return worker < dwarf_handles_.size() ? dwarf_handles_[worker] : nullptr;
  }
  size_t dwarf_handles() const { return dwarf_handles_.size(); }
  // Makes handles for `total` workers (when the file has DWARF). Not while resolvers run.
  void add_dwarf_handles(unsigned total);
  // The sections tally's own readers take, as libdw left them (inflated); empty when they
  // are not to be used.
  const LineSections& line_sections() const { return line_sections_; }
  const DieSections& die_sections() const { return die_sections_; }
  size_t unit_count() const { return unit_offsets_.size(); }
  // The compile unit whose code holds `address`, or kNoUnit.
  size_t unit_of(uint64_t address) const;
  // The offset of the unit's DIE in .debug_info (the same in every Dwarf handle).
  Dwarf_Off unit_offset(size_t unit) const { return unit_offsets_[unit]; }
  // What names an address outside DWARF's functions: a symbol of the file or its debug
  // file whose extent holds it; else the function the call-frame information places it in,
  // named by the symbol at that function's start when there is one (`symbol`), or by its
  // start alone (`code_start`); else, with no call-frame information for it, a symbol of
  // unknown size before it (up to the next symbol). Both null/0: nothing names it.
  struct SymbolMatch {
    const Symbol* symbol = nullptr;
    uint64_t code_start = 0;
  };
  SymbolMatch match(uint64_t address) const;
  // "liblzma.so.5.4.1": the file's name, which qualifies functions known by their start only.
  const std::string& image_name() const { return image_name_; }
  // Why the call-frame information could not be read ("" when it could, or there is none).
  const std::string& code_range_problem() const { return code_range_problem_; }
  // The same for the MiniDebugInfo (.gnu_debugdata) of the binary.
  const std::string& mini_debug_problem() const { return mini_debug_problem_; }
  // Whether any symbol table beyond .dynsym was found (.symtab of the binary or of a debug
  // file, MiniDebugInfo) or DWARF: else most of the file's code is known by its FDEs only.
  bool has_full_symbols() const { return has_full_symbols_; }
  // The same from the mapped file's own table alone (.symtab, else .dynsym).
  const Symbol* own_symbol_for(uint64_t address) const {
    return find_symbol(own_is_all_ ? symbols_ : own_symbols_, address);
  }
  const char* name(const Symbol& symbol) const { return string_tables_[symbol.table] + symbol.name; }
  // Whether the resolvers give the debug file's pages back as they go (release_dwarf_pages):
  // an index given the addresses it will be asked (the daemon's pushes) whose DWARF libdw
  // reads through libelf's mapping of a file.
  bool releases_dwarf_pages() const { return !dwarf_map_.empty(); }
  // The pages of that mapping leave the resident set; read again, they come back from the
  // page cache unchanged (a read-only mapping of a file), so that what libdw holds (DIEs
  // pointing into it) stays valid. Nothing when releases_dwarf_pages() is false.
  void release_dwarf_pages() const;
  // Done with the symbol tables and the files' pages for now (resolution is over): they
  // leave the resident set, and come back from the files if read again.
  void release_file_pages() const;

 private:
  using UnitRange = UnitTable::Range;
  void index_units(Dwarf* dwarf);
  // Appends the functions of `image`'s tables of type `table` (SHT_SYMTAB or SHT_DYNSYM),
  // read from `file` (the same file, mapped) when it can be, else through libelf.
  void read_symbols(const ElfImage& image, const io::Input* file, uint32_t table,
                    std::vector<Symbol>& out);
  bool read_mapped_symbols(const ElfImage& image, const io::Input& file, const GElf_Shdr& header,
                           const GElf_Shdr& names, std::span<const uint16_t> versions,
                           std::vector<Symbol>& out);
  uint16_t add_string_table(const char* base);
  void one_per_address(std::vector<Symbol>& symbols) const;
  static const Symbol* find_symbol(const std::vector<Symbol>& symbols, uint64_t address);
  // The symbols (all aliases) at the highest start at or below each of `addresses`
  // (ascending), unsorted.
  static std::vector<Symbol> nearest_below(const std::vector<Symbol>& symbols,
                                           const std::vector<uint64_t>& addresses);
  const Symbol* symbol_at(uint64_t address) const;
  void open_code_ranges();
  void add_plt_entries(const ElfImage& image, const std::vector<uint64_t>* needed);
  void add_mini_debug_info(const ElfImage& image);
  void find_sections();

  std::unique_ptr<ElfImage> debug_;
  std::unique_ptr<ElfImage> binary_;
  std::unique_ptr<ElfImage> mini_debug_;  // the binary's .gnu_debugdata, inflated
  // The same files mapped for their symbol tables, whose pages are given back once read.
  std::optional<io::Input> debug_file_;
  std::optional<io::Input> binary_file_;
  std::vector<const char*> string_tables_;  // where Symbol::name offsets start
  std::vector<Dwarf*> dwarf_handles_;  // one per worker, all on debug_
  std::span<const uint8_t> dwarf_map_;  // libelf's mapping of debug_'s file (see above)
  LineSections line_sections_;
  DieSections die_sections_;
  std::vector<Dwarf_Off> unit_offsets_;
  std::vector<UnitRange> unit_ranges_;  // by low address
  std::vector<Symbol> symbols_;         // by address, one per address
  std::vector<Symbol> own_symbols_;     // the same from the mapped file's own table
  bool own_is_all_ = false;             // ... which is symbols_ itself
  bool has_full_symbols_ = false;
  std::string plt_names_;               // "free@plt\0...": the PLT entries' string table
  CodeRangeTable code_ranges_;          // the binary's (else the debug file's) FDEs
  std::string code_range_problem_;
  std::string mini_debug_problem_;
  std::string image_name_;
};

}  // namespace tally::symbolize
