// CPU lists and NUMA nodes, on sysfs trees built by the test.
#include <gtest/gtest.h>

#include <filesystem>

#include "collect/cpu_topology.h"
#include "support/test_support.h"

namespace tally::collect {
namespace {

TEST(CpuList, KernelFormat) {
  EXPECT_EQ(*parse_cpu_list("0"), (std::vector<int>{0}));
  EXPECT_EQ(*parse_cpu_list("0-3"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(*parse_cpu_list("8,0-2,10-11"), (std::vector<int>{0, 1, 2, 8, 10, 11}));
  EXPECT_EQ(*parse_cpu_list("3,3,2-3"), (std::vector<int>{2, 3}));
}

TEST(CpuList, BadListsNameTheProblem) {
  for (const char* text : {"", ",", "0,", "a", "1-", "-1", "3-1", "0-99999999", "1 2", "0x1"}) {
    auto cpus = parse_cpu_list(text);
    ASSERT_FALSE(cpus) << "accepted '" << text << "'";
    EXPECT_NE(cpus.error().message.find(std::string("'") + text + "'"), std::string::npos)
        << cpus.error().message;
  }
}

void write(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  test::write_bytes(path, text);
}

TEST(NumaNodes, ReadFromSysfs) {
  test::TempDir sysfs;
  write(sysfs.file("devices/system/cpu/online"), "0-7\n");
  write(sysfs.file("devices/system/node/node1/cpulist"), "4-7\n");
  write(sysfs.file("devices/system/node/node0/cpulist"), "0-3\n");
  write(sysfs.file("devices/system/node/node2/cpulist"), "\n");  // memory only
  write(sysfs.file("devices/system/node/online"), "0-2\n");       // not a node directory
  EXPECT_EQ(online_cpus(sysfs.path()), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  auto nodes = numa_nodes({}, sysfs.path());
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].id, 0);
  EXPECT_EQ(nodes[0].cpus, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(nodes[1].id, 1);
  EXPECT_EQ(nodes[1].cpus, (std::vector<int>{4, 5, 6, 7}));
}

TEST(NumaNodes, WithoutNumaOneNodeHoldsEveryCpu) {
  test::TempDir sysfs;
  auto nodes = numa_nodes({0, 1, 2}, sysfs.path());
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].id, 0);
  EXPECT_EQ(nodes[0].cpus, (std::vector<int>{0, 1, 2}));
}

TEST(NumaNodes, ThisMachine) {
  // Every online CPU is in exactly one node.
  std::vector<int> online = online_cpus();
  ASSERT_FALSE(online.empty());
  std::vector<int> seen;
  for (const auto& node : numa_nodes(online)) seen.insert(seen.end(), node.cpus.begin(), node.cpus.end());
  std::sort(seen.begin(), seen.end());
  for (int cpu : online) EXPECT_EQ(std::count(seen.begin(), seen.end(), cpu), 1) << cpu;
}

}  // namespace
}  // namespace tally::collect
