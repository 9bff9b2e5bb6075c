// The web UI's files (src/web/assets), embedded in the binary at build time.
#pragma once

#include <string_view>

namespace tally::web {

struct EmbeddedAsset {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content_type;  // for the Content-Type header
  std::string_view body;
};

// The asset at `path`, or nullptr. Paths are compared exactly: nothing here touches the
// filesystem, so no query string can reach it.
const EmbeddedAsset* find_asset(std::string_view path);

}  // namespace tally::web
