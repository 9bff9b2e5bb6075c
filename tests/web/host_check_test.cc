// The Host check's IP-literal rule (web/host_check.h), on values an HTTP client may not send
// but a raw request can: a NUL inside the brackets must not end the address early.
#include <gtest/gtest.h>

#include <string>

#include "web/host_check.h"

namespace tally::web {
namespace {

TEST(IpLiteralHost, AddressesWithThePortPass) {
  EXPECT_TRUE(is_ip_literal_host("10.1.2.3:8080", 8080));
  EXPECT_TRUE(is_ip_literal_host("[2001:db8::7]:8080", 8080));
  EXPECT_FALSE(is_ip_literal_host("10.1.2.3:8081", 8080));
  EXPECT_FALSE(is_ip_literal_host("evil.example:8080", 8080));
  EXPECT_FALSE(is_ip_literal_host("127.1:8080", 8080));
}

// fuzz_serve_query found "[::\0...]:8080" passing: inet_pton read "::" and stopped at the NUL.
TEST(IpLiteralHost, ANulInsideTheAddressIsRefused) {
  EXPECT_FALSE(is_ip_literal_host(std::string("[::\0evil]:8080", 14), 8080));
  EXPECT_FALSE(is_ip_literal_host(std::string("10.1.2.3\0x:8080", 15), 8080));
}

}  // namespace
}  // namespace tally::web
