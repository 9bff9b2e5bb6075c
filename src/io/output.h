// OutputFile: never lose data. Output goes to a temporary file beside the target, is
// fsync'd, and renamed over the target only when complete; "-" writes standard output.
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace tally::io {

// Writes all of `data` to `fd`, through short writes and EINTR; false (errno set) on an
// error.
bool write_all(int fd, std::string_view data);

// Writes `data` to `path` atomically (or to stdout for "-"; devices and FIFOs, which
// cannot be replaced, are written in place).
core::Status write_file_atomically(const std::string& path, std::string_view data);

// The same for output written piece by piece while it is made (tally stat's trace): each
// write goes to the temporary file ".NAME.tmp.XXXXXX" beside the target at once, so that
// nothing is held in memory and nothing written is lost if tally is killed; commit() puts
// the file in place. A writer destroyed before commit() removes its temporary file and
// leaves the target as it was. "-" is standard output, devices and FIFOs are written in
// place, as above.
class AtomicFileWriter {
 public:
  static core::Expected<AtomicFileWriter> open(const std::string& path);
  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();

  core::Status write(std::string_view data);
  // Syncs, renames the temporary file over the target and syncs its directory.
  core::Status commit();
  // The errno of the first failed write or commit (EPIPE: the reader went away), 0 if none.
  int error_number() const { return error_number_; }
  const std::string& path() const { return path_; }
  // Where the data goes until commit(): the temporary file, else the target itself.
  const std::string& writing_to() const { return temporary_.empty() ? path_ : temporary_; }

 private:
  AtomicFileWriter(std::string path, int fd, std::string temporary)
      : path_(std::move(path)), fd_(fd), temporary_(std::move(temporary)) {}
  core::Error fail(const char* what);

  std::string path_;
  int fd_ = -1;
  std::string temporary_;  // empty: written in place (standard output, a device, a FIFO)
  int error_number_ = 0;
};

// Creates `path` as a directory if it does not exist yet (parents included).
core::Status make_directories(const std::string& path);

bool is_directory(const std::string& path);

}  // namespace tally::io
