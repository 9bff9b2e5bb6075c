#include "symbolize/symbolize.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <thread>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/demangle.h"
#include "core/hash.h"
#include "core/id_table.h"
#include "core/path_name.h"
#include "symbolize/address_resolver.h"
#include "symbolize/debuginfod_fetch.h"
#include "symbolize/elf_image.h"
#include "symbolize/find_binary.h"
#include "symbolize/run_parallel.h"
#include "symbolize/symbol_map.h"

namespace tally::symbolize {

namespace {

// One ELF to resolve in: the unique link-time addresses wanted from it, the locations
// at each and, slot for slot, what they resolve to.
struct Image {
  FoundBinary found;
  // As collected: a link-time address per location. Then sorted, unique (a slot each).
  std::vector<uint64_t> addresses;
  // As collected: the location of each address. Then grouped by slot, in address order.
  std::vector<core::LocationId> locations;
  std::vector<uint32_t> slot_begin;      // per slot + 1: where its locations start
};

// Pseudo-files the kernel names in brackets ("[vdso]", "[heap]") have no ELF to read.
bool is_pseudo_file(std::string_view file) { return file.empty() || file.front() == '['; }

// What resolve_all keeps alive: each image's map, its index gone, for the frames (which
// point into its resolvers: the functions they memoized and the units' file tables).
using Resolution = std::vector<std::unique_ptr<SymbolMap>>;

// Said once per image and report: what went wrong reading its call-frame information or
// MiniDebugInfo, and, on one short line, an image with .dynsym alone (most of its functions
// then known by their start only) and what would name them: its -dbgsym package, or the
// debuginfod servers when it has a build id and they were not asked already.
void report_missing_symbols(const ElfIndex& index, const FoundBinary& found,
                            const DebuginfodOptions& debuginfod, core::Diagnostics& diagnostics) {
  if (!index.code_range_problem().empty())
    diagnostics.warn("symbolize: " + index.code_range_problem() + " (functions without symbols stay addresses)");
  if (!index.mini_debug_problem().empty())
    diagnostics.warn("symbolize: " + index.mini_debug_problem() + " (MiniDebugInfo not used)");
  if (index.has_full_symbols() || found.binary.empty()) return;
  auto binary = ElfImage::open(found.binary);
  const bool has_build_id = binary && !binary->build_id().empty();
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  const bool asked = debuginfod.enabled && urls != nullptr && *urls != '\0' && has_build_id;
  const char* remedy = !has_build_id ? "install its -dbgsym package (no build id for debuginfod)"
                       : asked       ? "not on the DEBUGINFOD_URLS servers; install its -dbgsym package"
                                     : "install its -dbgsym package or set DEBUGINFOD_URLS";
  diagnostics.warn(fmt::format("{}{}; {}", found.binary, kNoDebugSymbols, remedy));
}

// -v: where an image's symbols came from, and what else was looked at, so that a user can
// tell a missing -dbgsym package from a debug file of another build.
void explain_sources(const ElfIndex& index, const FoundBinary& found, core::Diagnostics& diagnostics) {
  const std::string binary = found.binary.empty() ? found.file : found.binary;
  std::string source;
  if (found.debug.empty())
    source = index.has_full_symbols() ? "symbols from its .symtab or MiniDebugInfo, no DWARF (no lines)"
                                      : "symbols from .dynsym only, no DWARF";
  else if (found.debug == found.binary)
    source = "symbols and DWARF from the binary itself";
  else
    source = "symbols and DWARF from " + found.debug;
  std::string message = fmt::format("symbolize: {}{}: {}; searched {}", binary,
                                    found.build_id.empty() ? "" : " (build id " + found.build_id + ")",
                                    source, fmt::join(found.searched, ", "));
  if (!found.rejected.empty()) message += fmt::format("; not used: {}", fmt::join(found.rejected, "; "));
  diagnostics.note(std::move(message));
}

// Resolves every image's addresses on `threads` threads, one image after the other. Each
// image's map is opened (its sections inflated on all threads), resolves its addresses
// (each compile unit on one thread), and gives back its index (the files, their inflated
// debug sections, libdw's handles) when its image is done: the frames need only the
// resolvers.
Resolution resolve_all(std::vector<Image>& images, unsigned threads, const Options& options,
                       core::Diagnostics& diagnostics) {
  Resolution kept(images.size());
  // One image per round, its index gone before the next one's is built, so that the
  // indexes never add up: an index with DWARF holds the inflated debug sections (libc's,
  // ld.so's and libm's together were 21 MB of a 45 MB peak), one without the pages of its
  // symbol tables (libLLVM's and libclang-cpp's, 7 MB). The images with DWARF first: their
  // indexes are the biggest, and the frames the rounds leave grow with each round.
  std::vector<size_t> order;
  for (bool with_dwarf : {true, false})
    for (size_t i = 0; i < images.size(); ++i)
      if (images[i].found.debug.empty() != with_dwarf) order.push_back(i);
  for (size_t round : order) {
    auto map = SymbolMap::open(images[round].found, threads, options.inflated_copies,
                               options.index_only_what_is_needed ? &images[round].addresses : nullptr);
    if (!map) continue;  // images hold found binaries only
    report_missing_symbols((*map)->index(), images[round].found, options.debuginfod, diagnostics);
    if (options.explain_sources) explain_sources((*map)->index(), images[round].found, diagnostics);
    (*map)->resolve(images[round].addresses, threads);
    (*map)->release_index();
    kept[round] = std::move(*map);
    // Most of what the index held was allocated by the worker threads, in malloc arenas
    // this thread (the interning that follows) cannot reuse: give it back.
    ::malloc_trim(0);
  }
  return kept;
}

// Interns functions, reusing the profile's existing entries; each (function, file) pair a
// resolver made is looked up by its pointers once interned. The table holds function ids
// and compares the profile's own entries: no second copy of each key.
class FunctionInterner {
 public:
  FunctionInterner(core::Profile& profile, NameStyle names)
      : profile_(profile), names_(names), empty_(profile.intern("")) {
    ids_.reserve(profile.functions.size());
    for (size_t i = 0; i < profile.functions.size(); ++i) {
      const auto& f = profile.functions[i];
      (void)intern({f.name, f.system_name, f.filename, f.start_line}, static_cast<uint32_t>(i));
    }
  }
  core::FunctionId intern(std::string_view name, std::string_view system_name,
                          std::string_view filename, int64_t start_line) {
    core::StringId name_id = profile_.intern(name);
    core::StringId system_id =
        system_name.empty() || system_name == name ? name_id : profile_.intern(system_name);
    core::Function key{name_id, system_id, filename.empty() ? empty_ : profile_.intern(filename),
                       start_line};
    const auto next = static_cast<uint32_t>(profile_.functions.size());
    const uint32_t index = intern(key, next);
    if (index == next) profile_.add_function(key);
    return index + 1;
  }
  core::FunctionId intern(const Frame& frame) {
    // Most functions come with one file: remembered on the function, no lookup.
    if (frame.function->interned_file == frame.file) return frame.function->interned_id;
    auto [it, added] = by_frame_.try_emplace({frame.function, frame.file}, 0);
    if (added) {
      const FunctionInfo& function = *frame.function;
      it->second = intern(names_ == NameStyle::simplified ? core::simplify_name(function.name)
                                                          : function.name,
                          function.system_name, frame.file, function.start_line);
    }
    frame.function->interned_file = frame.file;
    frame.function->interned_id = it->second;
    return it->second;
  }

 private:
  static uint64_t hash(const core::Function& f) {
    uint64_t h = core::mix64(f.name);
    h = core::mix64(h ^ f.system_name);
    h = core::mix64(h ^ f.filename);
    return core::mix64(h ^ static_cast<uint64_t>(f.start_line));
  }
  // The index in profile.functions of a function equal to `key`, else `next` (entered).
  uint32_t intern(const core::Function& key, uint32_t next) {
    bool inserted = false;
    return ids_.find_or_insert(
        hash(key), [&](uint32_t index) { return profile_.functions[index] == key; }, next,
        inserted);
  }
  struct PairHash {
    size_t operator()(const std::pair<const FunctionInfo*, const char*>& key) const {
      return std::hash<const void*>()(key.first) * 31 + std::hash<const void*>()(key.second);
    }
  };

  core::Profile& profile_;
  NameStyle names_;
  core::StringId empty_;
  core::IdTable ids_;  // indexes into profile.functions
  std::unordered_map<std::pair<const FunctionInfo*, const char*>, core::FunctionId, PairHash>
      by_frame_;
};

}  // namespace

namespace {

// A location with an address in a mapping whose functions are not known yet, and no lines.
// Address 0 is pprof's "unknown address": nothing to look up.
bool wants_lookup(const core::Profile& profile, const core::Location& location) {
  return location.mapping != 0 && location.mapping <= profile.mappings.size() &&
         location.address != 0 && location.lines.empty() &&
         !profile.mapping(location.mapping).has_functions;
}

core::Status symbolize_locations(core::Profile& profile, const Options& options,
                                 core::Diagnostics& diagnostics) {
  const std::vector<std::string> dirs = binary_search_dirs(options.binary_paths);

  auto is_wanted = [&](const core::Location& location) { return wants_lookup(profile, location); };
  // Locations to resolve, per mapping.
  std::vector<std::vector<core::LocationId>> wanted(profile.mappings.size());
  for (size_t i = 0; i < profile.locations.size(); ++i)
    if (is_wanted(profile.locations[i]))
      wanted[profile.locations[i].mapping - 1].push_back(static_cast<core::LocationId>(i + 1));

  // The binaries first, then from debuginfod the debug files not on this machine (a step
  // of its own: all fetched at once, in parallel), then the images.
  std::map<std::pair<std::string, std::string>, FoundBinary> found_by_file;  // (file, build id)
  for (size_t m = 0; m < profile.mappings.size(); ++m) {
    std::string file(profile.str(profile.mappings[m].file));
    if (wanted[m].empty() || is_pseudo_file(file)) continue;
    std::string build_id(profile.str(profile.mappings[m].build_id));
    if (!found_by_file.contains({file, build_id}))
      found_by_file.emplace(std::pair(file, build_id), find_binary(file, build_id, dirs));
  }
  std::vector<FoundBinary*> found_binaries;
  for (auto& [file, found] : found_by_file) found_binaries.push_back(&found);
  fetch_missing_files(found_binaries, options.debuginfod, diagnostics);

  std::vector<Image> images;
  std::map<std::string, int> image_by_key;       // build id or path -> images index
  std::map<std::pair<std::string, std::string>, int> image_by_file;  // (file, build id)
  std::vector<int> mapping_image(profile.mappings.size(), -1);

  for (size_t m = 0; m < profile.mappings.size(); ++m) {
    if (wanted[m].empty()) continue;
    const core::Mapping mapping = profile.mappings[m];
    std::string file(profile.str(mapping.file));
    std::string build_id(profile.str(mapping.build_id));
    int image_index = -1;
    if (!is_pseudo_file(file)) {
      auto known = image_by_file.find({file, build_id});
      if (known != image_by_file.end()) {
        image_index = known->second;
      } else {
        FoundBinary found = std::move(found_by_file.at({file, build_id}));
        if (!found.found()) {
          std::string searched;
          for (const auto& path : found.searched) searched += (searched.empty() ? "" : ", ") + path;
          diagnostics.warn(fmt::format("symbolize: {}: {}; searched {}", file, found.problem,
                                       searched));
        } else if (auto existing = image_by_key.find(found.key); existing != image_by_key.end()) {
          image_index = existing->second;
        } else {
          image_index = static_cast<int>(images.size());
          image_by_key.emplace(found.key, image_index);
          images.push_back({std::move(found), {}, {}, {}});
        }
        image_by_file.emplace(std::pair(file, build_id), image_index);
      }
    }
    mapping_image[m] = image_index;

    std::vector<LoadSegment> segments;
    bool is_exec = false;
    if (image_index >= 0) {
      const FoundBinary& found = images[static_cast<size_t>(image_index)].found;
      auto elf = ElfImage::open(found.binary.empty() ? found.debug : found.binary);
      if (elf) {
        segments = elf->load_segments();
        is_exec = elf->is_exec();
      }
    }
    if (image_index < 0) continue;  // its locations are named as unresolved below
    Image& image = images[static_cast<size_t>(image_index)];
    image.addresses.reserve(image.addresses.size() + wanted[m].size());
    image.locations.reserve(image.locations.size() + wanted[m].size());
    for (core::LocationId id : wanted[m]) {
      if (auto link_address = link_time_address(segments, is_exec, mapping.start, mapping.offset,
                                                profile.location(id).address)) {
        image.addresses.push_back(*link_address);
        image.locations.push_back(id);
      }
    }
  }
  wanted = {};

  unsigned threads = options.threads != 0 ? options.threads : std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;
  // Each unique address once, in address order (neighbours share a compile unit), with
  // the locations at it, so that no location has to search for its address.
  run_parallel(images.size(), threads, [&](unsigned, size_t image_index) {
    Image& image = images[image_index];
    std::vector<std::pair<uint64_t, core::LocationId>> order(image.addresses.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = {image.addresses[i], image.locations[i]};
    std::sort(order.begin(), order.end());
    image.addresses.clear();
    image.locations.clear();
    for (const auto& [address, location] : order) {
      if (image.addresses.empty() || image.addresses.back() != address) {
        image.slot_begin.push_back(static_cast<uint32_t>(image.locations.size()));
        image.addresses.push_back(address);
      }
      image.locations.push_back(location);
    }
    image.slot_begin.push_back(static_cast<uint32_t>(image.locations.size()));
    image.addresses.shrink_to_fit();
  });
  // The frames point into the resolvers: both live until the frames are interned.
  Resolution resolution = resolve_all(images, threads, options, diagnostics);
  // What only the resolution needed goes before the profile grows.
  for (auto& image : images) image.addresses = {};

  // Each unique address's lines, interned once and given to the locations at it, image by
  // image in address order: the frames and the functions they point to are then visited
  // in the order they were made (in location order they are visited at random, a cache
  // miss each). Nearly every location has one line, which it holds in place.
  FunctionInterner functions(profile, options.names);
  // At most a function per frame and per unresolved location: reserved (address space,
  // not memory, until used) so that the table is not copied as it doubles.
  size_t frame_count = 0, unresolved_count = 0;
  for (const auto& map : resolution) frame_count += map ? map->frame_count() : 0;
  if (options.name_unresolved)
    for (const core::Location& location : profile.locations) unresolved_count += is_wanted(location);
  profile.functions.reserve(profile.functions.size() + frame_count + unresolved_count);
  std::vector<bool> mapping_resolved(profile.mappings.size(), false);
  core::LineList lines;
  for (size_t image_index = 0; image_index < images.size(); ++image_index) {
    Image& image = images[image_index];
    const SymbolMap* map = resolution[image_index].get();
    for (size_t slot = 0; map != nullptr && slot + 1 < image.slot_begin.size(); ++slot) {
      const std::span<const Frame> frames = map->frames(slot);
      if (frames.empty()) continue;
      lines.clear();
      for (const Frame& frame : frames) lines.push_back({functions.intern(frame), frame.line, 0});
      for (uint32_t i = image.slot_begin[slot]; i < image.slot_begin[slot + 1]; ++i) {
        core::Location& location = profile.location(image.locations[i]);
        location.lines = lines;
        mapping_resolved[location.mapping - 1] = true;
      }
    }
    image.locations = {};
    image.slot_begin = {};
  }
  // The frames are interned: the resolvers' memory goes before the unresolved names come.
  resolution.clear();
  ::malloc_trim(0);

  // What is still wanted found no function (or no ELF): "[libfoo.so+0x1234]", or left as an
  // address.
  // Per mapping, how an unresolved address's name starts: "[libfoo.so+" ("[vdso+", not
  // "[[vdso]+").
  std::vector<std::string> unresolved_prefix(profile.mappings.size());
  std::string name;
  for (core::Location& location : profile.locations) {
    if (!options.name_unresolved || !is_wanted(location)) continue;
    const core::Mapping& mapping = profile.mapping(location.mapping);
    std::string& prefix = unresolved_prefix[location.mapping - 1];
    if (prefix.empty()) {
      std::string_view file = profile.str(mapping.file);
      std::string image = file.size() > 2 && file.front() == '[' && file.back() == ']'
                              ? std::string(file.substr(1, file.size() - 2))
                              : std::string(core::base_name(file));
      prefix = "[" + (image.empty() ? std::string("unknown") : image) + "+";
    }
    name = prefix;
    char offset[24];  // "0x" and 16 digits and "]"
    const auto* end = fmt::format_to(offset, "{:#x}]", location.address - mapping.start + mapping.offset);
    name.append(offset, static_cast<size_t>(end - offset));
    location.lines.push_back({functions.intern(name, name, "", 0), 0, 0});
  }

  for (size_t m = 0; m < profile.mappings.size(); ++m) {
    if (!mapping_resolved[m] || mapping_image[m] < 0) continue;
    auto& mapping = profile.mappings[m];
    mapping.has_functions = true;
    if (!images[static_cast<size_t>(mapping_image[m])].found.debug.empty()) {
      mapping.has_filenames = true;
      mapping.has_line_numbers = true;
      mapping.has_inline_frames = true;
    }
  }
  return core::ok();
}

}  // namespace

core::Status symbolize(core::Profile& profile, const Options& options,
                       core::Diagnostics& diagnostics) {
  // A profile symbolized already (pprof -proto's, tally record's) costs a look at each
  // location, not the threads, lookups and heap trimming below.
  if (std::none_of(profile.locations.begin(), profile.locations.end(),
                   [&](const core::Location& location) { return wants_lookup(profile, location); }))
    return core::ok();
  core::Status status = symbolize_locations(profile, options, diagnostics);
  // The resolvers and frames just freed: back to the system before the report's turn.
  ::malloc_trim(0);
  return status;
}

std::vector<std::string> binaries_without_debug_symbols(const core::Diagnostics& diagnostics) {
  std::vector<std::string> binaries;
  for (const std::string& warning : diagnostics.warnings()) {
    const size_t at = warning.find(kNoDebugSymbols);
    if (at != std::string::npos && at != 0 && !warning.starts_with("symbolize: "))
      binaries.push_back(warning.substr(0, at));
  }
  return binaries;
}

std::string missing_symbols_summary(const core::Profile& profile,
                                    const std::vector<std::string>& stripped) {
  std::set<std::string, std::less<>> binaries(stripped.begin(), stripped.end());
  for (const core::Mapping& m : profile.mappings) {
    const std::string_view file = profile.str(m.file);
    if (m.has_functions && !is_pseudo_file(file)) binaries.emplace(file);
  }
  // A header line stays a line: the first few names, then how many more (stderr has all).
  constexpr size_t kNamesShown = 6;
  std::string names;
  for (size_t i = 0; i < stripped.size() && i < kNamesShown; ++i)
    names += (names.empty() ? "" : ", ") + std::string(core::base_name(stripped[i]));
  if (stripped.size() > kNamesShown)
    names += fmt::format(" and {} more", stripped.size() - kNamesShown);
  return fmt::format("symbols: {} of {} binaries have no debug symbols (.dynsym only): {}",
                     stripped.size(), binaries.size(), names);
}

}  // namespace tally::symbolize
