#include "support/measured_split.h"

#include <gtest/gtest.h>

#include <sstream>

namespace tally::test {

std::string measured_split_program() { return MEASURED_SPLIT_PROGRAM; }
std::string measured_shlib_program() { return MEASURED_SHLIB_PROGRAM; }

std::map<std::string, double> measured_cpu_shares(const std::string& output) {
  std::map<std::string, double> shares;
  const size_t start = output.find("cpu_ns ");
  if (start == std::string::npos) {
    ADD_FAILURE() << "no \"cpu_ns NAME=N ...\" line in:\n" << output;
    return shares;
  }
  std::istringstream fields(output.substr(start + 7, output.find('\n', start) - start - 7));
  std::map<std::string, unsigned long long> ns;
  double total = 0;
  for (std::string field; fields >> field;) {
    const size_t equals = field.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == field.size() ||
        field.find_first_not_of("0123456789", equals + 1) != std::string::npos) {
      ADD_FAILURE() << "not NAME=N: \"" << field << "\" in:\n" << output;
      return {};
    }
    const unsigned long long value = std::stoull(field.substr(equals + 1));
    ns[field.substr(0, equals)] = value;
    total += static_cast<double>(value);
  }
  if (ns.empty() || total <= 0) {
    ADD_FAILURE() << "no CPU time measured: " << output;
    return shares;
  }
  for (const auto& [name, value] : ns) shares[name] = 100 * static_cast<double>(value) / total;
  return shares;
}

std::map<std::string, double> measured_split_shares(const std::string& output) {
  std::map<std::string, double> shares;
  for (const auto& [name, percent] : measured_cpu_shares(output)) shares["func_" + name] = percent;
  if (!shares.empty() && shares.size() != 4)
    ADD_FAILURE() << "measured_split measured " << shares.size() << " functions, not 4: " << output;
  return shares;
}

}  // namespace tally::test
