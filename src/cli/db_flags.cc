#include "cli/db_flags.h"

#include <cstdio>

#include "cli/command.h"
#include "cli/daemon_collector.h"
#include "collect/kernel_symbols.h"

namespace tally::cli {

void add_db_flags(CLI::App* cmd, store::Selection& selection) {
  cmd->add_option("--db", selection.db,
                  "read the profile database DIR that tally daemon keeps, instead of a file");
  cmd->add_option("--epoch", selection.epoch,
                  "with --db: the epoch (default: the latest), 'all', or a prefix naming several "
                  "(e.g. 20250102 for that day's)");
  cmd->add_option("--since", selection.since,
                  "with --db: the epochs since TIME: YYYYMMDD[HH[MM[SS]]] or "
                  "YYYY-MM-DD[THH:MM:SS] (UTC), or a duration ago (30m, 2h, 7d)");
  cmd->add_option("--image", selection.image,
                  "with --db: only images whose path (or id) matches REGEX");
  cmd->add_option("--event", selection.event,
                  "with --db: the event to report (default: the only one, else cpu-clock)");
}

bool check_profile_source(const std::string& file, const store::Selection& selection) {
  if (using_db(selection) && !file.empty()) {
    std::fprintf(stderr, "tally: error: give a profile FILE or --db DIR, not both\n");
    return false;
  }
  if (!using_db(selection)) {
    if (file.empty()) {
      std::fprintf(stderr, "tally: error: a profile FILE (or --db DIR) is required\n");
      return false;
    }
    if (!selection.epoch.empty() || !selection.since.empty() || !selection.image.empty() ||
        !selection.event.empty()) {
      std::fprintf(stderr, "tally: error: --epoch, --since, --image and --event select from a "
                           "database: they need --db DIR\n");
      return false;
    }
  }
  return true;
}

namespace {

// Kernel frames are offsets from the kernel's _text. When the profiled kernel is the one
// running (same build id), /proc/kallsyms names them; the ELF symbolizer cannot.
void name_kernel_frames(core::Profile& p, core::Diagnostics& diagnostics) {
  std::vector<core::MappingId> kernel;
  for (core::MappingId m = 1; m <= p.mappings.size(); ++m)
    if (p.str(p.mapping(m).file) == "[kernel.kallsyms]") kernel.push_back(m);
  if (kernel.empty()) return;
  const std::string running = kernel_build_id();
  const uint64_t text = kernel_text_start();
  collect::KernelSymbols symbols;
  if (!running.empty() && text != 0) symbols.load();
  std::vector<core::FunctionId> function_of(p.strings.size(), 0);
  for (core::MappingId m : kernel) {
    core::Mapping& mapping = p.mapping(m);
    if (symbols.empty() || p.str(mapping.build_id) != running) {
      diagnostics.warn("kernel frames are shown by offset: " +
                       std::string(symbols.empty() ? "/proc/kallsyms gives no addresses here"
                                                   : "they were profiled on another kernel"));
      continue;
    }
    mapping.has_functions = true;
    for (core::Location& l : p.locations) {
      if (l.mapping != m || !l.lines.empty()) continue;
      const std::string_view name = symbols.find(text + (l.address - mapping.start));
      if (name.empty()) continue;
      const core::StringId id = p.intern(name);
      if (function_of.size() <= id) function_of.resize(id + 1, 0);
      if (function_of[id] == 0) function_of[id] = p.add_function({.name = id, .system_name = id});
      l.lines.push_back({.function = function_of[id]});
    }
  }
}

}  // namespace

core::Expected<core::Profile> read_db_selection(const store::Selection& selection,
                                                const SymbolizeFlags& symbolize) {
  auto db = store::read_db_profile(selection);
  if (!db) return db.error();
  core::Diagnostics diagnostics;
  for (const std::string& w : db->warnings) diagnostics.warn(w);
  if (symbolize.mode != "none") name_kernel_frames(db->profile, diagnostics);
  auto symbolized = apply_symbolize_flags(symbolize, db->profile, diagnostics);
  print_warnings(diagnostics);
  if (!symbolized) return symbolized.error();
  return std::move(db->profile);
}

}  // namespace tally::cli
