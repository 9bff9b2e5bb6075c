#include "web/api.h"

#include <algorithm>
#include <ctime>
#include <map>

#include "analyze/images.h"
#include "analyze/peek.h"
#include "core/checked_math.h"
#include "store/database.h"
#include "store/epoch.h"
#include "web/report_json.h"

namespace tally::web {

namespace {

// Frames narrower than this share of the total are folded into their parent: at 100x zoom
// on a 1000-pixel canvas they would still be under a pixel, and a 1M-sample profile's full
// tree would be far larger than any view needs.
constexpr double kFlameMinFraction = 1e-5;

// How many database selections (epoch, image, event) are kept read.
constexpr size_t kCachedSelections = 2;

ApiAnswer error_answer(int status, const std::string& message) {
  return {status, dump_json({{"error", message}})};
}

int status_of(const core::Error& error) {
  switch (error.kind) {
    case core::ErrorKind::invalid_input:
    case core::ErrorKind::unsupported:
      return 400;
    case core::ErrorKind::io:
      return 500;
  }
  return 500;
}

analyze::NodeOptions node_options(const ViewQuery& query, bool inlines) {
  analyze::NodeOptions nodes;
  nodes.granularity = query.granularity;
  nodes.inlines = inlines;
  return nodes;
}

// `tally top`'s options: the same defaults, so /api/top and the command agree row for row.
analyze::TopOptions top_options(const ViewQuery& query, bool inlines) {
  analyze::TopOptions top;
  top.nodes = node_options(query, inlines);
  top.filters = query.filters;
  top.sample_index = query.sample_index;
  return top;
}

std::string iso_time(int64_t seconds) {
  const auto t = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

}  // namespace

std::string dump_json(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Api::Api(ServeData data) : data_(std::move(data)), sources_(data_.source_path, data_.trim_path) {}

ApiAnswer Api::answer(std::string_view path, const QueryParams& params) {
  const std::optional<Endpoint> endpoint = endpoint_of(path);
  if (!endpoint) return error_answer(404, "no such API: " + std::string(path.substr(0, 100)));
  auto query = parse_view_query(*endpoint, data_.mode, params);
  if (!query) return error_answer(400, query.error().message);
  try {
    report_slots_.acquire();
    struct Release {
      std::counting_semaphore<kMaxConcurrentReports>& slots;
      ~Release() { slots.release(); }
    } release{report_slots_};
    auto result = compute(*endpoint, *query);
    if (!result) return error_answer(status_of(result.error()), result.error().message);
    return {200, dump_json(*result)};
  } catch (const std::exception& e) {
    // A report's failure is one request's 500, never the server's end.
    return error_answer(500, std::string("internal error: ") + e.what());
  }
}

core::Expected<Api::ProfileRef> Api::profile_for(const ViewQuery& query) {
  // Not owned: data_ outlives every request.
  const auto served = [&](size_t i) { return ProfileRef(ProfileRef(), &data_.profiles[i]); };
  if (data_.mode == ServeMode::compare) return served(query.base_side ? 0 : 1);
  if (data_.mode == ServeMode::single || (query.epoch.empty() && query.image.empty() &&
                                          query.event.empty()))
    return served(0);
  return selection_profile(query.epoch, query.epoch_to, query);
}

// The database read with `epoch` (through `epoch_to` when given) and the query's image and
// event in place of the command line's; the last few kept read. The read runs outside the
// lock: two requests for one new selection may both read it, and neither waits for the other.
core::Expected<Api::ProfileRef> Api::selection_profile(const std::string& epoch,
                                                       const std::string& epoch_to,
                                                       const ViewQuery& query) {
  const std::string key = epoch + '\n' + epoch_to + '\n' + query.image + '\n' + query.event;
  {
    std::lock_guard lock(selections_mutex_);
    for (auto it = selections_.begin(); it != selections_.end(); ++it) {
      if (it->first != key) continue;
      selections_.splice(selections_.begin(), selections_, it);
      return selections_.front().second;
    }
  }
  store::Selection selection = data_.selection;
  if (!epoch.empty()) {
    selection.epoch = epoch;
    selection.epoch_to = epoch_to;
    selection.since.clear();
  }
  if (!query.image.empty()) selection.image = query.image;
  if (!query.event.empty()) selection.event = query.event;
  auto profile = data_.load_selection(selection);
  if (!profile) return profile.error();
  auto loaded = std::make_shared<const core::Profile>(std::move(*profile));
  std::lock_guard lock(selections_mutex_);
  selections_.emplace_front(key, loaded);
  if (selections_.size() > kCachedSelections) selections_.pop_back();
  return loaded;
}

core::Expected<nlohmann::json> Api::compute(Endpoint endpoint, const ViewQuery& query) {
  if (endpoint == Endpoint::db) {
    if (data_.mode != ServeMode::db)
      return core::Error{"/api/db needs tally serve --db DIR", core::ErrorKind::invalid_input};
    return db_overview();
  }
  if (endpoint == Endpoint::diff) {
    if (data_.mode == ServeMode::single)
      return core::Error{"/api/diff needs two profiles (tally serve BASE NEW) or --db DIR",
                         core::ErrorKind::invalid_input};
    analyze::DiffOptions diff;
    diff.top = top_options(query, data_.inlines);
    if (data_.mode == ServeMode::compare) {
      auto report = analyze::compute_diff(data_.profiles[0], data_.profiles[1], diff);
      if (!report) return report.error();
      return diff_json(*report);
    }
    // Two epochs (or ranges), as `tally diff --db DIR BASE NEW` reads them. The base is read first:
    // with two selections cached, reading the new side keeps it (and the reference held
    // here keeps it alive whatever the cache does meanwhile).
    auto base = selection_profile(query.base_epoch, query.base_epoch_to, query);
    if (!base) return base.error();
    auto changed = profile_for(query);
    if (!changed) return changed.error();
    auto report = analyze::compute_diff(**base, **changed, diff);
    if (!report) return report.error();
    return diff_json(*report);
  }
  auto chosen = profile_for(query);
  if (!chosen) return chosen.error();
  const core::Profile& profile = **chosen;
  switch (endpoint) {
    case Endpoint::meta:
      return meta(profile);
    case Endpoint::top: {
      auto report = analyze::compute_top(profile, top_options(query, data_.inlines));
      if (!report) return report.error();
      return top_json(*report);
    }
    case Endpoint::flame: {
      analyze::FlameTreeOptions flame;
      flame.nodes = node_options(query, data_.inlines);
      flame.filters = query.filters;
      flame.sample_index = query.sample_index;
      flame.min_fraction = kFlameMinFraction;
      auto tree = analyze::build_flame_tree(profile, flame);
      if (!tree) return tree.error();
      return flame_json(*tree);
    }
    case Endpoint::peek: {
      analyze::PeekOptions peek;
      peek.regex = query.function;
      peek.nodes = node_options(query, data_.inlines);
      peek.filters = query.filters;
      peek.sample_index = query.sample_index;
      auto report = analyze::compute_peek(profile, peek);
      if (!report) return report.error();
      return peek_json(*report);
    }
    case Endpoint::source: {
      // The files read are those the profile's line table names for the matching
      // functions, found as `tally list` finds them: `f` is a regex over function names,
      // never a path.
      analyze::ListOptions list;
      list.regex = query.function;
      list.inlines = data_.inlines;
      list.filters = query.filters;
      list.sample_index = query.sample_index;
      std::lock_guard lock(sources_mutex_);
      auto report = analyze::compute_list(profile, list, sources_);
      if (!report) return report.error();
      return source_json(*report);
    }
    case Endpoint::disasm: {
      analyze::DisasmOptions disasm;
      disasm.regex = query.function;
      disasm.filters = query.filters;
      disasm.sample_index = query.sample_index;
      disasm.binary_paths = data_.binary_paths;
      disasm.debuginfod = data_.debuginfod;
      auto report = analyze::compute_disasm(profile, disasm);
      if (!report) return report.error();
      return disasm_json(*report);
    }
    case Endpoint::timeline: {
      analyze::TimelineOptions timeline;
      timeline.filters = query.filters;
      timeline.window = query.window;
      auto model = analyze::compute_timeline(profile, timeline);
      if (!model) return model.error();
      return timeline_json(*model);
    }
    case Endpoint::diff:
    case Endpoint::db:
      break;
  }
  return core::Error{"unhandled request", core::ErrorKind::unsupported};
}

nlohmann::json Api::meta(const core::Profile& profile) const {
  static constexpr const char* kModes[] = {"single", "compare", "db"};
  nlohmann::json types = nlohmann::json::array();
  for (const core::ValueType& t : profile.sample_types)
    types.push_back({{"type", profile.str(t.type)}, {"unit", profile.str(t.unit)}});
  nlohmann::json default_type = nullptr;
  if (auto index = analyze::report_value_index(profile, ""); index)
    default_type = profile.str(profile.sample_types[*index].type);
  // The label keys the samples carry, for the label filters: numeric (pid, tid, cpu) or
  // string (comm), in name order.
  std::map<std::string, std::string> label_kinds;
  std::vector<uint8_t> seen(profile.strings.size(), 0);  // bit 1: string, bit 2: number
  for (size_t s = 0; s < profile.sample_count(); ++s)
    for (const core::Label& label : profile.labels(s)) {
      if (label.key >= seen.size()) continue;
      const uint8_t bit = label.str != 0 ? 1 : 2;
      if (seen[label.key] & bit) continue;
      seen[label.key] |= bit;
      std::string& kind = label_kinds[std::string(profile.str(label.key))];
      kind = kind.empty() || kind == (bit == 1 ? "string" : "number")
                 ? (bit == 1 ? "string" : "number")
                 : "both";
    }
  nlohmann::json labels = nlohmann::json::array();
  for (const auto& [key, kind] : label_kinds) labels.push_back({{"key", key}, {"kind", kind}});
  return {{"mode", kModes[static_cast<int>(data_.mode)]},
          {"labels", std::move(labels)},
          {"files", data_.files},
          {"sample_types", std::move(types)},
          {"default_sample_type", std::move(default_type)}};
}

// Every epoch read once, unsymbolized (image totals need no symbols), then kept.
core::Expected<nlohmann::json> Api::db_overview() {
  std::lock_guard lock(db_overview_mutex_);
  if (db_overview_) return *db_overview_;
  auto db = store::Database::open(data_.selection.db, /*create=*/false);
  if (!db) return db.error();
  const std::vector<std::string> epochs = db->epochs();
  nlohmann::json epoch_rows = nlohmann::json::array();
  std::vector<std::string> image_names;  // first seen order, sorted by total below
  std::map<std::string, std::vector<int64_t>> per_epoch;
  std::map<std::string, int64_t> image_totals;
  std::vector<std::string> events;
  for (size_t e = 0; e < epochs.size(); ++e) {
    store::Selection selection = data_.selection;
    selection.epoch = epochs[e];
    selection.since.clear();
    selection.image.clear();  // the overview lists every image
    int64_t total = 0;
    auto read = store::read_db_profile(selection);
    if (read) {
      for (const std::string& event : read->events)
        if (std::find(events.begin(), events.end(), event) == events.end()) events.push_back(event);
      auto images = analyze::compute_images(read->profile, "");
      if (images) {
        total = images->total;
        for (const analyze::ImageRow& row : images->rows) {
          auto& counts = per_epoch[row.name];
          counts.resize(epochs.size(), 0);
          core::accumulate_saturating(counts[e], row.value);
          core::accumulate_saturating(image_totals[row.name], row.value);
        }
      }
    }
    const std::optional<int64_t> start = store::epoch_seconds(epochs[e]);
    epoch_rows.push_back(
        {{"name", epochs[e]}, {"start", start ? iso_time(*start) : ""}, {"total", total}});
  }
  for (const auto& [name, total] : image_totals) image_names.push_back(name);
  std::stable_sort(image_names.begin(), image_names.end(),
                   [&](const std::string& a, const std::string& b) {
                     return image_totals[a] > image_totals[b];
                   });
  nlohmann::json image_rows = nlohmann::json::array();
  for (const std::string& name : image_names)
    image_rows.push_back(
        {{"name", name}, {"total", image_totals[name]}, {"per_epoch", per_epoch[name]}});
  std::sort(events.begin(), events.end());
  db_overview_ = nlohmann::json{
      {"epochs", std::move(epoch_rows)}, {"images", std::move(image_rows)}, {"events", events}};
  return *db_overview_;
}

}  // namespace tally::web
