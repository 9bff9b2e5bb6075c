// The JSON API of `tally serve` (src/web/API.md): a request's path and parameters in, a
// status and a JSON body out. No sockets here (server.cc does HTTP), so every answer can
// be tested and fuzzed directly.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "analyze/source_files.h"
#include "web/query.h"
#include "web/serve_data.h"

namespace tally::web {

struct ApiAnswer {
  int status = 200;
  std::string body;  // JSON
};

class Api {
 public:
  explicit Api(ServeData data);

  // `path` is "/api/..."; thread-safe, and requests run concurrently (cpp-httplib's thread
  // pool): the profiles read at start are never changed, so reports on them share nothing
  // but these few caches, each under its own lock. At most kMaxConcurrentReports compute
  // at once, so that a burst of requests on a large profile cannot multiply its memory.
  ApiAnswer answer(std::string_view path, const QueryParams& params);

  static constexpr std::ptrdiff_t kMaxConcurrentReports = 4;

 private:
  // A profile a report reads: one of data_.profiles (not owned), or a database selection
  // that stays alive while a request uses it even when the cache drops it.
  using ProfileRef = std::shared_ptr<const core::Profile>;

  core::Expected<nlohmann::json> compute(Endpoint endpoint, const ViewQuery& query);
  // The profile a view shows: the new (or base) side, or a database selection.
  core::Expected<ProfileRef> profile_for(const ViewQuery& query);
  core::Expected<ProfileRef> selection_profile(const std::string& epoch,
                                               const std::string& epoch_to,
                                               const ViewQuery& query);
  nlohmann::json meta(const core::Profile& profile) const;
  core::Expected<nlohmann::json> db_overview();

  const ServeData data_;  // read once at start; never changed
  std::counting_semaphore<kMaxConcurrentReports> report_slots_{kMaxConcurrentReports};

  // `tally list`'s file cache: read and filled by /api/source, one request at a time.
  std::mutex sources_mutex_;
  analyze::SourceFiles sources_;

  // The last database selections read (key: epoch, image, event), newest first.
  std::mutex selections_mutex_;
  std::list<std::pair<std::string, ProfileRef>> selections_;

  std::mutex db_overview_mutex_;
  std::optional<nlohmann::json> db_overview_;
};

// A JSON body that never throws on bytes that are not UTF-8 (names and source lines come
// from binaries and files): those are replaced.
std::string dump_json(const nlohmann::json& value);

}  // namespace tally::web
