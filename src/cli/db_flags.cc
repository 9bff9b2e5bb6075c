#include "cli/db_flags.h"

#include <cstdio>

#include "cli/command.h"

namespace tally::cli {

void add_db_flags(CLI::App* cmd, store::Selection& selection) {
  cmd->add_option("--db", selection.db,
                  "read the profile database DIR that tally daemon keeps, instead of a file");
  cmd->add_option("--epoch", selection.epoch,
                  "with --db: the epoch (default: the latest), 'all', or a prefix naming several "
                  "(e.g. 20250102 for that day's)");
  cmd->add_option("--epoch-to", selection.epoch_to,
                  "with --db and --epoch FROM: the epochs from FROM through this one (a name or "
                  "prefix: its last epoch)");
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
    if (!selection.epoch.empty() || !selection.since.empty() || !selection.epoch_to.empty() ||
        !selection.image.empty() ||
        !selection.event.empty()) {
      std::fprintf(stderr, "tally: error: --epoch, --epoch-to, --since, --image and --event select from a "
                           "database: they need --db DIR\n");
      return false;
    }
  }
  return true;
}

core::Expected<core::Profile> read_db_selection(const store::Selection& selection,
                                                const SymbolizeFlags& symbolize) {
  core::Diagnostics diagnostics;
  auto profile = analyze::read_db_report_profile(selection, report_symbolize(symbolize), diagnostics);
  print_warnings(diagnostics);
  return profile;
}

}  // namespace tally::cli
