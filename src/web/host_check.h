// The Host header check against DNS rebinding: a page on another site whose name was made
// to resolve to 127.0.0.1 sends its own name as Host, so only the bound address and the
// loopback names, with the bound port, are answered.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tally::web {

// The Host values answered for a server bound to `host` (as given, "::1" or "[::1]" for
// IPv6) on `port`: "HOST:PORT", "localhost:PORT", "127.0.0.1:PORT", "[::1]:PORT".
std::vector<std::string> allowed_hosts(std::string_view host, int port);

// Compared without regard to case (host names are case-insensitive).
bool host_allowed(std::string_view host_header, const std::vector<std::string>& allowed);

}  // namespace tally::web
