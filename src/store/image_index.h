// The database's index of images (like dcpiscan's): DIR/index.tsv maps each image id to
// the file it was and its build id, so that queries find the binary to symbolize with and
// can tell when the file at that path has changed since. One line per image:
//   id <TAB> build-id or - <TAB> major:minor <TAB> inode <TAB> size <TAB> mtime-ns <TAB> path
// with tab, newline and backslash in the path written as \t, \n and \\.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/error.h"
#include "store/image_id.h"

namespace tally::store {

struct IndexEntry {
  std::string id;
  ImageKey key;
  bool operator==(const IndexEntry&) const = default;
};

class ImageIndex {
 public:
  static constexpr std::string_view kFileName = "index.tsv";

  // DIR/index.tsv; an empty index when the file does not exist.
  static core::Expected<ImageIndex> read(const std::string& db_dir);
  // The text of the file (for tests) and its parser.
  std::string text() const;
  static core::Expected<ImageIndex> parse(std::string_view text, const std::string& source);

  const IndexEntry* find(std::string_view id) const;
  // Adds an image not yet known; an id already there keeps its first entry (the id names
  // the same image). True when the index changed.
  bool add(const IndexEntry& entry);
  const std::map<std::string, IndexEntry, std::less<>>& entries() const { return entries_; }

  // Writes DIR/index.tsv atomically.
  core::Status write(const std::string& db_dir) const;

 private:
  std::map<std::string, IndexEntry, std::less<>> entries_;
};

}  // namespace tally::store
