#include "analyze/disasm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <regex>

#include "analyze/nodes.h"
#include "analyze/listing.h"
#include "core/checked_math.h"
#include "core/demangle.h"
#include "core/path_name.h"
#include "symbolize/symbol_map.h"
#include "symbolize/find_binary.h"
#include "symbolize/function_range.h"

namespace tally::analyze {

namespace {

// The REGEX as a number, as Go's strconv.ParseUint(s, 0, 64) reads it (0x, 0o, 0b, 0).
std::optional<uint64_t> parse_address(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0') {
    const char prefix = static_cast<char>(std::tolower(static_cast<unsigned char>(text[1])));
    base = prefix == 'x' ? 16 : prefix == 'b' ? 2 : prefix == 'o' ? 8 : 10;
    if (base != 10) text.remove_prefix(2);
  }
  if (base == 10 && text.size() > 1 && text[0] == '0') {
    base = 8;
    text.remove_prefix(1);
  }
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// pprof's matchSymbol: the first name of the group that matches as spelled, demangled, or
// demangled without parameters and template arguments; the name that matched is shown.
std::optional<std::string> matching_name(const symbolize::SymbolRange& symbol,
                                         const std::regex& pattern) {
  for (const std::string& name : symbol.names) {
    if (std::regex_search(name, pattern)) return name;
    const std::string demangled = core::demangle(name);
    if (demangled == name) continue;
    if (std::regex_search(demangled, pattern)) return demangled;
    std::string simple = core::simplify_name(demangled);
    if (std::regex_search(simple, pattern)) return simple;
  }
  return std::nullopt;
}

// "<name+0x20>" for an address inside a known symbol, as objdump annotates targets.
std::string symbolic(const symbolize::FunctionRanges& ranges, uint64_t address) {
  const symbolize::SymbolRange* s = ranges.containing(address);
  if (s == nullptr) return {};
  const std::string name = core::demangle(s->names.front());
  return address == s->start ? fmt::format("<{}>", name)
                             : fmt::format("<{}+0x{:x}>", name, address - s->start);
}

// One profile node inside a binary: its link-time address and values.
struct PlacedNode {
  uint64_t address = 0;
  NodeId node = 0;
};

// The nodes of one object file, placed at their link-time addresses (sorted).
std::vector<PlacedNode> place_nodes(const core::Profile& p, const NodeIndex& nodes,
                                    const NodeSums& sums,
                                    const std::vector<core::LocationId>& location_of,
                                    core::StringId file, const symbolize::FunctionRanges& ranges) {
  std::vector<PlacedNode> placed;
  for (NodeId n = 0; n < nodes.size(); ++n) {
    if (sums.flat[n] == 0 && sums.cum[n] == 0) continue;
    const core::LocationId loc_id = location_of[n];
    if (loc_id == 0) continue;
    const core::Location& loc = p.location(loc_id);
    if (loc.mapping == 0 || p.mapping(loc.mapping).file != file) continue;
    const core::Mapping& m = p.mapping(loc.mapping);
    auto address = symbolize::link_time_address(ranges.segments(), ranges.is_exec(), m.start,
                                                m.offset, loc.address);
    if (address) placed.push_back({*address, n});
  }
  std::sort(placed.begin(), placed.end(),
            [](const PlacedNode& a, const PlacedNode& b) { return a.address < b.address; });
  return placed;
}

// The source line of an instruction as objdump --line-numbers shows it: the function it
// is in (outermost, demangled) and the innermost frame's file and line.
struct SourceLine {
  std::string function;
  std::string file;  // base name; "" when the address has no line
  int64_t line = 0;
};

// The source lines of ascending `addresses`.
std::vector<SourceLine> source_lines(symbolize::SymbolMap& symbols, std::span<const uint64_t> addresses) {
  std::vector<SourceLine> lines(addresses.size());
  std::vector<symbolize::Frame> frames;
  std::vector<uint32_t> ends;
  symbols.lookup(addresses, frames, ends);
  for (size_t i = 0, first = 0; i < addresses.size(); first = ends[i], ++i) {
    const size_t last = ends[i];
    if (last == first || frames[first].file[0] == '\0') continue;
    lines[i] = {frames[last - 1].function->name, std::string(core::base_name(frames[first].file)),
                frames[first].line};
  }
  return lines;
}

// The instructions of one routine with their values and source lines.
core::Status annotate(DisasmRoutine& routine, const symbolize::FunctionRanges& ranges,
                      symbolize::SymbolMap& symbols,
                      std::span<const PlacedNode> in_range,
                      const core::Profile& p, const NodeIndex& nodes, const NodeSums& sums,
                      AsmSyntax syntax) {
  auto code = ranges.code(routine.start, routine.end);
  if (!code)
    return core::Error{fmt::format("{}: no code for {} at 0x{:x} (only a debug file?)",
                                   ranges.path(), routine.name, routine.start),
                       core::ErrorKind::io};
  auto instructions = disassemble(ranges.machine(), *code, routine.start, syntax);
  if (!instructions) return instructions.error();
  std::vector<uint64_t> addresses;
  for (const Instruction& insn : *instructions) addresses.push_back(insn.address);
  const std::vector<SourceLine> lines = source_lines(symbols, addresses);
  size_t next_node = 0;
  for (size_t i = 0; i < instructions->size(); ++i) {
    const Instruction& insn = (*instructions)[i];
    DisasmInstruction out;
    out.address = insn.address;
    out.text = insn.text;
    if (insn.target) {
      if (std::string s = symbolic(ranges, *insn.target); !s.empty()) out.text += " " + s;
    } else if (insn.reference) {
      std::string s = symbolic(ranges, *insn.reference);
      out.text += fmt::format("  # 0x{:x}{}{}", *insn.reference, s.empty() ? "" : " ", s);
    }
    out.function = lines[i].function;
    out.file = lines[i].file;
    out.line = lines[i].line;
    // Samples up to the next instruction (or the range's end) belong to this one; like
    // pprof, an instruction without line information takes the first sample's.
    const uint64_t next = i + 1 < instructions->size() ? (*instructions)[i + 1].address : UINT64_MAX;
    for (; next_node < in_range.size() && in_range[next_node].address < next; ++next_node) {
      const NodeId n = in_range[next_node].node;
      core::accumulate_saturating(out.flat, sums.flat[n]);
      core::accumulate_saturating(out.cum, sums.cum[n]);
      const NodeKey& k = nodes.key(n);
      if (out.file.empty() && !nodes.file(n).empty()) out.file = std::string(core::base_name(nodes.file(n)));
      if (out.line == 0) out.line = k.line;
      if (out.function.empty() && k.name != 0) out.function = std::string(p.str(k.name));
    }
    routine.instructions.push_back(std::move(out));
  }
  return core::ok();
}

// What the routines of one report are computed from.
struct DisasmInput {
  const core::Profile& profile;
  const NodeIndex& nodes;
  const NodeSums& sums;
  const std::vector<core::LocationId>& location_of;  // a location of each node
  const std::regex& pattern;
  std::optional<uint64_t> address;  // the REGEX read as an address
  AsmSyntax syntax;
};

// The objects to look in: those of nodes whose printed name ("0000000000001674 func_a
// split.cc:26", as pprof matches) or function name matches (so that "^func_a$" works,
// which in pprof finds nothing), and with an address REGEX the one mapped there. One
// mapping per object file.
std::vector<core::MappingId> objects_to_search(const DisasmInput& in) {
  const core::Profile& p = in.profile;
  std::vector<core::MappingId> chosen;
  std::vector<uint8_t> file_chosen(p.strings.size(), 0);
  auto choose = [&](core::MappingId id) {
    const std::string_view file = p.str(p.mapping(id).file);
    if (file.empty() || file.front() == '[' || file_chosen[p.mapping(id).file]) return;
    file_chosen[p.mapping(id).file] = 1;
    chosen.push_back(id);
  };
  for (NodeId n = 0; n < in.nodes.size(); ++n) {
    if ((in.sums.flat[n] == 0 && in.sums.cum[n] == 0) || in.location_of[n] == 0) continue;
    const core::Location& loc = p.location(in.location_of[n]);
    if (loc.mapping == 0 || file_chosen[p.mapping(loc.mapping).file]) continue;
    const NodeKey& k = in.nodes.key(n);
    if ((k.name != 0 && std::regex_search(std::string(p.str(k.name)), in.pattern)) ||
        std::regex_search(in.nodes.name(n), in.pattern))
      choose(loc.mapping);
  }
  if (in.address) {
    for (core::MappingId id = 1; id <= p.mappings.size(); ++id)
      if (p.mapping(id).start <= *in.address && *in.address < p.mapping(id).limit) choose(id);
  }
  return chosen;
}

// The routines of one object: its functions that match and have samples.
void object_routines(const DisasmInput& in, const core::Mapping& m,
                     const symbolize::FoundBinary& found, const symbolize::FunctionRanges& ranges,
                     DisasmReport& report) {
  std::optional<uint64_t> link_address;
  if (in.address && m.start <= *in.address && *in.address < m.limit)
    link_address = symbolize::link_time_address(ranges.segments(), ranges.is_exec(), m.start,
                                                m.offset, *in.address);
  const std::vector<PlacedNode> placed =
      place_nodes(in.profile, in.nodes, in.sums, in.location_of, m.file, ranges);
  std::unique_ptr<symbolize::SymbolMap> symbols;  // opened for the first routine shown
  for (const symbolize::SymbolRange& symbol : ranges.symbols()) {
    // Only functions with samples are shown: look at the names of those alone.
    auto first = std::lower_bound(placed.begin(), placed.end(), symbol.start,
                                  [](const PlacedNode& n, uint64_t a) { return n.address < a; });
    auto last = std::lower_bound(first, placed.end(), symbol.end,
                                 [](const PlacedNode& n, uint64_t a) { return n.address < a; });
    if (first == last) continue;
    DisasmRoutine routine;
    if (link_address && *link_address >= symbol.start && *link_address < symbol.end) {
      routine.name = symbol.names.front();
      routine.aka.assign(symbol.names.begin() + 1, symbol.names.end());
    } else if (auto name = matching_name(symbol, in.pattern)) {
      routine.name = std::move(*name);
    } else {
      continue;
    }
    for (auto it = first; it != last; ++it) {
      core::accumulate_saturating(routine.flat, in.sums.flat[it->node]);
      core::accumulate_saturating(routine.cum, in.sums.cum[it->node]);
    }
    routine.binary = ranges.path();
    routine.start = symbol.start;
    routine.end = symbol.end;
    if (!symbols) {
      auto opened = symbolize::SymbolMap::open(found);
      if (!opened) {
        report.warnings.push_back(fmt::format("disasm: {}: {}", ranges.path(), opened.error().message));
        return;
      }
      symbols = std::move(*opened);
    }
    auto status = annotate(routine, ranges, *symbols, {first, last}, in.profile, in.nodes,
                           in.sums, in.syntax);
    if (!status) {
      report.warnings.push_back(status.error().message);
      continue;
    }
    report.routines.push_back(std::move(routine));
  }
}

}  // namespace

core::Expected<DisasmReport> compute_disasm(const core::Profile& p, const DisasmOptions& options) {
  auto basis = listing_basis(p, options.regex, options.filters, options.sample_index);
  if (!basis) return basis.error();
  DisasmReport report;
  report.sample_unit = basis->sample_unit;
  report.total = basis->total;
  report.warnings = basis->warnings;
  // pprof's disasm graph: addresses, no inline frames (one node per location).
  const NodeIndex nodes(p,
                        {.granularity = Granularity::addresses, .inlines = false, .object_names = true},
                        &basis->filter);
  const NodeSums sums = sum_positions(p, nodes, basis->filter, basis->value);
  std::vector<core::LocationId> location_of(nodes.size(), 0);
  for (core::LocationId id = 1; id <= p.locations.size(); ++id)
    for (NodeId n : nodes.nodes(id))
      if (location_of[n] == 0) location_of[n] = id;
  const DisasmInput in{p, nodes, sums, location_of, basis->pattern, parse_address(options.regex),
                       options.syntax};

  const std::vector<std::string> dirs = symbolize::binary_search_dirs(options.binary_paths);
  for (core::MappingId id : objects_to_search(in)) {
    const core::Mapping& m = p.mapping(id);
    const std::string file(p.str(m.file));
    symbolize::FoundBinary found = symbolize::find_binary(file, std::string(p.str(m.build_id)), dirs);
    core::Diagnostics fetched;
    symbolize::FoundBinary* wanted[] = {&found};
    symbolize::fetch_missing_files(wanted, options.debuginfod, fetched);
    report.warnings.insert(report.warnings.end(), fetched.warnings().begin(), fetched.warnings().end());
    auto ranges = found.binary.empty() ? nullptr : symbolize::FunctionRanges::load(found);
    if (!ranges) {
      std::string searched;
      for (const auto& path : found.searched) searched += (searched.empty() ? "" : ", ") + path;
      report.warnings.push_back(fmt::format("disasm: {}: binary {}; searched {}", file,
                                            found.problem.empty() ? "not readable" : found.problem,
                                            searched));
      continue;
    }
    object_routines(in, m, found, *ranges, report);
  }
  if (report.routines.empty()) {
    // Say why when it is a binary that could not be used.
    std::string message = "no matches found for regexp: " + options.regex;
    for (const std::string& w : report.warnings) message += "; " + w;
    return core::Error{message, core::ErrorKind::invalid_input};
  }
  std::stable_sort(report.routines.begin(), report.routines.end(),
                   [](const DisasmRoutine& a, const DisasmRoutine& b) {
                     return a.name != b.name ? a.name < b.name : a.start < b.start;
                   });
  return report;
}

std::string format_disasm(const DisasmReport& r) {
  const ListingValues value{r.sample_unit};
  std::string out = fmt::format("Total: {}\n", value(r.total));
  auto put = std::back_inserter(out);
  for (const DisasmRoutine& routine : r.routines) {
    fmt::format_to(put, "ROUTINE ======================== {}\n", routine.name);
    for (const std::string& name : routine.aka)
      fmt::format_to(put, "    AKA ======================== {}\n", name);
    out += value.routine_totals(routine.flat, routine.cum, r.total);
    // The function and line are shown where they change, as pprof does.
    std::string function, file;
    int64_t line = 0;
    for (const DisasmInstruction& insn : routine.instructions) {
      std::string where;
      if (insn.function != function || insn.file != file || insn.line != line) {
        function = insn.function;
        file = insn.file;
        line = insn.line;
        if (!function.empty()) where = function + " ";
        if (!file.empty()) {
          where += file;
          if (line != 0) where += fmt::format(":{}", line);
        }
      }
      const std::string flat = value.or_dot(insn.flat), cum = value.or_dot(insn.cum);
      if (where.empty()) {
        fmt::format_to(put, "{:>10} {:>10} {:>10x}: {}\n", flat, cum, insn.address, insn.text);
      } else if (insn.text.size() < 40) {
        fmt::format_to(put, "{:>10} {:>10} {:>10x}: {:<40};{}\n", flat, cum, insn.address,
                       insn.text, where);
      } else {
        fmt::format_to(put, "{:>74};{}\n", "", where);
        fmt::format_to(put, "{:>10} {:>10} {:>10x}: {}\n", flat, cum, insn.address, insn.text);
      }
    }
  }
  return out;
}

}  // namespace tally::analyze
