// Reading the profile database from the command line: --db DIR and the selection flags
// (--epoch, --since, --image, --event) that the reports and `convert` share, and reading
// the selection as a profile (analyze::read_db_report_profile), symbolized as the flags say.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/symbolize_flags.h"
#include "core/error.h"
#include "core/profile.h"
#include "store/query.h"

namespace tally::cli {

// Adds --db and the selection flags to `cmd`.
void add_db_flags(CLI::App* cmd, store::Selection& selection);

// True when --db was given.
inline bool using_db(const store::Selection& selection) { return !selection.db.empty(); }

// Exactly one of FILE and --db: prints the error and returns false otherwise.
bool check_profile_source(const std::string& file, const store::Selection& selection);

// The selection as one profile, symbolized per `symbolize`; warnings printed.
core::Expected<core::Profile> read_db_selection(const store::Selection& selection,
                                                const SymbolizeFlags& symbolize);

}  // namespace tally::cli
