#include "support/measured_split.h"

#include <gtest/gtest.h>

#include <sstream>

namespace tally::test {

std::string measured_split_program() { return MEASURED_SPLIT_PROGRAM; }
std::string measured_shlib_program() { return MEASURED_SHLIB_PROGRAM; }

std::map<std::string, double> measured_cpu_ms(const std::string& output) {
  std::map<std::string, double> milliseconds;
  const size_t start = output.find("cpu_ns ");
  if (start == std::string::npos) {
    ADD_FAILURE() << "no \"cpu_ns NAME=N ...\" line in:\n" << output;
    return milliseconds;
  }
  std::istringstream fields(output.substr(start + 7, output.find('\n', start) - start - 7));
  for (std::string field; fields >> field;) {
    const size_t equals = field.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == field.size() ||
        field.find_first_not_of("0123456789", equals + 1) != std::string::npos) {
      ADD_FAILURE() << "not NAME=N: \"" << field << "\" in:\n" << output;
      return {};
    }
    milliseconds[field.substr(0, equals)] = static_cast<double>(std::stoull(field.substr(equals + 1))) / 1e6;
  }
  return milliseconds;
}

std::map<std::string, double> measured_cpu_shares(const std::string& output) {
  std::map<std::string, double> shares = measured_cpu_ms(output);
  double total = 0;
  for (const auto& [name, ms] : shares) total += ms;
  if (shares.empty() || total <= 0) {
    if (!shares.empty()) ADD_FAILURE() << "no CPU time measured: " << output;
    return {};
  }
  for (auto& [name, share] : shares) share = 100 * share / total;
  return shares;
}

namespace {

// measured_split prints "cpu_ns a=N b=N c=N d=N": keyed func_a..func_d.
std::map<std::string, double> as_split_functions(const std::map<std::string, double>& by_letter,
                                                 const std::string& output) {
  std::map<std::string, double> functions;
  for (const auto& [name, value] : by_letter) functions["func_" + name] = value;
  if (!functions.empty() && functions.size() != 4)
    ADD_FAILURE() << "measured_split measured " << functions.size() << " functions, not 4: " << output;
  return functions;
}

}  // namespace

std::map<std::string, double> measured_split_ms(const std::string& output) {
  return as_split_functions(measured_cpu_ms(output), output);
}

std::map<std::string, double> measured_split_shares(const std::string& output) {
  return as_split_functions(measured_cpu_shares(output), output);
}

}  // namespace tally::test
