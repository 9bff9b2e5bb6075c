// A `tally serve` request's query string, checked before any report runs: every
// parameter known to the endpoint, given once, within a length cap, and its value valid
// (a regex that compiles, a known granularity, side base|new). Anything else is a
// BadQuery with the message the 400 answer carries. Nothing here touches the filesystem.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "analyze/name_filter.h"
#include "analyze/nodes.h"
#include "core/error.h"

namespace tally::web {

enum class Endpoint { meta, top, flame, peek, source, disasm, diff, db, timeline };
enum class ServeMode { single, compare, db };

// "/api/top" -> Endpoint::top; nullopt for an unknown path.
std::optional<Endpoint> endpoint_of(std::string_view path);

// The longest regex (focus, ignore, hide, show, f) a request may give: std::regex compiles
// and matches recursively, so a huge pattern could exhaust the stack.
inline constexpr size_t kMaxRegexLength = 256;
// The longest value of any other parameter.
inline constexpr size_t kMaxValueLength = 256;

struct ViewQuery {
  analyze::NameFilters filters;
  std::string sample_index;  // si
  analyze::Granularity granularity = analyze::Granularity::functions;
  std::string function;      // f: peek, source and disasm
  bool base_side = false;    // side=base (comparison mode)
  // --db selection: "" keeps the server's.
  std::string epoch, epoch_to, image, event;
  // /api/diff with --db: the base side's epoch (a name or prefix), through base_epoch_to
  // when given; `epoch`/`epoch_to` the new side.
  std::string base_epoch, base_epoch_to;
  // /api/timeline: the time shown (the timeline's zoom), as time_range's START:END seconds.
  analyze::TimeRange window;
};

// Parameters as the HTTP library decodes them (a multimap keeps repeated ones).
using QueryParams = std::multimap<std::string, std::string>;

// The number of non-empty '&'-separated pieces of a raw query string: what the decoded
// parameters should number when none was repeated or nameless.
size_t query_piece_count(std::string_view raw_query);

core::Expected<ViewQuery> parse_view_query(Endpoint endpoint, ServeMode mode,
                                           const QueryParams& params);

}  // namespace tally::web
