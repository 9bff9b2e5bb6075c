#include "exercise_readers.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <exception>

#include "formats/dcpi/dcpi_convert.h"
#include "formats/dcpi/dcpi_file.h"
#include "formats/format.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/gperf/gperf_file.h"
#include "io/input.h"
#include "support/test_support.h"

namespace tally::test {

namespace {

// Every id in the profile refers to something that exists.
void expect_well_formed(const core::Profile& p, const std::string& what) {
  const size_t strings = p.strings.size();
  EXPECT_FALSE(p.sample_types.empty()) << what;
  for (const auto& t : p.sample_types) {
    EXPECT_LT(t.type, strings) << what;
    EXPECT_LT(t.unit, strings) << what;
  }
  for (size_t s = 0; s < p.sample_count(); ++s) {
    EXPECT_EQ(p.values(s).size(), p.sample_types.size()) << what;
    for (core::LocationId id : p.stack(s)) {
      if (id == 0 || id > p.locations.size()) {
        ADD_FAILURE() << what << ": sample " << s << " refers to location " << id << " of "
                      << p.locations.size();
        return;
      }
    }
  }
  for (const core::Location& l : p.locations) {
    if (l.mapping > p.mappings.size()) {
      ADD_FAILURE() << what << ": location refers to mapping " << l.mapping << " of "
                    << p.mappings.size();
      return;
    }
    for (const core::Line& line : l.lines) EXPECT_LE(line.function, p.functions.size()) << what;
  }
  for (const core::Mapping& m : p.mappings) {
    EXPECT_LT(m.file, strings) << what;
    EXPECT_LT(m.build_id, strings) << what;
  }
}

// A reader's error names its input and says something.
void expect_located(const core::Error& e, const std::string& source, const std::string& what) {
  EXPECT_FALSE(e.message.empty()) << what;
  EXPECT_NE(e.message.find(source), std::string::npos) << what << ": " << e.message;
}

// What tally writes from a profile it read, tally must read back.
void write_and_read_back(const core::Profile& p, const std::string& source) {
  for (formats::Format to : {formats::Format::gperf, formats::Format::dcpi}) {
    core::Diagnostics diagnostics;
    auto files = formats::write_profile(p, to, diagnostics);
    const std::string what = source + " written as " + std::string(formats::format_name(to));
    if (!files) {
      EXPECT_FALSE(files.error().message.empty()) << what;
      continue;
    }
    for (const formats::OutputFile& f : *files) {
      auto in = io::Input::from_bytes("rewritten", {f.bytes.begin(), f.bytes.end()});
      core::Diagnostics again;
      formats::Format detected = formats::Format::unknown;
      auto back = formats::read_profile(in, again, &detected);
      if (!back) {
        ADD_FAILURE() << what << ": tally cannot read its own output: " << back.error().message;
        continue;
      }
      EXPECT_EQ(detected, to) << what;
      expect_well_formed(*back, what + ", read back");
    }
  }
}

void exercise_gperf(std::span<const uint8_t> bytes, const std::string& source,
                    ReadOutcomes& outcomes) {
  core::Diagnostics diagnostics;
  auto file = gperf::read_gperf(bytes, source, diagnostics);
  if (!file) {
    ++outcomes.errors;
    expect_located(file.error(), source, "read_gperf");
  } else {
    ++outcomes.gperf_files_read;
    // The faithful struct gives back the very bytes it was read from.
    std::string again = gperf::write_gperf(*file);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), bytes_of(again).begin(),
                           bytes_of(again).end()))
        << source << ": read_gperf -> write_gperf changed the bytes";
  }
  auto streamed = gperf::read_profile(bytes, source, diagnostics);
  if (streamed) expect_well_formed(*streamed, source + " (gperf::read_profile)");
  else expect_located(streamed.error(), source, "gperf::read_profile");
  if (!file) {
    EXPECT_FALSE(streamed) << source << ": only the streaming reader accepts it";
    return;
  }
  // Reading via the faithful struct and streaming give the same verdict.
  auto p = gperf::to_profile(*file, source, diagnostics);
  if (p) expect_well_formed(*p, source + " (gperf::to_profile)");
  else expect_located(p.error(), source, "gperf::to_profile");
  EXPECT_EQ(p.has_value(), streamed.has_value())
      << source << ": " << (p ? streamed.error().message : p.error().message);
}

void exercise_dcpi(std::span<const uint8_t> bytes, const std::string& source,
                   ReadOutcomes& outcomes) {
  core::Diagnostics diagnostics;
  auto file = dcpi::read_dcpi(bytes, source, diagnostics);
  if (!file) {
    ++outcomes.errors;
    expect_located(file.error(), source, "read_dcpi");
    return;
  }
  ++outcomes.dcpi_files_read;
  auto fields = dcpi::parse_fields(*file, source);
  EXPECT_TRUE(fields.has_value()) << source << ": read_dcpi accepted a header parse_fields refuses";
  auto written = dcpi::write_dcpi(*file);
  if (written) {
    // Spacing may be normalised, the content may not change.
    auto again = dcpi::read_dcpi(bytes_of(*written), source, diagnostics);
    if (!again) {
      ADD_FAILURE() << source << ": write_dcpi output unreadable: " << again.error().message;
    } else {
      EXPECT_EQ(again->header, file->header) << source;
      EXPECT_EQ(again->chunks, file->chunks) << source;
    }
  } else {
    EXPECT_FALSE(written.error().message.empty());
  }
  auto p = dcpi::to_profile(*file, source, diagnostics);
  if (!p) {
    expect_located(p.error(), source, "dcpi::to_profile");
    return;
  }
  expect_well_formed(*p, source + " (dcpi::to_profile)");
  auto images = dcpi::from_profile(*p, diagnostics);
  if (images) {
    for (const dcpi::Image& image : *images) {
      auto bytes_out = dcpi::write_dcpi(image.file);
      if (!bytes_out) continue;
      EXPECT_TRUE(dcpi::read_dcpi(bytes_of(*bytes_out), source, diagnostics))
          << source << ": dcpi -> profile -> dcpi is unreadable";
    }
  }
}

}  // namespace

std::string describe(const ReadOutcomes& o) {
  return "inputs " + std::to_string(o.inputs) + ", profiles read " +
         std::to_string(o.profiles_read) + ", gperf files read " +
         std::to_string(o.gperf_files_read) + ", dcpi files read " +
         std::to_string(o.dcpi_files_read) + ", refused " + std::to_string(o.errors);
}

OutcomeReport::~OutcomeReport() { std::printf("%s\n", describe(outcomes_).c_str()); }

void exercise_readers(std::span<const uint8_t> bytes, const std::string& source,
                      ReadOutcomes& outcomes) {
  ++outcomes.inputs;
  // Inputs here are a few KB: anything slow is a loop that does not end in time. CPU time,
  // not wall time, which also counts the waits of a loaded machine.
  const double start = process_cpu_seconds();
  try {
    core::Diagnostics diagnostics;
    auto input = io::Input::from_bytes(source, {bytes.begin(), bytes.end()});
    auto profile = formats::read_profile(input, diagnostics);
    if (profile) {
      ++outcomes.profiles_read;
      expect_well_formed(*profile, source + " (formats::read_profile)");
      write_and_read_back(*profile, source);
    } else {
      expect_located(profile.error(), source, "formats::read_profile");
    }
    exercise_gperf(bytes, source, outcomes);
    exercise_dcpi(bytes, source, outcomes);
  } catch (const std::exception& e) {
    ADD_FAILURE() << source << ": exception escaped a reader or writer: " << e.what();
  } catch (...) {
    ADD_FAILURE() << source << ": unknown exception escaped a reader or writer";
  }
  EXPECT_LT(process_cpu_seconds() - start, 2.0) << source;
}

}  // namespace tally::test
