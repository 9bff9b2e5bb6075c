#include "cli/symbolize_flags.h"

namespace tally::cli {

void add_symbolize_flags(CLI::App* cmd, SymbolizeFlags& flags, const std::string& default_mode,
                         const std::string& default_text) {
  flags.mode = default_mode;
  // A flag with an optional value: "--symbolize" means local, "--symbolize=none" none.
  cmd->add_flag("--symbolize{local}", flags.mode,
                "--symbolize or --symbolize=local: resolve unsymbolized addresses from the "
                "binaries (ELF symbols, DWARF lines and inline frames); --symbolize=none: "
                "leave them as addresses (default: " +
                    (default_text.empty() ? default_mode : default_text) + ")")
      ->check(CLI::IsMember({"local", "none"}));
  cmd->add_option("--binary-path", flags.binary_paths,
                  "a directory to look for the binaries in, as DIR/NAME or DIR/full/path "
                  "(repeatable; searched before the recorded paths; $PPROF_BINARY_PATH too)")
      ->allow_extra_args(false);  // one DIR per flag: a FILE after it stays the FILE
  cmd->add_flag("--no-debuginfod", flags.no_debuginfod,
                "fetch no debug files from the debuginfod servers of $DEBUGINFOD_URLS (by "
                "default those not on this machine are fetched by build id, into "
                "libdebuginfod's cache; $DEBUGINFOD_TIMEOUT: seconds without data before a "
                "server is given up, default 10)");
  cmd->add_flag("-v,--verbose", flags.verbose,
                "say, for each binary, where its symbols and DWARF came from, every path "
                "searched, and the files not used because their build id differs");
}

analyze::ReportSymbolize report_symbolize(const SymbolizeFlags& flags) {
  return {.enabled = flags.mode != "none",
          .binary_paths = flags.binary_paths,
          .name_unresolved = flags.name_unresolved,
          .debuginfod = !flags.no_debuginfod,
          .explain_sources = flags.verbose};
}

core::Status apply_symbolize_flags(const SymbolizeFlags& flags, core::Profile& profile,
                                   core::Diagnostics& diagnostics) {
  return analyze::symbolize_report_profile(profile, report_symbolize(flags), diagnostics);
}

}  // namespace tally::cli
