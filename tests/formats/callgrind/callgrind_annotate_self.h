// A model's cost as callgrind_annotate reports it for one of its "file:function [object]"
// rows, so that tests compare tally's reading of a file with the peer's tables.
#pragma once

#include <cstdint>
#include <string_view>

#include "callgrind_annotate_tables.h"
#include "callgrind_test_helpers.h"

namespace tally::callgrind::test {

inline std::string_view object_of(const core::Profile& p, core::LocationId id) {
  const core::Location& l = p.location(id);
  return l.mapping ? p.str(p.mapping(l.mapping).file) : std::string_view();
}

inline bool is_position_of(const core::Profile& p, core::LocationId id, const AnnotateEntry& e) {
  // valgrind's "???" (unknown file) is "" in the model.
  const std::string_view file = e.file == "???" ? std::string_view() : std::string_view(e.file);
  return function_of(p, id) == e.function && file_of(p, id) == file &&
         (e.object.empty() || object_of(p, id) == e.object);
}

// Self cost as callgrind_annotate keys it: "file:function [object]" (no object printed for
// code inlined from another file). callgrind_annotate 3.19 takes the cost line after
// "calls=0" for a self cost (it tests `$curr_call_counter>0`); valgrind writes calls=0 for
// calls still running across a dump (--dump-before, --dump-every-bb). The spec and tally
// read it as the call's inclusive cost, so to compare, such edges are added back here.
inline int64_t annotate_self_cost(const core::Profile& p, const AnnotateEntry& e) {
  int64_t sum = 0;
  for (size_t i = 0; i < p.sample_count(); ++i)
    if (is_position_of(p, p.stack(i)[0], e)) sum += p.values(i)[0];
  for (const core::CallEdge& c : p.call_graph.calls)
    if (c.count == 0 && is_position_of(p, c.caller, e)) sum += c.inclusive[0];
  return sum;
}

}  // namespace tally::callgrind::test
