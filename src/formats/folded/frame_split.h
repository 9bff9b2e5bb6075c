// Splitting a folded stack into frames. C++ names carry ';' inside brackets
// ("std::map<int, std::vector<a;b>>::find", "foo(int; char)"), so a stack splits at ';'
// only outside <> () [] {}; "operator<", "operator()" and friends name operators rather
// than open brackets. A stack whose brackets never balance splits at every ';'.
#pragma once

#include <string_view>
#include <vector>

namespace tally::folded {

class FrameSplitter {
 public:
  // The frames of `stack` in file order (root first), as views into `stack`.
  const std::vector<std::string_view>& split(std::string_view stack);

 private:
  bool split_outside_brackets(std::string_view stack);
  std::vector<std::string_view> frames_;
  std::vector<char> closers_;  // the closing bracket each open one expects
};

// Length of the operator token at `at` ("operator<<" -> 10, with spaces before the
// symbol), or 0 when no bracket-like operator name starts there.
size_t operator_name_length(std::string_view text, size_t at);

}  // namespace tally::folded
