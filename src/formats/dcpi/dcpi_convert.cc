#include "formats/dcpi/dcpi_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>

#include "core/checked_math.h"
#include "core/hash.h"
#include "core/sample_counts.h"

namespace tally::dcpi {

namespace {

constexpr std::string_view kPrefix = "dcpi.";
// tally's own header lines (unknown lines to other readers, which keep them): the unit of
// the event ("count" if absent), and the file offset mapped at tstart (0 if absent), which
// symbolization of a running process's addresses needs.
constexpr std::string_view kUnitKey = "eventunit";
constexpr std::string_view kFileOffsetKey = "tfileoffset";

}  // namespace

core::Expected<core::Profile> to_profile(const DcpiFile& file, const std::string& source,
                                         core::Diagnostics& diagnostics) {
  (void)diagnostics;
  auto fields = parse_fields(file, source);
  if (!fields) return fields.error();
  core::Profile p;
  std::string unit(file.value(kUnitKey).value_or("count"));
  if (fields->period > uint64_t(INT64_MAX))
    return core::Error{source + ": period " + std::to_string(fields->period) + " is too large"};
  const auto period = static_cast<int64_t>(fields->period);
  p.sample_types = {p.value_type("samples", "count"), p.value_type(fields->event, unit)};
  p.period_type = p.value_type(fields->event, unit);
  p.period = period;
  p.time_nanos = core::mul_saturating(fields->epoch.unix_seconds(), 1'000'000'000);
  uint64_t file_offset = 0;
  if (auto text = file.value(kFileOffsetKey)) {
    // Hex digits only, as written: strtoull alone would also take "0x", "-" and blanks.
    if (text->empty() || text->size() > 16 ||
        !std::all_of(text->begin(), text->end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      return core::Error{source + ": expected hex digits after 'tfileoffset', found '" +
                         std::string(*text) + "'"};
    file_offset = std::strtoull(std::string(*text).c_str(), nullptr, 16);
  }
  for (const HeaderLine& l : file.header)
    if (l.key != kUnitKey && l.key != kFileOffsetKey)
      p.attributes.emplace_back(std::string(kPrefix) + l.key, l.value);

  uint64_t limit = fields->tsize > UINT64_MAX - fields->tstart ? UINT64_MAX
                                                                : fields->tstart + fields->tsize;
  // The image id is the image's identity, the role a build id plays: kept there, it names
  // the image again when the profile is written back as DCPI.
  core::MappingId m = p.add_mapping({.start = fields->tstart, .limit = limit, .offset = file_offset,
                                     .file = p.intern(fields->path.value_or("")),
                                     .build_id = p.intern(fields->image)});
  p.reserve_samples(file.total_offsets(), file.total_offsets());
  for (const Chunk& c : file.chunks) {
    for (size_t i = 0; i < c.counts.size(); ++i) {
      if (c.counts[i] == 0) continue;
      core::LocationId loc = p.add_location(
          {.mapping = m, .address = fields->tstart + c.offset + i, .lines = {}});
      const int64_t n = c.counts[i];
      int64_t values[2] = {n, core::mul_saturating(n, period)};
      p.add_sample(std::span(&loc, 1), values);
    }
  }
  return p;
}

namespace {

std::string image_id(const core::Profile& p, const core::Mapping& m) {
  std::string_view build_id = p.str(m.build_id);
  if (!build_id.empty() && std::all_of(build_id.begin(), build_id.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c));
      }))
    return std::string(build_id);
  return fmt::format("{:016x}", core::fnv1a64(p.str(m.file)));
}

bool is_major_0(std::string_view version) {
  if (!version.starts_with("pdb-0.") || version.size() == 6) return false;
  return std::all_of(version.begin() + 6, version.end(),
                     [](char c) { return c >= '0' && c <= '9'; });
}

// The unnamed mapping of the whole address space that readers (like pprof) give to
// addresses outside every mapping: no image, so no DCPI file.
bool is_catch_all(const core::Mapping& m) {
  return m.start == 0 && m.limit == UINT64_MAX && m.file == 0 && m.build_id == 0;
}

std::string file_name_for(std::string_view path, std::string_view id) {
  std::string base(path.substr(path.find_last_of('/') == std::string_view::npos
                                   ? 0
                                   : path.find_last_of('/') + 1));
  for (char& c : base)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  if (base.empty()) base = "image";
  return base + "." + std::string(id);
}

}  // namespace

core::Expected<std::vector<Image>> from_profile(const core::Profile& profile,
                                                core::Diagnostics& diagnostics) {
  const core::Profile& p = profile;
  core::SampleCountColumn counts = core::find_sample_counts(p);
  if (!counts.note.empty()) diagnostics.warn("dcpi: " + counts.note);
  if (p.sample_types.size() > 2 ||
      (p.sample_types.size() == 2 && !(p.sample_types[1 - counts.index] == p.period_type)))
    diagnostics.warn("dcpi: one DCPI file holds one event; only sample counts are written");

  // image (mapping) -> offset -> count
  std::map<core::MappingId, std::map<uint32_t, uint32_t>> histograms;
  // Sample counts (not distinct stacks) of what is dropped, for the warnings.
  uint64_t deep = 0, unmapped = 0, labelled = 0, no_address = 0;
  for (size_t s = 0; s < p.sample_count(); ++s) {
    auto stack = p.stack(s);
    if (stack.empty() || p.sample_types.empty()) continue;
    int64_t n = counts.count(p, s);
    if (n <= 0) continue;
    const auto samples = static_cast<uint64_t>(n);
    if (stack.size() > 1) deep += samples;
    if (!p.labels(s).empty()) labelled += samples;
    const core::Location& leaf = p.location(stack[0]);
    if (leaf.address == 0) {
      no_address += samples;
      continue;
    }
    if (leaf.mapping == 0 || is_catch_all(p.mapping(leaf.mapping))) {
      unmapped += samples;
      continue;
    }
    const core::Mapping& m = p.mapping(leaf.mapping);
    if (leaf.address < m.start)
      return core::Error{fmt::format("dcpi: address 0x{:x} lies before the start 0x{:x} of its "
                                     "mapping", leaf.address, m.start),
                         core::ErrorKind::unsupported};
    if (leaf.address - m.start > UINT32_MAX)
      return core::Error{fmt::format("dcpi: address 0x{:x} is more than 4 GiB past the start of "
                                     "its mapping 0x{:x}; DCPI offsets are 32-bit",
                                     leaf.address, m.start), core::ErrorKind::unsupported};
    uint32_t& slot = histograms[leaf.mapping][static_cast<uint32_t>(leaf.address - m.start)];
    if (uint64_t(slot) + uint64_t(n) > UINT32_MAX)
      return core::Error{fmt::format("dcpi: more than 2^32 samples at address 0x{:x}; DCPI "
                                     "counts are 32-bit", leaf.address), core::ErrorKind::unsupported};
    slot += static_cast<uint32_t>(n);
  }
  if (no_address > 0 && histograms.empty())
    return core::Error{"dcpi: the profile has no instruction addresses (only symbols); DCPI "
                       "files are histograms of addresses", core::ErrorKind::unsupported};
  if (deep > 0)
    diagnostics.warn(fmt::format("dcpi: call stacks dropped: DCPI keeps leaf counts only "
                                 "({} samples had callers)", deep));
  if (labelled > 0)
    diagnostics.warn(fmt::format("dcpi: labels of {} samples dropped", labelled));
  size_t symbolized = 0;
  for (const core::Location& l : p.locations) symbolized += !l.lines.empty();
  if (symbolized > 0)
    diagnostics.warn(fmt::format("dcpi: function names and source lines of {} locations dropped "
                                 "(DCPI holds addresses only)", symbolized));
  if (unmapped > 0)
    diagnostics.warn(fmt::format("dcpi: {} samples at addresses outside every mapping dropped",
                                 unmapped));
  if (no_address > 0)
    diagnostics.warn(fmt::format("dcpi: {} samples without an address dropped", no_address));

  const std::string event(p.str(p.period_type.type).empty() ? "samples"
                                                            : p.str(p.period_type.type));
  const std::string unit(p.str(p.period_type.unit));
  std::vector<Image> images;
  for (const auto& [mid, hist] : histograms) {
    const core::Mapping& m = p.mapping(mid);
    std::string id = image_id(p, m);
    // Field values the model knows; header lines kept from a DCPI source keep their order.
    std::map<std::string, std::string, std::less<>> known;
    // A DCPI source's minor version is kept (0.06 and 0.07 have the same binary format).
    const std::string_view kept_version = p.attribute("dcpi.version");
    known["version"] = is_major_0(kept_version) ? std::string(kept_version) : "pdb-0.07";
    known["image"] = id;
    if (m.file != 0) known["path"] = std::string(p.str(m.file));
    known["event"] = event;
    known["period"] = std::to_string(std::max<int64_t>(p.period, 0));
    known["tstart"] = fmt::format("{:x}", m.start);
    known["tsize"] = std::to_string(m.limit > m.start ? m.limit - m.start : 0);
    // The epoch: a DCPI source's own text if it still names this time, else minutes UTC.
    int64_t secs = p.time_nanos / 1'000'000'000;
    auto kept = Epoch::parse(p.attribute("dcpi.epoch"));
    if (kept && kept->unix_seconds() == (kept->long_form ? secs : secs - secs % 60)) {
      known["epoch"] = std::string(p.attribute("dcpi.epoch"));
    } else {
      Epoch e = Epoch::from_unix_seconds(secs, false);
      if (e.year < 1969 || e.year > 2068) e = Epoch::from_unix_seconds(secs, true);
      known["epoch"] = e.format();
    }
    if (!unit.empty() && unit != "count") known[std::string(kUnitKey)] = unit;
    if (m.offset != 0) known[std::string(kFileOffsetKey)] = fmt::format("{:x}", m.offset);

    DcpiFile f;
    std::map<std::string, bool, std::less<>> written;
    for (const auto& [key, value] : p.attributes) {
      if (!key.starts_with(kPrefix)) continue;
      std::string k = key.substr(kPrefix.size());
      if (written[k]) continue;
      auto it = known.find(k);
      f.header.push_back({k, it != known.end() ? it->second : value});
      written[k] = true;
    }
    // Fields a non-DCPI source lacks, in the order of dcpiformat(4).
    for (std::string_view k : std::initializer_list<std::string_view>{
             "version", "image", "path", "epoch", "platform", "event", "period",
                               "tstart", "tsize", "cpuspeed", kUnitKey, kFileOffsetKey}) {
      if (written.count(k)) continue;
      auto it = known.find(k);
      if (it != known.end()) f.header.push_back({std::string(k), it->second});
      else if (k == "platform") f.header.push_back({"platform", "unknown"});
      else if (k == "cpuspeed") f.header.push_back({"cpuspeed", "0"});
      else continue;
      written[std::string(k)] = true;
    }
    f.chunks = make_chunks(hist);
    images.push_back({file_name_for(p.str(m.file), id), std::move(f)});
  }
  return images;
}

}  // namespace tally::dcpi
