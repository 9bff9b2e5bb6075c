#include "web/pages.h"

#include <array>

namespace tally::web {

bool is_page_path(std::string_view path) {
  static constexpr std::array<std::string_view, 8> kPages{
      "/", "/flame", "/top", "/peek", "/source", "/disasm", "/diff", "/db"};
  for (std::string_view page : kPages)
    if (path == page) return true;
  return false;
}

}  // namespace tally::web
