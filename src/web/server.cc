#include "web/server.h"

#include <httplib.h>

#include <algorithm>
#include <thread>
#include <chrono>

#include "web/assets/embedded_assets.h"
#include "web/host_check.h"
#include "web/pages.h"
#include "web/query.h"

namespace tally::web {

namespace {

constexpr int kMorePortsToTry = 100;

// No answer is compressed: cpp-httplib compresses a body whose type is exactly
// "application/json" or text/* with brotli at its highest quality when the browser accepts
// it, which took 16 s for the 12 MB flame graph of a deep profile (0.5 s uncompressed on
// loopback). With a charset parameter the type is not one it compresses.
constexpr const char* kJsonType = "application/json; charset=utf-8";

void set_json(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, kJsonType);
}

void set_error(httplib::Response& res, int status, const std::string& message) {
  set_json(res, status, dump_json({{"error", message}}));
}

}  // namespace

Server::Server(Api& api) : api_(api), http_(std::make_unique<httplib::Server>()) {
  install_handlers();
}

Server::~Server() = default;

void Server::install_handlers() {
  // Requests carry no body worth reading: GET and HEAD only.
  http_->set_payload_max_length(64 * 1024);
  http_->set_read_timeout(10);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second server
  // binds a port already in use and shares its requests.
  http_->set_socket_options([](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  http_->set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // Every answer: no sniffing of JSON as HTML, no framing by other sites, no caching of
    // a profile's numbers after the server is gone.
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Cache-Control", "no-store");
    const std::string host = req.get_header_value("Host");
    if (!host_allowed(host, allowed_hosts_) &&
        !(is_wildcard_address(host_) && is_ip_literal_host(host, port_))) {
      set_error(res, 403, "the Host header must name this server (" + host_ + ") or localhost");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      res.set_header("Allow", "GET, HEAD");
      set_error(res, 405, "tally serve is read-only: only GET and HEAD are answered");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http_->Get(".*", [this](const httplib::Request& req, httplib::Response& res) {
    const std::string& path = req.path;
    if (path.rfind("/api/", 0) == 0) {
      // httplib drops a repeated identical pair and pairs without a name: count them.
      const size_t query = req.target.find('?');
      if (query != std::string::npos &&
          query_piece_count(std::string_view(req.target).substr(query + 1)) != req.params.size()) {
        set_error(res, 400, "a parameter given more than once, or one without a name");
        return;
      }
      const ApiAnswer answer = api_.answer(path, req.params);
      set_json(res, answer.status, answer.body);
      return;
    }
    const EmbeddedAsset* asset = find_asset(is_page_path(path) ? "/index.html" : path);
    if (!asset) {
      set_error(res, 404, "not found");
      return;
    }
    res.status = 200;
    // A content provider's answer is sent as is (text/* bodies would be brotli-compressed,
    // 5-20 ms per asset), straight from the binary's copy.
    const std::string_view body = asset->body;
    res.set_content_provider(body.size(), std::string(asset->content_type),
                             [body](size_t offset, size_t length, httplib::DataSink& sink) {
                               return sink.write(body.data() + offset, length);
                             });
  });
  // Answers httplib makes itself (a request it could not parse, a URI too long): JSON too.
  http_->set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) set_error(res, res.status, "HTTP " + std::to_string(res.status));
  });
  http_->set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
        set_error(res, 500, "internal error");
      });
}

core::Expected<int> Server::bind(const std::string& host, int port, bool next_free) {
  host_ = host;
  if (port == 0) {
    port_ = http_->bind_to_any_port(host);
    if (port_ <= 0)
      return core::Error{"cannot listen on " + host + ": no free port", core::ErrorKind::io};
  } else {
    const int last = next_free ? std::min(port + kMorePortsToTry, 65535) : port;
    int p = port;
    while (p <= last && !http_->bind_to_port(host, p)) ++p;
    if (p > last)
      return core::Error{"cannot listen on " + host + ":" + std::to_string(port) +
                             (next_free ? " or the next ports" : "") + " (in use, or not an address of this machine)",
                         core::ErrorKind::io};
    port_ = p;
  }
  allowed_hosts_ = allowed_hosts(host, port_);
  return port_;
}

// Bound to every address: the URL a browser here opens is loopback's.
std::string Server::url() const {
  if (is_wildcard_address(host_))
    return "http://" + allowed_hosts_[host_.find(':') == std::string::npos ? 2 : 3] + "/";
  return "http://" + allowed_hosts_.front() + "/";
}

bool Server::run() {
  const bool listened = stop_requested_ || http_->listen_after_bind();
  run_returned_ = true;
  return listened;
}

void Server::stop() {
  stop_requested_ = true;
  // A stop between bind() and httplib's listening loop would be lost: wait until it runs
  // (or run() saw the request, or returned) to stop it.
  while (!run_returned_) {
    if (http_->is_running()) {
      http_->stop();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace tally::web
