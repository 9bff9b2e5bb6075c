#include "store/database.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <utility>

#include "io/output.h"
#include "store/epoch.h"

namespace tally::store {

namespace fs = std::filesystem;

namespace {

core::Error os_error(const std::string& path, const char* what) {
  return core::Error{fmt::format("{}: {}: {}", path, what, std::strerror(errno)),
                     core::ErrorKind::io};
}

void sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

std::string image_dir(const std::string& db, std::string_view epoch, std::string_view image_id) {
  return fmt::format("{}/{}/{}", db, epoch, image_id);
}

core::Expected<std::optional<std::string>> read_file_if_exists(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return os_error(path, "cannot open");
  }
  std::string data;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      core::Error e = os_error(path, "cannot read");
      ::close(fd);
      return e;
    }
    if (n == 0) break;
    data.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return std::optional<std::string>(std::move(data));
}

core::Expected<Database> Database::open(const std::string& dir, bool create) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || !create)
      return core::Error{fmt::format("{}: no profile database here: {}", dir, std::strerror(errno)),
                         core::ErrorKind::io};
    if (auto made = io::make_directories(dir); !made) return made.error();
  } else if (!S_ISDIR(st.st_mode)) {
    return core::Error{dir + ": not a directory; a profile database is a directory",
                       core::ErrorKind::io};
  }
  auto index = ImageIndex::read(dir);
  if (!index) return index.error();
  Database db;
  db.dir_ = dir;
  db.index_ = std::move(*index);
  return db;
}

std::vector<std::string> Database::epochs() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (epoch_seconds(name) && entry.is_directory(ec)) names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

core::Status Database::ensure_directory(const std::string& path) const {
  if (::mkdir(path.c_str(), 0755) == 0) {
    // The new entry must survive a crash too.
    sync_directory(fs::path(path).parent_path().string());
    return core::ok();
  }
  if (errno == EEXIST && io::is_directory(path)) return core::ok();
  return os_error(path, "cannot create directory");
}

core::Expected<std::string> Database::start_epoch(int64_t now) {
  std::string name = next_epoch_name(epochs(), now);
  if (auto made = ensure_directory(dir_ + "/" + name); !made) return made.error();
  return name;
}

core::Status Database::write(const std::string& path, std::string_view data) const {
  return writer_ ? writer_(path, data) : io::write_file_atomically(path, data);
}

core::Expected<FlushResult> Database::flush(const std::string& epoch, Aggregate& aggregate,
                                            const MachineInfo& machine) {
  FlushResult result;
  // The index first: every image a file names is in it before the file exists.
  bool index_changed = false;
  for (uint32_t i = 0; i < aggregate.image_count(); ++i)
    index_changed |= index_.add(aggregate.image_data(i).entry);
  if (index_changed)
    if (auto written = write(dir_ + "/" + std::string(ImageIndex::kFileName), index_.text());
        !written)
      return written.error();

  const std::string epoch_dir = dir_ + "/" + epoch;
  if (auto made = ensure_directory(epoch_dir); !made) return made.error();

  // A file that does not parse (damaged outside tally) is set aside, not overwritten.
  const auto set_aside = [&](const std::string& path, const core::Error& why) {
    const std::string aside = path + ".damaged";
    ::rename(path.c_str(), aside.c_str());
    result.warnings.push_back(fmt::format("{}; moved to {} and started afresh", why.message, aside));
  };

  for (uint32_t i = 0; i < aggregate.image_count(); ++i) {
    Aggregate::Image& img = aggregate.image_data(i);
    bool has_data = !img.stacks.empty();
    for (const auto& h : img.histograms) has_data |= !h.empty();
    if (!has_data) continue;
    const std::string dir = image_dir(dir_, epoch, img.entry.id);
    if (auto made = ensure_directory(dir); !made) return made.error();

    for (size_t e = 0; e < img.histograms.size(); ++e) {
      if (img.histograms[e].empty()) continue;
      const std::string path = dir + "/" + event_file_name(aggregate.events()[e].name);
      auto existing = read_file_if_exists(path);
      if (!existing) return existing.error();
      auto bytes = merged_dcpi(*existing, path, aggregate, i, e, epoch, machine);
      if (!bytes && existing->has_value() && bytes.error().kind == core::ErrorKind::invalid_input) {
        set_aside(path, bytes.error());
        bytes = merged_dcpi(std::nullopt, path, aggregate, i, e, epoch, machine);
      }
      if (!bytes) return bytes.error();
      if (auto written = write(path, *bytes); !written) return written.error();
      ++result.files;
      result.samples += img.histograms[e].samples;
      aggregate.clear_histogram(i, e);
    }
    if (!img.stacks.empty()) {
      const std::string path = dir + "/" + std::string(kStacksFileName);
      auto existing = read_file_if_exists(path);
      if (!existing) return existing.error();
      auto bytes = merged_stacks(*existing, path, aggregate, i, epoch);
      if (!bytes && existing->has_value() && bytes.error().kind == core::ErrorKind::invalid_input) {
        set_aside(path, bytes.error());
        bytes = merged_stacks(std::nullopt, path, aggregate, i, epoch);
      }
      if (!bytes) return bytes.error();
      if (auto written = write(path, *bytes); !written) return written.error();
      ++result.files;
      aggregate.clear_stacks(i);
    }
  }
  return result;
}

core::Expected<FlushResult> Database::flush_rolling_over(std::string& epoch, Aggregate& aggregate,
                                                         const MachineInfo& machine, int64_t now) {
  const auto histogram_samples = [&aggregate] {
    uint64_t samples = 0;
    for (uint32_t i = 0; i < aggregate.image_count(); ++i)
      for (const Aggregate::Histogram& h : aggregate.image_data(i).histograms) samples += h.samples;
    return samples;
  };
  const uint64_t pending = histogram_samples();
  auto first = flush(epoch, aggregate, machine);
  if (first || first.error().kind != core::ErrorKind::unsupported) return first;
  for (uint32_t i = 0; i < aggregate.image_count(); ++i)
    for (const Aggregate::Histogram& h : aggregate.image_data(i).histograms)
      for (const auto& [offset, n] : h.counts)
        if (n > UINT32_MAX) return first;  // a new epoch would overflow too
  auto next = start_epoch(now);
  if (!next) return next.error();
  auto rest = flush(*next, aggregate, machine);
  const std::string old = std::exchange(epoch, *next);
  if (!rest) return rest;
  // Samples, not files, of the part written before the overflow count in the total.
  rest->samples = pending - histogram_samples();
  rest->warnings.push_back(fmt::format("{}; epoch {} ended and epoch {} begins",
                                       first.error().message, old, epoch));
  return rest;
}

size_t Database::remove_stale_temporaries() const {
  // io::write_file_atomically's temporaries: ".<name>.tmp.XXXXXX" beside the target.
  size_t removed = 0;
  std::error_code ec;
  const auto is_temporary = [](const fs::path& p) {
    const std::string name = p.filename().string();
    return name.size() > 1 && name.front() == '.' && name.find(".tmp.") != std::string::npos;
  };
  for (auto it = fs::recursive_directory_iterator(dir_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= 2) it.disable_recursion_pending();
    if (it->is_regular_file(ec) && is_temporary(it->path()) && fs::remove(it->path(), ec)) ++removed;
  }
  return removed;
}

core::Expected<WriterLock> WriterLock::acquire(const std::string& db_dir) {
  const std::string path = db_dir + "/daemon.lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return os_error(path, "cannot open the lock file");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      return core::Error{db_dir + ": another tally daemon is already writing this database",
                         core::ErrorKind::unsupported};
    errno = err;
    return os_error(path, "cannot lock");
  }
  return WriterLock(fd);
}

WriterLock::~WriterLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tally::store
