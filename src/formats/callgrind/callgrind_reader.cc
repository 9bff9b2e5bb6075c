// Callgrind text -> core::Profile (call-graph shape). One pass, a hand-written line scanner:
// no regex, no allocation per line (names are interned once, positions and edges found in
// flat hash tables, costs summed into flat arrays); the model is built at the end. On a
// large text, other threads may cut the lines and scan the cost lines' numbers ahead
// (chunk_lexer.h), and count positions for cat --summary (position_counter.h); everything
// else stays in this one pass, in file order, so the result does not depend on them.
//
// Beyond the spec, the dialect that real writers use (valgrind's dump.c, KCachegrind's
// loader, callgrind_annotate, pprof, lsprof-style Python exporters):
//  - one compression table per kind of name (files, functions, objects), kept across parts;
//  - relative subpositions are relative to the last *cost* line: a calls= target, a call's
//    cost line and a jump's position line do not move that base (dump.c's fprint_pos);
//  - fn= resets the current file to the fl= file, except that a fi=/fe= right before fn=
//    (no cost line between) names that function's file: lsprof-style files have no fl=;
//  - cob=, cfi=/cfl= apply to the next call only, jfi=/jfn= to the next jump only, cfn=
//    stays; the callee is resolved at the calls= line, so "cfn= cfi= calls=" works too;
//  - jcnd=FOLLOWED/EXECUTED (valgrind, KCachegrind) and the spec's jcnd=EXECUTED FOLLOWED;
//    the line after jump=/jcnd= is the jump's source position, without costs;
//  - KCachegrind's ranges "a+n", "a-b", "a:b" (the first position is used), "addr" for
//    "instr", rcalls= for calls=; rec=, frfn=, ln=, bb= lines and bb subpositions skipped
//    with a note; files without "# callgrind format" or "version:".
// A part starts at a part:, pid:, thread:, positions: or events: line that follows costs of
// the previous part (or at a second events:); position state (ob, fl, fn) starts afresh.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "formats/callgrind/callgrind.h"
#include "formats/callgrind/chunk_lexer.h"
#include "formats/callgrind/compressed_names.h"
#include "formats/callgrind/events.h"
#include "formats/callgrind/key_table.h"
#include "formats/callgrind/line_scan.h"
#include "formats/callgrind/position_counter.h"

namespace tally::callgrind {

namespace {

using core::StringId;

// Subpositions of a cost line, in the order positions: lists them.
enum class Sub : uint8_t { instr, bb, line };

struct Position {
  uint64_t addr = 0;
  uint64_t bb = 0;
  uint64_t line = 0;
};

// Where costs arise now: object, the function and its file, the file of the positions.
struct Current {
  StringId ob = 0;
  StringId fl = 0;    // the function's file
  StringId file = 0;  // the file of positions: fl, or fi/fe inside inlined code
  StringId fn = 0;
  bool has_fn = false;
  bool fi_before_fn = false;  // fi=/fe= since the last cost line: names the next fn='s file
};

struct CallTarget {
  StringId ob = 0, file = 0, fn = 0;
  bool has_ob = false, has_file = false, has_fn = false;
};

struct JumpTarget {
  StringId file = 0, fn = 0;
  bool has_file = false, has_fn = false;
};

struct PartState {
  core::GraphPart part;
  std::vector<uint32_t> columns;  // events: column -> measured event index
  bool has_events = false;
  bool has_costs = false;
  std::vector<int64_t> summary, totals;  // in column order, as written
  uint64_t totals_line = 0;
  // Self costs: one slot per location with costs in this part.
  std::vector<core::LocationId> slot_location;
  std::vector<int64_t> slot_values;  // columns.size() per slot
};

constexpr uint32_t kNoEdge = UINT32_MAX;

struct EdgeState {
  core::LocationId caller = 0, callee = 0;
  uint32_t part = 0;
  int64_t count = 0;
  size_t values = 0;  // offset into edge_values_, columns of its part
  uint32_t older = kNoEdge;  // the caller's edge made before this one
};

struct EventDefinition {
  std::string name;
  std::string formula;
  std::string long_name;
  uint64_t line = 0;
};

struct Context {
  core::MappingId mapping = 0;
  core::FunctionId function = 0;
};

bool is_key_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  s = trim_left(s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string shorten(std::string_view s) {
  return s.size() > 60 ? std::string(s.substr(0, 57)) + "..." : std::string(s);
}

class Reader {
 public:
  Reader(std::string_view text, const std::string& source, core::Diagnostics& diagnostics,
         core::PositionDetail detail, core::PositionCounts* counts, const Lexing& lexing)
      : text_(text), source_(source), diagnostics_(diagnostics), lexing_(lexing),
        by_function_(detail == core::PositionDetail::functions),
        counts_(by_function_ ? counts : nullptr) {
    parts_.emplace_back();
    if (counts_) counter_ = std::make_unique<PositionCounter>(*counts_);
  }

  void report_progress(void (*on_progress)(uint64_t, void*), void* context) {
    on_progress_ = on_progress;
    progress_context_ = context;
  }

  core::Profile read() {
    const char* p = text_.data();
    const char* const end = p + text_.size();
    if (text_.starts_with("\xEF\xBB\xBF")) p += 3;  // a UTF-8 byte order mark
    if (lexing_.threads > 0) {
      if (counter_) counting_ = std::make_unique<CountingThread>(*counter_);
      read_lexed(std::string_view(p, static_cast<size_t>(end - p)));
    } else {
      read_lines(p, end);
    }
    finish();
    return std::move(profile_);
  }

 private:
  void read_lines(const char* p, const char* const end) {
    const char* next_report = p + kProgressStep;
    while (p < end) {
      if (p >= next_report && on_progress_) {
        on_progress_(static_cast<uint64_t>(p - text_.data()), progress_context_);
        next_report = p + kProgressStep;
      }
      const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      const char* stop = nl ? nl : end;
      std::string_view line(p, static_cast<size_t>(stop - p));
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_number_;
      handle(line);
      p = nl ? nl + 1 : end;
    }
  }

  // As read_lines, the lines cut and the cost lines scanned on other threads.
  void read_lexed(std::string_view text) {
    ChunkPipeline pipeline(text, lexing_.chunk_bytes, lexing_.threads);
    const char* next_report = text.data() + kProgressStep;
    while (const LexedChunk* chunk = pipeline.next()) {
      const LexedWord* words = chunk->words.data();
      for (const LexedLine& line : chunk->lines) {
        if (line.text >= next_report && on_progress_) {
          on_progress_(static_cast<uint64_t>(line.text - text_.data()), progress_context_);
          next_report = line.text + kProgressStep;
        }
        ++line_number_;
        if (line.words != LexedLine::kText) {
          const bool done = lexed_cost_line(words, line.words);
          words += line.words;
          if (done) continue;
        }
        handle(std::string_view(line.text, line.size));
      }
    }
  }
  [[noreturn]] void fail(const std::string& what) const { core::fail_at_line(line_number_, what); }

  PartState& part() { return parts_.back(); }
  uint32_t part_index() const { return static_cast<uint32_t>(parts_.size() - 1); }

  // --- Dispatch ---

  void handle(std::string_view line) {
    line = trim_left(line);
    if (line.empty()) return;
    const char c = line.front();
    if (c == '#') return comment(line);
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*') return cost_line(line);
    if (pending_call_) fail("expected the call's cost line after calls= (line " +
                            std::to_string(pending_call_line_) + "), found '" + shorten(line) + "'");
    if (pending_jump_) fail("expected the jump's source position after jump=/jcnd= (line " +
                            std::to_string(pending_jump_line_) + "), found '" + shorten(line) + "'");
    size_t k = 0;
    while (k < line.size() && is_key_char(line[k])) ++k;
    if (k > 0 && k < line.size() && line[k] == '=') return spec_line(line.substr(0, k), line.substr(k + 1));
    if (k > 0 && k < line.size() && line[k] == ':') return header_line(line.substr(0, k), line.substr(k + 1));
    // Header lines with other keys, such as KCachegrind's "timeframe (BB): ...".
    const size_t colon = line.find(':'), equals = line.find('=');
    if (k > 0 && colon != std::string_view::npos && colon < equals)
      return header_line(line.substr(0, colon), line.substr(colon + 1));
    fail("expected a cost line, a position such as fn=NAME, or a header line such as "
         "events:, found '" + shorten(line) + "'");
  }

  void comment(std::string_view line) {
    if (line_number_ == 1 && trim(line) == "# callgrind format") return;
    std::string_view text = line.substr(1);
    if (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    profile_.comments.push_back(profile_.intern(text));
  }

  // --- Header ---

  void header_line(std::string_view key, std::string_view value) {
    value = trim_left(value);
    const bool opens_part = key == "part" || key == "pid" || key == "thread" ||
                            key == "positions" || key == "events";
    if (opens_part && (part().has_costs || (key == "events" && part().has_events))) new_part();
    if (key == "version") return version(value);
    if (key == "creator") {
      if (profile_.attribute("callgrind.creator").empty())
        profile_.set_attribute("callgrind.creator", std::string(value));
      return;
    }
    if (key == "positions") return positions(value);
    if (key == "events") return events(value);
    if (key == "event") return event_definition(value);
    if (key == "summary") {
      require_events("summary:");
      return costs_of_header(value, part().summary, "summary:");
    }
    if (key == "totals") {
      require_events("totals:");
      part().totals_line = line_number_;
      return costs_of_header(value, part().totals, "totals:");
    }
    if (!(key == "pid" || key == "thread" || key == "part" || key == "cmd" || key == "desc"))
      ++unknown_header_lines_;
    part().part.header.emplace_back(std::string(key), std::string(value));
  }

  void version(std::string_view value) {
    LineScan s(value);
    uint64_t major = 0;
    if (s.number(major) != Scan::ok)
      fail("version: expects a number, found '" + shorten(value) + "'");
    if (major >= 2)
      fail(fmt::format("callgrind format version {} is not supported: tally reads version 1 "
                       "(and 0, its predecessor)", major));
  }

  void positions(std::string_view value) {
    subs_.clear();
    std::string_view rest = trim(value);
    int last = -1;
    while (!rest.empty()) {
      const size_t space = rest.find_first_of(" \t");
      const std::string_view word = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view() : trim_left(rest.substr(space));
      Sub sub;
      if (word == "instr" || word == "addr") {
        sub = Sub::instr;
      } else if (word == "bb") {
        sub = Sub::bb;
        bb_dropped_ = true;
      } else if (word == "line") {
        sub = Sub::line;
      } else {
        fail("positions: names '" + shorten(word) + "'; expected instr, bb and/or line");
      }
      if (static_cast<int>(sub) <= last)
        fail("positions: must list instr, bb and line in that order, each once");
      last = static_cast<int>(sub);
      subs_.push_back(sub);
    }
    if (subs_.empty()) fail("positions: names none of instr, bb, line");
    for (Sub s : subs_) {
      if (s == Sub::instr) has_instr_ = true;
      if (s == Sub::line) has_line_ = true;
    }
    positions_given_ = true;
  }

  void events(std::string_view value) {
    PartState& p = part();
    p.columns.clear();
    std::string_view rest = trim(value);
    while (!rest.empty()) {
      const size_t space = rest.find_first_of(" \t");
      const std::string_view name = rest.substr(0, space);
      rest = space == std::string_view::npos ? std::string_view() : trim_left(rest.substr(space));
      auto [it, inserted] = event_index_.try_emplace(std::string(name), event_names_.size());
      if (inserted) event_names_.emplace_back(name);
      for (uint32_t c : p.columns)
        if (c == it->second) fail("events: names '" + std::string(name) + "' twice");
      p.columns.push_back(static_cast<uint32_t>(it->second));
    }
    if (p.columns.empty()) fail("events: names no event");
    p.has_events = true;
    costs_.resize(std::max(costs_.size(), p.columns.size()));
  }

  // event: NAME [= FORMULA] [: LONG NAME]
  void event_definition(std::string_view value) {
    value = trim(value);
    size_t n = 0;
    while (n < value.size() && value[n] != ' ' && value[n] != '\t' && value[n] != '=' &&
           value[n] != ':')
      ++n;
    if (n == 0) fail("event: expects an event name, found '" + shorten(value) + "'");
    EventDefinition d;
    d.name = std::string(value.substr(0, n));
    d.line = line_number_;
    std::string_view rest = trim_left(value.substr(n));
    if (!rest.empty() && rest.front() == '=') {
      rest.remove_prefix(1);
      const size_t colon = rest.find(':');
      d.formula = std::string(trim(rest.substr(0, colon)));
      if (d.formula.empty()) fail("event: " + d.name + " has '=' but no formula");
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon);
    }
    if (!rest.empty() && rest.front() == ':') {
      d.long_name = std::string(trim(rest.substr(1)));
    } else if (!rest.empty()) {
      fail("event: expects 'NAME [= FORMULA] [: LONG NAME]', found '" + shorten(value) + "'");
    }
    for (const EventDefinition& e : definitions_) {
      if (e.name == d.name) {
        diagnostics_.warn(fmt::format("{}: line {}: event {} is defined again (first on line "
                                      "{}); the first definition is used",
                                      source_, line_number_, d.name, e.line));
        return;
      }
    }
    definitions_.push_back(std::move(d));
  }

  void require_events(const char* what) {
    if (!part().has_events) fail(std::string(what) + " comes before the events: line of its part");
  }

  void costs_of_header(std::string_view value, std::vector<int64_t>& out, const char* what) {
    LineScan s(value);
    out.assign(part().columns.size(), 0);
    read_costs(s, out.data(), what);
  }

  // Up to one cost per event; fewer mean zeros, more are an error. On cost lines (not in
  // summary:/totals:) a cost may also be "*", "+N" or "-N", relative to the same event on the
  // previous cost line: speedscope's sample files compress costs like subpositions (valgrind
  // never does, and unsigned costs leave the forms free).
  size_t read_costs(LineScan& s, int64_t* out, const char* what, bool relative = false) {
    const size_t n = part().columns.size();
    size_t i = 0;
    s.skip_spaces();
    while (!s.at_end()) {
      int64_t v = 0;
      const char sign = s.peek();
      const bool rel = relative && (sign == '*' || sign == '+' || sign == '-');
      Scan r = Scan::ok;
      if (rel) {
        s.advance();
        if (sign != '*') r = s.cost(v);
      } else {
        r = s.cost(v);
      }
      if (r == Scan::overflow) fail(std::string(what) + " has a cost beyond the 64-bit range");
      if (r != Scan::ok || !s.at_separator())
        fail(std::string(what) + " expects numbers, found '" + shorten(s.rest()) + "'");
      if (i == n) {
        size_t more = i + 1;
        s.skip_spaces();
        while (!s.at_end()) {
          while (!s.at_end() && !s.at_separator()) s.advance();
          ++more;
          s.skip_spaces();
        }
        fail(fmt::format("{} has {} costs, but the events: line names {} event{}", what, more, n,
                         n == 1 ? "" : "s"));
      }
      if (rel) {
        const int64_t last = i < last_costs_.size() ? last_costs_[i] : 0;
        v = sign == '*' ? last : sign == '+' ? core::add_saturating(last, v)
                                             : core::add_saturating(last, -v);
        ++relative_costs_;
      }
      out[i++] = v;
      s.skip_spaces();
    }
    for (size_t j = i; j < n; ++j) out[j] = 0;
    if (relative) last_costs_.assign(out, out + n);
    return i;
  }

  void new_part() {
    parts_.emplace_back();
    cur_ = Current{};
    call_ = CallTarget{};
    jump_ = JumpTarget{};
    base_ = Position{};
    last_costs_.clear();
    context_dirty_ = true;
  }

  // --- Body: position specs ---

  StringId name(NameKind kind, std::string_view key, std::string_view value) {
    StringId id = 0;
    uint64_t number = 0;
    switch (names_.resolve(kind, value, profile_.strings, id, number)) {
      case CompressedNames::Outcome::ok:
        break;
      case CompressedNames::Outcome::undefined:
        // KCachegrind goes on with an unknown name; the id keeps such names apart.
        if (undefined_names_++ == 0)
          first_undefined_name_ = fmt::format("line {}: {}=({})", line_number_, key, number);
        id = profile_.intern(fmt::format("({})", number));
        break;
      case CompressedNames::Outcome::redefined:
        if (redefinitions_++ == 0)
          diagnostics_.warn(fmt::format("{}: line {}: {}=({}) defines a compressed name again "
                                        "with another name; the new name is used from here on",
                                        source_, line_number_, key, number));
        break;
    }
    // valgrind's "???" is an unknown file: in the model, as in pprof's, that is "" (the
    // writer spells "" as "???" again).
    if (kind == NameKind::file && id != 0 && profile_.str(id) == "???") id = 0;
    return id;
  }

  void spec_line(std::string_view key, std::string_view value) {
    switch (key.size()) {
      case 2:
        if (key == "ob") {
          cur_.ob = name(NameKind::object, key, value);
          context_dirty_ = true;
          return;
        }
        if (key == "fl") {
          cur_.fl = cur_.file = name(NameKind::file, key, value);
          cur_.fi_before_fn = false;
          context_dirty_ = true;
          return;
        }
        if (key == "fi" || key == "fe") {
          cur_.file = name(NameKind::file, key, value);
          cur_.fi_before_fn = true;
          context_dirty_ = true;
          return;
        }
        if (key == "fn") {
          if (cur_.fi_before_fn)
            cur_.fl = cur_.file;
          else
            cur_.file = cur_.fl;
          cur_.fn = name(NameKind::function, key, value);
          cur_.has_fn = true;
          cur_.fi_before_fn = false;
          context_dirty_ = true;
          return;
        }
        if (key == "ln" || key == "bb") return skipped(key);
        break;
      case 3:
        if (key == "cob") {
          call_.ob = name(NameKind::object, key, value);
          call_.has_ob = true;
          return;
        }
        if (key == "cfi" || key == "cfl") {
          call_.file = name(NameKind::file, key, value);
          call_.has_file = true;
          return;
        }
        if (key == "cfn") {
          call_.fn = name(NameKind::function, key, value);
          call_.has_fn = true;
          return;
        }
        if (key == "jfi") {
          jump_.file = name(NameKind::file, key, value);
          jump_.has_file = true;
          return;
        }
        if (key == "jfn") {
          jump_.fn = name(NameKind::function, key, value);
          jump_.has_fn = true;
          return;
        }
        if (key == "rec") return skipped(key);
        break;
      case 4:
        if (key == "jump") return jump(value, false);
        if (key == "jcnd") return jump(value, true);
        if (key == "frfn") return skipped(key);
        break;
      case 5:
        if (key == "calls") return calls(value);
        break;
      case 6:
        if (key == "rcalls") {
          if (rcalls_++ == 0)
            diagnostics_.warn(fmt::format("{}: line {}: rcalls= (an old format) read as calls=",
                                          source_, line_number_));
          return calls(value);
        }
        break;
      default:
        break;
    }
    if (unknown_specs_++ == 0) first_unknown_spec_ = fmt::format("line {}: {}=", line_number_, key);
  }

  void skipped(std::string_view key) {
    for (auto& [k, n] : skipped_)
      if (k == key) {
        ++n;
        return;
      }
    skipped_.emplace_back(std::string(key), 1);
  }

  // --- Body: subpositions ---

  uint64_t base_of(Sub sub) const {
    return sub == Sub::instr ? base_.addr : sub == Sub::bb ? base_.bb : base_.line;
  }

  // A subposition against the last cost line's (base); none when it leaves 0..2^64-1.
  static std::optional<uint64_t> resolve_subposition(SubPosition::Kind kind, uint64_t value,
                                                     uint64_t base) {
    switch (kind) {
      case SubPosition::Kind::absolute:
        return value;
      case SubPosition::Kind::same:
        return base;
      case SubPosition::Kind::plus:
        if (base + value < base) return std::nullopt;
        return base + value;
      case SubPosition::Kind::minus:
        if (value > base) return std::nullopt;
        return base - value;
    }
    return std::nullopt;
  }

  // Reads the subpositions positions: asks for, relative ones against base_.
  Position position(LineScan& s, const char* what) {
    Position pos;
    for (Sub sub : subs_) {
      SubPosition sp;
      s.skip_spaces();
      const Scan r = scan_subposition(s, sp);
      if (r == Scan::overflow) fail(std::string(what) + ": a position beyond the 64-bit range");
      if (r != Scan::ok)
        fail(fmt::format("{}: expected {} subposition{} ({}), found '{}'", what, subs_.size(),
                         subs_.size() == 1 ? "" : "s", positions_text(), shorten(s.rest())));
      if (sp.range) ++ranges_;
      const uint64_t base = base_of(sub);
      const std::optional<uint64_t> v = resolve_subposition(sp.kind, sp.value, base);
      if (!v && sp.kind == SubPosition::Kind::plus)
        fail(std::string(what) + ": a relative position passes 2^64");
      if (!v)
        fail(fmt::format("{}: relative position -{} goes below 0 (the last cost line is at {})",
                         what, sp.value, base));
      (sub == Sub::instr ? pos.addr : sub == Sub::bb ? pos.bb : pos.line) = *v;
    }
    if (pos.line > UINT32_MAX) fail(fmt::format("{}: line number {} is too large", what, pos.line));
    return pos;
  }

  std::string positions_text() const {
    std::string out;
    for (Sub s : subs_) out += std::string(out.empty() ? "" : " ") +
                               (s == Sub::instr ? "instr" : s == Sub::bb ? "bb" : "line");
    return out;
  }

  void require_costs_allowed(const char* what) {
    if (!part().has_events) fail(std::string(what) + " before the events: line");
    if (!cur_.has_fn) fail(std::string(what) + " before any fn= line");
  }

  // --- Body: costs, calls, jumps ---

  void cost_line(std::string_view line) {
    require_costs_allowed(pending_call_ ? "a call's cost line" : "a cost line");
    LineScan s(line);
    const Position pos = position(s, pending_call_ ? "call cost line" : "cost line");
    const size_t n = read_costs(s, costs_.data(), "cost line", !pending_jump_);
    apply_cost_line(pos, n);
  }

  // cost_line from the lexer's words. False, with nothing changed, when the line is not
  // the plain case (an error to report, a range, a relative cost): cost_line reads its text.
  bool lexed_cost_line(const LexedWord* words, size_t count) {
    const PartState& p = part();
    const size_t subs = subs_.size(), columns = p.columns.size();
    if (!p.has_events || !cur_.has_fn || count < subs || count - subs > columns) return false;
    Position pos;
    for (size_t k = 0; k < subs; ++k) {
      const LexedWord& w = words[k];
      if (w.range) return false;
      const Sub sub = subs_[k];
      const std::optional<uint64_t> v = resolve_subposition(w.kind, w.value, base_of(sub));
      if (!v) return false;
      (sub == Sub::instr ? pos.addr : sub == Sub::bb ? pos.bb : pos.line) = *v;
    }
    if (pos.line > UINT32_MAX) return false;
    const size_t n = count - subs;
    for (size_t i = 0; i < n; ++i) {
      const LexedWord& w = words[subs + i];
      if (w.kind != SubPosition::Kind::absolute || w.range || w.value > uint64_t(INT64_MAX))
        return false;
    }
    for (size_t i = 0; i < n; ++i) costs_[i] = static_cast<int64_t>(words[subs + i].value);
    for (size_t i = n; i < columns; ++i) costs_[i] = 0;
    if (!pending_jump_) last_costs_.assign(costs_.data(), costs_.data() + columns);
    apply_cost_line(pos, n);
    return true;
  }

  // A cost line read: self cost, or a call's or a jump's position.
  void apply_cost_line(const Position& pos, size_t n) {
    PartState& p = part();
    p.has_costs = true;
    cur_.fi_before_fn = false;
    const core::LocationId here = cost_line_location(current_context(), pos);
    if (counts_) {
      last_position_context_ = current_context();
      last_position_ = pos;
    }
    if (pending_call_) {
      pending_call_ = false;
      add_call(here, n);
      return;
    }
    if (pending_jump_) {
      pending_jump_ = false;
      if (n > 0)
        fail(fmt::format("the line after jump=/jcnd= (line {}) is the jump's source position "
                         "and has no costs", pending_jump_line_));
      add_jump(here);
      return;
    }
    base_ = pos;
    if (counts_) {
      CountOp op;
      op.context = last_position_context_;
      op.addr = pos.addr;
      op.line = static_cast<uint32_t>(pos.line);
      op.part = part_index() + 1;
      count(op);
    }
    // Self cost.
    Slot& slot = locations_[here].slot;
    const size_t stride = p.columns.size();
    if (slot.part_plus_one != part_index() + 1) {
      slot.part_plus_one = part_index() + 1;
      slot.index = static_cast<uint32_t>(p.slot_location.size());
      p.slot_location.push_back(here);
      p.slot_values.resize(p.slot_values.size() + stride, 0);
    }
    int64_t* v = p.slot_values.data() + size_t(slot.index) * stride;
    for (size_t i = 0; i < n; ++i) v[i] = core::add_saturating(v[i], costs_[i]);
  }

  void calls(std::string_view value) {
    require_costs_allowed("calls=");
    if (!call_.has_fn) fail("calls= without a cfn= naming the called function");
    LineScan s(value);
    s.skip_spaces();
    uint64_t count = 0;
    const Scan r = s.number(count);
    if (r == Scan::overflow || (r == Scan::ok && count > uint64_t(INT64_MAX)))
      fail("calls=: the call count is beyond the 64-bit range");
    if (r != Scan::ok || !s.at_separator())
      fail("calls= expects 'COUNT TARGET-POSITION', found '" + shorten(value) + "'");
    call_target_ = position(s, "calls=");
    s.skip_spaces();
    if (!s.at_end()) fail("calls=: unexpected '" + shorten(s.rest()) + "' after the target position");
    call_count_ = static_cast<int64_t>(count);
    pending_call_ = true;
    pending_call_line_ = line_number_;
    cur_.fi_before_fn = false;
  }

  void add_call(core::LocationId caller, size_t n) {
    // The callee: cob/cfi (or the current object/file) and cfn, at the target position.
    const StringId ob = call_.has_ob ? call_.ob : cur_.ob;
    const StringId file = call_.has_file ? call_.file : cur_.file;
    const uint32_t callee_context = context(ob, call_.fn, file, file);
    const Key128 callee_key = location_key(callee_context, call_target_);
    call_.has_ob = call_.has_file = false;
    if (counts_) count_pair(false, callee_context, call_target_, part_index());
    PartState& p = part();
    // The caller's edges, newest first: one of this part to the same position is this edge;
    // one of an earlier part usually names the same callee, whose location is then known
    // without a lookup in the large location table (a cache miss per call line).
    if (caller >= newest_edge_.size()) newest_edge_.resize(size_t(caller) * 2 + 1, kNoEdge);
    uint32_t index = kNoEdge;
    core::LocationId callee = 0;
    if (by_function_) {
      // A function calls many functions: walking its edges would be quadratic; a table.
      const Key128 edge_key{uint64_t(caller) << 32 | callee_context, part_index()};
      index = edge_index_.find(edge_key);
      if (index != KeyTable::kMissing) {
        callee = edges_[index].callee;
      } else {
        index = kNoEdge;
        edge_index_.insert(edge_key, static_cast<uint32_t>(edges_.size()));
      }
    } else {
      int older_parts_seen = 0;
      for (uint32_t e = newest_edge_[caller]; e != kNoEdge; e = edges_[e].older) {
        const EdgeState& edge = edges_[e];
        if (locations_[edge.callee].key == callee_key) {
          callee = edge.callee;
          if (edge.part == part_index()) index = e;
          break;
        }
        if (edge.part != part_index() && ++older_parts_seen == 8) break;
      }
    }
    if (callee == 0) callee = location(callee_context, call_target_);
    if (index == kNoEdge) {
      index = static_cast<uint32_t>(edges_.size());
      edges_.push_back(
          {caller, callee, part_index(), 0, edge_values_.size(), newest_edge_[caller]});
      newest_edge_[caller] = index;
      edge_values_.resize(edge_values_.size() + p.columns.size(), 0);
    }
    EdgeState& e = edges_[index];
    e.count = core::add_saturating(e.count, call_count_);
    int64_t* v = edge_values_.data() + e.values;
    for (size_t i = 0; i < n; ++i) v[i] = core::add_saturating(v[i], costs_[i]);
  }

  void jump(std::string_view value, bool conditional) {
    require_costs_allowed(conditional ? "jcnd=" : "jump=");
    LineScan s(value);
    s.skip_spaces();
    uint64_t first = 0, second = 0;
    auto count = [&](uint64_t& out) {
      const Scan r = s.number(out);
      if (r == Scan::overflow || (r == Scan::ok && out > uint64_t(INT64_MAX)))
        fail("jump count beyond the 64-bit range");
      if (r != Scan::ok)
        fail(std::string(conditional ? "jcnd= expects 'FOLLOWED/EXECUTED TARGET-POSITION'"
                                     : "jump= expects 'COUNT TARGET-POSITION'") +
             ", found '" + shorten(value) + "'");
    };
    count(first);
    if (conditional) {
      if (s.peek() == '/') {  // valgrind: followed/executed
        s.advance();
        count(second);
        jump_followed_ = static_cast<int64_t>(first);
        jump_executed_ = static_cast<int64_t>(second);
      } else {  // the spec: executed followed
        if (!s.skip_spaces()) fail("jcnd= expects 'FOLLOWED/EXECUTED TARGET-POSITION'");
        count(second);
        jump_executed_ = static_cast<int64_t>(first);
        jump_followed_ = static_cast<int64_t>(second);
      }
    } else {
      jump_executed_ = jump_followed_ = static_cast<int64_t>(first);
    }
    if (!s.at_separator()) fail("jump: expected a space before the target position");
    jump_target_ = position(s, conditional ? "jcnd=" : "jump=");
    s.skip_spaces();
    if (!s.at_end()) fail("jump: unexpected '" + shorten(s.rest()) + "' after the target position");
    jump_conditional_ = conditional;
    pending_jump_ = true;
    pending_jump_line_ = line_number_;
    cur_.fi_before_fn = false;
  }

  void add_jump(core::LocationId from) {
    const StringId fn = jump_.has_fn ? jump_.fn : cur_.fn;
    const StringId file = jump_.has_file ? jump_.file : cur_.file;
    const StringId home = jump_.has_fn ? file : cur_.fl;
    const uint32_t to_context = context(cur_.ob, fn, file, home);
    const Key128 to_key = location_key(to_context, jump_target_);
    jump_ = JumpTarget{};
    if (counts_)
      count_pair(true, to_context, jump_target_, part_index() << 1 | uint32_t(jump_conditional_));
    // As for calls (add_call): the jumps from the same position, newest first.
    auto& jumps = profile_.call_graph.jumps;
    if (from >= newest_jump_.size()) newest_jump_.resize(size_t(from) * 2 + 1, kNoEdge);
    uint32_t index = kNoEdge;
    core::LocationId to = 0;
    if (by_function_) {  // as in add_call
      const Key128 jump_key{uint64_t(from) << 32 | to_context,
                            uint64_t(part_index()) << 1 | jump_conditional_};
      index = jump_index_.find(jump_key);
      if (index != KeyTable::kMissing) {
        to = jumps[index].to;
      } else {
        index = kNoEdge;
        jump_index_.insert(jump_key, static_cast<uint32_t>(jumps.size()));
      }
    } else {
      int older_parts_seen = 0;
      for (uint32_t k = newest_jump_[from]; k != kNoEdge; k = older_jump_[k]) {
        const core::Jump& j = jumps[k];
        if (locations_[j.to].key == to_key) {
          to = j.to;
          if (j.part == part_index() && j.conditional == jump_conditional_) {
            index = k;
            break;
          }
          if (j.part != part_index()) break;
        }
        if (j.part != part_index() && ++older_parts_seen == 8) break;
      }
    }
    if (to == 0) to = location(to_context, jump_target_);
    if (index == kNoEdge) {
      index = static_cast<uint32_t>(jumps.size());
      older_jump_.push_back(newest_jump_[from]);
      newest_jump_[from] = index;
      core::Jump j;
      j.from = from;
      j.to = to;
      j.conditional = jump_conditional_;
      j.part = part_index();
      profile_.call_graph.jumps.push_back(j);
    }
    core::Jump& j = profile_.call_graph.jumps[index];
    j.executed = core::add_saturating(j.executed, jump_executed_);
    j.followed = core::add_saturating(j.followed, jump_followed_);
  }

  // --- Positions -> model ---

  void count(const CountOp& op) {
    if (counting_)
      counting_->push(op);
    else
      counter_->count(op);
  }

  // A call (jumps: a jump) from the last cost line's position to `to` of `to_context`.
  void count_pair(bool jump, uint32_t to_context, const Position& to, uint32_t part) {
    CountOp op;
    op.kind = jump ? CountOp::Kind::jump : CountOp::Kind::call;
    op.context = last_position_context_;
    op.addr = last_position_.addr;
    op.line = static_cast<uint32_t>(last_position_.line);
    op.to_context = to_context;
    op.to_addr = to.addr;
    op.to_line = static_cast<uint32_t>(to.line);
    op.part = part;
    count(op);
  }

  uint32_t current_context() {
    if (context_dirty_) {
      current_context_ = context(cur_.ob, cur_.fn, cur_.file, cur_.fl);
      context_dirty_ = false;
    }
    return current_context_;
  }

  // (object, function, file of the positions, the function's file) -> context id.
  uint32_t context(StringId ob, StringId fn, StringId file, StringId home) {
    const Key128 key{uint64_t(ob) << 32 | fn, uint64_t(file) << 32 | home};
    uint32_t id = context_index_.find(key);
    if (id != KeyTable::kMissing) return id;
    Context c;
    c.mapping = mapping(ob);
    c.function = function(fn, file);
    if (file != home) inlined(ob, fn, file, home);
    id = static_cast<uint32_t>(contexts_.size());
    contexts_.push_back(c);
    context_index_.insert(key, id);
    return id;
  }

  core::MappingId mapping(StringId ob) {
    if (ob == 0) return 0;  // "ob=" with no name, or none given
    auto [it, inserted] = mapping_by_name_.try_emplace(ob, 0);
    if (inserted) {
      core::Mapping m;
      m.file = ob;
      m.has_functions = true;
      it->second = profile_.add_mapping(m);
    }
    return it->second;
  }

  core::FunctionId function(StringId fn, StringId file) {
    auto [it, inserted] = function_by_name_.try_emplace(uint64_t(fn) << 32 | file, 0);
    if (inserted) it->second = profile_.add_function({fn, fn, file, 0});
    return it->second;
  }

  void inlined(StringId ob, StringId fn, StringId file, StringId home) {
    auto [it, inserted] = home_by_inlined_.try_emplace(Key128{uint64_t(ob) << 32 | fn, file}, home);
    if (inserted) {
      profile_.call_graph.inlined_files.push_back(
          {std::string(profile_.str(ob)), std::string(profile_.str(fn)),
           std::string(profile_.str(file)), std::string(profile_.str(home))});
    } else if (it->second != home && homes_conflict_++ == 0) {
      diagnostics_.warn(fmt::format(
          "{}: line {}: function {} has code from {} under two files ({} and {}); a writer "
          "lists it under the first", source_, line_number_, profile_.str(fn), profile_.str(file),
          profile_.str(it->second), profile_.str(home)));
    }
  }

  // The location of a cost line. Valgrind lists a function's positions in the same order in
  // every part, so the location that followed the previous cost line's last time is most
  // often the one: checking it first walks memory in order, where the hash table's lookup
  // is a cache miss per line in a large file (half the read time before).
  core::LocationId cost_line_location(uint32_t context, const Position& pos) {
    const Key128 key = location_key(context, pos);
    const core::LocationId last = last_cost_location_;
    if (last != 0) {
      const LocationState& previous = locations_[last];
      if (previous.key == key) return last;  // "*": a call's or a jump's line
      const core::LocationId guess = previous.next_cost;
      if (guess != 0 && locations_[guess].key == key) return last_cost_location_ = guess;
    }
    const core::LocationId id = location(context, pos);
    if (last != 0) locations_[last].next_cost = id;
    return last_cost_location_ = id;
  }

  // By function: every position of a context is one location, so the key is the context
  // alone and a cost line finds its location without a lookup (the previous line's).
  Key128 location_key(uint32_t context, const Position& pos) const {
    if (by_function_) return {uint64_t(context) << 32, 0};
    return {uint64_t(context) << 32 | pos.line, pos.addr};
  }

  core::LocationId location(uint32_t context, const Position& pos) {
    const Key128 key = location_key(context, pos);
    uint32_t id = location_index_.find(key);
    if (id != KeyTable::kMissing) return id;
    const Context& c = contexts_[context];
    core::Location l;
    l.mapping = c.mapping;
    l.address = by_function_ ? 0 : pos.addr;
    l.lines.push_back({c.function, by_function_ ? 0 : static_cast<int64_t>(pos.line), 0});
    id = profile_.add_location(std::move(l));
    location_index_.insert(key, id);
    locations_.resize(size_t(id) + 1);
    locations_[id].key = key;
    return id;
  }

  // --- The end: the model ---

  void finish() {
    if (pending_call_)
      fail(fmt::format("the file ends after calls= (line {}) without the call's cost line",
                       pending_call_line_));
    if (pending_jump_)
      fail(fmt::format("the file ends after jump=/jcnd= (line {}) without its source position",
                       pending_jump_line_));
    for (const PartState& p : parts_)
      if (!p.has_events) {
        if (parts_.size() == 1)
          fail("no events: line: a callgrind file names its events before the costs");
        fail(fmt::format("part {} of {} has no events: line", &p - parts_.data() + 1, parts_.size()));
      }
    build_event_types();
    build_samples();
    build_edges();
    auto& graph = profile_.call_graph;
    graph.present = true;
    graph.has_instr = has_instr_;
    graph.has_line = has_line_ || !positions_given_;
    for (core::Mapping& m : profile_.mappings) {
      m.has_filenames = true;
      m.has_line_numbers = graph.has_line;
    }
    for (PartState& p : parts_) graph.parts.push_back(std::move(p.part));
    if (counting_) counting_->finish();
    if (counts_) counts_->counted = true;
    report_skipped();
  }

  void build_event_types() {
    std::unordered_map<std::string, const EventDefinition*> definition;
    for (const EventDefinition& d : definitions_) definition.emplace(d.name, &d);
    auto& events = profile_.call_graph.events;
    for (const std::string& name : event_names_) {
      const EventType t = event_type(name);
      profile_.sample_types.push_back(profile_.value_type(t.type, t.unit));
      core::EventInfo info;
      if (auto it = definition.find(name); it != definition.end()) {
        info.long_name = profile_.intern(it->second->long_name);
        if (!it->second->formula.empty())
          diagnostics_.warn(fmt::format("{}: line {}: event {} is measured (events:), so its "
                                        "formula '{}' is not used", source_, it->second->line,
                                        name, it->second->formula));
      }
      events.push_back(info);
    }
    measured_ = event_names_.size();
    // Inherited events, in the order of their event: lines; a formula may use measured
    // events and inherited ones defined before it.
    std::vector<std::string> known = event_names_;
    for (const EventDefinition& d : definitions_) {
      if (d.formula.empty() || event_index_.count(d.name)) continue;
      Formula f;
      std::string error;
      auto index_of = [&](std::string_view n) -> long {
        for (size_t i = 0; i < known.size(); ++i)
          if (known[i] == n) return static_cast<long>(i);
        return -1;
      };
      if (!parse_formula(d.formula, index_of, f, error)) {
        diagnostics_.warn(fmt::format("{}: line {}: inherited event {} = {} is dropped: {}",
                                      source_, d.line, d.name, d.formula, error));
        continue;
      }
      const EventType t = event_type(d.name);
      profile_.sample_types.push_back(profile_.value_type(t.type, t.unit));
      events.push_back({profile_.intern(d.long_name), d.formula});
      formulas_.push_back(std::move(f));
      known.push_back(d.name);
    }
    if (!profile_.sample_types.empty()) profile_.default_sample_type = profile_.sample_types[0].type;
  }

  // Part columns -> every sample type, inherited events computed.
  void widen(const PartState& p, const int64_t* columns, std::vector<int64_t>& out) const {
    out.assign(profile_.sample_types.size(), 0);
    for (size_t i = 0; i < p.columns.size(); ++i) out[p.columns[i]] = columns[i];
    for (size_t k = 0; k < formulas_.size(); ++k) out[measured_ + k] = formulas_[k].evaluate(out);
  }

  void build_samples() {
    size_t total_slots = 0;
    for (const PartState& p : parts_) total_slots += p.slot_location.size();
    profile_.reserve_samples(total_slots, total_slots, parts_.size() > 1 ? total_slots : 0);
    const core::StringId part_key = parts_.size() > 1 ? profile_.intern("part") : 0;
    std::vector<int64_t> values, sums;
    for (size_t k = 0; k < parts_.size(); ++k) {
      PartState& p = parts_[k];
      const size_t stride = p.columns.size();
      sums.assign(stride, 0);
      core::Label label;
      label.key = part_key;
      label.num = static_cast<int64_t>(k + 1);
      for (size_t s = 0; s < p.slot_location.size(); ++s) {
        const int64_t* v = p.slot_values.data() + s * stride;
        for (size_t i = 0; i < stride; ++i) sums[i] = core::add_saturating(sums[i], v[i]);
        widen(p, v, values);
        const core::LocationId loc = p.slot_location[s];
        profile_.add_sample(std::span(&loc, 1), values,
                            parts_.size() > 1 ? std::span(&label, 1) : std::span<core::Label>());
      }
      std::vector<int64_t>().swap(p.slot_values);
      if (!p.totals.empty() && p.totals != sums) {
        std::string want, got;
        for (size_t i = 0; i < stride; ++i) {
          want += (i ? " " : "") + std::to_string(p.totals[i]);
          got += (i ? " " : "") + std::to_string(sums[i]);
        }
        diagnostics_.warn(fmt::format("{}: line {}: totals: says {} but the costs of {} add up "
                                      "to {}", source_, p.totals_line, want,
                                      parts_.size() > 1 ? fmt::format("part {}", k + 1)
                                                        : std::string("the file"), got));
      }
      if (!p.summary.empty()) {
        widen(p, p.summary.data(), values);
        p.part.summary = values;
      }
      if (!p.totals.empty()) {
        widen(p, p.totals.data(), values);
        p.part.totals = values;
      }
    }
  }

  void build_edges() {
    auto& calls = profile_.call_graph.calls;
    calls.reserve(edges_.size());
    std::vector<int64_t> values;
    for (const EdgeState& e : edges_) {
      widen(parts_[e.part], edge_values_.data() + e.values, values);
      calls.push_back({e.caller, e.callee, e.count, e.part, values});
    }
  }

  void report_skipped() {
    for (const auto& [key, n] : skipped_)
      diagnostics_.warn(fmt::format("{}: {} {}= line{} skipped ({})", source_, n, key,
                                    n == 1 ? "" : "s",
                                    key == "rec"    ? "recursion depth marks of --separate-recs"
                                    : key == "frfn" ? "caller context marks"
                                    : key == "ln"   ? "line marks of --dump-bbs"
                                                    : "basic-block marks of --dump-bbs"));
    if (bb_dropped_)
      diagnostics_.warn(source_ + ": the bb subposition (basic block addresses) is dropped: "
                                  "the model keeps instruction addresses and lines");
    if (ranges_ > 0)
      diagnostics_.warn(fmt::format("{}: {} subposition range{} (a+n, a-b, a:b) read as {} "
                                    "first position", source_, ranges_, ranges_ == 1 ? "" : "s",
                                    ranges_ == 1 ? "its" : "their"));
    if (undefined_names_ > 0)
      diagnostics_.warn(fmt::format("{}: {} reference{} to compressed names never defined (the "
                                    "first: {}); such a name reads as its id, e.g. '(8)'",
                                    source_, undefined_names_, undefined_names_ == 1 ? "" : "s",
                                    first_undefined_name_));
    if (relative_costs_ > 0)
      diagnostics_.warn(fmt::format("{}: {} cost{} written relative to the previous cost line "
                                    "(*, +N, -N: not in the spec, which compresses only "
                                    "subpositions)", source_, relative_costs_,
                                    relative_costs_ == 1 ? "" : "s"));
    if (unknown_specs_ > 0)
      diagnostics_.warn(fmt::format("{}: {} line{} with an unknown key skipped (the first: {})",
                                    source_, unknown_specs_, unknown_specs_ == 1 ? "" : "s",
                                    first_unknown_spec_));
    if (unknown_header_lines_ > 0)
      diagnostics_.warn(fmt::format("{}: {} header line{} with a key the spec does not define kept "
                                    "as part header data", source_, unknown_header_lines_,
                                    unknown_header_lines_ == 1 ? "" : "s"));
  }

  struct Slot {
    uint32_t part_plus_one = 0;  // the part whose slot `index` is
    uint32_t index = 0;
  };

  static constexpr ptrdiff_t kProgressStep = 8 << 20;
  void (*on_progress_)(uint64_t, void*) = nullptr;
  void* progress_context_ = nullptr;
  std::string_view text_;
  const std::string& source_;
  core::Diagnostics& diagnostics_;
  const Lexing lexing_;
  uint64_t line_number_ = 0;
  core::Profile profile_;
  const bool by_function_;  // core::PositionDetail::functions: one location per context
  core::PositionCounts* counts_;  // by function: count what the full read would make

  std::unique_ptr<PositionCounter> counter_;  // with counts_
  std::unique_ptr<CountingThread> counting_;  // with counts_, when lexing on other threads
  uint32_t last_position_context_ = 0;  // of the last cost line
  Position last_position_;

  // Events: measured ones in first-seen order across parts, then event: definitions.
  std::vector<std::string> event_names_;
  std::unordered_map<std::string, size_t> event_index_;
  std::vector<EventDefinition> definitions_;
  std::vector<Formula> formulas_;
  size_t measured_ = 0;

  std::vector<PartState> parts_;
  std::vector<Sub> subs_{Sub::line};  // positions: (default "line")
  bool positions_given_ = false, has_instr_ = false, has_line_ = false, bb_dropped_ = false;

  CompressedNames names_;
  Current cur_;
  CallTarget call_;
  JumpTarget jump_;
  Position base_;  // of the last cost line

  bool pending_call_ = false;
  uint64_t pending_call_line_ = 0;
  Position call_target_;
  int64_t call_count_ = 0;
  bool pending_jump_ = false, jump_conditional_ = false;
  uint64_t pending_jump_line_ = 0;
  Position jump_target_;
  int64_t jump_executed_ = 0, jump_followed_ = 0;

  std::vector<int64_t> costs_;       // the current line's costs, one per column
  std::vector<int64_t> last_costs_;  // the previous cost line's (relative costs)

  KeyTable context_index_, location_index_;
  KeyTable edge_index_, jump_index_;  // by function only: (caller, callee context, part) -> edge
  // By location id, together: a cost line reads all of them (one cache line, not three).
  struct LocationState {
    Key128 key;
    core::LocationId next_cost = 0;  // see cost_line_location
    Slot slot;                       // its self cost in the current part
  };
  std::vector<LocationState> locations_;
  core::LocationId last_cost_location_ = 0;
  std::vector<Context> contexts_;
  uint32_t current_context_ = 0;
  bool context_dirty_ = true;
  std::unordered_map<StringId, core::MappingId> mapping_by_name_;
  std::unordered_map<uint64_t, core::FunctionId> function_by_name_;
  struct KeyHash {
    size_t operator()(const Key128& k) const { return core::mix64(k.a ^ core::mix64(k.b)); }
  };
  std::unordered_map<Key128, StringId, KeyHash> home_by_inlined_;
  std::vector<EdgeState> edges_;
  std::vector<uint32_t> newest_edge_;  // by caller location id: see add_call
  std::vector<uint32_t> newest_jump_;  // by source location id: see add_jump
  std::vector<uint32_t> older_jump_;   // by jump index: the source's jump made before it
  std::vector<int64_t> edge_values_;

  std::vector<std::pair<std::string, uint64_t>> skipped_;
  uint64_t unknown_specs_ = 0, unknown_header_lines_ = 0, ranges_ = 0, rcalls_ = 0;
  uint64_t redefinitions_ = 0, homes_conflict_ = 0, undefined_names_ = 0, relative_costs_ = 0;
  std::string first_unknown_spec_, first_undefined_name_;
};

}  // namespace

Lexing default_lexing(size_t text_bytes, unsigned cores, double load_average) {
  Lexing lexing;
  // Below a few MB the read takes milliseconds: threads would cost more than they save.
  if (text_bytes >= (size_t(4) << 20) && cores >= 2 && load_average < cores - 0.5)
    lexing.threads = std::min(cores - 1, 8u);
  return lexing;
}

Lexing default_lexing(size_t text_bytes) {
  double load[1] = {0};
  if (::getloadavg(load, 1) != 1) load[0] = 0;  // unknown: as if idle
  return default_lexing(text_bytes, std::thread::hardware_concurrency(), load[0]);
}

core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes, const std::string& source,
                                           core::Diagnostics& diagnostics,
                                           void (*on_progress)(uint64_t, void*),
                                           void* progress_context, core::PositionDetail detail,
                                           core::PositionCounts* counts) {
  return read_profile_with(bytes, source, diagnostics, default_lexing(bytes.size()), on_progress,
                           progress_context, detail, counts);
}

core::Expected<core::Profile> read_profile_with(std::span<const uint8_t> bytes,
                                                const std::string& source,
                                                core::Diagnostics& diagnostics,
                                                const Lexing& lexing,
                                                void (*on_progress)(uint64_t, void*),
                                                void* progress_context, core::PositionDetail detail,
                                                core::PositionCounts* counts) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  try {
    Reader reader(text, source, diagnostics, detail, counts, lexing);
    if (on_progress) reader.report_progress(on_progress, progress_context);
    return reader.read();
  } catch (const core::FormatError& e) {
    return e.located(source);
  }
}

}  // namespace tally::callgrind
