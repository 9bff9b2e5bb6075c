// The JSON API of `tally serve` (src/web/API.md): a request's path and parameters in, a
// status and a JSON body out. No sockets here (server.cc does HTTP), so every answer can
// be tested and fuzzed directly.
#pragma once

#include <list>
#include <mutex>
#include <optional>
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

  // `path` is "/api/..."; thread-safe (requests are answered one at a time: the reports
  // share the source file cache and the database reads, and one at a time keeps memory flat).
  ApiAnswer answer(std::string_view path, const QueryParams& params);

 private:
  core::Expected<nlohmann::json> compute(Endpoint endpoint, const ViewQuery& query);
  // The profile a view shows: the new (or base) side, or a database selection.
  core::Expected<const core::Profile*> profile_for(const ViewQuery& query);
  core::Expected<const core::Profile*> selection_profile(const std::string& epoch,
                                                         const std::string& epoch_to,
                                                         const ViewQuery& query);
  nlohmann::json meta(const core::Profile& profile) const;
  core::Expected<nlohmann::json> db_overview();

  std::mutex mutex_;
  ServeData data_;
  analyze::SourceFiles sources_;
  // The last database selections read (key: epoch, image, event), newest first.
  std::list<std::pair<std::string, core::Profile>> selections_;
  std::optional<nlohmann::json> db_overview_;
};

// A JSON body that never throws on bytes that are not UTF-8 (names and source lines come
// from binaries and files): those are replaced.
std::string dump_json(const nlohmann::json& value);

}  // namespace tally::web
