#include "store/image_profile.h"

#include <fmt/format.h>

namespace tally::store {

ImageProfileBuilder::ImageProfileBuilder(core::Profile& profile)
    : profile_(profile), merger_(profile) {}

core::LocationId ImageProfileBuilder::location(std::string_view image_id, std::string_view path,
                                               std::string_view build_id_field, uint32_t offset) {
  auto it = mappings_.find(image_id);
  if (it == mappings_.end()) {
    const uint64_t slot = profile_.mappings.size() + 1;
    core::MappingId m = profile_.add_mapping({.start = slot << 32,
                                              .limit = (slot + 1) << 32,
                                              .offset = 0,
                                              .file = profile_.intern(path),
                                              .build_id = profile_.intern(build_id_field)});
    it = mappings_.emplace(std::string(image_id), m).first;
    image_ids_.resize(m);
    image_ids_[m - 1] = std::string(image_id);
  }
  const core::MappingId m = it->second;
  const uint64_t address = profile_.mapping(m).start | offset;
  auto [loc, added] = locations_.try_emplace(address, 0);
  if (added) loc->second = profile_.add_location({.mapping = m, .address = address, .lines = {}});
  return loc->second;
}

void ImageProfileBuilder::add(std::span<const core::LocationId> stack,
                              std::span<const int64_t> values) {
  merger_.add(stack, values);
}

core::Expected<ImageFrame> image_frame(const core::Profile& profile, core::LocationId location,
                                       const std::string& source) {
  const core::Location& l = profile.location(location);
  if (l.mapping == 0)
    return core::Error{fmt::format("{}: location {} has no mapping; expected a tally profile "
                                   "database stacks file", source, location)};
  const core::Mapping& m = profile.mapping(l.mapping);
  if (l.address < m.start || l.address - m.start > UINT32_MAX)
    return core::Error{fmt::format("{}: location {} (0x{:x}) lies outside the 4 GiB slot of its "
                                   "mapping at 0x{:x}; expected a tally profile database stacks "
                                   "file", source, location, l.address, m.start)};
  return ImageFrame{l.mapping, static_cast<uint32_t>(l.address - m.start)};
}

}  // namespace tally::store
