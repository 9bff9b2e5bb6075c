#include "support/measured_split.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace tally::test {

std::string measured_split_program() { return MEASURED_SPLIT_PROGRAM; }

std::map<std::string, double> measured_split_ms(const std::string& output) {
  std::map<std::string, double> milliseconds;
  unsigned long long ns[4] = {};
  size_t line = output.find("cpu_ns a=");
  if (line == std::string::npos ||
      std::sscanf(output.c_str() + line, "cpu_ns a=%llu b=%llu c=%llu d=%llu", &ns[0], &ns[1],
                  &ns[2], &ns[3]) != 4) {
    ADD_FAILURE() << "measured_split printed no \"cpu_ns a=N b=N c=N d=N\" line in:\n" << output;
    return milliseconds;
  }
  const char* functions[] = {"func_a", "func_b", "func_c", "func_d"};
  for (int i = 0; i < 4; ++i) milliseconds[functions[i]] = static_cast<double>(ns[i]) / 1e6;
  return milliseconds;
}

std::map<std::string, double> measured_split_shares(const std::string& output) {
  std::map<std::string, double> shares = measured_split_ms(output);
  double total = 0;
  for (const auto& [function, ms] : shares) total += ms;
  if (shares.empty()) return shares;
  if (total <= 0) {
    ADD_FAILURE() << "measured_split measured no CPU time: " << output;
    return {};
  }
  for (auto& [function, share] : shares) share = 100 * share / total;
  return shares;
}

}  // namespace tally::test
