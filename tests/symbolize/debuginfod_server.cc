#include "symbolize/debuginfod_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

namespace tally::test {

namespace {

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A log the process may not have created yet.
std::string text_or_empty(const std::string& path) {
  try {
    return read_text(path);
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address = loopback(0);
  socklen_t size = sizeof address;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0)
    throw std::runtime_error("cannot find a free port");
  ::close(fd);
  return ntohs(address.sin_port);
}

int http_status(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in address = loopback(port);
  timeval wait{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  int status = -1;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    char reply[64] = {};
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()) &&
        ::read(fd, reply, sizeof reply - 1) > 12)
      std::sscanf(reply, "HTTP/%*s %d", &status);
  }
  ::close(fd);
  return status;
}

DebuginfodServer::DebuginfodServer(const std::string& program, const std::string& served_dir,
                                   const std::string& work_dir)
    : port_(free_port()), log_(work_dir + "/debuginfod.log") {
  // -F: index the ELF files under the directory; -t 0: one scan, no rescans; -g 0: no
  // grooming. It listens on every interface (0.188 has no option to bind one address): a
  // random port, a test binary and only while the test runs.
  process_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{program, "-F", "-d", work_dir + "/debuginfod.sqlite", "-p",
                               std::to_string(port_), "-t", "0", "-g", "0", "-c", "1",
                               served_dir},
      log_);
}

bool DebuginfodServer::wait_until_serving(const std::string& build_id, const std::string& file,
                                          std::string& why, double timeout_seconds) {
  const auto start = Clock::now();
  const std::string path = "/buildid/" + build_id + "/" + file;
  while (seconds_since(start) < timeout_seconds) {
    if (http_status(port_, path) == 200) return true;
    if (!process_->running()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  why = "debuginfod did not serve " + path + "; its log:\n" + log();
  return false;
}

void DebuginfodServer::stop() {
  if (process_) process_->stop(SIGTERM);
}

std::string DebuginfodServer::log() const { return text_or_empty(log_); }

SilentServer::SilentServer(const std::string& python, const std::string& work_dir) {
  const std::string log = work_dir + "/silent_server.log";
  // A backlog: the kernel completes the connections, the request is sent, and then
  // nothing comes back.
  process_ = std::make_unique<BackgroundProcess>(
      std::vector<std::string>{
          python, "-c",
          "import socket, sys, time\n"
          "s = socket.socket()\n"
          "s.bind(('127.0.0.1', 0))\n"
          "s.listen(64)\n"
          "print(s.getsockname()[1], flush=True)\n"
          "time.sleep(3600)\n"},
      log);
  const auto start = Clock::now();
  while (seconds_since(start) < 30) {
    const std::string text = text_or_empty(log);
    if (!text.empty() && text.back() == '\n') {
      port_ = std::stoi(text);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  throw std::runtime_error("the silent server did not start: " + text_or_empty(log));
}

}  // namespace tally::test
