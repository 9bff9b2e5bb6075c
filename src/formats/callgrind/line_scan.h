// The lexical layer of the callgrind reader: a cursor over one line that reads numbers
// (decimal or 0x hex), subpositions (absolute, +N, -N, *, with KCachegrind's range
// suffixes) and costs, without allocating. Errors are returned, not thrown, so that the
// reader can say which line and what it expected.
#pragma once

#include <cstdint>
#include <string_view>

namespace tally::callgrind {

enum class Scan { ok, none, overflow };

class LineScan {
 public:
  explicit LineScan(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  bool at_end() const { return p_ == end_; }
  char peek() const { return p_ == end_ ? '\0' : *p_; }
  void advance() { ++p_; }
  std::string_view rest() const { return {p_, static_cast<size_t>(end_ - p_)}; }

  // Spaces and tabs; true if at least one was skipped.
  bool skip_spaces() {
    const char* start = p_;
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\t')) ++p_;
    return p_ != start;
  }
  // The next number ends here: at a space, a tab or the end of the line.
  bool at_separator() const { return p_ == end_ || *p_ == ' ' || *p_ == '\t'; }

  // An unsigned number, "123" or "0x7b"/"0X7B" (the spec's Number).
  Scan number(uint64_t& out) {
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return Scan::none;
    if (*p_ == '0' && end_ - p_ > 2 && (p_[1] == 'x' || p_[1] == 'X') && hex_digit(p_[2]) >= 0)
      return hex(out);
    uint64_t v = 0;
    while (p_ != end_ && *p_ >= '0' && *p_ <= '9') {
      const auto d = static_cast<uint64_t>(*p_ - '0');
      if (v > (UINT64_MAX - d) / 10) return Scan::overflow;
      v = v * 10 + d;
      ++p_;
    }
    out = v;
    return Scan::ok;
  }

  // A cost: a number that fits int64.
  Scan cost(int64_t& out) {
    uint64_t v = 0;
    Scan s = number(v);
    if (s != Scan::ok) return s;
    if (v > uint64_t(INT64_MAX)) return Scan::overflow;
    out = static_cast<int64_t>(v);
    return Scan::ok;
  }

 private:
  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  Scan hex(uint64_t& out) {
    p_ += 2;
    uint64_t v = 0;
    int d;
    while (p_ != end_ && (d = hex_digit(*p_)) >= 0) {
      if (v >> 60) return Scan::overflow;
      v = v << 4 | static_cast<uint64_t>(d);
      ++p_;
    }
    out = v;
    return Scan::ok;
  }

  const char* p_;
  const char* end_;
};

// One subposition as written: absolute, or relative to the same subposition of the last
// cost line.
struct SubPosition {
  enum class Kind { absolute, plus, minus, same } kind = Kind::absolute;
  uint64_t value = 0;
  bool range = false;  // KCachegrind's "a+n", "a-b", "a:b": only the first position is used
};

// Reads one subposition; Scan::none when the text there is not one.
inline Scan scan_subposition(LineScan& s, SubPosition& out) {
  out = SubPosition{};
  switch (s.peek()) {
    case '*':
      s.advance();
      out.kind = SubPosition::Kind::same;
      break;
    case '+':
    case '-':
      out.kind = s.peek() == '+' ? SubPosition::Kind::plus : SubPosition::Kind::minus;
      s.advance();
      if (Scan r = s.number(out.value); r != Scan::ok) return r;
      break;
    default:
      if (Scan r = s.number(out.value); r != Scan::ok) return r;
  }
  // A range suffix is attached without a space.
  if (char c = s.peek(); c == '+' || c == '-' || c == ':') {
    s.advance();
    uint64_t ignored = 0;
    if (Scan r = s.number(ignored); r != Scan::ok) return r == Scan::none ? Scan::none : r;
    out.range = true;
  }
  return s.at_separator() ? Scan::ok : Scan::none;
}

}  // namespace tally::callgrind
