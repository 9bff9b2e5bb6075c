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
  stacks_.push_back({stack_pool_.size(), static_cast<uint32_t>(stack.size())});
  stack_pool_.insert(stack_pool_.end(), stack.begin(), stack.end());
  values_.insert(values_.end(), values.begin(), values.end());
  labels_.push_back({label_pool_.size(), static_cast<uint32_t>(labels.size())});
  label_pool_.insert(label_pool_.end(), labels.begin(), labels.end());
}

void Profile::reserve_samples(size_t samples, size_t frames) {
  stacks_.reserve(samples);
  labels_.reserve(samples);
  values_.reserve(samples * sample_types.size());
  stack_pool_.reserve(frames);
}

void Profile::clear_samples() {
  stack_pool_.clear();
  stacks_.clear();
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

void Profile::merge_identical_samples() {
  Profile merged;
  merged.sample_types = sample_types;  // only the sample arrays of `merged` are used
  merged.reserve_samples(sample_count(), stack_pool_.size());
  SampleMerger merger(merged);
  for (size_t i = 0; i < sample_count(); ++i) merger.add(stack(i), values(i), labels(i));
  stack_pool_ = std::move(merged.stack_pool_);
  stacks_ = std::move(merged.stacks_);
  values_ = std::move(merged.values_);
  label_pool_ = std::move(merged.label_pool_);
  labels_ = std::move(merged.labels_);
}

void Profile::scale(std::span<const double> ratios) {
  if (ratios.size() != sample_types.size())
    throw std::logic_error("Profile::scale: one ratio per sample type expected");
  const size_t stride = sample_types.size();
  for (size_t i = 0; i < values_.size(); ++i) {
    double r = ratios[i % stride];
    if (r == 1.0) continue;
    double v = std::round(static_cast<double>(values_[i]) * r);
    // 2^63 is exact in double and every double in [-2^63, 2^63) converts exactly, so
    // only values outside that range saturate. NaN (0 x inf, a NaN ratio) has no
    // meaningful count and would be undefined to convert: it becomes 0.
    constexpr double kTwoTo63 = 9223372036854775808.0;
    if (std::isnan(v)) values_[i] = 0;
    else if (v >= kTwoTo63) values_[i] = std::numeric_limits<int64_t>::max();
    else if (v < -kTwoTo63) values_[i] = std::numeric_limits<int64_t>::min();
    else values_[i] = static_cast<int64_t>(v);
  }
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
  std::unordered_multimap<uint64_t, uint32_t> seen;
  for (uint32_t id = 1; id <= items.size(); ++id) {
    const T& item = items[id - 1];
    uint64_t h = hash(item);
    uint32_t rep = id;
    auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      if (items[it->second - 1] == item) {
        rep = it->second;
        break;
      }
    }
    if (rep == id) seen.emplace(h, id);
    remap[id] = rep;
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
    auto first = label_pool_.begin() + static_cast<std::ptrdiff_t>(r.begin);
    std::stable_sort(first, first + r.size, before);
  }
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
  for (LocationId& id : stack_pool_) {
    if (id == 0 || id > locations.size()) throw std::logic_error("stack refers to no location");
    id = loc_rep[id];
  }
  merge_identical_samples();

  // 2. Renumber by first use.
  std::vector<uint32_t> loc_new(locations.size() + 1, 0);
  std::vector<Location> new_locations;
  for (LocationId& id : stack_pool_) {
    if (loc_new[id] == 0) {
      new_locations.push_back(std::move(locations[id - 1]));
      loc_new[id] = static_cast<uint32_t>(new_locations.size());
    }
    id = loc_new[id];
  }
  locations = std::move(new_locations);

  std::vector<uint32_t> fn_new(functions.size() + 1, 0);
  std::vector<Function> new_functions;
  std::vector<uint32_t> map_new(mappings.size() + 1, 0);
  std::vector<Mapping> new_mappings;
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
  auto keep = [&](StringId& id) { id = strings.intern(old[id]); };
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
}

}  // namespace tally::core
