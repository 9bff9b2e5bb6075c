#include "pprof_raw.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "support/test_support.h"

namespace tally::test {

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  size_t e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

uint64_t parse_hex(const std::string& s) {
  if (!s.starts_with("0x")) throw std::runtime_error("pprof -raw: expected 0x...: " + s);
  return std::stoull(s.substr(2), nullptr, 16);
}

// "  23   23000000: 1 2 3 "
PprofRaw::Sample parse_sample(const std::string& line) {
  size_t colon = line.find(':');
  if (colon == std::string::npos) throw std::runtime_error("pprof -raw: bad sample: " + line);
  PprofRaw::Sample s;
  std::istringstream values(line.substr(0, colon)), ids(line.substr(colon + 1));
  for (int64_t v; values >> v;) s.values.push_back(v);
  for (uint64_t id; ids >> id;) s.location_ids.push_back(id);
  if (s.values.empty() || s.location_ids.empty())
    throw std::runtime_error("pprof -raw: bad sample: " + line);
  return s;
}

// "     1: 0x55fdbeefb794 M=1 "
void parse_location(const std::string& line, PprofRaw& raw) {
  std::istringstream in(line);
  uint64_t id;
  char colon;
  std::string address, mapping;
  if (!(in >> id >> colon >> address) || colon != ':')
    throw std::runtime_error("pprof -raw: bad location: " + line);
  PprofRaw::Location l{.address = parse_hex(address), .mapping_id = 0};
  if (in >> mapping && mapping.starts_with("M=")) l.mapping_id = std::stoull(mapping.substr(2));
  raw.locations[id] = l;
}

// "1: 0x55fdbeefb000/0x55fdbeefc000/0x1000 /tmp/tally-fx/bin/split  "
void parse_mapping(const std::string& line, PprofRaw& raw) {
  size_t colon = line.find(": ");
  size_t space = line.find(' ', colon + 2);
  if (colon == std::string::npos) throw std::runtime_error("pprof -raw: bad mapping: " + line);
  uint64_t id = std::stoull(line.substr(0, colon));
  std::string range = line.substr(colon + 2, space - colon - 2);
  size_t s1 = range.find('/'), s2 = range.find('/', s1 + 1);
  if (s1 == std::string::npos || s2 == std::string::npos)
    throw std::runtime_error("pprof -raw: bad mapping: " + line);
  MappingView m;
  m.start = parse_hex(range.substr(0, s1));
  m.limit = parse_hex(range.substr(s1 + 1, s2 - s1 - 1));
  m.offset = parse_hex(range.substr(s2 + 1));
  // The file, then " build_id flags" (both empty for gperftools profiles).
  m.file = space == std::string::npos ? "" : trim(line.substr(space + 1));
  raw.mappings[id] = m;
}

}  // namespace

PprofRaw parse_pprof_raw(const std::string& text) {
  PprofRaw raw;
  enum { preamble, sample_types, samples, locations, mappings } section = preamble;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (trim(line).empty()) continue;
    if (line.starts_with("Period: ")) {
      raw.period = std::stoll(line.substr(8));
    } else if (line == "Samples:") {
      section = sample_types;
    } else if (line == "Locations") {
      section = locations;
    } else if (line == "Mappings") {
      section = mappings;
    } else if (section == sample_types) {
      section = samples;  // the "samples/count cpu/nanoseconds" line
    } else if (section == samples) {
      raw.samples.push_back(parse_sample(line));
    } else if (section == locations) {
      parse_location(line, raw);
    } else if (section == mappings) {
      parse_mapping(line, raw);
    }
  }
  if (section != mappings) throw std::runtime_error("pprof -raw: incomplete output:\n" + text);
  return raw;
}

std::vector<WeightedStack> PprofRaw::weighted_stacks() const {
  std::vector<WeightedStack> out;
  for (const Sample& s : samples) {
    WeightedStack w{.count = s.values[0], .addresses = {}};
    for (uint64_t id : s.location_ids) w.addresses.push_back(locations.at(id).address);
    out.push_back(std::move(w));
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::map<uint64_t, MappingView> PprofRaw::mapping_by_address() const {
  std::map<uint64_t, MappingView> out;
  for (const auto& [id, l] : locations)
    if (l.mapping_id != 0) out[l.address] = mappings.at(l.mapping_id);
  return out;
}

PprofRaw run_pprof_raw(const std::string& pprof, const std::string& file) {
  RunResult r = run({pprof, "-raw", "-symbolize=none", file});
  if (r.exit_code != 0)
    throw std::runtime_error("pprof -raw " + file + " failed (" + std::to_string(r.exit_code) +
                             "): " + r.err);
  return parse_pprof_raw(r.out);
}

}  // namespace tally::test
