#include "daemon/push_transport.h"

#include <curl/curl.h>

#include <fmt/format.h>

#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "io/gzip.h"

namespace tally::daemon {

namespace {

size_t append_body(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  size_t start = s.find_first_not_of(" \t");
  return start == std::string::npos ? "" : s.substr(start);
}

}  // namespace

core::Expected<PushFormat> parse_push_format(const std::string& name) {
  if (name == "pyroscope") return PushFormat::pyroscope;
  if (name == "otlp") return PushFormat::otlp;
  return core::Error{"unknown push format '" + name + "' (expected pyroscope or otlp)"};
}

std::string push_endpoint(const PushTarget& target) {
  std::string base = target.url;
  while (base.ends_with('/')) base.pop_back();
  return base + (target.format == PushFormat::pyroscope ? "/push.v1.PusherService/Push"
                                                        : "/v1development/profiles");
}

core::Expected<PushTransport> PushTransport::open(PushTarget target) {
  if (!target.url.starts_with("http://") && !target.url.starts_with("https://"))
    return core::Error{"push URL " + target.url + ": expected http://... or https://..."};
  for (const std::string& header : target.headers)
    if (header.find(':') == std::string::npos || header.starts_with(':'))
      return core::Error{"--push-header " + header + ": expected 'Name: value'"};
  std::string token;
  if (!target.token_file.empty()) {
    std::ifstream in(target.token_file);
    if (!in) return core::Error{target.token_file + ": cannot read the token file"};
    std::stringstream text;
    text << in.rdbuf();
    token = trimmed(text.str());
    if (token.empty()) return core::Error{target.token_file + ": the token file is empty"};
  }
  if (!target.ca_file.empty() && !std::ifstream(target.ca_file))
    return core::Error{target.ca_file + ": cannot read the CA file"};
  static std::once_flag global;
  std::call_once(global, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return core::Error{"libcurl: cannot make a handle"};
  return PushTransport(std::move(target), curl, std::move(token));
}

PushTransport::PushTransport(PushTransport&& other) noexcept
    : target_(std::move(other.target_)), curl_(other.curl_), token_(std::move(other.token_)) {
  other.curl_ = nullptr;
}

PushTransport::~PushTransport() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

PushOutcome PushTransport::post(const std::string& message) {
  CURL* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);
  const std::string body = io::gzip(message, 6);
  const std::string url = push_endpoint(target_);
  curl_slist* headers = nullptr;
  headers = curl_slist_append(headers, target_.format == PushFormat::pyroscope
                                           ? "Content-Type: application/proto"
                                           : "Content-Type: application/x-protobuf");
  headers = curl_slist_append(headers, "Content-Encoding: gzip");
  if (target_.format == PushFormat::pyroscope)
    headers = curl_slist_append(headers, "Connect-Protocol-Version: 1");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  if (!token_.empty()) headers = curl_slist_append(headers, ("Authorization: Bearer " + token_).c_str());
  for (const std::string& header : target_.headers) headers = curl_slist_append(headers, header.c_str());
  std::string answer;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_POST, 1L);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "tally");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT, target_.timeout_seconds);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!target_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, target_.ca_file.c_str());
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  PushOutcome outcome;
  if (code != CURLE_OK) {
    // Certificate problems are no outage: retrying cannot fix them.
    const bool tls = code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE ||
                     code == CURLE_SSL_CERTPROBLEM;
    outcome.kind = tls ? PushOutcome::refused : PushOutcome::retry;
    outcome.message = fmt::format("{}: {}", url, error[0] != '\0' ? error : curl_easy_strerror(code));
    return outcome;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &outcome.status);
  if (outcome.status >= 200 && outcome.status < 300) return outcome;
  outcome.kind = outcome.status >= 500 || outcome.status == 429 ? PushOutcome::retry
                                                                : PushOutcome::refused;
  outcome.message = fmt::format("{}: HTTP {}: {}", url, outcome.status, server_message(answer));
  return outcome;
}

std::string server_message(const std::string& body) {
  auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("message") && json["message"].is_string()) {
    std::string text = json["message"].get<std::string>();
    if (json.contains("code") && json["code"].is_string())
      text = json["code"].get<std::string>() + ": " + text;
    return text;
  }
  std::string text = body.substr(0, 300);
  for (char& c : text)
    if (c < 0x20 || c == 0x7f) c = ' ';
  return text.empty() ? "(no message)" : text;
}

}  // namespace tally::daemon
