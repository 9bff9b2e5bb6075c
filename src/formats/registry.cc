#include <fmt/format.h>

#include "formats/dcpi/dcpi_convert.h"
#include "formats/format.h"
#include "formats/gperf/gperf_convert.h"
#include "io/progress.h"

namespace tally::formats {

namespace {

struct FormatInfo {
  Format format;
  std::string_view name;
  std::string_view description;
  bool writable;
};

constexpr FormatInfo kFormats[] = {
    {Format::gperf, "gperf", "gperftools CPU profile", true},
    {Format::dcpi, "dcpi", "DCPI profile (pdb-0.x)", true},
};

}  // namespace

std::string_view format_name(Format f) {
  for (const auto& i : kFormats)
    if (i.format == f) return i.name;
  return "unknown";
}

std::string_view format_description(Format f) {
  for (const auto& i : kFormats)
    if (i.format == f) return i.description;
  return "unknown format";
}

std::optional<Format> parse_format_name(std::string_view name) {
  for (const auto& i : kFormats)
    if (i.name == name) return i.format;
  return std::nullopt;
}

std::string writable_format_names() {
  std::string out;
  for (const auto& i : kFormats)
    if (i.writable) out += (out.empty() ? "" : "|") + std::string(i.name);
  return out;
}

core::Expected<core::Profile> read_profile(const io::Input& input, core::Diagnostics& diagnostics,
                                           Format* detected) {
  Format f = detect(input.bytes());
  if (detected) *detected = f;
  switch (f) {
    case Format::gperf: {
      // Show progress, and let the kernel drop the pages already parsed: a 300 MB profile
      // is read without 300 MB of resident memory.
      struct Context {
        io::Progress progress;
        const io::Input& input;
      } context{io::Progress("reading " + input.name(), input.bytes().size()), input};
      auto on_progress = [](uint64_t done, void* ctx) {
        auto* c = static_cast<Context*>(ctx);
        c->progress.update(done);
        c->input.release_before(done);
      };
      return gperf::read_profile(input.bytes(), input.name(), diagnostics, on_progress, &context);
    }
    case Format::dcpi: {
      auto file = dcpi::read_dcpi(input.bytes(), input.name(), diagnostics);
      if (!file) return file.error();
      return dcpi::to_profile(*file, input.name(), diagnostics);
    }
    case Format::unknown:
      break;
  }
  return core::Error{input.name() + ": unrecognised profile format (tally reads: gperftools CPU "
                                    "profiles, DCPI pdb-0.x files; gzip-compressed or not)"};
}

core::Expected<std::vector<OutputFile>> write_profile(const core::Profile& profile, Format format,
                                                      core::Diagnostics& diagnostics) {
  std::vector<OutputFile> out;
  switch (format) {
    case Format::gperf: {
      auto file = gperf::from_profile(profile, diagnostics);
      if (!file) return file.error();
      out.push_back({"", gperf::write_gperf(*file)});
      return out;
    }
    case Format::dcpi: {
      auto images = dcpi::from_profile(profile, diagnostics);
      if (!images) return images.error();
      for (auto& image : *images) {
        auto bytes = dcpi::write_dcpi(image.file);
        if (!bytes) return bytes.error();
        out.push_back({image.name + ".dcpi", std::move(*bytes)});
      }
      return out;
    }
    case Format::unknown:
      break;
  }
  return core::Error{"cannot write format " + std::string(format_name(format))};
}

}  // namespace tally::formats
