// The `peek` report (pprof -peek REGEX): the callers and callees of the nodes whose name
// matches REGEX (searched, as Go's MatchString), laid out like `tree` (format_tree), on
// the untrimmed graph. On a call-graph profile (callgrind) the nodes' flat and cum are
// top's (self and inclusive cost) and the edges are the calls between functions with
// their inclusive cost, as callgrind_annotate --tree=both shows them.
#pragma once

#include <string>

#include "analyze/tree.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::analyze {

struct PeekOptions {
  std::string regex;
  NodeOptions nodes;
  NameFilters filters;
  std::string sample_index;
};

// An invalid regex, or one that matches no node, is an invalid_input error.
core::Expected<TreeReport> compute_peek(const core::Profile& profile, const PeekOptions& options);

}  // namespace tally::analyze
