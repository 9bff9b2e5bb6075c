#include "daemon/push_symbolizer.h"

#include "store/image_profile.h"
#include "symbolize/symbolize.h"

namespace tally::daemon {

namespace {

constexpr uint64_t kNoKey = ~uint64_t(0);  // a location outside any mapping: left alone
constexpr auto kKernelSymbolsAge = std::chrono::minutes(10);

}  // namespace

uint32_t PushSymbolizer::image_index(const std::string& image_id) {
  auto [it, added] = image_ids_.try_emplace(image_id, static_cast<uint32_t>(image_flags_.size()));
  if (added) image_flags_.emplace_back();
  return it->second;
}

size_t PushSymbolizer::FunctionHash::operator()(const Function& f) const {
  uint64_t h = f.name;
  for (uint64_t part : {uint64_t(f.system_name), uint64_t(f.filename), uint64_t(f.start_line)})
    h = (h ^ part) * 0x100000001b3ull;
  return static_cast<size_t>(h ^ (h >> 29));
}

core::StringId PushSymbolizer::intern(std::string_view text) {
  const size_t before = strings_.size();
  const core::StringId id = strings_.intern(text);
  if (strings_.size() != before) string_bytes_ += text.size();
  return id;
}

// What the containers hold on the heap: their arrays, a node per hash entry (with the
// allocator's 16 bytes), the interned text with its view and id slot.
size_t PushSymbolizer::heap_bytes() const {
  constexpr size_t kNode = 2 * sizeof(void*) + 16;  // next pointer, hash, malloc's header
  size_t bytes = lines_.capacity() * sizeof(Line) + functions_.capacity() * sizeof(Function) +
                 image_flags_.capacity() * sizeof(ImageFlags);
  bytes += entries_.size() * (sizeof(uint64_t) + sizeof(Entry) + kNode) +
           entries_.bucket_count() * sizeof(void*);
  bytes += function_ids_.size() * (sizeof(Function) + sizeof(uint32_t) + kNode) +
           function_ids_.bucket_count() * sizeof(void*);
  for (const auto& [id, index] : image_ids_) bytes += id.capacity() + sizeof(index) + kNode + sizeof(std::string);
  bytes += string_bytes_ + strings_.size() * (sizeof(std::string_view) + 2 * sizeof(uint32_t));
  return bytes;
}

void PushSymbolizer::reset() {
  // New empty ones: clear() (and `= {}`, an empty initializer list) keep the arrays and
  // the buckets allocated.
  image_ids_ = decltype(image_ids_)();
  image_flags_ = decltype(image_flags_)();
  entries_ = decltype(entries_)();
  lines_ = decltype(lines_)();
  functions_ = decltype(functions_)();
  function_ids_ = decltype(function_ids_)();
  strings_ = core::StringTable();
  string_bytes_ = 0;
  ++resets_;
}

void PushSymbolizer::load_kernel_symbols() {
  const auto now = std::chrono::steady_clock::now();
  if (kernel_tried_ && now - kernel_loaded_ < kKernelSymbolsAge) return;
  kernel_build_id_ = collect::kernel_build_id();
  if (!kernel_build_id_.empty()) kernel_.load();
  kernel_loaded_ = now;
  kernel_tried_ = true;
}

uint64_t PushSymbolizer::kernel_text_start() {
  load_kernel_symbols();
  return kernel_.text_start();
}

void PushSymbolizer::symbolize(std::vector<PushInterval::ServiceProfile>& profiles,
                               core::Diagnostics& diagnostics) {

  // Each location's key; the addresses no interval saw yet, once each, in one profile laid
  // out as the database lays images out.
  core::Profile all;
  store::ImageProfileBuilder builder(all);
  std::unordered_map<uint64_t, core::LocationId> missing;
  std::vector<std::vector<uint64_t>> keys(profiles.size());
  bool kernel = false;
  for (size_t i = 0; i < profiles.size(); ++i) {
    const core::Profile& p = profiles[i].profile;
    keys[i].reserve(p.locations.size());
    for (const core::Location& l : p.locations) {
      if (l.mapping == 0) {
        keys[i].push_back(kNoKey);
        continue;
      }
      const core::Mapping& m = p.mapping(l.mapping);
      const std::string& image = profiles[i].mapping_images[l.mapping - 1];
      const auto offset = static_cast<uint32_t>(l.address - m.start);
      const uint64_t key = uint64_t(image_index(image)) << 32 | offset;
      keys[i].push_back(key);
      if (entries_.contains(key)) {
        ++hits_;
        continue;
      }
      ++misses_;
      if (missing.contains(key)) continue;
      missing.emplace(key, builder.location(image, p.str(m.file), p.str(m.build_id), offset));
      kernel |= p.str(m.file) == "[kernel.kallsyms]";
    }
  }

  if (!missing.empty()) {
    if (options_.enabled && kernel) {
      load_kernel_symbols();
      analyze::name_kernel_frames(all, kernel_, kernel_build_id_, diagnostics);
    }
    // As a report symbolizes (analyze::symbolize_report_profile), with the inflated copies.
    if (options_.enabled) {
      symbolize::Options options = analyze::symbolize_options(options_);
      options.inflated_copies = &copies_;
      options.index_only_what_is_needed = true;
      if (auto st = symbolize::symbolize(all, options, diagnostics); !st)
        diagnostics.warn("symbolizing the push: " + st.error().message);
    }
    for (const auto& [key, location] : missing) {
      const core::Location& resolved = all.location(location);
      const core::Mapping& from = all.mapping(resolved.mapping);
      ImageFlags& flags = image_flags_[key >> 32];
      flags.has_functions |= from.has_functions;
      flags.has_filenames |= from.has_filenames;
      flags.has_line_numbers |= from.has_line_numbers;
      flags.has_inline_frames |= from.has_inline_frames;
      Entry entry{static_cast<uint32_t>(lines_.size()), static_cast<uint32_t>(resolved.lines.size())};
      for (const core::Line& line : resolved.lines) {
        const core::Function& f = all.function(line.function);
        const Function function{intern(all.str(f.name)), intern(all.str(f.system_name)),
                                intern(all.str(f.filename)), f.start_line};
        auto [it, added] = function_ids_.try_emplace(function, static_cast<uint32_t>(functions_.size()));
        if (added) functions_.push_back(function);
        lines_.push_back({it->second, line.line, line.column});
      }
      entries_.emplace(key, entry);
    }
  }

  // The lines into each profile, with its own functions and strings.
  for (size_t i = 0; i < profiles.size(); ++i) {
    core::Profile& p = profiles[i].profile;
    std::unordered_map<uint32_t, core::FunctionId> function_of;  // cache's -> p's
    for (size_t k = 0; k < p.locations.size(); ++k) {
      if (keys[i][k] == kNoKey) continue;
      core::Location& l = p.locations[k];
      const Entry& entry = entries_.at(keys[i][k]);
      const ImageFlags& flags = image_flags_[keys[i][k] >> 32];
      core::Mapping& to = p.mapping(l.mapping);
      to.has_functions = flags.has_functions;
      to.has_filenames = flags.has_filenames;
      to.has_line_numbers = flags.has_line_numbers;
      to.has_inline_frames = flags.has_inline_frames;
      l.lines.clear();
      for (uint32_t n = entry.first_line; n < entry.first_line + entry.lines; ++n) {
        const Line& line = lines_[n];
        auto [it, added] = function_of.try_emplace(line.function, 0);
        if (added) {
          const Function& f = functions_[line.function];
          it->second = p.add_function({.name = p.intern(strings_[f.name]),
                                       .system_name = p.intern(strings_[f.system_name]),
                                       .filename = p.intern(strings_[f.filename]),
                                       .start_line = f.start_line});
        }
        l.lines.push_back({.function = it->second, .line = line.line, .column = line.column});
      }
    }
  }
  // Bounded: a cache past its size starts again (what the next interval needs comes back),
  // now that this interval's profiles have their lines: between intervals it holds at
  // most `max_bytes_`.
  if (heap_bytes() > max_bytes_) reset();
  cached_ = entries_.size();
  bytes_ = heap_bytes();
}

}  // namespace tally::daemon
