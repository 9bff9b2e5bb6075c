#include "collect/proc_tasks.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <optional>
#include <string_view>

namespace tally::collect {

namespace {

std::optional<int> parse_int(std::string_view text) {
  int v = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty() || v < 0)
    return std::nullopt;
  return v;
}

std::vector<pid_t> numeric_entries(const std::string& dir) {
  std::vector<pid_t> ids;
  DIR* d = opendir(dir.c_str());
  if (!d) return ids;
  while (dirent* e = readdir(d))
    if (auto id = parse_int(e->d_name); id && *id > 0) ids.push_back(*id);
  closedir(d);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

std::vector<pid_t> list_threads(pid_t pid) {
  return numeric_entries("/proc/" + std::to_string(pid) + "/task");
}

std::vector<pid_t> list_processes() { return numeric_entries("/proc"); }

std::string read_comm(pid_t pid, pid_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string comm;
  std::getline(in, comm);
  return comm;
}

bool process_running(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  // "pid (comm) S ...": the state follows the last ')' (comm may hold parentheses).
  size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  char state = stat[close + 2];
  return state != 'Z' && state != 'X' && state != 'x';
}

}  // namespace tally::collect
