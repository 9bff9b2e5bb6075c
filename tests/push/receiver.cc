#include "receiver.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace tally::test {

std::string debian_python3() {
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "";
}

Receiver::Receiver(const std::string& out, const ReceiverOptions& options)
    : out_(out), tls_(!options.tls_cert.empty()) {
  std::filesystem::create_directories(out);
  const std::string port_file = out + "/port";
  std::filesystem::remove(port_file);
  std::vector<std::string> argv = {debian_python3(),
                                   std::string(TALLY_SOURCE_DIR) + "/tests/push/receiver.py",
                                   "--proto-root",
                                   std::string(TALLY_SOURCE_DIR) +
                                       (options.otlp ? "/proto/otlp" : "/proto/pyroscope"),
                                   "--format", options.otlp ? "otlp" : "pyroscope",
                                   "--out", out, "--port-file", port_file,
                                   "--port", std::to_string(options.port),
                                   "--status", std::to_string(options.status),
                                   "--delay", std::to_string(options.delay_seconds)};
  if (tls_) {
    argv.insert(argv.end(), {"--tls-cert", options.tls_cert, "--tls-key", options.tls_key});
  }
  process_ = std::make_unique<BackgroundProcess>(argv, out + "/receiver.log");
  // A loaded machine may take a while to start python and protoc.
  for (int i = 0; i < 600 && process_->running(); ++i) {
    if (std::filesystem::exists(port_file)) {
      port_ = std::stoi(read_text(port_file));
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Receiver::~Receiver() { stop(); }

void Receiver::stop() {
  if (process_ && process_->running()) process_->stop(SIGKILL);
  process_.reset();
}

std::string Receiver::url() const {
  return std::string(tls_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_);
}

std::vector<nlohmann::json> Receiver::requests() const {
  std::vector<nlohmann::json> result;
  if (!std::filesystem::exists(out_ + "/requests.jsonl")) return result;
  for (const std::string& line : text_lines(read_text(out_ + "/requests.jsonl")))
    if (!line.empty()) result.push_back(nlohmann::json::parse(line));
  return result;
}

std::vector<std::string> Receiver::profiles() const {
  std::vector<std::string> result;
  if (!std::filesystem::exists(out_ + "/profiles")) return result;
  for (const auto& entry : std::filesystem::directory_iterator(out_ + "/profiles"))
    result.push_back(entry.path().string());
  std::sort(result.begin(), result.end());
  return result;
}

}  // namespace tally::test
