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

void PushSymbolizer::reset() {
  image_ids_.clear();
  image_flags_.clear();
  entries_.clear();
  lines_.clear();
  functions_.clear();
  function_ids_.clear();
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
  // Bounded: a cache past its size starts again (what the next interval needs comes back).
  if (entries_.size() > max_addresses_) reset();

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
    std::string function_key;
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
        function_key.assign(all.str(f.name));
        for (std::string_view part : {all.str(f.system_name), all.str(f.filename)})
          function_key.append(1, '\0').append(part);
        function_key.append(1, '\0').append(std::to_string(f.start_line));
        auto [it, added] = function_ids_.try_emplace(function_key, static_cast<uint32_t>(functions_.size()));
        if (added)
          functions_.push_back({std::string(all.str(f.name)), std::string(all.str(f.system_name)),
                                std::string(all.str(f.filename)), f.start_line});
        lines_.push_back({it->second, line.line, line.column});
      }
      entries_.emplace(key, entry);
    }
  }

  cached_ = entries_.size();
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
          it->second = p.add_function({.name = p.intern(f.name),
                                       .system_name = p.intern(f.system_name),
                                       .filename = p.intern(f.filename),
                                       .start_line = f.start_line});
        }
        l.lines.push_back({.function = it->second, .line = line.line, .column = line.column});
      }
    }
  }
}

}  // namespace tally::daemon
