// Non-fatal findings (a missing trailer, a dropped sample type) collected while reading
// or converting; the command line prints them on stderr, converters also keep them as
// comments in the output where the format has comments.
#pragma once

#include <string>
#include <vector>

namespace tally::core {

class Diagnostics {
 public:
  void warn(std::string message) { warnings_.push_back(std::move(message)); }
  const std::vector<std::string>& warnings() const { return warnings_; }
  bool empty() const { return warnings_.empty(); }
  // What the user asked to be told (-v): printed, never kept in an output's comments.
  void note(std::string message) { notes_.push_back(std::move(message)); }
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  std::vector<std::string> warnings_;
  std::vector<std::string> notes_;
};

}  // namespace tally::core
