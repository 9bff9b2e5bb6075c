#include "collect/cpu_topology.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace tally::collect {
namespace {

// CPU numbers above this are refused: no machine has them, and a typo such as "0-99999999"
// must not allocate a list of a hundred million entries.
constexpr int kMaxCpu = 1 << 16;

bool parse_int(std::string_view text, int& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 0;
}

std::string read_first_line(const std::string& path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

}  // namespace

core::Expected<std::vector<int>> parse_cpu_list(std::string_view text) {
  auto fail = [&](std::string_view what) {
    return core::Error{fmt::format("CPU list '{}': {} (expected e.g. 0-3,8)", text, what),
                       core::ErrorKind::invalid_input};
  };
  std::vector<int> cpus;
  if (text.empty()) return fail("empty");
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view range = text.substr(start, comma == std::string_view::npos
                                                    ? std::string_view::npos
                                                    : comma - start);
    size_t dash = range.find('-');
    int first = 0, last = 0;
    if (dash == std::string_view::npos) {
      if (!parse_int(range, first)) return fail(fmt::format("'{}' is not a CPU number", range));
      last = first;
    } else if (!parse_int(range.substr(0, dash), first) ||
               !parse_int(range.substr(dash + 1), last)) {
      return fail(fmt::format("'{}' is not a range FIRST-LAST", range));
    }
    if (last < first) return fail(fmt::format("range '{}' goes backwards", range));
    if (last > kMaxCpu) return fail(fmt::format("CPU {} is beyond any machine", last));
    for (int cpu = first; cpu <= last; ++cpu) cpus.push_back(cpu);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::vector<int> online_cpus(const std::string& sysfs) {
  auto listed = parse_cpu_list(read_first_line(sysfs + "/devices/system/cpu/online"));
  if (listed && !listed->empty()) return *listed;
  std::vector<int> all;
  long count = sysconf(_SC_NPROCESSORS_CONF);
  for (int cpu = 0; cpu < std::max(1L, count); ++cpu) all.push_back(cpu);
  return all;
}

std::vector<NumaNode> numa_nodes(const std::vector<int>& fallback_cpus, const std::string& sysfs) {
  std::vector<NumaNode> nodes;
  std::error_code error;
  const std::filesystem::path root = sysfs + "/devices/system/node";
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    std::string name = entry.path().filename().string();
    int id = 0;
    if (name.rfind("node", 0) != 0 || !parse_int(std::string_view(name).substr(4), id)) continue;
    auto cpus = parse_cpu_list(read_first_line((entry.path() / "cpulist").string()));
    if (!cpus || cpus->empty()) continue;  // memory-only node
    nodes.push_back(NumaNode{id, std::move(*cpus)});
  }
  if (nodes.empty()) return {NumaNode{0, fallback_cpus}};
  std::sort(nodes.begin(), nodes.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  return nodes;
}

}  // namespace tally::collect
