// core::Profile (call-graph shape) -> callgrind text, the way valgrind's dump.c lays it out,
// so that callgrind_annotate and KCachegrind read it as they read valgrind's own files:
//  - per part: its header lines in order, positions:, event: lines (long names, inherited
//    formulas), events: (measured events only), summary:, the body, totals: (the sum of the
//    part's self costs) last;
//  - the body in blocks of one function (ob=, fl= the function's file, fn=), positions in
//    address/line order; code inlined from other files under fi=, back with fe=, and fe=
//    before the block ends (callgrind_annotate does not reset the file at fn=);
//  - after a position's self cost line, its calls (cob= and cfi= only where the callee's
//    object/file differs, cfn=, calls=COUNT TARGET, then the source position and inclusive
//    costs) and its jumps (jfi=/jfn= where the target differs, jump= or
//    jcnd=FOLLOWED/EXECUTED, then the source position);
//  - relative subpositions only while the last cost line is also the last position line:
//    callgrind_annotate moves its base on call lines, the spec (and valgrind) does not, so
//    after a call or jump whose source is elsewhere the next position is absolute.
#include <algorithm>
#include <charconv>
#include <deque>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "core/checked_math.h"
#include "formats/callgrind/callgrind.h"
#include "formats/callgrind/compressed_names.h"
#include "formats/callgrind/events.h"

namespace tally::callgrind {

namespace {

struct PosInfo {
  std::string_view object, fn, file, home;
  uint64_t addr = 0;
  uint64_t line = 0;
  uint32_t block_key = 0;  // (object, home, fn) id
};

struct PartItems {
  // Self costs as (location, sample), calls and jumps by index, each sorted by location.
  std::vector<std::pair<core::LocationId, size_t>> self;
  std::vector<size_t> calls, jumps;
};

class Writer {
 public:
  Writer(const core::Profile& p, const WriteOptions& options, core::Diagnostics& diagnostics)
      : p_(p), options_(options), diagnostics_(diagnostics) {}

  core::Expected<std::string> write() {
    if (auto status = prepare_events(); !status) return status.error();
    if (auto status = check_unsigned(); !status) return status.error();
    if (auto status = prepare_positions(); !status) return status.error();
    if (auto status = assign_parts(); !status) return status.error();
    header();
    for (size_t k = 0; k < parts_.size(); ++k) part(k);
    return std::move(out_);
  }

 private:
  // --- Events ---

  core::Status prepare_events() {
    if (p_.sample_types.empty())
      return core::Error{"callgrind: the profile has no sample types to write as events",
                         core::ErrorKind::unsupported};
    const auto& events = p_.call_graph.events;
    for (size_t i = 0; i < p_.sample_types.size(); ++i) {
      std::string name = event_name(p_.str(p_.sample_types[i].type), p_.str(p_.sample_types[i].unit));
      for (int n = 2; std::find(names_.begin(), names_.end(), name) != names_.end(); ++n)
        name = event_name(p_.str(p_.sample_types[i].type), p_.str(p_.sample_types[i].unit)) +
               "_" + std::to_string(n);
      names_.push_back(name);
      const bool inherited = i < events.size() && !events[i].formula.empty();
      if (!inherited) measured_.push_back(i);
    }
    if (measured_.empty())
      return core::Error{"callgrind: every sample type is an inherited event; none to write",
                         core::ErrorKind::unsupported};
    return core::ok();
  }

  // Callgrind costs are unsigned: readers take digits only, and "-N" on a cost line reads
  // as relative to the previous line (speedscope's dialect), so a negative value (a diff
  // profile) would come back as another number.
  core::Status check_unsigned() const {
    size_t negative = 0;
    size_t type = 0;
    auto note = [&](std::span<const int64_t> values) {
      for (size_t i : measured_) {
        if (i < values.size() && values[i] < 0 && negative++ == 0) type = i;
      }
    };
    for (size_t i = 0; i < p_.sample_count(); ++i) note(p_.values(i));
    for (const core::CallEdge& e : p_.call_graph.calls) note(e.inclusive);
    if (negative == 0) return core::ok();
    return core::Error{fmt::format("callgrind: costs are unsigned, and {} value{} (the first of "
                                   "{}) {} negative",
                                   negative, negative == 1 ? "" : "s",
                                   p_.str(p_.sample_types[type].type), negative == 1 ? "is" : "are"),
                       core::ErrorKind::unsupported};
  }

  // --- Positions ---

  core::Status prepare_positions() {
    std::unordered_map<std::string, std::string_view> home;
    for (const core::InlinedFile& f : p_.call_graph.inlined_files)
      home.emplace(f.object + '\0' + f.function + '\0' + f.file, f.home);
    std::unordered_map<std::string, uint32_t> block_ids;
    std::string key;
    info_.resize(p_.locations.size() + 1);
    size_t inline_frames = 0;
    for (size_t id = 1; id <= p_.locations.size(); ++id) {
      const core::Location& l = p_.locations[id - 1];
      PosInfo& pos = info_[id];
      if (l.mapping > p_.mappings.size())
        return core::Error{"callgrind: a location refers to no mapping", core::ErrorKind::unsupported};
      pos.object = l.mapping ? p_.str(p_.mapping(l.mapping).file) : std::string_view();
      pos.addr = l.address;
      const core::Line* line = l.lines.empty() ? nullptr : &l.lines[0];
      if (l.lines.size() > 1) ++inline_frames;
      if (line && line->function != 0 && line->function <= p_.functions.size()) {
        const core::Function& f = p_.function(line->function);
        pos.fn = p_.str(f.name);
        pos.file = p_.str(f.filename);
        pos.line = line->line > 0 ? static_cast<uint64_t>(line->line) : 0;
      } else {
        // No symbol: valgrind names such code by its address.
        synthesized_.push_back(fmt::format("0x{:016x}", l.address));
        pos.fn = synthesized_.back();
        if (line) pos.line = line->line > 0 ? static_cast<uint64_t>(line->line) : 0;
      }
      key.assign(pos.object).append(1, '\0').append(pos.fn).append(1, '\0').append(pos.file);
      auto h = home.find(key);
      pos.home = h == home.end() ? pos.file : h->second;
      key.assign(pos.object).append(1, '\0').append(pos.home).append(1, '\0').append(pos.fn);
      pos.block_key = block_ids.try_emplace(key, static_cast<uint32_t>(block_ids.size())).first->second;
    }
    block_count_ = block_ids.size();
    if (inline_frames > 0)
      diagnostics_.warn(fmt::format("callgrind: {} position{} with inline frames: only the "
                                    "innermost function of each is written", inline_frames,
                                    inline_frames == 1 ? "" : "s"));
    return core::ok();
  }

  // --- Parts ---

  core::Status assign_parts() {
    const auto& graph = p_.call_graph;
    const size_t n_parts = std::max<size_t>(graph.parts.size(), 1);
    parts_.resize(n_parts);
    const int part_key = find_string("part");
    size_t other_labels = 0, bad_parts = 0;
    for (size_t i = 0; i < p_.sample_count(); ++i) {
      const auto stack = p_.stack(i);
      if (stack.size() != 1)
        return core::Error{fmt::format("callgrind: sample {} of a call-graph profile has {} "
                                       "frames; each self cost is one position", i + 1,
                                       stack.size()),
                           core::ErrorKind::unsupported};
      size_t part = 0;
      for (const core::Label& l : p_.labels(i)) {
        if (part_key >= 0 && l.key == static_cast<core::StringId>(part_key) && l.str == 0) {
          if (l.num >= 1 && static_cast<uint64_t>(l.num) <= n_parts)
            part = static_cast<size_t>(l.num - 1);
          else
            ++bad_parts;
        } else {
          ++other_labels;
        }
      }
      if (stack[0] == 0 || stack[0] > p_.locations.size())
        return core::Error{"callgrind: a sample refers to no location", core::ErrorKind::unsupported};
      parts_[part].self.emplace_back(stack[0], i);
    }
    if (other_labels > 0)
      diagnostics_.warn(fmt::format("callgrind: {} sample label{} dropped (the format has none; "
                                    "parts are kept)", other_labels, other_labels == 1 ? "" : "s"));
    if (bad_parts > 0)
      diagnostics_.warn(fmt::format("callgrind: {} sample{} labelled with a part the profile does "
                                    "not have went to part 1", bad_parts, bad_parts == 1 ? "" : "s"));
    auto valid = [&](core::LocationId id) { return id != 0 && id <= p_.locations.size(); };
    size_t cross_object = 0;
    for (size_t i = 0; i < graph.calls.size(); ++i) {
      const core::CallEdge& e = graph.calls[i];
      if (!valid(e.caller) || !valid(e.callee))
        return core::Error{"callgrind: a call edge refers to no location", core::ErrorKind::unsupported};
      parts_[e.part < n_parts ? e.part : 0].calls.push_back(i);
    }
    for (size_t i = 0; i < graph.jumps.size(); ++i) {
      const core::Jump& j = graph.jumps[i];
      if (!valid(j.from) || !valid(j.to))
        return core::Error{"callgrind: a jump refers to no location", core::ErrorKind::unsupported};
      if (info_[j.from].object != info_[j.to].object) {
        ++cross_object;
        continue;
      }
      parts_[j.part < n_parts ? j.part : 0].jumps.push_back(i);
    }
    if (cross_object > 0)
      diagnostics_.warn(fmt::format("callgrind: {} jump{} between objects dropped (a jump stays "
                                    "in its object)", cross_object, cross_object == 1 ? "" : "s"));
    for (PartItems& items : parts_) {
      std::stable_sort(items.self.begin(), items.self.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      std::stable_sort(items.calls.begin(), items.calls.end(), [&](size_t a, size_t b) {
        return graph.calls[a].caller < graph.calls[b].caller;
      });
      std::stable_sort(items.jumps.begin(), items.jumps.end(), [&](size_t a, size_t b) {
        return graph.jumps[a].from < graph.jumps[b].from;
      });
    }
    return core::ok();
  }

  int find_string(std::string_view s) const {
    for (size_t i = 0; i < p_.strings.size(); ++i)
      if (p_.strings[static_cast<core::StringId>(i)] == s) return static_cast<int>(i);
    return -1;
  }

  // --- Output ---

  void header() {
    out_ += "# callgrind format\nversion: 1\ncreator: ";
    const std::string_view creator = p_.attribute("callgrind.creator");
    out_ += creator.empty() ? std::string_view("tally") : creator;
    out_ += '\n';
    for (core::StringId c : p_.comments) {
      std::string_view text = p_.str(c);
      // One comment line per line of the comment.
      while (true) {
        const size_t nl = text.find('\n');
        out_ += "# ";
        out_ += text.substr(0, nl);
        out_ += '\n';
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
      }
    }
  }

  void part(size_t k) {
    const auto& graph = p_.call_graph;
    const core::GraphPart* stored = k < graph.parts.size() ? &graph.parts[k] : nullptr;
    out_ += '\n';
    bool opens = false;
    if (stored && !stored->header.empty()) {
      const std::string& first = stored->header.front().first;
      opens = first == "part" || first == "pid" || first == "thread";
    }
    // A later part must start with a line that opens a part (see the reader).
    if (k > 0 && !opens) out_ += fmt::format("part: {}\n", k + 1);
    if (stored)
      for (const auto& [key, value] : stored->header) {
        out_ += key;
        out_ += ": ";
        out_ += value;
        out_ += '\n';
      }
    instr_ = graph.has_instr;
    line_ = graph.has_line || !instr_;
    out_ += "\npositions:";
    if (instr_) out_ += " instr";
    if (line_) out_ += " line";
    out_ += '\n';
    for (size_t i = 0; i < p_.sample_types.size(); ++i) {
      const core::EventInfo* e = i < graph.events.size() ? &graph.events[i] : nullptr;
      if (!e || (e->formula.empty() && e->long_name == 0)) continue;
      out_ += "event: " + names_[i];
      if (!e->formula.empty()) out_ += " = " + e->formula;
      if (e->long_name != 0) out_ += " : " + std::string(p_.str(e->long_name));
      out_ += '\n';
    }
    out_ += "events:";
    for (size_t i : measured_) out_ += " " + names_[i];
    out_ += '\n';
    if (stored && !stored->summary.empty()) {
      out_ += "summary:";
      for (size_t i : measured_) {
        out_ += ' ';
        number(i < stored->summary.size() ? stored->summary[i] : 0);
      }
      out_ += '\n';
    }
    out_ += '\n';
    body(parts_[k]);
    out_ += "totals:";
    for (int64_t v : totals_) {
      out_ += ' ';
      number(v);
    }
    out_ += '\n';
  }

  void body(const PartItems& items) {
    const auto& graph = p_.call_graph;
    // The positions of this part, each once, grouped by function block.
    std::vector<core::LocationId> positions;
    positions.reserve(items.self.size() + items.calls.size() + items.jumps.size());
    for (const auto& s : items.self) positions.push_back(s.first);
    for (size_t i : items.calls) positions.push_back(graph.calls[i].caller);
    for (size_t i : items.jumps) positions.push_back(graph.jumps[i].from);
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    // Blocks in the order of their first position (location ids follow the input order);
    // block keys are dense, so the rank is a flat array, not a hash lookup per comparison.
    block_rank_.assign(block_count_, UINT32_MAX);
    uint32_t next_rank = 0;
    for (core::LocationId id : positions)
      if (block_rank_[info_[id].block_key] == UINT32_MAX) block_rank_[info_[id].block_key] = next_rank++;
    // Where each position's self costs, calls and jumps start in the part's lists (all sorted
    // by location): one walk in id order here, not three binary searches per position.
    struct Order {
      uint32_t rank;
      uint64_t addr, line;
      core::LocationId id;
      uint32_t self, calls, jumps;
    };
    std::vector<Order> order;
    order.reserve(positions.size());
    size_t next_self = 0, next_call = 0, next_jump = 0;
    for (core::LocationId id : positions) {
      while (next_self < items.self.size() && items.self[next_self].first < id) ++next_self;
      while (next_call < items.calls.size() && graph.calls[items.calls[next_call]].caller < id) ++next_call;
      while (next_jump < items.jumps.size() && graph.jumps[items.jumps[next_jump]].from < id) ++next_jump;
      const PosInfo& pos = info_[id];
      order.push_back({block_rank_[pos.block_key], pos.addr, pos.line, id,
                       static_cast<uint32_t>(next_self), static_cast<uint32_t>(next_call),
                       static_cast<uint32_t>(next_jump)});
    }
    std::sort(order.begin(), order.end(), [](const Order& x, const Order& y) {
      if (x.rank != y.rank) return x.rank < y.rank;
      if (x.addr != y.addr) return x.addr < y.addr;
      if (x.line != y.line) return x.line < y.line;
      return x.id < y.id;
    });

    totals_.assign(measured_.size(), 0);
    state_ = State{};
    std::vector<int64_t> sum(p_.sample_types.size());
    const PosInfo* block = nullptr;
    for (const Order& o : order) {
      const core::LocationId id = o.id;
      const PosInfo& pos = info_[id];
      if (!block || block->block_key != pos.block_key) {
        if (block) end_block();
        begin_block(pos);
        block = &pos;
      }
      switch_file(pos.file);
      // Self cost: the samples at this position, summed.
      bool has_self = false;
      std::fill(sum.begin(), sum.end(), 0);
      for (size_t k = o.self; k < items.self.size() && items.self[k].first == id; ++k) {
        const auto v = p_.values(items.self[k].second);
        for (size_t i = 0; i < sum.size(); ++i) sum[i] = core::add_saturating(sum[i], v[i]);
        has_self = true;
      }
      if (has_self) {
        subpositions(pos, Line::cost);
        costs(sum, /*at_least_one=*/true);
        for (size_t i = 0; i < measured_.size(); ++i)
          totals_[i] = core::add_saturating(totals_[i], sum[measured_[i]]);
      }
      for (size_t k = o.calls; k < items.calls.size() && graph.calls[items.calls[k]].caller == id; ++k)
        call(pos, graph.calls[items.calls[k]]);
      for (size_t k = o.jumps; k < items.jumps.size() && graph.jumps[items.jumps[k]].from == id; ++k)
        jump(pos, graph.jumps[items.jumps[k]]);
    }
    if (block) end_block();
  }

  struct State {
    bool has_ob = false, has_fl = false;
    std::string_view ob, fl, file, fn;
    uint64_t base_addr = 0, base_line = 0;
    bool synced = true;  // the last position line was a cost line (both readers' base agree)
  };

  void begin_block(const PosInfo& pos) {
    if (!state_.has_ob || state_.ob != pos.object) {
      if (state_.has_ob || !pos.object.empty()) name_line("ob=", NameKind::object, pos.object);
      state_.has_ob = true;
      state_.ob = pos.object;
    }
    if (!state_.has_fl || state_.fl != pos.home) {
      name_line("fl=", NameKind::file, pos.home);
      state_.has_fl = true;
      state_.fl = pos.home;
    }
    name_line("fn=", NameKind::function, pos.fn);
    state_.fn = pos.fn;
    state_.file = pos.home;
  }

  void end_block() {
    if (state_.file != state_.fl) name_line("fe=", NameKind::file, state_.fl);
    state_.file = state_.fl;
    out_ += '\n';
  }

  void switch_file(std::string_view file) {
    if (file == state_.file) return;
    name_line(file == state_.fl ? "fe=" : "fi=", NameKind::file, file);
    state_.file = file;
  }

  void call(const PosInfo& caller, const core::CallEdge& e) {
    const PosInfo& callee = info_[e.callee];
    if (callee.object != state_.ob) name_line("cob=", NameKind::object, callee.object);
    if (callee.file != state_.file) name_line("cfi=", NameKind::file, callee.file);
    name_line("cfn=", NameKind::function, callee.fn);
    out_ += "calls=";
    number(e.count);
    out_ += ' ';
    subpositions(callee, Line::target);
    out_ += '\n';
    subpositions(caller, Line::source);
    std::vector<int64_t>& v = inclusive_;
    v.assign(p_.sample_types.size(), 0);
    for (size_t i = 0; i < v.size() && i < e.inclusive.size(); ++i) v[i] = e.inclusive[i];
    costs(v, /*at_least_one=*/true);
  }

  void jump(const PosInfo& from, const core::Jump& j) {
    const PosInfo& to = info_[j.to];
    if (to.file != state_.file) name_line("jfi=", NameKind::file, to.file);
    if (to.fn != state_.fn) name_line("jfn=", NameKind::function, to.fn);
    if (j.conditional) {
      out_ += "jcnd=";
      number(j.followed);
      out_ += '/';
      number(j.executed);
    } else {
      out_ += "jump=";
      number(j.executed);
    }
    out_ += ' ';
    subpositions(to, Line::target);
    out_ += '\n';
    subpositions(from, Line::source);
    out_ += '\n';
  }

  // What a position is written for: a cost line moves the base of relative positions; a
  // call's or jump's source line moves callgrind_annotate's base only (it reads it like a
  // cost line, the spec does not), so when it is not at the base the next line is
  // absolute; a calls=/jump= target moves neither (callgrind_annotate skips it).
  enum class Line { cost, source, target };

  void subpositions(const PosInfo& pos, Line kind) {
    const bool relative = options_.compress_positions && state_.synced;
    if (instr_) subposition(pos.addr, state_.base_addr, relative, true);
    if (line_) subposition(pos.line, state_.base_line, relative, false);
    if (kind == Line::cost) {
      state_.base_addr = pos.addr;
      state_.base_line = pos.line;
      state_.synced = true;
    } else if (kind == Line::source &&
               ((instr_ && pos.addr != state_.base_addr) || (line_ && pos.line != state_.base_line))) {
      state_.synced = false;
    }
  }

  void subposition(uint64_t v, uint64_t base, bool relative, bool hex) {
    char abs[24], rel[24];
    char* abs_end;
    if (hex) {
      abs[0] = '0';
      abs[1] = 'x';
      abs_end = std::to_chars(abs + 2, abs + sizeof abs, v, 16).ptr;
    } else {
      abs_end = std::to_chars(abs, abs + sizeof abs, v).ptr;
    }
    if (relative) {
      if (v == base) {
        out_ += "* ";
        return;
      }
      rel[0] = v > base ? '+' : '-';
      char* rel_end = std::to_chars(rel + 1, rel + sizeof rel, v > base ? v - base : base - v).ptr;
      if (rel_end - rel < abs_end - abs) {
        out_.append(rel, rel_end);
        out_ += ' ';
        return;
      }
    }
    out_.append(abs, abs_end);
    out_ += ' ';
  }

  // The measured values, trailing zeros left out (they are implied), then the newline.
  void costs(const std::vector<int64_t>& values, bool at_least_one) {
    size_t n = measured_.size();
    while (n > (at_least_one ? 1 : 0) && values[measured_[n - 1]] == 0) --n;
    for (size_t i = 0; i < n; ++i) {
      if (i) out_ += ' ';
      number(values[measured_[i]]);
    }
    out_ += '\n';
  }

  void number(int64_t v) {
    char buf[24];
    out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
  }

  // "fn=(3) name" the first time, "fn=(3)" after, or the plain name; empty names plain.
  void name_line(const char* prefix, NameKind kind, std::string_view name) {
    // An empty "cfi=" means "the caller's file" to callgrind_annotate: unknown files are
    // valgrind's "???".
    if (name.empty() && kind == NameKind::file) name = "???";
    out_ += prefix;
    const bool looks_compressed =
        name.size() > 1 && name[0] == '(' && name[1] >= '0' && name[1] <= '9';
    if (!name.empty() && (options_.compress_names || looks_compressed)) {
      auto& ids = ids_[static_cast<size_t>(kind)];
      auto [it, inserted] = ids.try_emplace(name, ids.size() + 1);
      out_ += '(';
      number(static_cast<int64_t>(it->second));
      out_ += ')';
      if (inserted) {
        out_ += ' ';
        out_ += name;
      }
    } else {
      out_ += name;
    }
    out_ += '\n';
  }

  const core::Profile& p_;
  const WriteOptions& options_;
  core::Diagnostics& diagnostics_;
  std::string out_;
  std::vector<std::string> names_;  // event name per sample type
  std::vector<size_t> measured_;    // sample types written in cost lines
  std::deque<std::string> synthesized_;
  std::vector<PosInfo> info_;       // by location id
  std::vector<PartItems> parts_;
  std::unordered_map<std::string_view, size_t> ids_[3];
  size_t block_count_ = 0;
  std::vector<uint32_t> block_rank_;  // by block key, for the part being written
  bool instr_ = false, line_ = true;
  State state_;
  std::vector<int64_t> totals_, inclusive_;
};

}  // namespace

core::Expected<std::string> write_callgrind(const core::Profile& profile,
                                            const WriteOptions& options,
                                            core::Diagnostics& diagnostics) {
  if (!profile.call_graph.present) {
    auto graph = call_graph_from_stacks(profile, diagnostics);
    if (!graph) return graph.error();
    return Writer(*graph, options, diagnostics).write();
  }
  return Writer(profile, options, diagnostics).write();
}

}  // namespace tally::callgrind
