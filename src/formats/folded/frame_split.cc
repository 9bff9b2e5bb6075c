#include "formats/folded/frame_split.h"

namespace tally::folded {

namespace {

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Operator symbols made of bracket characters, longest first so that "operator<<=" is not
// taken for "operator<<" followed by "=".
constexpr std::string_view kBracketOperators[] = {"<=>", "<<=", ">>=", "->*", "<<", ">>", "<=",
                                                  ">=",  "->",  "()",  "[]",  "<",  ">"};

}  // namespace

size_t operator_name_length(std::string_view text, size_t at) {
  constexpr std::string_view keyword = "operator";
  if (text.substr(at, keyword.size()) != keyword) return 0;
  if (at > 0 && is_identifier_char(text[at - 1])) return 0;  // "my_operator<T>" is a template
  size_t pos = at + keyword.size();
  while (pos < text.size() && text[pos] == ' ') ++pos;
  for (std::string_view op : kBracketOperators)
    if (text.substr(pos, op.size()) == op) return pos + op.size() - at;
  return 0;
}

const std::vector<std::string_view>& FrameSplitter::split(std::string_view stack) {
  if (!split_outside_brackets(stack)) {
    frames_.clear();
    size_t start = 0;
    for (size_t semi; (semi = stack.find(';', start)) != std::string_view::npos; start = semi + 1)
      frames_.push_back(stack.substr(start, semi - start));
    frames_.push_back(stack.substr(start));
  }
  return frames_;
}

bool FrameSplitter::split_outside_brackets(std::string_view stack) {
  frames_.clear();
  closers_.clear();
  size_t start = 0;
  for (size_t i = 0; i < stack.size(); ++i) {
    const char c = stack[i];
    switch (c) {
      case 'o':
        if (size_t skip = operator_name_length(stack, i)) i += skip - 1;
        break;
      case '<': closers_.push_back('>'); break;
      case '(': closers_.push_back(')'); break;
      case '[': closers_.push_back(']'); break;
      case '{': closers_.push_back('}'); break;
      case '>':
      case ')':
      case ']':
      case '}':
        if (closers_.empty() || closers_.back() != c) return false;
        closers_.pop_back();
        break;
      case ';':
        if (closers_.empty()) {
          frames_.push_back(stack.substr(start, i - start));
          start = i + 1;
        }
        break;
      default:
        break;
    }
  }
  if (!closers_.empty()) return false;
  frames_.push_back(stack.substr(start));
  return true;
}

}  // namespace tally::folded
