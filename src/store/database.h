// The profile database (DCPI's profile database, kept by `tally daemon`):
//
//   DIR/index.tsv                          image id -> path, build id (image_index.h)
//   DIR/<epoch>/<image-id>/<event>.dcpi    DCPI v0 histogram of one image and event
//   DIR/<epoch>/<image-id>/stacks.pb.gz    the image's call stacks (image_files.h)
//
// Epochs are directories named by their UTC start time (epoch.h). Every file is replaced
// atomically (temporary file, fsync, rename, fsync of the directory), so a reader or a
// kill -9 at any moment sees each file whole, old or new.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "store/aggregate.h"
#include "store/image_files.h"
#include "store/image_index.h"

namespace tally::store {

// Writes a file atomically; replaceable so that tests can make the disk "full".
using FileWriter = std::function<core::Status(const std::string& path, std::string_view data)>;

struct FlushResult {
  size_t files = 0;      // files written
  uint64_t samples = 0;  // samples of the histograms written
  std::vector<std::string> warnings;  // e.g. a damaged file set aside
};

class Database {
 public:
  // Opens DIR; with `create`, makes it when missing. Fails when DIR is not a directory
  // (or is missing and not to be created), or its index does not parse.
  static core::Expected<Database> open(const std::string& dir, bool create);

  const std::string& dir() const { return dir_; }
  const ImageIndex& index() const { return index_; }

  // The epochs, oldest first.
  std::vector<std::string> epochs() const;
  // Creates a new epoch starting `now` (unix seconds), named after every existing one.
  core::Expected<std::string> start_epoch(int64_t now);

  // Writes everything `aggregate` holds into `epoch`, merging with the files there, and
  // takes out of `aggregate` each part once its file is written. On an error (a full
  // disk) the flush stops; what was not written stays in `aggregate` for the next flush.
  // A count that the merge would take past DCPI's 32 bits fails with
  // ErrorKind::unsupported, before that file is written.
  core::Expected<FlushResult> flush(const std::string& epoch, Aggregate& aggregate,
                                    const MachineInfo& machine);
  // flush(), but where a merged count would pass 32 bits (an idle instruction of a
  // many-CPU machine gets there in days), what is left goes into a new epoch starting
  // `now`, which `epoch` is then set to; a warning says so. Fails as flush() does, and
  // when the aggregate alone holds such a count (no new epoch would help).
  core::Expected<FlushResult> flush_rolling_over(std::string& epoch, Aggregate& aggregate,
                                                 const MachineInfo& machine, int64_t now);

  // Deletes temporary files a killed writer left behind; returns how many.
  size_t remove_stale_temporaries() const;

  void set_writer(FileWriter writer) { writer_ = std::move(writer); }

 private:
  core::Status write(const std::string& path, std::string_view data) const;
  core::Status ensure_directory(const std::string& path) const;

  std::string dir_;
  ImageIndex index_;
  FileWriter writer_;
};

// The directory DIR/<epoch>/<image-id> and the files in it.
std::string image_dir(const std::string& db, std::string_view epoch, std::string_view image_id);

// Reads a whole file; nullopt when it does not exist.
core::Expected<std::optional<std::string>> read_file_if_exists(const std::string& path);

// An exclusive lock on DIR held for as long as the object lives (flock on DIR/daemon.lock):
// one daemon per database.
class WriterLock {
 public:
  static core::Expected<WriterLock> acquire(const std::string& db_dir);
  WriterLock(WriterLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  WriterLock& operator=(WriterLock&&) = delete;
  ~WriterLock();

 private:
  explicit WriterLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace tally::store
