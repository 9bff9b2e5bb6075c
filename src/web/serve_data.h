// What `tally serve` serves: the profiles read and symbolized once at start, and how to
// read the database again for another selection. The CLI fills it (it owns reading and
// symbolizing); the web module only computes reports from it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/profile.h"
#include "store/query.h"
#include "symbolize/debuginfod_fetch.h"
#include "web/query.h"

namespace tally::web {

// Reads (and symbolizes) a selection of the database: the server's default selection with
// a request's epoch, image or event.
using SelectionLoader = std::function<core::Expected<core::Profile>(const store::Selection&)>;

struct ServeData {
  ServeMode mode = ServeMode::single;
  std::vector<std::string> files;        // as given on the command line
  std::vector<core::Profile> profiles;   // single and db: one; compare: base, new
  store::Selection selection;            // db: the selection read into profiles[0]
  SelectionLoader load_selection;        // db
  bool inlines = true;                   // false: --no-inlines
  // Where `list` and `disasm` look: the same flags as the CLI's.
  std::string source_path, trim_path;
  std::vector<std::string> binary_paths;
  symbolize::DebuginfodOptions debuginfod;
};

}  // namespace tally::web
