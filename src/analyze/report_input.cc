#include "analyze/report_input.h"

#include "collect/kernel_symbols.h"
#include "formats/format.h"
#include "formats/gperf/binary_inspector.h"
#include "io/input.h"
#include "symbolize/symbolize.h"

namespace tally::analyze {

// Kernel frames are offsets from the kernel's _text. When the profiled kernel is the one
// running (same build id), /proc/kallsyms names them; the ELF symbolizer cannot.
void name_kernel_frames(core::Profile& p, core::Diagnostics& diagnostics) {
  bool any = false;
  for (const core::Mapping& m : p.mappings) any |= p.str(m.file) == "[kernel.kallsyms]";
  if (!any) return;
  collect::KernelSymbols symbols;
  const std::string running = collect::kernel_build_id();
  if (!running.empty()) symbols.load();
  name_kernel_frames(p, symbols, running, diagnostics);
}

void name_kernel_frames(core::Profile& p, const collect::KernelSymbols& symbols,
                        const std::string& running_build_id, core::Diagnostics& diagnostics) {
  std::vector<core::MappingId> kernel;
  for (core::MappingId m = 1; m <= p.mappings.size(); ++m)
    if (p.str(p.mapping(m).file) == "[kernel.kallsyms]") kernel.push_back(m);
  if (kernel.empty()) return;
  const uint64_t text = symbols.text_start();
  std::vector<core::FunctionId> function_of(p.strings.size(), 0);
  for (core::MappingId m : kernel) {
    core::Mapping& mapping = p.mapping(m);
    if (symbols.empty() || text == 0 || running_build_id.empty() ||
        p.str(mapping.build_id) != running_build_id) {
      diagnostics.warn("kernel frames are shown by offset: " +
                       std::string(symbols.empty() || text == 0
                                       ? "/proc/kallsyms gives no addresses here"
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

symbolize::Options symbolize_options(const ReportSymbolize& symbolize) {
  symbolize::Options options;
  options.binary_paths = symbolize.binary_paths;
  options.names = symbolize::NameStyle::simplified;
  options.name_unresolved = symbolize.name_unresolved;
  options.debuginfod.enabled = symbolize.debuginfod;
  options.threads = symbolize.threads;
  options.explain_sources = symbolize.explain_sources;
  return options;
}

core::Status symbolize_report_profile(core::Profile& profile, const ReportSymbolize& symbolize,
                                      core::Diagnostics& diagnostics) {
  if (!symbolize.enabled) return core::ok();
  return symbolize::symbolize(profile, symbolize_options(symbolize), diagnostics);
}

core::Expected<core::Profile> read_db_report_profile(const store::Selection& selection,
                                                     const ReportSymbolize& symbolize,
                                                     core::Diagnostics& diagnostics) {
  auto db = store::read_db_profile(selection);
  if (!db) return db.error();
  for (const std::string& w : db->warnings) diagnostics.warn(w);
  if (symbolize.enabled) name_kernel_frames(db->profile, diagnostics);
  if (auto st = symbolize_report_profile(db->profile, symbolize, diagnostics); !st)
    return st.error();
  return std::move(db->profile);
}

core::Expected<core::Profile> read_report_input(const ReportInput& input,
                                                core::Diagnostics& diagnostics) {
  if (!input.db.db.empty()) return read_db_report_profile(input.db, input.symbolize, diagnostics);
  auto in = io::Input::open(input.file);
  if (!in) return in.error();
  // A gperftools reader drops the signal-return trampoline's frames: the inspector looks
  // for it in the binaries where symbolization will find them.
  const gperf::BinaryInspector binaries = gperf::binary_inspector(input.symbolize.binary_paths);
  auto profile =
      formats::read_profile(std::move(*in), diagnostics, nullptr, /*canonical=*/false, &binaries,
                            input.positions);
  if (!profile) return profile;
  if (auto st = symbolize_report_profile(*profile, input.symbolize, diagnostics); !st)
    return st.error();
  return profile;
}

}  // namespace tally::analyze
