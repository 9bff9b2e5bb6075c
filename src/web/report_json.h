// The JSON renderers of the report models: each takes the same result that the CLI's
// text renderer takes (analyze::compute_top for `tally top` and /api/top, ...), so the
// numbers of a page and of its command are the same. The layouts are src/web/API.md's.
#pragma once

#include <nlohmann/json.hpp>

#include "analyze/diff.h"
#include "analyze/disasm.h"
#include "analyze/flame_tree.h"
#include "analyze/source_list.h"
#include "analyze/timeline.h"
#include "analyze/top.h"
#include "analyze/tree.h"

namespace tally::web {

nlohmann::json top_json(const analyze::TopReport& report);
nlohmann::json flame_json(const analyze::FlameTree& tree);
nlohmann::json peek_json(const analyze::TreeReport& report);
nlohmann::json source_json(const analyze::ListReport& report);
nlohmann::json disasm_json(const analyze::DisasmReport& report);
nlohmann::json diff_json(const analyze::DiffReport& report);
nlohmann::json timeline_json(const analyze::Timeline& timeline);

}  // namespace tally::web
