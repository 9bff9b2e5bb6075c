// Reads what `pprof -raw -symbolize=none FILE` prints (google/pprof's Profile.String()):
//   samples/count cpu/nanoseconds        (after "Samples:")
//          23   23000000: 1 2 3          values, then location ids leaf first
//   Locations
//        1: 0x55fdbeefb794 M=1           id: address [M=mapping id]
//   Mappings
//   1: 0x55fdbeefb000/0x55fdbeefc000/0x1000 /path/file  [build id] [flags]
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "profile_view.h"

namespace tally::test {

struct PprofRaw {
  struct Sample {
    std::vector<int64_t> values;
    std::vector<uint64_t> location_ids;
  };
  struct Location {
    uint64_t address = 0;
    uint64_t mapping_id = 0;  // 0: none
  };
  int64_t period = 0;
  std::vector<Sample> samples;
  std::map<uint64_t, Location> locations;
  std::map<uint64_t, MappingView> mappings;

  // Samples as (first value, addresses), sorted.
  std::vector<WeightedStack> weighted_stacks() const;
  // The mapping pprof assigned to each location, by address.
  std::map<uint64_t, MappingView> mapping_by_address() const;
};

// Throws std::runtime_error on text it does not understand.
PprofRaw parse_pprof_raw(const std::string& text);

// Runs `pprof -raw -symbolize=none file` and parses its output; throws when pprof fails.
PprofRaw run_pprof_raw(const std::string& pprof, const std::string& file);

}  // namespace tally::test
