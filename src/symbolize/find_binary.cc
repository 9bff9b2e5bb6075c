#include "symbolize/find_binary.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string_view>

#include "core/path_name.h"
#include "symbolize/elf_image.h"

namespace tally::symbolize {

namespace {

const char kDebugRoot[] = "/usr/lib/debug";

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string dir_name(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string join(const std::string& dir, const std::string& rest) {
  if (dir.empty()) return rest;
  if (rest.empty()) return dir;
  bool dir_slash = dir.back() == '/';
  bool rest_slash = rest.front() == '/';
  if (dir_slash && rest_slash) return dir + rest.substr(1);
  if (dir_slash || rest_slash) return dir + rest;
  return dir + "/" + rest;
}

std::string build_id_path(const std::string& build_id) {
  if (build_id.size() < 3) return {};
  return std::string(kDebugRoot) + "/.build-id/" + build_id.substr(0, 2) + "/" +
         build_id.substr(2) + ".debug";
}

}  // namespace

std::vector<std::string> debug_file_candidates(const std::string& binary_path,
                                               const std::string& build_id,
                                               const std::string& debuglink) {
  std::vector<std::string> paths;
  if (auto by_id = build_id_path(build_id); !by_id.empty()) paths.push_back(by_id);
  if (!debuglink.empty()) {
    std::string dir = dir_name(binary_path);
    paths.push_back(join(dir, debuglink));
    paths.push_back(join(join(dir, ".debug"), debuglink));
    paths.push_back(join(join(kDebugRoot, dir), debuglink));
  }
  return paths;
}

FoundBinary find_binary(const std::string& mapping_file, const std::string& mapping_build_id,
                        const std::vector<std::string>& dirs) {
  FoundBinary result;
  result.file = mapping_file;
  const std::string wanted_id = lower(mapping_build_id);
  std::vector<std::string> candidates;
  for (const auto& dir : dirs) {
    if (dir.empty()) continue;
    candidates.push_back(join(dir, std::string(core::base_name(mapping_file))));
    if (mapping_file.find('/') != std::string::npos) candidates.push_back(join(dir, mapping_file));
  }
  candidates.push_back(mapping_file);

  std::unique_ptr<ElfImage> binary;
  for (const auto& path : candidates) {
    if (std::find(result.searched.begin(), result.searched.end(), path) != result.searched.end())
      continue;
    result.searched.push_back(path);
    auto image = ElfImage::open(path);
    if (!image) continue;
    std::string id = image->build_id();
    if (!wanted_id.empty() && !id.empty() && id != wanted_id) {
      result.rejected.push_back(path + " has build id " + id);
      continue;
    }
    binary = std::move(image);
    break;
  }

  std::string id = binary ? binary->build_id() : std::string();
  if (id.empty()) id = wanted_id;
  result.build_id = id;

  if (binary) {
    result.binary = binary->path();
    result.key = id.empty() ? binary->path() : id;
    if (binary->has_dwarf()) {
      result.debug = binary->path();
      return result;
    }
  }
  // The DWARF of a stripped binary (or of one not found at all) in a separate debug file.
  std::string link = binary ? binary->debuglink() : std::string();
  for (const auto& path :
       debug_file_candidates(binary ? binary->path() : mapping_file, id, link)) {
    if (path == result.binary) continue;
    result.searched.push_back(path);
    auto image = ElfImage::open(path);
    if (!image || !image->has_dwarf()) continue;
    std::string debug_id = image->build_id();
    if (!id.empty() && !debug_id.empty() && debug_id != id) {
      result.rejected.push_back(path + " has build id " + debug_id);
      continue;
    }
    result.debug = path;
    if (result.key.empty()) result.key = id.empty() ? path : id;
    return result;
  }
  if (!binary) {
    result.problem = "not found";
    if (!result.rejected.empty()) {
      result.problem = "build id " + wanted_id + " not matched (";
      for (size_t i = 0; i < result.rejected.size(); ++i)
        result.problem += (i ? "; " : "") + result.rejected[i];
      result.problem += ")";
    }
  }
  return result;
}

std::vector<std::string> binary_search_dirs(std::vector<std::string> dirs) {
  if (const char* env = std::getenv("PPROF_BINARY_PATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      if (const std::string_view dir = rest.substr(0, colon); !dir.empty()) dirs.emplace_back(dir);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  return dirs;
}

}  // namespace tally::symbolize
