#include "symbolize/symbolize.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "symbolize/address_resolver.h"
#include "symbolize/demangle.h"
#include "symbolize/elf_image.h"
#include "symbolize/find_binary.h"

namespace tally::symbolize {

namespace {

// One ELF to resolve in: the unique link-time addresses wanted from it and, slot for
// slot, what they resolve to.
struct Image {
  FoundBinary found;
  std::vector<uint64_t> addresses;  // sorted, unique
  std::vector<std::vector<Frame>> frames;
};

// A location to fill: from image `image` at its link-time address (or unresolvable).
struct Pending {
  core::LocationId location = 0;
  int image = -1;  // -1: no usable ELF, or the address is outside its segments
  uint64_t link_address = 0;
};

std::vector<std::string> search_dirs(const Options& options) {
  std::vector<std::string> dirs = options.binary_paths;
  if (const char* env = std::getenv("PPROF_BINARY_PATH")) {
    std::string_view rest = env;
    while (!rest.empty()) {
      auto colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) dirs.emplace_back(dir);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  return dirs;
}

std::string base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// Pseudo-files the kernel names in brackets ("[vdso]", "[heap]") have no ELF to read.
bool is_pseudo_file(std::string_view file) { return file.empty() || file.front() == '['; }

// Resolves every image's addresses on `threads` threads. Work goes out in chunks of
// addresses of one image; each thread keeps its own resolver per image. The resolvers
// are returned: the frames point into them.
std::vector<std::unique_ptr<AddressResolver>> resolve_all(std::vector<Image>& images,
                                                          unsigned threads) {
  struct Chunk {
    size_t image, begin, end;
  };
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < images.size(); ++i) {
    auto& image = images[i];
    image.frames.resize(image.addresses.size());
    // One contiguous share of the image's sorted addresses per thread: a thread then
    // reads only the compile units of its share, instead of every thread indexing most
    // of them as interleaved small chunks would make it.
    size_t chunk_size = std::max<size_t>(256, (image.addresses.size() + threads - 1) / threads);
    for (size_t begin = 0; begin < image.addresses.size(); begin += chunk_size)
      chunks.push_back({i, begin, std::min(begin + chunk_size, image.addresses.size())});
  }
  std::atomic<size_t> next{0};
  std::mutex done_mutex;
  std::vector<std::unique_ptr<AddressResolver>> done;
  auto work = [&] {
    std::unordered_map<size_t, std::unique_ptr<AddressResolver>> resolvers;
    for (size_t c; (c = next.fetch_add(1)) < chunks.size();) {
      const Chunk& chunk = chunks[c];
      auto& resolver = resolvers[chunk.image];
      if (!resolver) resolver = std::make_unique<AddressResolver>(images[chunk.image].found);
      Image& image = images[chunk.image];
      for (size_t i = chunk.begin; i < chunk.end; ++i)
        image.frames[i] = resolver->resolve(image.addresses[i]);
    }
    std::lock_guard lock(done_mutex);
    for (auto& [image, resolver] : resolvers) done.push_back(std::move(resolver));
  };
  unsigned count = static_cast<unsigned>(std::min<size_t>(threads, chunks.size()));
  if (count <= 1) {
    work();
    return done;
  }
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < count; ++i) pool.emplace_back(work);
  for (auto& thread : pool) thread.join();
  return done;
}

// Interns functions, reusing the profile's existing entries; each (function, file) pair a
// resolver made is looked up by its pointers once interned.
class FunctionInterner {
 public:
  FunctionInterner(core::Profile& profile, NameStyle names) : profile_(profile), names_(names) {
    for (size_t i = 0; i < profile.functions.size(); ++i) {
      const auto& f = profile.functions[i];
      ids_.emplace(std::tuple(f.name, f.system_name, f.filename, f.start_line),
                   static_cast<core::FunctionId>(i + 1));
    }
  }
  core::FunctionId intern(std::string_view name, std::string_view system_name,
                          std::string_view filename, int64_t start_line) {
    core::Function f{profile_.intern(name), profile_.intern(system_name),
                     profile_.intern(filename), start_line};
    auto [it, added] = ids_.emplace(std::tuple(f.name, f.system_name, f.filename, f.start_line), 0);
    if (added) it->second = profile_.add_function(f);
    return it->second;
  }
  core::FunctionId intern(const Frame& frame) {
    auto [it, added] = by_frame_.try_emplace({frame.function, frame.file}, 0);
    if (added) {
      const FunctionInfo& function = *frame.function;
      it->second = intern(names_ == NameStyle::simplified ? simplify_name(function.name)
                                                          : function.name,
                          function.system_name, frame.file, function.start_line);
    }
    return it->second;
  }

 private:
  struct PairHash {
    size_t operator()(const std::pair<const FunctionInfo*, const char*>& key) const {
      return std::hash<const void*>()(key.first) * 31 + std::hash<const void*>()(key.second);
    }
  };
  core::Profile& profile_;
  NameStyle names_;
  std::map<std::tuple<core::StringId, core::StringId, core::StringId, int64_t>, core::FunctionId>
      ids_;
  std::unordered_map<std::pair<const FunctionInfo*, const char*>, core::FunctionId, PairHash>
      by_frame_;
};

}  // namespace

core::Status symbolize(core::Profile& profile, const Options& options,
                       core::Diagnostics& diagnostics) {
  const std::vector<std::string> dirs = search_dirs(options);

  // Locations to resolve, per mapping.
  std::vector<std::vector<core::LocationId>> wanted(profile.mappings.size());
  for (size_t i = 0; i < profile.locations.size(); ++i) {
    const auto& location = profile.locations[i];
    // Address 0 is pprof's "unknown address": nothing to look up.
    if (location.mapping == 0 || location.mapping > profile.mappings.size() ||
        location.address == 0 || !location.lines.empty() ||
        profile.mapping(location.mapping).has_functions)
      continue;
    wanted[location.mapping - 1].push_back(static_cast<core::LocationId>(i + 1));
  }

  std::vector<Image> images;
  std::map<std::string, int> image_by_key;       // build id or path -> images index
  std::map<std::pair<std::string, std::string>, int> image_by_file;  // (file, build id)
  std::vector<Pending> pending;
  std::vector<int> mapping_image(profile.mappings.size(), -1);
  std::vector<std::map<uint64_t, size_t>> slots;  // per image: address -> slot

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
        FoundBinary found = find_binary(file, build_id, dirs);
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
          images.push_back({std::move(found), {}, {}});
          slots.emplace_back();
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
    for (core::LocationId id : wanted[m]) {
      Pending p{id, -1, 0};
      uint64_t address = profile.location(id).address;
      if (image_index >= 0) {
        if (auto link_address =
                link_time_address(segments, is_exec, mapping.start, mapping.offset, address)) {
          slots[static_cast<size_t>(image_index)].emplace(*link_address, 0);  // numbered below
          p.image = image_index;
          p.link_address = *link_address;
        }
      }
      pending.push_back(p);
    }
  }

  // Each unique address once, in address order (neighbours share a compile unit).
  for (size_t i = 0; i < images.size(); ++i) {
    size_t slot = 0;
    for (auto& [address, index] : slots[i]) {
      index = slot++;
      images[i].addresses.push_back(address);
    }
  }
  unsigned threads = options.threads != 0 ? options.threads : std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;
  // Kept until the end: the frames point into the resolvers.
  const auto resolvers = resolve_all(images, threads);

  FunctionInterner functions(profile, options.names);
  std::vector<bool> mapping_resolved(profile.mappings.size(), false);
  for (const auto& p : pending) {
    core::Location& location = profile.location(p.location);
    const core::Mapping& mapping = profile.mapping(location.mapping);
    const std::vector<Frame>* frames = nullptr;
    if (p.image >= 0) {
      auto& image = images[static_cast<size_t>(p.image)];
      frames = &image.frames[slots[static_cast<size_t>(p.image)].at(p.link_address)];
    }
    if (frames != nullptr && !frames->empty()) {
      for (const Frame& frame : *frames)
        location.lines.push_back({functions.intern(frame), frame.line, 0});
      mapping_resolved[location.mapping - 1] = true;
    } else {
      std::string_view file = profile.str(mapping.file);
      // "[vdso]" shows as "[vdso+0x10]", not "[[vdso]+0x10]".
      std::string image = file.size() > 2 && file.front() == '[' && file.back() == ']'
                              ? std::string(file.substr(1, file.size() - 2))
                              : base_name(file);
      std::string name = fmt::format("[{}+{:#x}]", image.empty() ? "unknown" : image,
                                     location.address - mapping.start + mapping.offset);
      location.lines.push_back({functions.intern(name, name, "", 0), 0, 0});
    }
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

}  // namespace tally::symbolize
