// The `perf script` reader on any bytes: looks_like_perf_script and read_profile; on
// success every id in the profile must refer to something that exists, every sample must
// have one value per sample type, and the samples count must add up.
#include <cstdint>

#include "formats/perfscript/perf_script.h"
#include "fuzz_check.h"

using namespace tally;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  (void)perfscript::looks_like_perf_script(bytes);
  core::Diagnostics diagnostics;
  auto profile = perfscript::read_profile(bytes, "fuzz", diagnostics);
  if (!profile) {
    FUZZ_CHECK(profile.error().message.rfind("fuzz: line ", 0) == 0,
               "errors name the line where they happened");
    return 0;
  }
  const core::Profile& p = *profile;
  const size_t strings = p.strings.size();
  FUZZ_CHECK(p.sample_types.size() >= 2, "samples/count and at least one event");
  for (const core::ValueType& t : p.sample_types)
    FUZZ_CHECK(t.type < strings && t.unit < strings, "sample type strings exist");
  FUZZ_CHECK(p.period_type.type < strings && p.default_sample_type < strings,
             "period type strings exist");
  FUZZ_CHECK(p.sample_count() > 0, "a profile read without error has samples");
  FUZZ_CHECK(p.duration_nanos >= 0, "duration is last minus first sample time");
  int64_t events = 0;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    FUZZ_CHECK(p.values(i).size() == p.sample_types.size(), "one value per sample type");
    FUZZ_CHECK(p.values(i)[0] >= 1, "every sample counts at least once");
    for (core::LocationId id : p.stack(i))
      FUZZ_CHECK(id >= 1 && id <= p.locations.size(), "stack location ids exist");
    for (const core::Label& l : p.labels(i))
      FUZZ_CHECK(l.key < strings && l.str < strings && l.num_unit < strings,
                 "label strings exist");
    events += p.values(i)[0];
  }
  FUZZ_CHECK(events == p.total(0), "sample counts add up");
  for (const core::Location& l : p.locations) {
    FUZZ_CHECK(l.mapping <= p.mappings.size(), "location mapping ids exist");
    for (const core::Line& line : l.lines)
      FUZZ_CHECK(line.function >= 1 && line.function <= p.functions.size(),
                 "line function ids exist");
  }
  for (const core::Function& f : p.functions)
    FUZZ_CHECK(f.name < strings && f.system_name < strings && f.filename < strings,
               "function strings exist");
  for (const core::Mapping& m : p.mappings)
    FUZZ_CHECK(m.file < strings && m.build_id < strings, "mapping strings exist");
  return 0;
}
