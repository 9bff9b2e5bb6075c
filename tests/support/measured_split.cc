#include "support/measured_split.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace tally::test {

std::string measured_split_program() { return MEASURED_SPLIT_PROGRAM; }

std::map<std::string, double> measured_split_shares(const std::string& output) {
  std::map<std::string, double> shares;
  unsigned long long ns[4] = {};
  size_t line = output.find("cpu_ns a=");
  if (line == std::string::npos ||
      std::sscanf(output.c_str() + line, "cpu_ns a=%llu b=%llu c=%llu d=%llu", &ns[0], &ns[1],
                  &ns[2], &ns[3]) != 4) {
    ADD_FAILURE() << "measured_split printed no \"cpu_ns a=N b=N c=N d=N\" line in:\n" << output;
    return shares;
  }
  const double total = static_cast<double>(ns[0] + ns[1] + ns[2] + ns[3]);
  if (total <= 0) {
    ADD_FAILURE() << "measured_split measured no CPU time: " << output;
    return shares;
  }
  const char* functions[] = {"func_a", "func_b", "func_c", "func_d"};
  for (int i = 0; i < 4; ++i) shares[functions[i]] = 100 * static_cast<double>(ns[i]) / total;
  return shares;
}

}  // namespace tally::test
