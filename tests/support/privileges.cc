#include "support/privileges.h"

#include <grp.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>

namespace tally::test {
namespace {

constexpr const char* kParanoidFile = "/proc/sys/kernel/perf_event_paranoid";

bool write_paranoid(const std::string& text) {
  std::ofstream out(kParanoidFile);
  out << text << "\n";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace

int perf_event_paranoid() {
  std::ifstream in(kParanoidFile);
  int value = 0;
  return in >> value ? value : INT_MIN;
}

ParanoidAtLeast::ParanoidAtLeast(int level) {
  const int now = perf_event_paranoid();
  if (now == INT_MIN) {
    problem_ = std::string("cannot read ") + kParanoidFile;
    return;
  }
  if (now >= level) return;
  if (geteuid() != 0) {
    problem_ = "kernel.perf_event_paranoid is " + std::to_string(now) + ", below " +
               std::to_string(level) + ", and only root may raise it";
    return;
  }
  if (!write_paranoid(std::to_string(level)) || perf_event_paranoid() != level) {
    problem_ = std::string("cannot write ") + kParanoidFile + ": " + std::strerror(errno);
    return;
  }
  original_ = std::to_string(now);
}

ParanoidAtLeast::~ParanoidAtLeast() {
  if (!original_.empty()) write_paranoid(original_);
}

std::string drop_to_nobody() {
  constexpr uid_t kNobody = 65534;
  if (geteuid() == 0) {
    if (setgroups(0, nullptr) != 0) return std::string("setgroups: ") + std::strerror(errno);
    if (setresgid(kNobody, kNobody, kNobody) != 0)
      return std::string("setresgid(nobody): ") + std::strerror(errno);
    if (setresuid(kNobody, kNobody, kNobody) != 0)
      return std::string("setresuid(nobody): ") + std::strerror(errno);
  }
  // Leaving uid 0 for good clears the capability sets, and an ordinary user has none:
  // check rather than trust it.
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("CapEff:", 0) == 0 && line.find_first_not_of("0\t ", 7) != std::string::npos)
      return "capabilities left after dropping root: " + line;
  return "";
}

}  // namespace tally::test
