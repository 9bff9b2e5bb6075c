// core::Profile: the one in-memory model that every reader fills and every writer and
// report consumes (design.md). Modelled on pprof's profile.proto: value types, samples
// (stack of location ids, leaf first, one value per type, labels), locations, functions,
// mappings, interned strings, period, time, comments, plus ordered attributes for header
// data a format carries that the model has no field for.
//
// Ids of mappings, locations and functions are 1-based (0 means "none"), as in pprof.
// Samples live in flat pools rather than one heap object each: a profile of a million
// 32-frame stacks is then a few large arrays instead of a million small allocations.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/call_graph.h"
#include "core/huge_page_allocator.h"
#include "core/line_list.h"
#include "core/string_table.h"

namespace tally::core {

using MappingId = uint32_t;
using LocationId = uint32_t;

struct ValueType {
  StringId type = 0;  // "samples", "cpu", "cycles"
  StringId unit = 0;  // "count", "nanoseconds"
  bool operator==(const ValueType&) const = default;
};

// A sample label: either a string value (str != 0) or a number with an optional unit.
struct Label {
  StringId key = 0;
  StringId str = 0;
  int64_t num = 0;
  StringId num_unit = 0;
  bool operator==(const Label&) const = default;
};

struct Mapping {
  uint64_t start = 0;   // first address
  uint64_t limit = 0;   // one past the last address
  uint64_t offset = 0;  // file offset mapped at `start`
  StringId file = 0;
  StringId build_id = 0;
  bool has_functions = false;
  bool has_filenames = false;
  bool has_line_numbers = false;
  bool has_inline_frames = false;
  bool operator==(const Mapping&) const = default;
};

struct Function {
  StringId name = 0;         // demangled, human-readable
  StringId system_name = 0;  // as in the symbol table (mangled)
  StringId filename = 0;
  int64_t start_line = 0;
  bool operator==(const Function&) const = default;
};

// 48 bytes, in this order: profiles have 100k+ locations.
struct Location {
  MappingId mapping = 0;  // 0: not in any known mapping
  bool is_folded = false;
  uint64_t address = 0;   // 0: unknown (symbol-only profiles)
  LineList lines;         // innermost (inlined) frame first
  bool operator==(const Location&) const = default;
};
static_assert(sizeof(Location) == 48);

class Profile {
 public:
  StringTable strings;

  std::vector<ValueType> sample_types;
  StringId default_sample_type = 0;
  ValueType period_type;
  int64_t period = 0;
  int64_t time_nanos = 0;
  int64_t duration_nanos = 0;
  StringId drop_frames = 0;
  StringId keep_frames = 0;
  StringId doc_url = 0;
  std::vector<StringId> comments;
  // Format-specific header data, in the order the format gave it (e.g. "dcpi.platform").
  std::vector<std::pair<std::string, std::string>> attributes;

  // The call-graph shape (callgrind); `call_graph.present` is false for stack profiles.
  CallGraph call_graph;

  std::vector<Mapping> mappings;    // mappings[id - 1]
  std::vector<Location> locations;  // locations[id - 1]
  std::vector<Function> functions;  // functions[id - 1]

  // Convenience for building.
  StringId intern(std::string_view s) { return strings.intern(s); }
  std::string_view str(StringId id) const { return strings[id]; }
  ValueType value_type(std::string_view type, std::string_view unit) {
    return {intern(type), intern(unit)};
  }
  MappingId add_mapping(const Mapping& m);
  LocationId add_location(Location l);
  FunctionId add_function(const Function& f);
  const Mapping& mapping(MappingId id) const { return mappings[id - 1]; }
  Mapping& mapping(MappingId id) { return mappings[id - 1]; }
  const Location& location(LocationId id) const { return locations[id - 1]; }
  Location& location(LocationId id) { return locations[id - 1]; }
  const Function& function(FunctionId id) const { return functions[id - 1]; }
  Function& function(FunctionId id) { return functions[id - 1]; }

  // Attributes: the first value under `key`, or "" when absent.
  std::string_view attribute(std::string_view key) const;
  void set_attribute(std::string key, std::string value);

  // Samples. Every sample has exactly sample_types.size() values; set the sample types
  // before adding samples.
  size_t sample_count() const { return stack_ends_.size(); }
  std::span<const LocationId> stack(size_t i) const {
    const uint64_t begin = i == 0 ? 0 : stack_ends_[i - 1];
    return {stack_pool_.data() + begin, static_cast<size_t>(stack_ends_[i] - begin)};
  }
  std::span<const int64_t> values(size_t i) const {
    return {values_.data() + i * sample_types.size(), sample_types.size()};
  }
  std::span<int64_t> values(size_t i) {
    return {values_.data() + i * sample_types.size(), sample_types.size()};
  }
  std::span<const Label> labels(size_t i) const {
    if (labels_.empty()) return {};
    return {label_pool_.data() + labels_[i].begin, labels_[i].size};
  }
  void add_sample(std::span<const LocationId> stack, std::span<const int64_t> values,
                  std::span<const Label> labels = {});
  // add_sample for a caller that knows this sample equals none before it (its labels
  // differ, e.g. a thread's timestamp): a profile whose samples were all added so, or
  // merged, needs no hash table to merge them in canonicalize().
  void add_distinct_sample(std::span<const LocationId> stack, std::span<const int64_t> values,
                           std::span<const Label> labels = {});
  void reserve_samples(size_t samples, size_t frames, size_t labels = 0);
  void clear_samples();

  // Sum of values of type `index` over all samples.
  int64_t total(size_t index) const;
  // Index of the sample type with this type name, or -1.
  int sample_type_index(std::string_view type) const;

  // --- Operations on the model ---

  // Sums samples with identical stacks and labels into the first of them.
  void merge_identical_samples();
  // Multiplies every value of sample type i by ratios[i], rounding to nearest.
  void scale(std::span<const double> ratios);
  void scale(double ratio);
  // The canonical form every writer emits, in the order google/pprof's merge and encoder
  // use: labels sorted; identical samples merged (the first keeps its place) and samples
  // whose values are all zero dropped; locations numbered by first use walking the samples
  // leaf to root, functions by first use from the locations; mapping 1 (the main binary)
  // kept first, then the used mappings by first use, then unused ones by address; unused
  // locations, functions and strings dropped; strings by first use. The same content in
  // the same sample order always gives the same numbering, hence byte-identical output.
  // Call edges and jumps go through the same location dedup and are summed when equal;
  // positions only they refer to are numbered after the samples' locations.
  void canonicalize();
  // Orders each sample's labels: string labels, then numeric ones, each by key name.
  void sort_labels();

 private:
  void merge_samples(bool drop_zero);
  void canonicalize_call_graph(const std::vector<uint32_t>& loc_rep);
  // Whether the samples' stacks use every location, each first met in id order.
  bool locations_in_first_use_order() const;
  // canonicalize()'s steps after the locations' renumbering (`map_rep`: each mapping's
  // first equal).
  void renumber_functions_and_strings(const std::vector<uint32_t>& map_rep);

  struct Range {
    uint64_t begin = 0;
    uint32_t size = 0;
  };
  friend class SampleMerger;

  // No two samples have equal stacks and labels: set by merging, cleared by add_sample.
  // Lets canonicalize() skip the merge, the expensive part, when a reader merged already.
  bool samples_distinct_ = true;

  BigVector<LocationId> stack_pool_;
  // Where each sample's stack ends in stack_pool_ (it starts where the one before ends):
  // stacks are laid out in sample order, and 8 bytes a sample is half of a Range.
  BigVector<uint64_t> stack_ends_;
  BigVector<int64_t> values_;
  BigVector<Label> label_pool_;
  BigVector<Range> labels_;  // one per sample, or none while no sample has labels
};

}  // namespace tally::core
