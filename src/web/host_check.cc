#include "web/host_check.h"

#include <algorithm>
#include <cctype>

namespace tally::web {

namespace {
std::string with_port(std::string_view host, int port) {
  std::string out(host);
  if (out.find(':') != std::string::npos && out.front() != '[') out = "[" + out + "]";
  return out + ":" + std::to_string(port);
}
}  // namespace

std::vector<std::string> allowed_hosts(std::string_view host, int port) {
  std::vector<std::string> out{with_port(host, port), with_port("localhost", port),
                               with_port("127.0.0.1", port), with_port("::1", port)};
  for (std::string& h : out)
    std::transform(h.begin(), h.end(), h.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool host_allowed(std::string_view host_header, const std::vector<std::string>& allowed) {
  for (const std::string& a : allowed) {
    if (a.size() != host_header.size()) continue;
    if (std::equal(a.begin(), a.end(), host_header.begin(), [](char x, char y) {
          return x == std::tolower(static_cast<unsigned char>(y));
        }))
      return true;
  }
  return false;
}

}  // namespace tally::web
