#include <fmt/format.h>

#include "formats/callgrind/callgrind.h"
#include "formats/dcpi/dcpi_convert.h"
#include "core/sample_counts.h"
#include "formats/folded/folded.h"
#include "formats/format.h"
#include "formats/gperf/gperf_convert.h"
#include "formats/perfscript/perf_script.h"
#include "formats/pprof/pprof.h"
#include "io/progress.h"

namespace tally::formats {

namespace {

struct FormatInfo {
  Format format;
  std::string_view name;
  std::string_view description;
  bool writable;
  bool has_comments;
};

constexpr FormatInfo kFormats[] = {
    {Format::gperf, "gperf", "gperftools CPU profile", true, false},
    {Format::dcpi, "dcpi", "DCPI profile (pdb-0.x)", true, false},
    {Format::pprof, "pprof", "pprof profile.proto", true, true},
    {Format::perf_script, "perf-script", "perf script text (Linux perf)", false, false},
    {Format::folded, "folded", "folded stacks (FlameGraph, inferno)", true, false},
    {Format::callgrind, "callgrind", "Callgrind (valgrind, KCachegrind, pprof -callgrind)", true, true},
};

const FormatInfo* info(Format f) {
  for (const auto& i : kFormats)
    if (i.format == f) return &i;
  return nullptr;
}

// Shows progress, and lets the kernel drop the pages already parsed: a 300 MB profile is
// read without 300 MB of resident memory.
struct ReadProgress {
  explicit ReadProgress(const io::Input& in)
      : progress("reading " + in.name(), in.bytes().size()), input(in) {}
  static void update(uint64_t done, void* self) {
    auto* p = static_cast<ReadProgress*>(self);
    p->progress.update(done);
    p->input.release_before(done);
  }
  io::Progress progress;
  const io::Input& input;
};

core::Expected<core::Profile> read_gperf(const io::Input& input, core::Diagnostics& diagnostics,
                                         const gperf::BinaryInspector* binaries) {
  ReadProgress progress(input);
  return gperf::read_profile(input.bytes(), input.name(), diagnostics,
                             {.binaries = binaries,
                              .on_progress = ReadProgress::update,
                              .progress_context = &progress});
}

core::Expected<core::Profile> read_callgrind(const io::Input& input, core::Diagnostics& diagnostics,
                                             core::PositionDetail detail,
                                             core::PositionCounts* counts) {
  ReadProgress progress(input);
  return callgrind::read_profile(input.bytes(), input.name(), diagnostics, ReadProgress::update,
                                 &progress, detail, counts);
}

}  // namespace

std::string_view format_name(Format f) {
  const FormatInfo* i = info(f);
  return i ? i->name : "unknown";
}

std::string_view format_description(Format f) {
  const FormatInfo* i = info(f);
  return i ? i->description : "unknown format";
}

std::optional<Format> parse_format_name(std::string_view name) {
  for (const auto& i : kFormats)
    if (i.name == name) return i.format;
  return std::nullopt;
}

std::string readable_format_names() {
  std::string out;
  for (const auto& i : kFormats) out += (out.empty() ? "" : ", ") + std::string(i.description);
  return out;
}

std::string writable_format_names() {
  std::string out;
  for (const auto& i : kFormats)
    if (i.writable) out += (out.empty() ? "" : "|") + std::string(i.name);
  return out;
}

core::Expected<core::Profile> read_profile(io::Input&& input, core::Diagnostics& diagnostics,
                                           Format* detected, bool canonical,
                                           const gperf::BinaryInspector* binaries,
                                           core::PositionDetail detail,
                                           core::PositionCounts* counts) {
  io::Input owned = std::move(input);
  Format f = detect(owned.bytes());
  if (f != Format::pprof) return read_profile(owned, diagnostics, detected, binaries, detail, counts);
  if (detected) *detected = f;
  auto p = pprof::decode_profile(owned.bytes(), owned.name(), diagnostics);
  owned = io::Input::from_bytes(owned.name(), {});  // the bytes are decoded: free them
  if (p && canonical) p->canonicalize();
  return p;
}

core::Expected<core::Profile> read_profile(const io::Input& input, core::Diagnostics& diagnostics,
                                           Format* detected,
                                           const gperf::BinaryInspector* binaries,
                                           core::PositionDetail detail,
                                           core::PositionCounts* counts) {
  Format f = detect(input.bytes());
  if (detected) *detected = f;
  switch (f) {
    case Format::gperf:
      return read_gperf(input, diagnostics, binaries);
    case Format::dcpi: {
      auto file = dcpi::read_dcpi(input.bytes(), input.name(), diagnostics);
      if (!file) return file.error();
      return dcpi::to_profile(*file, input.name(), diagnostics);
    }
    case Format::pprof:
      return pprof::read_profile(input.bytes(), input.name(), diagnostics);
    case Format::perf_script:
      return perfscript::read_profile(input.bytes(), input.name(), diagnostics);
    case Format::folded:
      return folded::read_profile(input.bytes(), input.name(), diagnostics);
    case Format::callgrind:
      return read_callgrind(input, diagnostics, detail, counts);
    case Format::unknown:
      break;
  }
  return core::Error{input.name() + ": unrecognised profile format (tally reads: " +
                     readable_format_names() + "; gzip-compressed or not)"};
}

core::Expected<std::vector<OutputFile>> write_profile(core::Profile input, Format format,
                                                      core::Diagnostics& diagnostics,
                                                      const WriteOptions& options) {
  const FormatInfo* fi = info(format);
  if (!fi || !fi->writable)
    return core::Error{"cannot write format " + std::string(format_name(format)),
                       core::ErrorKind::unsupported};
  if (input.call_graph.present && format != Format::callgrind) {
    if (!options.approximate)
      return core::Error{fmt::format(
          "this is a call-graph profile (self costs and call edges, as callgrind writes them), "
          "not stacks: {} holds stacks only. --approximate writes each self cost as a one-frame "
          "stack and drops the {} call edges", format_name(format), input.call_graph.calls.size()),
          core::ErrorKind::unsupported};
    auto stacks = callgrind::approximate_stacks(input, diagnostics);
    if (!stacks) return stacks.error();
    input = std::move(*stacks);
  }
  std::vector<OutputFile> out;
  switch (format) {
    case Format::gperf: {
      auto file = gperf::from_profile(input, diagnostics);
      if (!file) return file.error();
      out.push_back({"", gperf::write_gperf(*file)});
      break;
    }
    case Format::dcpi: {
      auto images = dcpi::from_profile(input, diagnostics);
      if (!images) return images.error();
      for (auto& image : *images) {
        auto bytes = dcpi::write_dcpi(image.file);
        if (!bytes) return bytes.error();
        out.push_back({image.name + ".dcpi", std::move(*bytes)});
      }
      break;
    }
    case Format::pprof: {
      // Say in the output itself what was lost on the way.
      for (const auto& w : diagnostics.warnings()) input.comments.push_back(input.intern("tally: " + w));
      out.push_back({"", pprof::write_profile(std::move(input))});
      break;
    }
    case Format::folded: {
      auto index = core::find_value_index(input, options.value);
      if (!index) return index.error();
      auto text = folded::write_folded(input, *index, diagnostics);
      if (!text) return text.error();
      out.push_back({"", std::move(*text)});
      break;
    }
    case Format::callgrind: {
      for (const auto& w : diagnostics.warnings()) input.comments.push_back(input.intern("tally: " + w));
      auto text = callgrind::write_callgrind(
          input, {.compress_names = options.compress_names, .compress_positions = options.compress_positions},
          diagnostics);
      if (!text) return text.error();
      out.push_back({"", std::move(*text)});
      break;
    }
    case Format::perf_script:
    case Format::unknown:
      break;
  }
  return out;
}

}  // namespace tally::formats
