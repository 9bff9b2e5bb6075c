// Brendan Gregg's folded stacks, as FlameGraph's stackcollapse-*.pl scripts, inferno and
// speedscope write and read them: one line per stack, root first, frames joined by ';',
// then a space and a count ("main;run;work 42"). A differential file (difffolded.pl) has
// two counts per line ("main;run;work 42 57"), before and after.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"

namespace tally::folded {

// Conservative: most non-empty lines of the first ~64 KB are "frames COUNT", the data is
// text, and nothing marks it as another format (callgrind keys, a DCPI "version pdb-"
// line, `perf script` frame lines, binary bytes of gperftools or protobuf data).
bool looks_like_folded(std::span<const uint8_t> bytes);

// Sample types: samples/count, plus samples_after/count for a differential file (every
// line with two counts). One function and one address-less location per distinct frame
// name; stacks leaf first as in the model; identical stacks summed; '#' lines kept as
// comments. Errors read "SOURCE: line N: expected 'frames COUNT'...".
core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes, const std::string& source,
                                           core::Diagnostics& diagnostics);

// One line per distinct stack with a value > 0 at `value_index`, sorted bytewise, values
// as integers. Inline frames expand to several frames; a location without a function is
// named "[libfoo.so+0x1234]", "0x1234" or "[unknown]". Every loss (labels, other sample
// types, negative values, addresses) is reported in `diagnostics`.
core::Expected<std::string> write_folded(const core::Profile& profile, size_t value_index,
                                         core::Diagnostics& diagnostics);

}  // namespace tally::folded
