// Which CPUs there are and how they group into NUMA nodes, from sysfs: the CPU lists of
// `-C` and `-a`, and the first CPU of each node, which counts the per-node (northbridge,
// uncore) events of tally stat once per node.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace tally::collect {

// "0-3,8,10-11" (the kernel's cpulist format, also -C's) as sorted, distinct CPU numbers.
core::Expected<std::vector<int>> parse_cpu_list(std::string_view text);

// The online CPUs (/sys/devices/system/cpu/online; every configured CPU when unreadable).
std::vector<int> online_cpus(const std::string& sysfs = "/sys");

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;  // sorted
};

// /sys/devices/system/node/node*/cpulist, by node id; nodes without CPUs are left out. A
// kernel without NUMA has no such directory: then one node 0 holding `fallback_cpus`.
std::vector<NumaNode> numa_nodes(const std::vector<int>& fallback_cpus,
                                 const std::string& sysfs = "/sys");

}  // namespace tally::collect
