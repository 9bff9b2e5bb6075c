#include "formats/perfscript/perf_script_builder.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/demangle.h"
#include "core/sample_merger.h"

namespace tally::perfscript {

namespace {

// Software clock events count nanoseconds: their period is a time.
bool counts_nanoseconds(std::string_view event) {
  std::string_view base = event.substr(0, event.find(':'));
  return base == "cpu-clock" || base == "task-clock";
}

bool names_function(const FrameLine& f) {
  return f.has_symbol && !f.symbol.empty() && f.symbol != "[unknown]";
}

}  // namespace

ProfileBuilder::ProfileBuilder() = default;

void ProfileBuilder::add_sample(const SampleHeader& header, std::span<const Frame> frames) {
  PendingSample s;
  s.event = event_index(header);
  s.value = header.period.value_or(1);
  s.stack_begin = stack_pool_.size();
  add_stack(frames);
  s.stack_size = stack_pool_.size() - s.stack_begin;
  s.labels_begin = label_pool_.size();
  add_labels(header);
  s.labels_size = label_pool_.size() - s.labels_begin;
  if (samples_.empty()) first_time_ = last_time_ = header.time_nanos;
  first_time_ = std::min(first_time_, header.time_nanos);
  last_time_ = std::max(last_time_, header.time_nanos);
  samples_.push_back(s);
}

void ProfileBuilder::add_header_field(std::string_view key, std::string_view value) {
  std::string name = "perf.";
  for (char c : key) name += c == ' ' ? '_' : c;
  profile_.attributes.emplace_back(std::move(name), std::string(value));
}

uint32_t ProfileBuilder::event_index(const SampleHeader& header) {
  key_.assign(header.event);
  auto [it, inserted] = event_ids_.try_emplace(key_, static_cast<uint32_t>(events_.size()));
  if (inserted) {
    events_.push_back({key_, header.period.has_value(), true, header.period.value_or(0)});
    return it->second;
  }
  Event& e = events_[it->second];
  if (header.period && *header.period != e.period) e.one_period = false;
  return it->second;
}

void ProfileBuilder::add_labels(const SampleHeader& header) {
  // In the order Profile::sort_labels gives (strings, then numbers, by key), so that equal
  // label sets compare equal when samples are merged.
  if (!header.comm.empty()) {
    label_pool_.push_back({.key = profile_.intern("comm"), .str = profile_.intern(header.comm)});
    if (first_comm_.empty()) first_comm_ = header.comm;
  }
  if (header.cpu) label_pool_.push_back({.key = profile_.intern("cpu"), .num = *header.cpu});
  if (header.pid) label_pool_.push_back({.key = profile_.intern("pid"), .num = *header.pid});
  if (header.tid) label_pool_.push_back({.key = profile_.intern("tid"), .num = *header.tid});
}

// Frames leaf first. "(inlined)" frames belong to the next real frame when it has their
// address; perf also prints inlined frames with no real frame at their address (seen for
// __libc_start_main_impl): those become a location of their own, outside any mapping.
void ProfileBuilder::add_stack(std::span<const Frame> frames) {
  auto add_orphans = [&](size_t begin, size_t end) {
    while (begin < end) {
      size_t group_end = begin + 1;
      while (group_end < end && frames[group_end].line.address == frames[begin].line.address)
        ++group_end;
      stack_pool_.push_back(location(frames.subspan(begin, group_end - begin), false));
      begin = group_end;
    }
  };
  size_t run_begin = 0;
  for (size_t k = 0; k < frames.size(); ++k) {
    if (frames[k].line.inlined) continue;
    size_t chain_begin = k;
    while (chain_begin > run_begin && frames[chain_begin - 1].line.address == frames[k].line.address)
      --chain_begin;
    add_orphans(run_begin, chain_begin);
    stack_pool_.push_back(location(frames.subspan(chain_begin, k + 1 - chain_begin), true));
    run_begin = k + 1;
  }
  add_orphans(run_begin, frames.size());
}

// perf script prints no mapping ranges, so a mapping is only its DSO path (start and limit
// stay 0), and a location's address is the one printed (DSO-relative in recent perf's
// call chains, absolute for the ip of a one-line sample).
core::LocationId ProfileBuilder::location(std::span<const Frame> chain, bool has_real_frame) {
  const FrameLine& real = chain.back().line;
  std::string_view dso = has_real_frame && real.has_dso ? real.dso : std::string_view{};
  if (dso == "[unknown]") dso = {};
  key_.clear();
  fmt::format_to(std::back_inserter(key_), "{}\n{:x}\n{}\n", has_real_frame ? 'r' : 'i',
                 real.address, dso.size());
  key_ += dso;
  for (const Frame& f : chain)
    fmt::format_to(std::back_inserter(key_), "\n{}\n{}\n{}:{}", f.line.symbol.size(),
                   f.line.symbol, f.file, f.source_line);
  if (auto it = location_ids_.find(key_); it != location_ids_.end()) return it->second;
  std::string key = key_;  // function() and mapping() reuse key_

  core::Location loc;
  loc.address = real.address;
  loc.mapping = dso.empty() ? 0 : mapping(dso);
  for (const Frame& f : chain)
    if (names_function(f.line))
      loc.lines.push_back({.function = function(f.line.symbol, f.file), .line = f.source_line});
  if (loc.mapping != 0) {
    core::Mapping& m = profile_.mapping(loc.mapping);
    for (const Frame& f : chain) {
      m.has_functions |= names_function(f.line);
      m.has_filenames |= !f.file.empty();
      m.has_line_numbers |= f.source_line > 0;
    }
    m.has_inline_frames |= chain.size() > 1;
  }
  core::LocationId id = profile_.add_location(std::move(loc));
  location_ids_.emplace(std::move(key), id);
  return id;
}

core::MappingId ProfileBuilder::mapping(std::string_view dso) {
  key_.assign(dso);
  if (auto it = mapping_ids_.find(key_); it != mapping_ids_.end()) return it->second;
  core::MappingId id = profile_.add_mapping({.file = profile_.intern(dso)});
  mapping_ids_.emplace(key_, id);
  return id;
}

core::FunctionId ProfileBuilder::function(std::string_view symbol, std::string_view file) {
  key_.assign(symbol);
  key_ += '\n';
  key_ += file;
  if (auto it = function_ids_.find(key_); it != function_ids_.end()) return it->second;
  core::FunctionId id = profile_.add_function({.name = profile_.intern(core::demangle(symbol)),
                                               .system_name = profile_.intern(symbol),
                                               .filename = profile_.intern(file)});
  function_ids_.emplace(key_, id);
  return id;
}

// Mapping 1 is the main binary (pprof shows it as "File:"); DSOs are numbered in order of
// first appearance, which is often ld.so or libc. The executable is the DSO named like the
// command (perf truncates comm to 15 characters).
void ProfileBuilder::put_main_binary_first() {
  core::Profile& p = profile_;
  if (first_comm_.empty() || p.mappings.size() < 2) return;
  for (core::MappingId id = 1; id <= p.mappings.size(); ++id) {
    std::string_view file = p.str(p.mapping(id).file);
    std::string_view base = file.substr(file.find_last_of('/') + 1);
    if (base.empty() || base.substr(0, 15) != first_comm_.substr(0, 15)) continue;
    if (id == 1) return;
    std::swap(p.mappings[0], p.mappings[id - 1]);
    for (core::Location& l : p.locations) {
      if (l.mapping == 1) l.mapping = id;
      else if (l.mapping == id) l.mapping = 1;
    }
    return;
  }
}

core::Profile ProfileBuilder::finish() {
  core::Profile& p = profile_;
  p.sample_types.push_back(p.value_type("samples", "count"));
  for (const Event& e : events_)
    p.sample_types.push_back(
        p.value_type(e.name, e.has_period && counts_nanoseconds(e.name) ? "nanoseconds" : "count"));
  if (!events_.empty()) {
    p.period_type = p.sample_types[1];
    p.default_sample_type = p.sample_types[1].type;
    p.period = events_[0].has_period && events_[0].one_period ? events_[0].period : 0;
  }
  p.time_nanos = captured_on_;
  p.duration_nanos = last_time_ - first_time_;

  put_main_binary_first();
  core::SampleMerger merger(p);
  std::vector<int64_t> values(p.sample_types.size());
  for (const PendingSample& s : samples_) {
    std::fill(values.begin(), values.end(), 0);
    values[0] = 1;
    values[1 + s.event] = s.value;
    merger.add(std::span(stack_pool_).subspan(s.stack_begin, s.stack_size), values,
               std::span(label_pool_).subspan(s.labels_begin, s.labels_size));
  }
  samples_.clear();
  return std::move(profile_);
}

}  // namespace tally::perfscript
