// Node aggregation by granularity, as pprof builds its graph nodes: every frame (each
// inline line of a location) becomes a node keyed by what the granularity keeps —
// functions: the function name; files: the source file; lines: function, file and line;
// addresses: the instruction address too. A location without lines (unsymbolized)
// becomes its mapping, printed "[libc.so.6]". Shared by top, peek and tree.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/profile.h"

namespace tally::analyze {

class LocationFilter;

enum class Granularity { functions, files, lines, addresses };
// "functions" -> Granularity::functions; false when unknown.
bool parse_granularity(std::string_view name, Granularity& out);

struct NodeOptions {
  Granularity granularity = Granularity::functions;
  bool inlines = true;  // false: pprof's -noinlines, only the outermost line of a location
  // Keep the object file and the function's start line in every node's key, not only in
  // nameless ones (pprof's ObjNames, set for -list and -disasm).
  bool object_names = false;
};

using NodeId = uint32_t;

// What identifies a node (pprof's NodeInfo). Strings are the profile's ids, except
// `file`, an index into NodeIndex's cleaned file names (0 = none).
struct NodeKey {
  uint64_t address = 0;
  core::StringId name = 0;
  uint32_t file = 0;
  int64_t start_line = 0;
  int64_t line = 0;
  core::StringId objfile = 0;
  bool operator==(const NodeKey&) const = default;
};

class NodeIndex {
 public:
  // Every location of `profile` mapped to its nodes; `filter` (may be null) supplies the
  // lines hide/show keep.
  NodeIndex(const core::Profile& profile, const NodeOptions& options,
            const LocationFilter* filter = nullptr);

  // The nodes of a location, innermost (inlined) first; empty when hidden.
  std::span<const NodeId> nodes(core::LocationId id) const {
    return {node_pool_.data() + node_begin_[id - 1], node_pool_.data() + node_begin_[id]};
  }
  size_t size() const { return keys_.size(); }
  const NodeKey& key(NodeId n) const { return keys_[n]; }
  // The node's source file, cleaned ("" when none or not kept by the granularity).
  const std::string& file(NodeId n) const { return files_[keys_[n].file]; }
  // pprof's printable name: "%016x " address, function, "file:line" or file, else
  // "[mapping file base name]", else "<unknown>".
  std::string name(NodeId n) const;
  // True when some location has more than one node (inline frames).
  bool has_inline_frames() const { return has_inline_frames_; }

 private:
  const core::Profile& profile_;
  std::vector<NodeKey> keys_;
  std::vector<std::string> files_;  // cleaned source file names; [0] = ""
  std::vector<NodeId> node_pool_;
  // Per location + 1: where its nodes start in node_pool_ (they end where the next
  // location's start; 4 bytes a location, and profiles have 100k+).
  std::vector<uint32_t> node_begin_;
  bool has_inline_frames_ = false;
};

// Go's filepath.Clean: lexical "." and ".." removal, duplicate slashes collapsed.
std::string clean_path(std::string_view path);

}  // namespace tally::analyze
