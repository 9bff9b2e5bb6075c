// Finding and reading the source files a profile names, as pprof's -list does: the file
// name is trimmed (pprof's trimPath: the configured --trim-path prefixes, else the part
// after "/BASENAME/" of a --source-path directory, and /proc/self/cwd/), then an absolute
// name is opened as is and a relative one is looked for in each --source-path directory
// and its parents. Files are read once and kept.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tally::analyze {

class SourceFiles {
 public:
  // `search_path` and `trim_path` are ':'-separated lists (pprof's -source_path and
  // -trim_path); an empty search path searches the current directory.
  SourceFiles(std::string search_path, std::string trim_path);

  // The name reports show for a file of the profile: trimmed with the search path as
  // given (pprof trims Function.filename so before it builds its graph), then cleaned.
  std::string display_name(std::string_view file) const;

  // The lines of a file named as display_name() gives it (index 0 is line 1), or null
  // when it cannot be found; error() then says why, in pprof's words.
  const std::vector<std::string>* lines(const std::string& file);
  const std::string& error(const std::string& file) const;

 private:
  struct Entry {
    bool found = false;
    std::vector<std::string> lines;
    std::string error;
  };
  Entry open(const std::string& file) const;

  std::string search_path_;  // as given
  std::string open_path_;    // where files are opened: the search path, else the cwd
  std::string trim_path_;
  std::unordered_map<std::string, std::unique_ptr<Entry>> files_;
};

// pprof's trimPath (exposed for the tests).
std::string trim_source_path(std::string_view path, std::string_view trim_path,
                             std::string_view search_path);

}  // namespace tally::analyze
