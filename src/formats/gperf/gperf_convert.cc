#include "formats/gperf/gperf_convert.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>

#include "core/address_map.h"
#include "core/checked_math.h"
#include "core/sample_counts.h"
#include "core/sample_merger.h"
#include "formats/gperf/mapped_objects.h"

namespace tally::gperf {

namespace {

// The longest period a profile can hold: the model keeps it in nanoseconds, in an int64_t.
constexpr uint64_t kMaxPeriodUs = uint64_t(std::numeric_limits<int64_t>::max() / 1000);

// Builds the profile record by record.
class ProfileBuilder {
 public:
  explicit ProfileBuilder(uint64_t period_us) {
    if (period_us > kMaxPeriodUs)
      core::fail_at_byte(3 * 8, fmt::format("sampling period {} us is too large", period_us));
    p_.sample_types = {p_.value_type("samples", "count"), p_.value_type("cpu", "nanoseconds")};
    p_.period_type = p_.value_type("cpu", "nanoseconds");
    p_.period = static_cast<int64_t>(period_us) * 1000;
    // As pprof does for legacy CPU profiles: the profiler's own signal-handler frames.
    p_.drop_frames = p_.intern(
        "ProfileData::Add|ProfileData::prof_handler|CpuProfiler::prof_handler|"
        "__pthread_sighandler|__restore");
    merger_.emplace(p_);
  }

  void add(const Record& r) {
    if (r.count > uint64_t(std::numeric_limits<int64_t>::max()))
      core::fail_at_byte(r.offset, fmt::format("sample count {} is too large", r.count));
    stack_.clear();
    for (size_t i = 0; i < r.pcs.size(); ++i) {
      // A return address points after the call; minus one lands inside it.
      uint64_t address = i == 0 ? r.pcs[0] : r.pcs[i] - 1;
      bool inserted;
      auto next_id = static_cast<core::LocationId>(p_.locations.size() + 1);
      core::LocationId id = addresses_.find_or_insert(address, next_id, inserted);
      if (inserted) p_.add_location({.mapping = 0, .address = address, .lines = {}});
      stack_.push_back(id);
    }
    // The unwinder may report the leaf twice: once from the signal context, once from the
    // stack walk (pprof compares the adjusted addresses: leaf == caller - 1 + 1).
    if (stack_.size() > 1 && r.pcs[0] == r.pcs[1]) stack_.erase(stack_.begin() + 1);
    if (stack_.size() > 1) {
      if (stack_[1] >= records_by_second_frame_.size())
        records_by_second_frame_.resize(p_.locations.size() + 1);
      ++records_by_second_frame_[stack_[1]];  // a file of 2^32 records would be 100 GB
    }
    auto count = static_cast<int64_t>(r.count);
    // Merged one record late: its slot in the merger's table is fetched while the next
    // record's frames are looked up (the order of the samples stays the records' order).
    const uint64_t hash = core::sample_hash(stack_, {});
    merger_->prefetch(hash);
    merge_pending();
    pending_.stack.swap(stack_);
    pending_.hash = hash;
    pending_.values[0] = count;
    pending_.values[1] = core::mul_saturating(count, p_.period);
    pending_.held = true;
  }

  // A file of `words` words holds fewer frames than that: the stack pool is reserved once,
  // so that it never grows by copying (for a 35 MB file the copy took as long as the
  // filling, and the old and the new buffer were resident together). Pages of the
  // reservation that merged records leave unused are never touched.
  void reserve_frames(uint64_t words) { p_.reserve_samples(0, words); }

  core::Profile finish(const Header& header, uint64_t records, std::string_view mapped_objects,
                       const BinaryInspector* binaries) {
    merge_pending();
    merger_.reset();
    add_mappings(mapped_objects);
    p_.set_attribute("gperf.layout", layout_name(header.layout));
    p_.set_attribute("gperf.records", std::to_string(records));
    add_libtally_notes(mapped_objects);
    remove_signal_frame(p_, records_by_second_frame_, records, binaries);
    p_.canonicalize();
    return std::move(p_);
  }

 private:
  void add_mappings(std::string_view text);

  void merge_pending() {
    if (!pending_.held) return;
    merger_->add(pending_.hash, pending_.stack, pending_.values);
    pending_.held = false;
  }

  // libtally writes "# tally: stacks cut short: N of M samples (REASON: n, ...)" after the
  // maps (pprof and google-pprof skip lines that are not mappings): an attribute here.
  void add_libtally_notes(std::string_view text) {
    constexpr std::string_view kCut = "# tally: stacks cut short: ";
    for (size_t at = text.find(kCut); at != std::string_view::npos; at = text.find(kCut, at + 1)) {
      if (at != 0 && text[at - 1] != '\n') continue;
      std::string_view value = text.substr(at + kCut.size());
      value = value.substr(0, value.find('\n'));
      p_.set_attribute("tally.stacks_cut", std::string(value));
    }
  }

  core::Profile p_;
  std::optional<core::SampleMerger> merger_;
  core::AddressMap addresses_;
  std::vector<core::LocationId> stack_;
  struct {  // the record added last, not merged yet
    std::vector<core::LocationId> stack;
    uint64_t hash = 0;
    int64_t values[2] = {0, 0};
    bool held = false;
  } pending_;
  std::vector<uint32_t> records_by_second_frame_;  // by location id
};

bool looks_like_library(std::string_view file) {
  // pprof's libRx: ([.]so$|[.]so[._][0-9]+)
  if (file.ends_with(".so")) return true;
  for (size_t at = file.find(".so"); at != std::string_view::npos; at = file.find(".so", at + 1)) {
    size_t next = at + 3;
    if (next + 1 < file.size() && (file[next] == '.' || file[next] == '_') &&
        file[next + 1] >= '0' && file[next + 1] <= '9')
      return true;
  }
  return false;
}

std::string trim_deleted(std::string_view file) {
  std::string out;
  for (size_t i = 0; i < file.size();) {
    if (file.substr(i).starts_with("(deleted)")) {
      i += 9;
      continue;
    }
    out.push_back(file[i++]);
  }
  size_t b = out.find_first_not_of(" \t\n\r\v\f");
  size_t e = out.find_last_not_of(" \t\n\r\v\f");
  return b == std::string::npos ? std::string() : out.substr(b, e - b + 1);
}

struct RawMapping {
  uint64_t start, limit, offset;
  std::string file;
};

// pprof's "adjacent": two pieces of one mapping split in two.
bool adjacent(const RawMapping& a, const RawMapping& b) {
  if (!a.file.empty() && !b.file.empty() && a.file != b.file) return false;
  if (a.limit != b.start) return false;
  if (a.offset != 0 && b.offset != 0 && a.offset + (a.limit - a.start) != b.offset) return false;
  return true;
}

void ProfileBuilder::add_mappings(std::string_view text) {
  std::vector<RawMapping> maps;
  for (MapsLine& m : parse_mapped_objects(text)) {
    if (!m.executable()) continue;  // code is only sampled in executable mappings
    RawMapping r{m.start, m.limit, m.offset, std::move(m.path)};
    if (!maps.empty() && adjacent(maps.back(), r)) {
      maps.back().limit = r.limit;
      if (!r.file.empty()) maps.back().file = r.file;
      continue;
    }
    maps.push_back(std::move(r));
  }
  // The main binary first: the first mapping that is neither a library nor "[vdso]"-like.
  for (size_t i = 0; i < maps.size(); ++i) {
    std::string file = trim_deleted(maps[i].file);
    if (file.empty() || looks_like_library(file) || file[0] == '[') continue;
    std::swap(maps[0], maps[i]);
    break;
  }
  // Legacy quirks: a leading /anon_hugepage piece of the main binary, and a main binary
  // whose start minus offset is the classic non-PIE load address.
  if (maps.size() > 1 && maps[0].file.starts_with("/anon_hugepage") &&
      maps[0].limit == maps[1].start)
    maps.erase(maps.begin());
  if (!maps.empty() && maps[0].start - maps[0].offset == 0x400000) {
    maps[0].start = 0x400000;
    maps[0].offset = 0;
  }

  // Each location goes to the first mapping (in this order) that contains it.
  bool fake_added = false;
  core::MappingId fake = 0;
  for (core::Location& l : p_.locations) {
    uint64_t a = l.address;
    if (a == 0) continue;
    size_t found = maps.size();
    for (size_t i = 0; i < maps.size() && found == maps.size(); ++i)
      if (maps[i].start <= a && a < maps[i].limit) found = i;
    // Once it exists, the catch-all mapping contains every other address (pprof searches
    // it with the others), so the legacy fix-up below no longer applies.
    if (found == maps.size() && fake_added && a != std::numeric_limits<uint64_t>::max()) {
      l.mapping = fake;
      continue;
    }
    // Some legacy handlers dropped the first piece of a split mapping.
    for (size_t i = 0; i < maps.size() && found == maps.size(); ++i) {
      RawMapping& m = maps[i];
      if (m.offset != 0 && m.start - m.offset <= a && a < m.start) {
        m.start -= m.offset;
        m.offset = 0;
        found = i;
      }
    }
    if (found < maps.size()) {
      l.mapping = static_cast<core::MappingId>(found + 1);
      continue;
    }
    if (!fake_added) {  // addresses outside every mapping share one unnamed mapping
      fake_added = true;
      fake = static_cast<core::MappingId>(maps.size() + 1);
    }
    l.mapping = fake;
  }
  for (const RawMapping& m : maps)
    p_.add_mapping({.start = m.start, .limit = m.limit, .offset = m.offset,
                    .file = p_.intern(m.file)});
  if (fake_added) p_.add_mapping({.start = 0, .limit = std::numeric_limits<uint64_t>::max()});
}

}  // namespace

core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes,
                                           const std::string& source,
                                           core::Diagnostics& diagnostics,
                                           const ReadOptions& options) {
  try {
    RecordScanner scanner(bytes);
    ProfileBuilder builder(scanner.header().period_us);
    builder.reserve_frames(bytes.size() / scanner.header().layout.word_bytes);
    Record r;
    uint64_t records = 0;
    while (scanner.next(r)) {
      builder.add(r);
      ++records;
      if (options.on_progress) options.on_progress(scanner.offset(), options.progress_context);
    }
    if (!scanner.has_trailer()) warn_missing_trailer(diagnostics, source, scanner.offset());
    return builder.finish(scanner.header(), records, scanner.mapped_objects(), options.binaries);
  } catch (const core::FormatError& e) {
    return e.located(source);
  }
}

core::Expected<core::Profile> to_profile(const GperfFile& file, const std::string& source,
                                         core::Diagnostics& diagnostics,
                                         const BinaryInspector* binaries) {
  try {
    ProfileBuilder builder(file.header.period_us);
    const auto& slots = file.record_slots;
    for (size_t i = 0; i + 2 <= slots.size();) {
      uint64_t n = slots[i + 1];
      if (n > slots.size() - i - 2) core::fail_at_byte(0, "record list is inconsistent");
      // Where the record is (or would be) in the file, for error messages.
      uint64_t offset = file.header.size_bytes() + i * uint64_t(file.header.layout.word_bytes);
      Record r{.offset = offset, .count = slots[i], .pcs = {slots.data() + i + 2, n}};
      builder.add(r);
      i += 2 + n;
    }
    if (!file.has_trailer)  // where the file ends: after the last record
      warn_missing_trailer(diagnostics, source,
                           file.header.size_bytes() + slots.size() * file.header.layout.word_bytes);
    return builder.finish(file.header, file.record_count, file.mapped_objects, binaries);
  } catch (const core::FormatError& e) {
    return e.located(source);
  }
}

namespace {

uint64_t period_in_us_unchecked(const core::Profile& p, core::Diagnostics& diagnostics) {
  std::string_view unit = p.str(p.period_type.unit);
  int64_t us = 0;
  if (unit == "nanoseconds") us = p.period / 1000;
  else if (unit == "microseconds") us = p.period;
  else if (unit == "milliseconds") us = core::mul_saturating(p.period, 1000);
  else if (unit == "seconds") us = core::mul_saturating(p.period, 1000000);
  if (us > 0) {
    if (unit == "nanoseconds" && p.period % 1000 != 0)
      diagnostics.warn(fmt::format("gperf: period {} ns rounded down to {} us", p.period, us));
    return static_cast<uint64_t>(us);
  }
  diagnostics.warn(fmt::format(
      "gperf: the period ({} {}) is not a time; the header's microsecond period is set to {}",
      p.period, unit.empty() ? "(no unit)" : unit, std::max<int64_t>(p.period, 1)));
  return static_cast<uint64_t>(std::max<int64_t>(p.period, 1));
}

// The header's period, no longer than tally (and pprof, in nanoseconds) can read back.
uint64_t period_in_us(const core::Profile& p, core::Diagnostics& diagnostics) {
  const uint64_t us = period_in_us_unchecked(p, diagnostics);
  if (us <= kMaxPeriodUs) return us;
  diagnostics.warn(fmt::format("gperf: period {} us is longer than a reader can hold; written as {} us",
                               us, kMaxPeriodUs));
  return kMaxPeriodUs;
}

}  // namespace

core::Expected<GperfFile> from_profile(const core::Profile& input, core::Diagnostics& diagnostics) {
  core::Profile p = input;
  p.canonicalize();
  GperfFile file;
  file.header.layout = {8, std::endian::little};
  file.header.period_us = period_in_us(p, diagnostics);
  file.header.extra = {0};

  core::SampleCountColumn counts = core::find_sample_counts(p);
  if (!counts.note.empty()) diagnostics.warn("gperf: " + counts.note);
  const size_t index = counts.index;
  if (p.sample_types.size() > 1) {
    std::string dropped;
    for (size_t i = 0; i < p.sample_types.size(); ++i) {
      if (i == index) continue;
      std::string_view t = p.str(p.sample_types[i].type);
      // cpu time is what gperftools derives from count x period: nothing is lost.
      if (t == "cpu" && p.sample_types[i] == p.period_type) continue;
      dropped += (dropped.empty() ? "" : ", ") + std::string(t);
    }
    if (!dropped.empty())
      diagnostics.warn("gperf: the format holds one count per stack; dropped sample types: " +
                       dropped);
  }

  size_t no_address = 0, labelled = 0, negative = 0;
  for (const core::Location& l : p.locations) no_address += l.address == 0;
  if (!p.locations.empty() && no_address == p.locations.size())
    return core::Error{"gperf: the profile has no instruction addresses (only symbols); the "
                       "gperftools format records addresses, so it cannot hold this profile",
                       core::ErrorKind::unsupported};
  for (size_t s = 0; s < p.sample_count(); ++s) {
    int64_t v = p.sample_types.empty() ? 0 : counts.count(p, s);
    labelled += !p.labels(s).empty();
    if (v <= 0) {
      negative += v < 0;
      continue;  // a record needs count >= 1
    }
    auto stack = p.stack(s);
    if (stack.empty()) continue;
    file.record_slots.push_back(static_cast<uint64_t>(v));
    file.record_slots.push_back(stack.size());
    for (size_t i = 0; i < stack.size(); ++i) {
      uint64_t a = p.location(stack[i]).address;
      file.record_slots.push_back(i == 0 ? a : a + 1);  // back to a return address
    }
    ++file.record_count;
  }
  if (no_address > 0)
    diagnostics.warn(fmt::format("gperf: {} locations have no address and are written as 0",
                                 no_address));
  size_t symbolized = 0;
  for (const core::Location& l : p.locations) symbolized += !l.lines.empty();
  if (symbolized > 0)
    diagnostics.warn(fmt::format("gperf: function names and source lines of {} locations dropped "
                                 "(the format holds addresses only; symbolize again from the "
                                 "binaries)", symbolized));
  if (labelled > 0)
    diagnostics.warn(fmt::format("gperf: labels of {} samples dropped (the format has none)",
                                 labelled));
  if (negative > 0)
    diagnostics.warn(fmt::format("gperf: {} samples with negative values dropped", negative));

  size_t build_ids = 0;
  for (const core::Mapping& m : p.mappings) {
    // The catch-all mapping of unmapped addresses is re-created on reading.
    if (m.start == 0 && m.limit == std::numeric_limits<uint64_t>::max() && m.file == 0) continue;
    build_ids += m.build_id != 0;
    file.mapped_objects += format_maps_line(m.start, m.limit, "r-xp", m.offset, p.str(m.file));
  }
  if (build_ids > 0)
    diagnostics.warn(fmt::format("gperf: build ids of {} mappings dropped (the format has none)",
                                 build_ids));
  return file;
}

}  // namespace tally::gperf
