#include "web/host_check.h"

#include <algorithm>
#include <arpa/inet.h>

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

bool is_wildcard_address(std::string_view host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]";
}

bool is_ip_literal_host(std::string_view host_header, int port) {
  const std::string suffix = ":" + std::to_string(port);
  if (host_header.size() <= suffix.size() || !host_header.ends_with(suffix)) return false;
  std::string address(host_header.substr(0, host_header.size() - suffix.size()));
  // Only an address's characters: inet_pton reads a C string, so "[::\0junk]" would pass.
  if (address.find_first_not_of("0123456789abcdefABCDEF:.[]") != std::string::npos) return false;
  unsigned char buffer[16];
  if (address.size() > 2 && address.front() == '[' && address.back() == ']')
    return inet_pton(AF_INET6, address.substr(1, address.size() - 2).c_str(), buffer) == 1;
  // inet_pton takes only the dotted quad (not "1", "0x7f.1" or "127.1" as inet_aton would).
  return inet_pton(AF_INET, address.c_str(), buffer) == 1;
}

}  // namespace tally::web
