#include "collect/stat_output.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tally::collect {
namespace {

using Json = nlohmann::ordered_json;

// 1234567 -> "1,234,567".
std::string group_digits(uint64_t value) {
  std::string digits = fmt::format("{}", value);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

uint64_t rounded(double value) {
  return value <= 0 ? 0 : static_cast<uint64_t>(std::llround(value));
}

double fraction(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

double seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

double per_second(double value, const StatOutcome& outcome) {
  return outcome.elapsed_ns == 0 ? 0.0 : value / seconds(outcome.elapsed_ns);
}

// The CPUs with the smallest and the largest total (the lowest CPU on ties).
std::pair<const StatSummary::CpuTotal*, const StatSummary::CpuTotal*> extremes(
    const StatSummary::EventTotal& event) {
  const StatSummary::CpuTotal* low = nullptr;
  const StatSummary::CpuTotal* high = nullptr;
  for (const auto& cpu : event.cpus) {
    if (!low || cpu.value < low->value) low = &cpu;
    if (!high || cpu.value > high->value) high = &cpu;
  }
  return {low, high};
}

std::string unit_of(const CounterRequest& request) {
  return request.event.counts_time() ? "ns" : "count";
}

}  // namespace

std::string format_trace_line(const TraceLine& line, std::string_view separator) {
  // miniprof: "%d\t%d\t%llu\t%llu\t%.3f\t%d\n".
  return fmt::format("{1}{0}{2}{0}{3}{0}{4}{0}{5:.3f}{0}{6}\n", separator, line.event, line.cpu,
                     line.timestamp, line.increase.value, line.increase.running_fraction(),
                     line.interval);
}

std::string format_trace_json(const TraceLine& line, const CounterRequest& request) {
  Json object{{"event", line.event},
              {"name", request.label},
              {"core", line.cpu},
              {"timestamp", line.timestamp},
              {"increase", line.increase.value},
              {"running", line.increase.running_fraction()},
              {"interval", line.interval},
              {"enabled_ns", line.increase.enabled_ns},
              {"running_ns", line.increase.running_ns}};
  return object.dump() + "\n";
}

double StatSummary::CpuTotal::scaled() const {
  if (running_ns == 0) return 0.0;
  return static_cast<double>(value) * static_cast<double>(enabled_ns) /
         static_cast<double>(running_ns);
}

void StatSummary::add(const std::vector<TraceLine>& lines) {
  for (const TraceLine& line : lines) {
    EventTotal& event = events_.at(line.event);
    auto it = std::lower_bound(event.cpus.begin(), event.cpus.end(), line.cpu,
                               [](const CpuTotal& total, int cpu) { return total.cpu < cpu; });
    if (it == event.cpus.end() || it->cpu != line.cpu) it = event.cpus.insert(it, {line.cpu});
    it->value += line.increase.value;
    it->enabled_ns += line.increase.enabled_ns;
    it->running_ns += line.increase.running_ns;
    event.total += line.increase.value;
    event.enabled_ns += line.increase.enabled_ns;
    event.running_ns += line.increase.running_ns;
  }
  for (EventTotal& event : events_) {
    event.scaled = 0;
    for (const CpuTotal& cpu : event.cpus) event.scaled += cpu.scaled();
  }
}

std::string format_summary_table(const StatSummary& summary,
                                 const std::vector<CounterRequest>& requests,
                                 const StatOutcome& outcome, const StatOptions& options) {
  std::vector<std::vector<std::string>> rows{{"event", "name", "counter", "unit", "total",
                                              "scaled", "per second", "min (cpu)", "max (cpu)",
                                              "running"}};
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& event = summary.events()[i];
    auto [low, high] = extremes(event);
    auto cpu_cell = [](const StatSummary::CpuTotal* cpu) {
      return cpu ? fmt::format("{} (cpu{})", group_digits(cpu->value), cpu->cpu) : "-";
    };
    rows.push_back({fmt::format("{}", i), requests[i].label, requests[i].event.text,
                    unit_of(requests[i]), group_digits(event.total),
                    group_digits(rounded(event.scaled)),
                    group_digits(rounded(per_second(event.scaled, outcome))), cpu_cell(low),
                    cpu_cell(high),
                    fmt::format("{:.1f}%", 100 * fraction(event.running_ns, event.enabled_ns))});
  }
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  std::string text = fmt::format(
      "tally stat: {} interval{} of {} ms, {:.3f} s counted, {} CPU{}, {}\n", outcome.intervals,
      outcome.intervals == 1 ? "" : "s", options.interval_ms, seconds(outcome.elapsed_ns),
      options.cpus.size(), options.cpus.size() == 1 ? "" : "s",
      options.command.empty() || !options.command_only ? "system-wide" : "the command only");
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      // Text columns (name, counter, unit) flush left, numbers right.
      bool left = c >= 1 && c <= 3;
      if (c != 0) line += "  ";
      line += left ? fmt::format("{:<{}}", row[c], widths[c])
                   : fmt::format("{:>{}}", row[c], widths[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + "\n";
  }
  return text;
}

std::string format_summary_separated(const StatSummary& summary,
                                     const std::vector<CounterRequest>& requests,
                                     const StatOutcome& outcome, std::string_view separator) {
  std::string text = fmt::format(
      "{1}\n", separator,
      fmt::join(std::vector<std::string_view>{"event", "name", "counter", "unit", "total",
                                              "scaled", "per_second", "min_cpu", "min",
                                              "max_cpu", "max", "running", "seconds"},
                separator));
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& event = summary.events()[i];
    auto [low, high] = extremes(event);
    text += fmt::format("{1}{0}{2}{0}{3}{0}{4}{0}{5}{0}{6:.0f}{0}{7:.3f}{0}{8}{0}{9}{0}{10}{0}{11}"
                        "{0}{12:.4f}{0}{13:.6f}\n",
                        separator, i, requests[i].label, requests[i].event.text,
                        unit_of(requests[i]), event.total, event.scaled,
                        per_second(event.scaled, outcome), low ? low->cpu : -1,
                        low ? low->value : 0, high ? high->cpu : -1, high ? high->value : 0,
                        fraction(event.running_ns, event.enabled_ns), seconds(outcome.elapsed_ns));
  }
  return text;
}

std::string format_summary_json(const StatSummary& summary,
                                const std::vector<CounterRequest>& requests,
                                const StatOutcome& outcome, const StatOptions& options) {
  Json events = Json::array();
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& event = summary.events()[i];
    const CounterRequest& request = requests[i];
    Json cpus = Json::array();
    for (const auto& cpu : event.cpus)
      cpus.push_back({{"cpu", cpu.cpu},
                      {"total", cpu.value},
                      {"scaled", cpu.scaled()},
                      {"enabled_ns", cpu.enabled_ns},
                      {"running_ns", cpu.running_ns}});
    auto [low, high] = extremes(event);
    auto cpu_json = [](const StatSummary::CpuTotal* cpu) {
      return cpu ? Json{{"cpu", cpu->cpu}, {"total", cpu->value}} : Json(nullptr);
    };
    events.push_back({{"event", i},
                      {"name", request.label},
                      {"counter", request.event.text},
                      {"perf_name", request.event.name},
                      {"type", request.event.type},
                      {"config", request.event.config},
                      {"exclude_kernel", request.event.exclude_kernel},
                      {"exclude_user", request.event.exclude_user},
                      {"per_node", request.per_node},
                      {"unit", request.event.unit()},
                      {"total", event.total},
                      {"scaled", event.scaled},
                      {"per_second", per_second(event.scaled, outcome)},
                      {"running", fraction(event.running_ns, event.enabled_ns)},
                      {"min", cpu_json(low)},
                      {"max", cpu_json(high)},
                      {"cpus", cpus}});
  }
  Json document{{"intervals", outcome.intervals},
                {"interval_ms", options.interval_ms},
                {"elapsed_ns", outcome.elapsed_ns},
                {"clock", options.clock.name()},
                {"scope", options.command.empty() || !options.command_only ? "system-wide"
                                                                           : "command"},
                {"cpus", options.cpus},
                {"events", events}};
  if (outcome.command_ran)
    document["command"] = Json{{"argv", options.command}, {"exit_code", outcome.command_exit_code}};
  document["interrupted"] = outcome.interrupted;
  return document.dump(2) + "\n";
}

StatPrinter::StatPrinter(const std::vector<CounterRequest>& requests, StatPrintOptions options,
                         io::AtomicFileWriter& out)
    : requests_(requests), options_(std::move(options)), out_(out), summary_(requests.size()) {}

bool StatPrinter::interval(const std::vector<TraceLine>& lines) {
  summary_.add(lines);
  if (options_.summary) return true;
  buffer_.clear();
  for (const TraceLine& line : lines)
    buffer_ += options_.json ? format_trace_json(line, requests_.at(line.event))
                             : format_trace_line(line, options_.separator.empty()
                                                             ? std::string_view("\t")
                                                             : options_.separator);
  return write(buffer_);
}

bool StatPrinter::write(const std::string& text) {
  if (write_failure_) return false;
  auto written = out_.write(text);
  if (!written) write_failure_ = written.error();
  return !write_failure_;
}

bool StatPrinter::finish(const StatOutcome& outcome, const StatOptions& options) {
  if (!options_.summary) return !write_failure_;
  std::string text =
      options_.json ? format_summary_json(summary_, requests_, outcome, options)
      : !options_.separator.empty()
          ? format_summary_separated(summary_, requests_, outcome, options_.separator)
          : format_summary_table(summary_, requests_, outcome, options);
  return write(text);
}

}  // namespace tally::collect
