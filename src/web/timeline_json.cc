#include "web/report_json.h"

namespace tally::web {

// Spans as columns (start, end, state), as the flame graph's nodes: a few thousand spans per
// thread stay small and parse fast.
nlohmann::json timeline_json(const analyze::Timeline& timeline) {
  nlohmann::json threads = nlohmann::json::array();
  for (const analyze::TimelineThread& thread : timeline.threads) {
    std::vector<int64_t> start, end;
    std::vector<uint32_t> state;
    start.reserve(thread.spans.size());
    end.reserve(thread.spans.size());
    state.reserve(thread.spans.size());
    for (const analyze::TimelineSpan& span : thread.spans) {
      start.push_back(span.begin);
      end.push_back(span.end);
      state.push_back(span.state);
    }
    threads.push_back({{"tid", thread.tid},
                       {"name", thread.name},
                       {"on_cpu", thread.on_cpu},
                       {"off_cpu", thread.off_cpu},
                       {"coarsened", thread.coarsened},
                       {"slot", thread.slot},
                       {"spans", {{"start", std::move(start)}, {"end", std::move(end)}, {"state", std::move(state)}}}});
  }
  nlohmann::json states = nlohmann::json::array({"on-cpu"});
  for (const std::string& reason : timeline.reasons) states.push_back(reason);
  return {{"has_timestamps", timeline.has_timestamps},
          {"unit", "nanoseconds"},
          {"start", 0},
          {"end", timeline.end},
          {"window_start", timeline.window_begin},
          {"window_end", timeline.window_end},
          {"states", std::move(states)},
          {"threads", std::move(threads)},
          {"threads_omitted", timeline.threads_omitted},
          {"warnings", timeline.warnings}};
}

}  // namespace tally::web
