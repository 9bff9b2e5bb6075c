#include "daemon/log.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace tally::daemon {

core::Expected<Log> Log::open(const std::string& path) {
  if (path.empty() || path == "-") return Log(stderr);
  std::FILE* f = std::fopen(path.c_str(), "ae");
  if (!f)
    return core::Error{fmt::format("{}: cannot open the log: {}", path, std::strerror(errno)),
                       core::ErrorKind::io};
  return Log(f);
}

Log::~Log() {
  if (file_ && file_ != stderr) std::fclose(file_);
}

void Log::line(const std::string& text) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::fprintf(file_, "%s tally daemon: %s\n", stamp, text.c_str());
  std::fflush(file_);
}

}  // namespace tally::daemon
