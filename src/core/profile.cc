#include "core/profile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_map>

#include "core/checked_math.h"
#include "core/hash.h"
#include "core/sample_merger.h"

namespace tally::core {

MappingId Profile::add_mapping(const Mapping& m) {
  mappings.push_back(m);
  return static_cast<MappingId>(mappings.size());
}

LocationId Profile::add_location(Location l) {
  locations.push_back(std::move(l));
  return static_cast<LocationId>(locations.size());
}

FunctionId Profile::add_function(const Function& f) {
  functions.push_back(f);
  return static_cast<FunctionId>(functions.size());
}

std::string_view Profile::attribute(std::string_view key) const {
  for (const auto& [k, v] : attributes)
    if (k == key) return v;
  return {};
}

void Profile::set_attribute(std::string key, std::string value) {
  for (auto& [k, v] : attributes) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  attributes.emplace_back(std::move(key), std::move(value));
}

void Profile::add_sample(std::span<const LocationId> stack, std::span<const int64_t> values,
                         std::span<const Label> labels) {
  if (values.size() != sample_types.size())
    throw std::logic_error("Profile::add_sample: value count differs from sample types");
  if (stack.size() > std::numeric_limits<uint32_t>::max() ||
      labels.size() > std::numeric_limits<uint32_t>::max())
    throw std::length_error("Profile::add_sample: stack too deep");
  samples_distinct_ = false;
  stack_pool_.insert(stack_pool_.end(), stack.begin(), stack.end());
  stack_ends_.push_back(stack_pool_.size());
  values_.insert(values_.end(), values.begin(), values.end());
  // Runs of samples with the same labels (a thread's, a callgrind part's) share one copy:
  // a callgrind file of many parts has millions of samples and one label each.
  // Only a profile with labels keeps a label range per sample.
  if (labels.empty() && labels_.empty()) return;
  if (labels_.empty()) labels_.resize(stack_ends_.size() - 1);  // the samples before: none
  if (!labels_.empty() && !labels.empty()) {
    const Range previous = labels_.back();
    if (previous.size == labels.size() &&
        std::equal(labels.begin(), labels.end(), label_pool_.begin() + static_cast<std::ptrdiff_t>(previous.begin))) {
      labels_.push_back(previous);
      return;
    }
  }
  labels_.push_back({label_pool_.size(), static_cast<uint32_t>(labels.size())});
  label_pool_.insert(label_pool_.end(), labels.begin(), labels.end());
}

void Profile::add_distinct_sample(std::span<const LocationId> stack,
                                  std::span<const int64_t> values, std::span<const Label> labels) {
  const bool distinct = samples_distinct_;
  add_sample(stack, values, labels);
  samples_distinct_ = distinct;
}

void Profile::reserve_samples(size_t samples, size_t frames, size_t labels) {
  stack_ends_.reserve(samples);
  if (labels > 0) labels_.reserve(samples);
  values_.reserve(samples * sample_types.size());
  stack_pool_.reserve(frames);
  label_pool_.reserve(labels);
}

void Profile::clear_samples() {
  samples_distinct_ = true;
  stack_pool_.clear();
  stack_ends_.clear();
  values_.clear();
  label_pool_.clear();
  labels_.clear();
}

int64_t Profile::total(size_t index) const {
  int64_t sum = 0;
  const size_t stride = sample_types.size();
  for (size_t i = index; i < values_.size(); i += stride) sum = add_saturating(sum, values_[i]);
  return sum;
}

int Profile::sample_type_index(std::string_view type) const {
  for (size_t i = 0; i < sample_types.size(); ++i)
    if (str(sample_types[i].type) == type) return static_cast<int>(i);
  return -1;
}

void Profile::merge_identical_samples() { merge_samples(false); }

// In place: samples move down over the ones merged away, so the arrays are never copied.
void Profile::merge_samples(bool drop_zero) {
  const size_t n = sample_count(), stride = sample_types.size();
  if (samples_distinct_ && !drop_zero) return;
  // Distinct samples without labels, with a non-zero value each (a reader's, merged as it
  // read): nothing to merge, drop or compact, and the pools need no copy.
  if (samples_distinct_ && labels_.empty() && label_pool_.empty() &&
      (n == 0 || stack_ends_[n - 1] == stack_pool_.size())) {
    bool any_zero = false;
    for (size_t i = 0; i < n && !any_zero; ++i) {
      const int64_t* v = values_.data() + i * stride;
      any_zero = std::all_of(v, v + stride, [](int64_t x) { return x == 0; });
    }
    if (!any_zero) return;
  }
  SampleIndex index(samples_distinct_ ? 0 : n);
  size_t kept = 0;
  uint64_t pool_end = 0, label_end = 0, previous_end = 0;
  // Label ranges may be shared by a run of samples (add_sample): one copy per run.
  Range last_labels_from{UINT64_MAX, 0}, last_labels_to;
  const bool labelled = !labels_.empty();
  for (size_t i = 0; i < n; ++i) {
    // A sample sharing the labels of the last one copied reads them at their new place:
    // copying them may have overwritten the old one.
    bool shared_labels = false;
    if (labelled && labels_[i].size > 0 && labels_[i].begin == last_labels_from.begin &&
        labels_[i].size == last_labels_from.size) {
      labels_[i] = last_labels_to;
      shared_labels = true;
    }
    // Read before sample `kept` (at most i) overwrites the end of the one before.
    const uint64_t stack_begin = previous_end, stack_end = stack_ends_[i];
    previous_end = stack_end;
    const std::span<const LocationId> stack_i(stack_pool_.data() + stack_begin, stack_end - stack_begin);
    std::span<int64_t> v(values_.data() + i * stride, stride);
    if (drop_zero && std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; })) continue;
    uint64_t h = 0;
    if (!samples_distinct_) {
      h = sample_hash(stack_i, labels(i));
      if (auto j = index.find(*this, h, stack_i, labels(i))) {
        int64_t* into = values_.data() + *j * stride;
        for (size_t k = 0; k < stride; ++k) into[k] = add_saturating(into[k], v[k]);
        continue;
      }
    }
    // Sample i becomes sample `kept` (kept <= i, so nothing unread is overwritten).
    const uint64_t stack_size = stack_end - stack_begin;
    const Range l = labelled ? labels_[i] : Range{};
    std::copy_n(stack_pool_.begin() + static_cast<std::ptrdiff_t>(stack_begin), stack_size,
                stack_pool_.begin() + static_cast<std::ptrdiff_t>(pool_end));
    std::copy_n(v.begin(), stride, values_.begin() + static_cast<std::ptrdiff_t>(kept * stride));
    pool_end += stack_size;
    stack_ends_[kept] = pool_end;
    if (!labelled) {
    } else if (shared_labels) {
      labels_[kept] = l;
    } else {
      // Ranges are laid out in sample order, so label_end <= l.begin: nothing unread moves.
      std::copy_n(label_pool_.begin() + static_cast<std::ptrdiff_t>(l.begin), l.size,
                  label_pool_.begin() + static_cast<std::ptrdiff_t>(label_end));
      labels_[kept] = {label_end, l.size};
      last_labels_from = l;
      last_labels_to = labels_[kept];
      label_end += l.size;
    }
    if (!samples_distinct_) index.insert(h, kept);
    ++kept;
  }
  stack_ends_.resize(kept);
  if (labelled) labels_.resize(kept);
  values_.resize(kept * stride);
  stack_pool_.resize(pool_end);
  label_pool_.resize(label_end);
  samples_distinct_ = true;
}

namespace {

int64_t scaled(int64_t value, double ratio) {
  double v = std::round(static_cast<double>(value) * ratio);
  // 2^63 is exact in double and every double in [-2^63, 2^63) converts exactly, so only
  // values outside that range saturate. NaN (0 x inf, a NaN ratio) has no meaningful
  // count and would be undefined to convert: it becomes 0.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (std::isnan(v)) return 0;
  if (v >= kTwoTo63) return std::numeric_limits<int64_t>::max();
  if (v < -kTwoTo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

}  // namespace

void Profile::scale(std::span<const double> ratios) {
  if (ratios.size() != sample_types.size())
    throw std::logic_error("Profile::scale: one ratio per sample type expected");
  const size_t stride = sample_types.size();
  for (size_t i = 0; i < values_.size(); ++i)
    if (ratios[i % stride] != 1.0) values_[i] = scaled(values_[i], ratios[i % stride]);
  for (CallEdge& e : call_graph.calls)
    for (size_t k = 0; k < e.inclusive.size() && k < stride; ++k)
      if (ratios[k] != 1.0) e.inclusive[k] = scaled(e.inclusive[k], ratios[k]);
}

void Profile::scale(double ratio) {
  std::vector<double> ratios(sample_types.size(), ratio);
  scale(ratios);
}

namespace {

// Gives equal elements of `items` (1-based ids) one representative: the first of them.
template <class T, class Hash>
std::vector<uint32_t> first_equal(const std::vector<T>& items, Hash hash) {
  std::vector<uint32_t> remap(items.size() + 1, 0);
  // (hash, id) in order: the items of one hash side by side, by id. A sorted array, not a
  // hash multimap: one allocation instead of one per item (60k+ locations per profile).
  // Items that are representatives never equal each other, so the one an item equals, if
  // any, is the same whatever order they are compared in.
  std::vector<std::pair<uint64_t, uint32_t>> by_hash(items.size());
  for (uint32_t id = 1; id <= items.size(); ++id) by_hash[id - 1] = {hash(items[id - 1]), id};
  std::sort(by_hash.begin(), by_hash.end());
  for (size_t begin = 0; begin < by_hash.size();) {
    size_t end = begin + 1;
    while (end < by_hash.size() && by_hash[end].first == by_hash[begin].first) ++end;
    for (size_t i = begin; i < end; ++i) {
      const uint32_t id = by_hash[i].second;
      remap[id] = id;
      for (size_t j = begin; j < i; ++j) {
        const uint32_t earlier = by_hash[j].second;
        if (remap[earlier] == earlier && items[earlier - 1] == items[id - 1]) {
          remap[id] = earlier;
          break;
        }
      }
    }
    begin = end;
  }
  return remap;
}

uint64_t hash_function(const Function& f) {
  return mix64(mix64(uint64_t(f.name) << 32 | f.system_name) ^
               (uint64_t(f.filename) << 20) ^ static_cast<uint64_t>(f.start_line));
}
uint64_t hash_mapping(const Mapping& m) {
  return mix64(mix64(m.start ^ mix64(m.limit)) ^ m.offset ^ (uint64_t(m.file) << 32) ^
               m.build_id);
}
uint64_t hash_location(const Location& l) {
  uint64_t h = mix64(l.address ^ (uint64_t(l.mapping) << 40));
  for (const Line& line : l.lines)
    h = mix64(h ^ line.function ^ (static_cast<uint64_t>(line.line) << 24) ^
              (static_cast<uint64_t>(line.column) << 48));
  return h;
}

}  // namespace

void Profile::sort_labels() {
  // Labels are a multimap: their order carries no meaning. String labels first, then
  // numeric ones, each by key name; values under one key keep their order.
  auto before = [this](const Label& a, const Label& b) {
    bool a_num = a.str == 0, b_num = b.str == 0;
    if (a_num != b_num) return b_num;
    return strings[a.key] < strings[b.key];
  };
  for (const Range& r : labels_) {
    if (r.size < 2) continue;
    auto first = label_pool_.begin() + static_cast<std::ptrdiff_t>(r.begin);
    if (std::is_sorted(first, first + r.size, before)) continue;
    std::stable_sort(first, first + r.size, before);
    samples_distinct_ = false;  // two samples may now have equal labels
  }
}

// Edges and jumps: ids through the location dedup, and equal ones summed (first keeps its
// place), as samples are.
void Profile::canonicalize_call_graph(const std::vector<uint32_t>& loc_rep) {
  auto remap = [&](LocationId& id, const char* what) {
    if (id == 0 || id >= loc_rep.size()) throw std::logic_error(std::string(what) + " refers to no location");
    id = loc_rep[id];
  };
  std::vector<CallEdge> calls;
  std::unordered_map<uint64_t, std::vector<size_t>> seen_calls;
  for (CallEdge& e : call_graph.calls) {
    remap(e.caller, "a call edge");
    remap(e.callee, "a call edge");
    e.inclusive.resize(sample_types.size(), 0);
    uint64_t key = mix64(uint64_t(e.caller) << 32 | e.callee) ^ e.part;
    auto& bucket = seen_calls[key];
    bool merged = false;
    for (size_t i : bucket) {
      CallEdge& c = calls[i];
      if (c.caller == e.caller && c.callee == e.callee && c.part == e.part) {
        c.count = add_saturating(c.count, e.count);
        for (size_t k = 0; k < c.inclusive.size(); ++k)
          c.inclusive[k] = add_saturating(c.inclusive[k], e.inclusive[k]);
        merged = true;
        break;
      }
    }
    if (!merged) {
      bucket.push_back(calls.size());
      calls.push_back(std::move(e));
    }
  }
  call_graph.calls = std::move(calls);

  std::vector<Jump> jumps;
  std::unordered_map<uint64_t, std::vector<size_t>> seen_jumps;
  for (Jump& j : call_graph.jumps) {
    remap(j.from, "a jump");
    remap(j.to, "a jump");
    uint64_t key = mix64(uint64_t(j.from) << 32 | j.to) ^ (uint64_t(j.part) << 1 | j.conditional);
    auto& bucket = seen_jumps[key];
    bool merged = false;
    for (size_t i : bucket) {
      Jump& c = jumps[i];
      if (c.from == j.from && c.to == j.to && c.part == j.part && c.conditional == j.conditional) {
        c.executed = add_saturating(c.executed, j.executed);
        c.followed = add_saturating(c.followed, j.followed);
        merged = true;
        break;
      }
    }
    if (!merged) {
      bucket.push_back(jumps.size());
      jumps.push_back(j);
    }
  }
  call_graph.jumps = std::move(jumps);
}

void Profile::canonicalize() {
  // 1. One id per distinct function, mapping and location.
  std::vector<uint32_t> fn_rep = first_equal(functions, hash_function);
  std::vector<uint32_t> map_rep = first_equal(mappings, hash_mapping);
  for (Location& l : locations) {
    if (l.mapping > mappings.size()) throw std::logic_error("location refers to no mapping");
    l.mapping = map_rep[l.mapping];
    for (Line& line : l.lines) {
      if (line.function > functions.size()) throw std::logic_error("line refers to no function");
      line.function = fn_rep[line.function];
    }
  }
  std::vector<uint32_t> loc_rep = first_equal(locations, hash_location);
  sort_labels();
  // Locations are mostly distinct already (readers intern them): then the stacks stay as
  // they are, and the renumbering below checks their ids.
  bool locations_distinct = true;
  for (LocationId id = 1; id <= locations.size() && locations_distinct; ++id)
    locations_distinct = loc_rep[id] == id;
  if (!locations_distinct) {
    for (LocationId& id : stack_pool_) {
      if (id == 0 || id > locations.size()) throw std::logic_error("stack refers to no location");
      if (loc_rep[id] != id) samples_distinct_ = false;  // two stacks may now be equal
      id = loc_rep[id];
    }
  }
  merge_samples(/*drop_zero=*/true);
  canonicalize_call_graph(loc_rep);

  // 2. Renumber by first use.
  // A reader that numbers locations as it meets them, and keeps each one it numbers, has
  // them in first-use order already: a read-only pass says so, and the rewrite of every
  // frame (the 3.9M of a deep 76k-stack profile: 5 ms) is skipped.
  if (call_graph.calls.empty() && call_graph.jumps.empty() && locations_in_first_use_order())
    return renumber_functions_and_strings(map_rep);
  std::vector<uint32_t> loc_new(locations.size() + 1, 0);
  std::vector<Location> new_locations;
  for (LocationId& id : stack_pool_) {
    if (id == 0 || id > locations.size()) throw std::logic_error("stack refers to no location");
    if (loc_new[id] == 0) {
      new_locations.push_back(std::move(locations[id - 1]));
      loc_new[id] = static_cast<uint32_t>(new_locations.size());
    }
    id = loc_new[id];
  }
  // Then the positions that only call edges and jumps refer to.
  auto renumber = [&](LocationId& id) {
    if (loc_new[id] == 0) {
      new_locations.push_back(std::move(locations[id - 1]));
      loc_new[id] = static_cast<uint32_t>(new_locations.size());
    }
    id = loc_new[id];
  };
  for (CallEdge& e : call_graph.calls) renumber(e.caller), renumber(e.callee);
  for (Jump& j : call_graph.jumps) renumber(j.from), renumber(j.to);
  locations = std::move(new_locations);
  renumber_functions_and_strings(map_rep);
}

bool Profile::locations_in_first_use_order() const {
  LocationId next = 1;
  for (LocationId id : stack_pool_) {
    if (id == next) ++next;
    else if (id == 0 || id > next) return false;  // out of order, or no location (an error)
  }
  return next == locations.size() + 1;  // and every location used
}

void Profile::renumber_functions_and_strings(const std::vector<uint32_t>& map_rep) {
  std::vector<uint32_t> fn_new(functions.size() + 1, 0);
  std::vector<Function> new_functions;
  std::vector<uint32_t> map_new(mappings.size() + 1, 0);
  std::vector<Mapping> new_mappings;
  if (!mappings.empty()) {  // mapping 1 is the main binary: it stays first, used or not
    new_mappings.push_back(mappings[0]);
    map_new[1] = 1;
  }
  for (Location& l : locations) {
    for (Line& line : l.lines) {
      if (line.function == 0) continue;
      if (fn_new[line.function] == 0) {
        new_functions.push_back(functions[line.function - 1]);
        fn_new[line.function] = static_cast<uint32_t>(new_functions.size());
      }
      line.function = fn_new[line.function];
    }
    if (l.mapping != 0) {
      if (map_new[l.mapping] == 0) {
        new_mappings.push_back(mappings[l.mapping - 1]);
        map_new[l.mapping] = static_cast<uint32_t>(new_mappings.size());
      }
      l.mapping = map_new[l.mapping];
    }
  }
  // Mappings without samples still describe the process; keep them after the used ones,
  // in address order (not input order, which readers may shuffle, e.g. pprof's
  // main-binary-first rule).
  std::vector<Mapping> unused;
  for (uint32_t id = 1; id <= mappings.size(); ++id)
    if (map_rep[id] == id && map_new[id] == 0) unused.push_back(mappings[id - 1]);
  std::stable_sort(unused.begin(), unused.end(), [this](const Mapping& a, const Mapping& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.limit != b.limit) return a.limit < b.limit;
    if (a.offset != b.offset) return a.offset < b.offset;
    if (strings[a.file] != strings[b.file]) return strings[a.file] < strings[b.file];
    return strings[a.build_id] < strings[b.build_id];
  });
  new_mappings.insert(new_mappings.end(), unused.begin(), unused.end());
  functions = std::move(new_functions);
  mappings = std::move(new_mappings);

  // 3. Strings in order of first use; unused ones dropped.
  StringTable old = std::move(strings);
  strings = StringTable();
  // Each old id is interned once: labels repeat a few strings (tid names, reasons) over
  // every sample, 600k times for 200k timestamped off-CPU samples.
  constexpr StringId kNotYet = ~StringId{0};
  std::vector<StringId> new_id(old.size(), kNotYet);
  auto keep = [&](StringId& id) {
    StringId& renumbered = new_id[id];
    if (renumbered == kNotYet) renumbered = strings.intern(old[id]);
    id = renumbered;
  };
  for (ValueType& t : sample_types) keep(t.type), keep(t.unit);
  for (Label& l : label_pool_) keep(l.key), keep(l.str), keep(l.num_unit);
  for (Mapping& m : mappings) keep(m.file), keep(m.build_id);
  for (Function& f : functions) keep(f.name), keep(f.system_name), keep(f.filename);
  keep(drop_frames);
  keep(keep_frames);
  keep(period_type.type);
  keep(period_type.unit);
  for (StringId& c : comments) keep(c);
  keep(default_sample_type);
  keep(doc_url);
  for (EventInfo& e : call_graph.events) keep(e.long_name);
}

}  // namespace tally::core
