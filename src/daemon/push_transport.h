// One HTTP(S) POST of a push body with libcurl: gzip request body, TLS verified (with an
// extra CA when given), a bearer token read from a file, extra headers (X-Scope-OrgID).
// What the answer means for the payload: sent, worth retrying (unreachable, 5xx, 429), or
// refused for good (another 4xx: retrying cannot fix it).
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace tally::daemon {

enum class PushFormat { pyroscope, otlp };

struct PushTarget {
  std::string url{};  // the store's base URL; the API path is appended
  PushFormat format = PushFormat::pyroscope;
  std::vector<std::string> headers{};  // "Name: value"
  std::string token_file{};            // its content (trimmed) is sent as a bearer token
  std::string ca_file{};               // a CA certificate (PEM) trusted besides the system's
  long timeout_seconds = 30;
};

// "pyroscope" or "otlp".
core::Expected<PushFormat> parse_push_format(const std::string& name);
// The full URL of the push API: URL/push.v1.PusherService/Push or URL/v1development/profiles.
std::string push_endpoint(const PushTarget& target);

struct PushOutcome {
  enum Kind { sent, retry, refused } kind = sent;
  long status = 0;      // the HTTP status, 0 when no answer came
  std::string message;  // why, for the log: curl's error or the server's message
};

class PushTransport {
 public:
  // Checks the target (the token file is readable, each header has a ':'); libcurl's global
  // state is set up once per process.
  static core::Expected<PushTransport> open(PushTarget target);
  PushTransport(PushTransport&& other) noexcept;
  PushTransport& operator=(PushTransport&&) = delete;
  ~PushTransport();

  // POSTs `message` (the serialized request, gzipped here).
  PushOutcome post(const std::string& message);
  const PushTarget& target() const { return target_; }

 private:
  PushTransport(PushTarget target, void* curl, std::string token)
      : target_(std::move(target)), curl_(curl), token_(std::move(token)) {}
  PushTarget target_;
  void* curl_ = nullptr;  // CURL*, reused: its connection stays open between pushes
  std::string token_;
};

// The message of a Connect error body ({"code":"invalid_argument","message":"..."}) or of
// an OTLP/HTTP Status, else the body itself (shortened), for the log.
std::string server_message(const std::string& body);

}  // namespace tally::daemon
