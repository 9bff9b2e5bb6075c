#include "support/stack_traces.h"

#include <regex>
#include <sstream>

namespace tally::test {

std::vector<std::vector<std::string>> traces(const std::string& text) {
  std::vector<std::vector<std::string>> stacks;
  std::istringstream in(text);
  std::string line;
  bool in_stack = false;
  while (std::getline(in, line)) {
    if (line.starts_with("-----------+")) {
      stacks.emplace_back();
      in_stack = true;
      continue;
    }
    if (!line.empty() && line[0] != ' ') in_stack = false;
    if (!in_stack) continue;
    std::istringstream fields(line);
    std::string first, second;
    fields >> first;
    // A sample label, as pprof prints them above the stack: "       tid:  20179".
    if (first.ends_with(':') && line.find(first + "  ") != std::string::npos) continue;
    if (stacks.back().empty()) fields >> second;  // "  221.22ms   lib_hot": value, then leaf
    const std::string& frame = stacks.back().empty() ? second : first;
    if (!frame.empty()) stacks.back().push_back(frame);
  }
  return stacks;
}

bool has_stack(const std::vector<std::vector<std::string>>& stacks, const std::string& leaf,
               const std::vector<std::string>& callers, bool adjacent) {
  for (const auto& s : stacks) {
    if (s.empty() || s[0] != leaf) continue;
    size_t at = 1;
    bool ok = true;
    for (const std::string& c : callers) {
      if (adjacent) {
        if (at >= s.size() || s[at] != c) ok = false;
        ++at;
      } else {
        while (at < s.size() && s[at] != c) ++at;
        if (at == s.size()) ok = false;
        else ++at;
      }
      if (!ok) break;
    }
    if (ok) return true;
  }
  return false;
}

std::map<std::string, int64_t> folded_ms_from_pprof_traces(const std::string& text) {
  std::map<std::string, int64_t> stacks;
  std::istringstream in(text);
  std::vector<std::string> frames;
  int64_t ms = 0;
  auto flush = [&] {
    if (frames.empty()) return;
    std::string stack;
    for (auto f = frames.rbegin(); f != frames.rend(); ++f) stack += (stack.empty() ? "" : ";") + *f;
    stacks[stack] += ms;
    frames.clear();
  };
  static const std::regex first(R"(^\s*(\d+)ms\s+(\S.*)$)"), caller(R"(^\s+(\S.*)$)");
  std::smatch match;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("-----------+")) {
      flush();
    } else if (std::regex_match(line, match, first)) {
      ms = std::stoll(match[1].str());
      frames.push_back(match[2].str());
    } else if (!frames.empty() && std::regex_match(line, match, caller)) {
      frames.push_back(match[1].str());
    }
  }
  flush();
  return stacks;
}

}  // namespace tally::test
