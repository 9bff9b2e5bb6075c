// Runs every reader tally has on one input, and every writer on what they read, checking
// that each ends in a clear error or a well-formed result: no crash, no exception, no
// result that points outside itself, and no writer output that tally cannot read back.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace tally::test {

struct ReadOutcomes {
  uint64_t inputs = 0;
  uint64_t profiles_read = 0;  // formats::read_profile succeeded
  uint64_t gperf_files_read = 0;
  uint64_t dcpi_files_read = 0;
  uint64_t errors = 0;  // readers that refused the input
};

// "inputs N, profiles read N, ..." for the test log.
std::string describe(const ReadOutcomes& outcomes);

// Prints describe(outcomes) when the test ends, however it ends.
class OutcomeReport {
 public:
  explicit OutcomeReport(const ReadOutcomes& outcomes) : outcomes_(outcomes) {}
  ~OutcomeReport();
  OutcomeReport(const OutcomeReport&) = delete;
  OutcomeReport& operator=(const OutcomeReport&) = delete;

 private:
  const ReadOutcomes& outcomes_;
};

// Reports problems with ADD_FAILURE (with `source` and a short description of the input).
void exercise_readers(std::span<const uint8_t> bytes, const std::string& source,
                      ReadOutcomes& outcomes);

}  // namespace tally::test
