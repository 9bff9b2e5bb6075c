// Reads the tables of callgrind_annotate's output (the .annotate.txt and
// .annotate-inclusive-tree.txt files beside the valgrind fixtures), so that the tests
// compare tally's model with the peer's numbers rather than with numbers copied by hand.
// Only the one-event layout of those files is handled: "N (P%)  file:function [object]".
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tally::callgrind::test {

struct AnnotateEntry {
  int64_t cost = 0;
  std::string file, function, object;  // object "" when not printed
  int64_t calls = 0;                   // tree lines: the "(Nx)"
  char mark = ' ';                     // tree lines: '*' the function, '>' callee, '<' caller
};

struct AnnotateTables {
  std::optional<int64_t> program_total;
  std::vector<AnnotateEntry> self;  // the "file:function" table (above the threshold)
  std::vector<AnnotateEntry> tree;  // the --tree=both listing, in order
};

namespace annotate_detail {

inline std::optional<int64_t> parse_grouped(std::string_view s) {
  int64_t v = 0;
  bool any = false;
  for (char c : s) {
    if (c == ',') continue;
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
    any = true;
  }
  return any ? std::optional<int64_t>(v) : std::nullopt;
}

// "file:function (2x) [object]" -> its parts.
inline void parse_key(std::string_view rest, AnnotateEntry& e) {
  if (!rest.empty() && rest.back() == ']') {
    const size_t open = rest.rfind(" [");
    if (open != std::string_view::npos) {
      e.object = std::string(rest.substr(open + 2, rest.size() - open - 3));
      rest = rest.substr(0, open);
    }
  }
  if (rest.size() > 3 && rest.back() == ')') {
    const size_t open = rest.rfind(" (");
    if (open != std::string_view::npos) {
      std::string_view n = rest.substr(open + 2, rest.size() - open - 3);
      if (!n.empty() && n.back() == 'x') {
        if (auto v = parse_grouped(n.substr(0, n.size() - 1))) {
          e.calls = *v;
          rest = rest.substr(0, open);
        }
      }
    }
  }
  const size_t colon = rest.find(':');
  e.file = std::string(rest.substr(0, colon));
  e.function = colon == std::string_view::npos ? "" : std::string(rest.substr(colon + 1));
}

// "  40,000,020 (39.32%)  rest" -> cost and rest, or nothing.
inline std::optional<std::pair<int64_t, std::string_view>> cost_line(std::string_view line) {
  size_t i = line.find_first_not_of(' ');
  if (i == std::string_view::npos) return std::nullopt;
  const size_t space = line.find(' ', i);
  if (space == std::string_view::npos) return std::nullopt;
  auto cost = parse_grouped(line.substr(i, space - i));
  if (!cost) return std::nullopt;
  const size_t close = line.find("%)", space);
  if (line.substr(space + 1, 1) != "(" || close == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(close + 2);
  rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
  return std::pair{*cost, rest};
}

}  // namespace annotate_detail

inline AnnotateTables parse_annotate(const std::string& text) {
  using namespace annotate_detail;
  AnnotateTables t;
  std::istringstream in(text);
  std::string line;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.starts_with("----")) continue;
    if (line.find("file:function") != std::string::npos) {
      in_table = true;
      continue;
    }
    auto c = cost_line(line);
    if (!c) continue;
    auto [cost, rest] = *c;
    // "(calculated)": the file has no summary: or totals: line (pprof -callgrind's).
    if (rest == "PROGRAM TOTALS" || rest == "PROGRAM TOTALS (calculated)") {
      t.program_total = cost;
      continue;
    }
    if (!in_table) continue;
    AnnotateEntry e;
    e.cost = cost;
    if (rest.size() > 2 && (rest[0] == '*' || rest[0] == '>' || rest[0] == '<') && rest[1] == ' ') {
      e.mark = rest[0];
      rest.remove_prefix(1);
      rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
      parse_key(rest, e);
      t.tree.push_back(std::move(e));
    } else {
      parse_key(rest, e);
      t.self.push_back(std::move(e));
    }
  }
  return t;
}

}  // namespace tally::callgrind::test
