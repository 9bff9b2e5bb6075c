#include "analyze/nodes.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analyze/name_filter.h"
#include "core/hash.h"
#include "core/id_table.h"
#include "core/path_name.h"

namespace tally::analyze {

namespace {

struct NodeKeyHash {
  size_t operator()(const NodeKey& k) const {
    uint64_t h = core::mix64(k.address);
    for (uint64_t v : {uint64_t(k.name), uint64_t(k.file), uint64_t(k.start_line),
                       uint64_t(k.line), uint64_t(k.objfile)})
      h = core::mix64(h ^ v);
    return static_cast<size_t>(h);
  }
};

}  // namespace

bool parse_granularity(std::string_view name, Granularity& out) {
  if (name == "functions") out = Granularity::functions;
  else if (name == "files") out = Granularity::files;
  else if (name == "lines") out = Granularity::lines;
  else if (name == "addresses") out = Granularity::addresses;
  else return false;
  return true;
}

std::string clean_path(std::string_view path) {
  if (path.empty()) return ".";
  const bool rooted = path.front() == '/';
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view part = path.substr(i, j - i);
    i = j + 1;
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") parts.pop_back();
      else if (!rooted) parts.push_back(part);
      continue;
    }
    parts.push_back(part);
  }
  std::string out = rooted ? "/" : "";
  for (size_t k = 0; k < parts.size(); ++k) {
    if (k) out += '/';
    out += parts[k];
  }
  return out.empty() ? "." : out;
}

NodeIndex::NodeIndex(const core::Profile& profile, const NodeOptions& options,
                     const LocationFilter* filter)
    : profile_(profile), files_{""} {
  const Granularity g = options.granularity;
  const bool keep_name = g != Granularity::files;
  const bool keep_file = g != Granularity::functions;
  const bool keep_line = g == Granularity::lines || g == Granularity::addresses;
  const bool keep_address = g == Granularity::addresses;

  // Cleaned file name per filename string, computed once.
  std::unordered_map<core::StringId, uint32_t> file_of_string;
  std::unordered_map<std::string, uint32_t> file_ids;
  auto file_index = [&](core::StringId s) -> uint32_t {
    if (s == 0 || profile.str(s).empty()) return 0;
    auto [it, fresh] = file_of_string.try_emplace(s, 0);
    if (fresh) {
      std::string cleaned = clean_path(profile.str(s));
      auto [fit, new_file] = file_ids.try_emplace(cleaned, static_cast<uint32_t>(files_.size()));
      if (new_file) files_.push_back(std::move(cleaned));
      it->second = fit->second;
    }
    return it->second;
  };

  // The nodes' keys, by id: a table of ids, compared against keys_.
  core::IdTable ids;
  ids.reserve(profile.functions.size() + profile.mappings.size() + 16);
  // By function, about one node each: sized once, not doubled (40 bytes a key).
  keys_.reserve(profile.functions.size() + profile.mappings.size() + 16);
  auto intern = [&](const NodeKey& key) {
    bool fresh = false;
    const auto next = static_cast<NodeId>(keys_.size());
    const NodeId id = ids.find_or_insert(
        NodeKeyHash()(key), [&](NodeId n) { return keys_[n] == key; }, next, fresh);
    if (fresh) keys_.push_back(key);
    return id;
  };

  // What a function contributes to its lines' keys, worked out once per function; and,
  // when that is the whole key (no line, address or object in it), its node.
  struct FunctionPart {  // 16 bytes: one per function, and profiles have 100k
    core::StringId name = 0;
    uint32_t file = 0;
    NodeId node = 0;
    bool known = false;
    bool named = false;
    bool has_node = false;
  };
  std::vector<FunctionPart> parts(profile.functions.size() + 1);
  const bool node_per_function = !keep_line && !keep_address && !options.object_names;
  auto part_of = [&](core::FunctionId id) -> FunctionPart& {
    FunctionPart& part = parts[id];
    if (!part.known) {
      part.known = true;
      const core::Function& f = profile.function(id);
      part.named = keep_name && !profile.str(f.name).empty();
      if (part.named) part.name = f.name;
      if (keep_file) part.file = file_index(f.filename);
    }
    return part;
  };

  node_begin_.resize(profile.locations.size() + 1);
  // A node per line (one for a location without any): sized once, not doubled.
  size_t most_nodes = 0;
  for (const core::Location& loc : profile.locations) most_nodes += std::max<size_t>(loc.lines.size(), 1);
  node_pool_.reserve(most_nodes);
  for (size_t i = 0; i < profile.locations.size(); ++i) {
    const auto id = static_cast<core::LocationId>(i + 1);
    const core::Location& loc = profile.locations[i];
    node_begin_[i] = static_cast<uint32_t>(node_pool_.size());
    node_begin_[i + 1] = node_begin_[i];  // until its nodes are in
    if (filter && filter->hidden(id)) continue;
    std::span<const core::Line> lines = filter ? filter->lines(profile, id) : loc.lines;
    if (!options.inlines && lines.size() > 1) lines = lines.last(1);
    const core::StringId objfile = loc.mapping ? profile.mapping(loc.mapping).file : 0;
    const uint64_t address = keep_address ? loc.address : 0;
    if (lines.empty()) {
      node_pool_.push_back(intern({.address = address, .objfile = objfile}));
    }
    for (const core::Line& line : lines) {
      NodeKey key{.address = address};
      if (line.function != 0) {
        FunctionPart& part = part_of(line.function);
        if (part.has_node) {
          node_pool_.push_back(part.node);
          continue;
        }
        key.name = part.name;
        key.file = part.file;
        if (keep_line) key.line = line.line;
        // pprof keeps the object and start line of nameless frames, and of all with ObjNames
        if (!part.named || options.object_names) {
          key.objfile = objfile;
          key.start_line = profile.function(line.function).start_line;
        }
        const NodeId node = intern(key);
        if (part.named && node_per_function) {
          part.node = node;
          part.has_node = true;
        }
        node_pool_.push_back(node);
        continue;
      }
      key.objfile = objfile;
      node_pool_.push_back(intern(key));
    }
    node_begin_[i + 1] = static_cast<uint32_t>(node_pool_.size());
    if (node_begin_[i + 1] - node_begin_[i] > 1) has_inline_frames_ = true;
  }
}

std::string NodeIndex::name(NodeId n) const {
  const NodeKey& k = keys_[n];
  std::string out;
  auto add = [&](std::string_view part) {
    if (!out.empty()) out += ' ';
    out += part;
  };
  if (k.address != 0) add(fmt::format("{:016x}", k.address));
  if (k.name != 0) add(profile_.str(k.name));
  if (k.line != 0) add(fmt::format("{}:{}", files_[k.file], k.line));
  else if (k.file != 0) add(files_[k.file]);
  else if (k.name != 0) {
  } else if (k.objfile != 0 && !profile_.str(k.objfile).empty())
    add(fmt::format("[{}]", core::base_name(profile_.str(k.objfile))));
  else add("<unknown>");
  return out;
}

}  // namespace tally::analyze
