// The page paths of API.md: each answers the front end's shell (/index.html), whose
// script draws the view the path names.
#pragma once

#include <string_view>

namespace tally::web {

bool is_page_path(std::string_view path);

}  // namespace tally::web
