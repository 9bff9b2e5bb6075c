#include "store/image_files.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <span>

#include "formats/dcpi/dcpi_file.h"
#include "formats/pprof/pprof.h"
#include "store/epoch.h"
#include "store/image_profile.h"

namespace tally::store {

std::string event_file_name(std::string_view event) {
  std::string name(event);
  for (char& c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '_' || c == '-'))
      c = '_';
  if (name.empty() || name.front() == '.') name.insert(0, "event");
  return name + ".dcpi";
}

namespace {

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace

core::Expected<std::string> merged_dcpi(const std::optional<std::string>& existing,
                                        const std::string& source, const Aggregate& aggregate,
                                        uint32_t image, size_t event, std::string_view epoch,
                                        const MachineInfo& machine) {
  const Aggregate::Image& img = aggregate.image_data(image);
  const Aggregate::Histogram& hist = img.histograms[event];
  const EventInfo& ev = aggregate.events()[event];

  std::map<uint32_t, uint64_t> counts(hist.counts.begin(), hist.counts.end());
  uint64_t old_samples = 0, old_period = 0, tsize = img.tsize;
  std::vector<dcpi::HeaderLine> kept;  // header lines of other programs
  if (existing) {
    core::Diagnostics ignored;
    auto file = dcpi::read_dcpi(as_bytes(*existing), source, ignored);
    if (!file) return file.error();
    auto fields = dcpi::parse_fields(*file, source);
    if (!fields) return fields.error();
    if (fields->image != img.entry.id || fields->event != ev.name)
      return core::Error{fmt::format("{}: holds image {} event {}, not image {} event {}", source,
                                     fields->image, fields->event, img.entry.id, ev.name)};
    // Offsets count from the image's text start, which may move between boots (the
    // kernel's, under KASLR): they stay comparable, so the latest tstart is written.
    for (const dcpi::Chunk& c : file->chunks)
      for (size_t i = 0; i < c.counts.size(); ++i)
        if (c.counts[i] != 0) counts[static_cast<uint32_t>(c.offset + i)] += c.counts[i];
    old_samples = file->total_samples();
    old_period = fields->period;
    tsize = std::max(tsize, fields->tsize);
    static constexpr std::string_view kOurs[] = {
        "version", "image", "path", "epoch", "platform", "event", "period", "tstart",
        "tsize", "cpuspeed", "cpucount", "eventunit"};
    for (const dcpi::HeaderLine& l : file->header)
      if (std::find(std::begin(kOurs), std::end(kOurs), l.key) == std::end(kOurs)) kept.push_back(l);
  }

  std::map<uint32_t, uint32_t> narrow;
  for (auto [offset, n] : counts) {
    if (n > UINT32_MAX)
      return core::Error{fmt::format("{}: {} samples at offset 0x{:x} overflow DCPI's 32-bit "
                                     "counts; start a new epoch (tally epoch) more often",
                                     source, n, offset),
                         core::ErrorKind::unsupported};
    narrow.emplace(offset, static_cast<uint32_t>(n));
  }
  if (!narrow.empty()) tsize = std::max(tsize, uint64_t(narrow.rbegin()->first) + 1);
  const uint64_t samples = old_samples + hist.samples;
  // The mean period over both parts, rounded: exact when the period is fixed.
  const long double weighted = static_cast<long double>(old_period) * old_samples + hist.period_sum;
  const uint64_t period = samples == 0 ? old_period
                                       : static_cast<uint64_t>(weighted / samples + 0.5L);

  auto epoch_start = epoch_seconds(epoch);
  dcpi::DcpiFile f;
  f.header = {{"version", "pdb-0.07"}, {"image", img.entry.id}};
  if (!img.entry.key.path.empty()) f.header.push_back({"path", img.entry.key.path});
  f.header.push_back({"epoch", epoch_start ? std::string(epoch) : "19700101000000"});
  f.header.push_back({"platform", machine.platform.empty() ? "unknown" : machine.platform});
  f.header.push_back({"event", ev.name});
  f.header.push_back({"period", std::to_string(period)});
  f.header.push_back({"tstart", fmt::format("{:x}", img.tstart)});
  f.header.push_back({"tsize", std::to_string(tsize)});
  f.header.push_back({"cpuspeed", std::to_string(machine.cpuspeed_mhz)});
  if (machine.cpu_count != 0) f.header.push_back({"cpucount", std::to_string(machine.cpu_count)});
  if (!ev.unit.empty() && ev.unit != "count") f.header.push_back({"eventunit", ev.unit});
  f.header.insert(f.header.end(), kept.begin(), kept.end());
  f.chunks = dcpi::make_chunks(narrow);
  auto bytes = dcpi::write_dcpi(f);
  if (!bytes) return core::Error{source + ": " + bytes.error().message, bytes.error().kind};
  return bytes;
}

core::Expected<std::string> merged_stacks(const std::optional<std::string>& existing,
                                          const std::string& source, const Aggregate& aggregate,
                                          uint32_t image, std::string_view epoch) {
  const Aggregate::Image& img = aggregate.image_data(image);
  core::Profile old;
  if (existing) {
    core::Diagnostics ignored;
    auto read = pprof::read_profile(as_bytes(*existing), source, ignored);
    if (!read) return read.error();
    old = std::move(*read);
  }
  core::Profile p;
  // The old file's events first, in their order, then the aggregate's new ones.
  std::vector<std::string> events;
  for (const core::ValueType& t : old.sample_types) events.emplace_back(old.str(t.type));
  std::vector<size_t> column(aggregate.events().size());
  for (size_t e = 0; e < aggregate.events().size(); ++e) {
    auto at = std::find(events.begin(), events.end(), aggregate.events()[e].name);
    column[e] = static_cast<size_t>(at - events.begin());
    if (at == events.end()) events.push_back(aggregate.events()[e].name);
  }
  for (const std::string& e : events) p.sample_types.push_back(p.value_type(e, "count"));
  p.time_nanos = epoch_seconds(epoch).value_or(0) * 1'000'000'000;
  p.comments.push_back(p.intern(fmt::format(
      "tally profile database: call stacks of the samples in image {} (epoch {}); values are "
      "sample counts; mapping k holds its image at addresses k<<32 + offset, its build id "
      "field is the image id",
      img.entry.id, epoch)));

  ImageProfileBuilder builder(p);
  std::vector<core::LocationId> stack;
  std::vector<int64_t> values(events.size());
  for (size_t s = 0; s < old.sample_count(); ++s) {
    stack.clear();
    for (core::LocationId id : old.stack(s)) {
      auto frame = image_frame(old, id, source);
      if (!frame) return frame.error();
      const core::Mapping& m = old.mapping(frame->mapping);
      stack.push_back(builder.location(old.str(m.build_id), old.str(m.file), old.str(m.build_id),
                                       frame->offset));
    }
    std::fill(values.begin(), values.end(), 0);
    auto v = old.values(s);
    std::copy(v.begin(), v.end(), values.begin());
    builder.add(stack, values);
  }
  for (const auto& [frames, counts] : img.stacks) {
    stack.clear();
    for (uint64_t f : frames) {
      const Aggregate::Image& at = aggregate.image_data(static_cast<uint32_t>(f >> 32));
      stack.push_back(builder.location(at.entry.id, at.entry.key.path, at.entry.id,
                                       static_cast<uint32_t>(f)));
    }
    std::fill(values.begin(), values.end(), 0);
    for (size_t e = 0; e < counts.size(); ++e) values[column[e]] = static_cast<int64_t>(counts[e]);
    builder.add(stack, values);
  }
  return pprof::write_profile(std::move(p));
}

}  // namespace tally::store
