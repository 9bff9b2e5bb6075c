// receiver.py (a stand-in for Grafana Pyroscope's push API, or for an OTLP profiles
// endpoint) run beside a test: started on
// 127.0.0.1 with a free port (or a given one, to come back after an outage), stopped when
// the object goes away. What it received is read back from its output directory.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_support.h"

namespace tally::test {

struct ReceiverOptions {
  int port = 0;     // 0: a free one
  int status = 200; // every answer's HTTP status
  bool otlp = false; // an OTLP/HTTP profiles endpoint (proto/otlp), not Pyroscope's push API
  double delay_seconds = 0;  // before each answer, after appending to OUT/receiving
  std::string tls_cert{}, tls_key{};
};

class Receiver {
 public:
  // `out`: the directory it writes to (kept across restarts on the same port).
  Receiver(const std::string& out, const ReceiverOptions& options = {});
  ~Receiver();
  bool started() const { return port_ != 0; }
  int port() const { return port_; }
  std::string url() const;  // http(s)://127.0.0.1:PORT
  void stop();              // SIGKILL: an outage

  // One JSON object per request received (requests.jsonl); for OTLP receiver.py's summary
  // (summarize_otlp: resources, profiles with totals, flat and cum per function, problems).
  std::vector<nlohmann::json> requests() const;
  // The raw_profile files received, OUT/profiles/<ID>.pb.gz.
  std::vector<std::string> profiles() const;
  std::string out() const { return out_; }

 private:
  std::string out_;
  bool tls_ = false;
  int port_ = 0;
  std::unique_ptr<BackgroundProcess> process_;
};

// The path of Debian's python3 (with python3-protobuf), or "" when missing.
std::string debian_python3();

}  // namespace tally::test
