#include "store/query.h"

#include <sys/stat.h>

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <span>

#include "core/diagnostics.h"
#include "core/path_name.h"
#include "formats/dcpi/dcpi_file.h"
#include "formats/pprof/pprof.h"
#include "store/database.h"
#include "store/epoch.h"
#include "store/image_files.h"
#include "store/image_profile.h"

namespace tally::store {

namespace fs = std::filesystem;

core::Expected<std::vector<std::string>> select_epochs(const std::vector<std::string>& epochs,
                                                       const Selection& selection, int64_t now) {
  if (!selection.epoch.empty() && !selection.since.empty())
    return core::Error{"give --epoch or --since, not both"};
  if (!selection.epoch_to.empty() && !selection.since.empty())
    return core::Error{"give --epoch-to or --since, not both"};
  if (epochs.empty())
    return core::Error{selection.db + ": the database holds no epochs yet (has the daemon "
                                      "flushed?)", core::ErrorKind::io};
  std::vector<std::string> chosen;
  if (!selection.since.empty()) {
    auto since = parse_time(selection.since, now);
    if (!since) return since.error();
    // An epoch lasts until the next one starts; the last one until now.
    for (size_t i = 0; i < epochs.size(); ++i) {
      const int64_t end = i + 1 < epochs.size() ? epoch_seconds(epochs[i + 1]).value_or(0) : INT64_MAX;
      if (end > *since) chosen.push_back(epochs[i]);
    }
  } else if (!selection.epoch_to.empty()) {
    if (selection.epoch.empty()) return core::Error{"an epoch range needs its first epoch too"};
    size_t from = epochs.size(), to = epochs.size();
    for (size_t i = 0; i < epochs.size(); ++i) {
      if (from == epochs.size() && epochs[i].starts_with(selection.epoch)) from = i;
      if (epochs[i].starts_with(selection.epoch_to)) to = i;
    }
    if (from == epochs.size() || to == epochs.size())
      return core::Error{fmt::format("{}: no epoch matches '{}'", selection.db,
                                     from == epochs.size() ? selection.epoch : selection.epoch_to)};
    if (from > to)
      return core::Error{fmt::format("{}: the epoch range is reversed: '{}' starts after '{}' ends",
                                     selection.db, selection.epoch, selection.epoch_to)};
    chosen.assign(epochs.begin() + static_cast<std::ptrdiff_t>(from),
                  epochs.begin() + static_cast<std::ptrdiff_t>(to) + 1);
  } else if (selection.epoch.empty() || selection.epoch == "latest") {
    chosen.push_back(epochs.back());
  } else if (selection.epoch == "all") {
    chosen = epochs;
  } else {
    for (const std::string& e : epochs)
      if (e.starts_with(selection.epoch)) chosen.push_back(e);
  }
  if (chosen.empty()) {
    std::string list;
    for (size_t i = epochs.size() > 10 ? epochs.size() - 10 : 0; i < epochs.size(); ++i)
      list += (list.empty() ? "" : ", ") + epochs[i];
    return core::Error{fmt::format("{}: no epoch matches {}; the database has {} epoch(s), the "
                                   "latest: {}", selection.db,
                                   selection.since.empty() ? "'" + selection.epoch + "'"
                                                           : "--since " + selection.since,
                                   epochs.size(), list)};
  }
  return chosen;
}

namespace {

struct ImageFile {
  std::string epoch, id, dir;
  dcpi::DcpiFile file;
  dcpi::Fields fields;
};

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<std::string> sorted_entries(const std::string& dir, bool directories) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory(ec) == directories) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Every DCPI file of the epochs; files that do not parse are reported and skipped.
std::vector<ImageFile> read_image_files(const std::string& db, const std::vector<std::string>& epochs,
                                        std::vector<std::string>& warnings) {
  std::vector<ImageFile> files;
  for (const std::string& epoch : epochs) {
    for (const std::string& id : sorted_entries(db + "/" + epoch, true)) {
      if (!is_image_id(id)) continue;
      const std::string dir = image_dir(db, epoch, id);
      for (const std::string& name : sorted_entries(dir, false)) {
        if (!name.ends_with(".dcpi") || name.front() == '.') continue;
        const std::string path = dir + "/" + name;
        auto bytes = read_file_if_exists(path);
        if (!bytes || !bytes->has_value()) continue;  // replaced or removed meanwhile
        core::Diagnostics ignored;
        auto file = dcpi::read_dcpi(as_bytes(**bytes), path, ignored);
        if (!file) {
          warnings.push_back("skipping " + file.error().message);
          continue;
        }
        auto fields = dcpi::parse_fields(*file, path);
        if (!fields) {
          warnings.push_back("skipping " + fields.error().message);
          continue;
        }
        files.push_back({epoch, id, dir, std::move(*file), std::move(*fields)});
      }
    }
  }
  return files;
}

std::string choose_event(const std::set<std::string>& events, const Selection& selection,
                         std::vector<std::string>& warnings) {
  if (!selection.event.empty()) return events.count(selection.event) ? selection.event : "";
  if (events.size() == 1) return *events.begin();
  std::string chosen = events.count("cpu-clock") ? "cpu-clock" : *events.begin();
  std::string list;
  for (const std::string& e : events) list += (list.empty() ? "" : ", ") + e;
  warnings.push_back(fmt::format("the selection holds events {}; showing {} (choose with --event)",
                                 list, chosen));
  return chosen;
}

// An image whose file is known by a hash (no build id) and is no longer what was
// profiled: symbols read from the file now would be wrong.
bool has_changed(const IndexEntry& entry) {
  if (!entry.key.build_id.empty() || entry.key.inode == 0) return false;
  struct stat st {};
  if (::stat(entry.key.path.c_str(), &st) != 0) return false;  // vanished: reported by the symbolizer
  const int64_t mtime = int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  return st.st_ino != entry.key.inode || uint64_t(st.st_size) != entry.key.size ||
         (entry.key.mtime_ns != 0 && mtime != entry.key.mtime_ns);
}

}  // namespace

core::Expected<DbProfile> read_db_profile(const Selection& selection) {
  auto db = Database::open(selection.db, /*create=*/false);
  if (!db) return db.error();
  DbProfile out;
  auto epochs = select_epochs(db->epochs(), selection, static_cast<int64_t>(std::time(nullptr)));
  if (!epochs) return epochs.error();
  out.epochs = std::move(*epochs);

  std::optional<std::regex> image_filter;
  if (!selection.image.empty()) {
    try {
      // Polynomial matching, as the report regexes (analyze/name_filter.cc).
      image_filter.emplace(selection.image,
                           std::regex::ECMAScript | std::regex_constants::__polynomial);
    } catch (const std::regex_error& e) {
      return core::Error{fmt::format("--image: '{}' is not a valid regular expression: {}",
                                     selection.image, e.what())};
    }
  }

  std::vector<ImageFile> files = read_image_files(selection.db, out.epochs, out.warnings);
  std::set<std::string> events;
  for (const ImageFile& f : files) events.insert(f.fields.event);
  out.events.assign(events.begin(), events.end());
  if (events.empty())
    return core::Error{fmt::format("{}: epoch(s) {}..{} hold no profiles yet", selection.db,
                                   out.epochs.front(), out.epochs.back()),
                       core::ErrorKind::io};
  out.event = choose_event(events, selection, out.warnings);
  if (out.event.empty()) {
    std::string list;
    for (const std::string& e : events) list += (list.empty() ? "" : ", ") + e;
    return core::Error{fmt::format("--event {}: not in the selected epochs, which hold: {}",
                                   selection.event, list)};
  }

  const ImageIndex& index = db->index();
  const auto path_of = [&](const std::string& id, std::string_view fallback) {
    const IndexEntry* e = index.find(id);
    return e ? e->key.path : std::string(fallback);
  };
  const auto build_id_of = [&](const std::string& id) {
    const IndexEntry* e = index.find(id);
    return e ? e->key.build_id : std::string();
  };

  // The event's files of the selected images; hottest images first, so that mapping 1 (the
  // "main" image of reports) is the one with the most samples.
  std::vector<const ImageFile*> chosen;
  std::map<std::string, uint64_t> image_samples;
  for (const ImageFile& f : files) {
    if (f.fields.event != out.event) continue;
    const std::string path = path_of(f.id, f.fields.path.value_or(""));
    if (image_filter && !std::regex_search(path, *image_filter) &&
        !std::regex_search(f.id, *image_filter))
      continue;
    chosen.push_back(&f);
    image_samples[f.id] += f.file.total_samples();
  }
  std::stable_sort(chosen.begin(), chosen.end(), [&](const ImageFile* a, const ImageFile* b) {
    const uint64_t sa = image_samples[a->id], sb = image_samples[b->id];
    return sa != sb ? sa > sb : a->id < b->id;
  });

  core::Profile& p = out.profile;
  // The event's unit, from any of its files (also when the image filter took them all).
  std::string unit = "count";
  for (const ImageFile& f : files)
    if (f.fields.event == out.event) {
      unit = std::string(f.file.value("eventunit").value_or("count"));
      break;
    }
  p.sample_types = {p.value_type("samples", "count"), p.value_type(out.event, unit)};
  p.period_type = p.value_type(out.event, unit);
  const int64_t first = epoch_seconds(out.epochs.front()).value_or(0);
  p.time_nanos = first * 1'000'000'000;
  p.comments.push_back(p.intern(fmt::format("tally profile database {}, epoch(s) {}", selection.db,
                                            out.epochs.size() == 1
                                                ? out.epochs.front()
                                                : out.epochs.front() + ".." + out.epochs.back())));

  ImageProfileBuilder builder(p);
  std::vector<core::LocationId> stack;
  for (const ImageFile* f : chosen) {
    const int64_t period = static_cast<int64_t>(std::min<uint64_t>(f->fields.period, INT64_MAX / 2));
    p.period = std::max(p.period, period);
    const std::string path = path_of(f->id, f->fields.path.value_or(""));
    const std::string build_id = build_id_of(f->id);

    // The call stacks when there are some for this event, else the histogram.
    const std::string stacks_path = f->dir + "/" + std::string(kStacksFileName);
    std::optional<core::Profile> stacks;
    if (auto bytes = read_file_if_exists(stacks_path); bytes && bytes->has_value()) {
      core::Diagnostics ignored;
      auto read = pprof::read_profile(as_bytes(**bytes), stacks_path, ignored);
      if (read) stacks = std::move(*read);
      else out.warnings.push_back("using the histogram only: " + read.error().message);
    }
    const int column = stacks ? stacks->sample_type_index(out.event) : -1;
    bool stacks_ok = column >= 0;
    if (stacks_ok) {
      // Checked whole before use, so a damaged file adds nothing.
      for (size_t s = 0; s < stacks->sample_count() && stacks_ok; ++s)
        for (core::LocationId id : stacks->stack(s))
          if (!image_frame(*stacks, id, stacks_path)) stacks_ok = false;
      if (!stacks_ok) out.warnings.push_back(stacks_path + ": not laid out as a tally database "
                                                           "stacks file; using the histogram only");
    }
    if (stacks_ok) {
      for (size_t s = 0; s < stacks->sample_count(); ++s) {
        const int64_t n = stacks->values(s)[static_cast<size_t>(column)];
        if (n <= 0) continue;
        stack.clear();
        for (core::LocationId id : stacks->stack(s)) {
          const ImageFrame frame = *image_frame(*stacks, id, stacks_path);
          const core::Mapping& m = stacks->mapping(frame.mapping);
          const std::string frame_id(stacks->str(m.build_id));
          stack.push_back(builder.location(frame_id, path_of(frame_id, stacks->str(m.file)),
                                           build_id_of(frame_id), frame.offset));
        }
        const int64_t values[2] = {n, n * period};
        builder.add(stack, values);
      }
      continue;
    }
    for (const dcpi::Chunk& c : f->file.chunks) {
      for (size_t i = 0; i < c.counts.size(); ++i) {
        if (c.counts[i] == 0) continue;
        const core::LocationId loc =
            builder.location(f->id, path, build_id, static_cast<uint32_t>(c.offset + i));
        const int64_t values[2] = {c.counts[i], int64_t(c.counts[i]) * period};
        builder.add(std::span(&loc, 1), values);
      }
    }
  }

  // Images known by a hash whose file has changed since: no symbols from the new file.
  std::vector<bool> stale(p.mappings.size(), false);
  for (core::MappingId m = 1; m <= p.mappings.size(); ++m) {
    const IndexEntry* e = index.find(builder.image_of(m));
    if (!e || !has_changed(*e)) continue;
    stale[m - 1] = true;
    p.mapping(m).has_functions = true;
    out.warnings.push_back(fmt::format("{}: the file has changed since it was profiled (image {}); "
                                       "its samples are shown by offset", e->key.path, e->id));
  }
  for (core::Location& l : p.locations) {
    if (!stale[l.mapping - 1]) continue;
    const core::Mapping& m = p.mapping(l.mapping);
    const std::string name = fmt::format("[{}+{:#x}]", core::base_name(p.str(m.file)), l.address - m.start);
    l.lines.push_back({p.add_function({p.intern(name), p.intern(name), 0, 0}), 0, 0});
  }
  return out;
}

}  // namespace tally::store
