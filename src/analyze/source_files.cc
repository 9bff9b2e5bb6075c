#include "analyze/source_files.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "analyze/nodes.h"
#include "core/path_name.h"

namespace tally::analyze {

namespace {

// Go's filepath.SplitList: "" is no element at all, otherwise every ':'-separated piece.
std::vector<std::string> split_list(std::string_view list) {
  std::vector<std::string> parts;
  if (list.empty()) return parts;
  size_t i = 0;
  while (true) {
    const size_t colon = list.find(':', i);
    parts.emplace_back(list.substr(i, colon == std::string_view::npos ? colon : colon - i));
    if (colon == std::string_view::npos) break;
    i = colon + 1;
  }
  return parts;
}

// Go's filepath.Base and filepath.Dir.
std::string go_base(std::string_view path) {
  return path.empty() ? "." : std::string(core::base_name(path));
}

std::string go_dir(std::string_view path) {
  const size_t slash = path.rfind('/');
  return clean_path(slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1));
}

// Go's filepath.Join of two elements: the non-empty ones joined by '/', then cleaned.
std::string go_join(const std::string& a, const std::string& b) {
  if (a.empty()) return b.empty() ? std::string() : clean_path(b);
  if (b.empty()) return clean_path(a);
  return clean_path(a + "/" + b);
}

// The message Go's os.Open gives ("open PATH: no such file or directory").
std::string open_error(const std::string& path, int error) {
  std::string reason = std::strerror(error);
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return fmt::format("open {}: {}", path, reason);
}

// A regular file's lines as bufio.Scanner splits them (a final '\r' dropped).
bool read_lines(const std::string& path, std::vector<std::string>& lines, int& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = errno != 0 ? errno : ENOENT;
    return false;
  }
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  return true;
}

}  // namespace

std::string trim_source_path(std::string_view path, std::string_view trim_path,
                             std::string_view search_path) {
  if (trim_path.empty()) {
    // pprof's guess: the part after "/BASENAME/" of a search directory.
    for (const std::string& dir : split_list(search_path)) {
      const std::string want = "/" + go_base(dir) + "/";
      if (const size_t found = path.find(want); found != std::string_view::npos)
        return std::string(path.substr(found + want.size()));
    }
  }
  std::vector<std::string> prefixes = split_list(trim_path);
  prefixes.emplace_back("/proc/self/cwd/./");
  prefixes.emplace_back("/proc/self/cwd/");
  for (std::string& prefix : prefixes) {
    if (!prefix.ends_with('/')) prefix += '/';
    if (path.starts_with(prefix)) return std::string(path.substr(prefix.size()));
  }
  return std::string(path);
}

SourceFiles::SourceFiles(std::string search_path, std::string trim_path)
    : search_path_(std::move(search_path)), trim_path_(std::move(trim_path)) {
  open_path_ = search_path_;
  if (open_path_.empty()) {
    std::error_code ec;
    open_path_ = std::filesystem::current_path(ec).string();
  }
}

std::string SourceFiles::display_name(std::string_view file) const {
  return clean_path(trim_source_path(file, trim_path_, search_path_));
}

SourceFiles::Entry SourceFiles::open(const std::string& file) const {
  Entry entry;
  const std::string path = trim_source_path(file, trim_path_, open_path_);
  int error = 0;
  if (!path.empty() && path.front() == '/') {
    entry.found = read_lines(path, entry.lines, error);
    if (!entry.found) entry.error = open_error(path, error);
    return entry;
  }
  for (std::string dir : split_list(open_path_)) {
    // Each directory and its parents.
    while (true) {
      entry.lines.clear();
      if (read_lines(go_join(dir, path), entry.lines, error)) {
        entry.found = true;
        return entry;
      }
      std::string parent = go_dir(dir);
      if (parent == dir) break;
      dir = std::move(parent);
    }
  }
  entry.lines.clear();
  entry.error = fmt::format("could not find file {} on path {}", path, open_path_);
  return entry;
}

const std::vector<std::string>* SourceFiles::lines(const std::string& file) {
  auto [it, fresh] = files_.try_emplace(file);
  if (fresh) it->second = std::make_unique<Entry>(open(file));
  return it->second->found ? &it->second->lines : nullptr;
}

const std::string& SourceFiles::error(const std::string& file) const {
  static const std::string kNone;
  auto it = files_.find(file);
  return it == files_.end() ? kNone : it->second->error;
}

}  // namespace tally::analyze
