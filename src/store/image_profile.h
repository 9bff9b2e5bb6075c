// The database's images as a core::Profile's mappings. Each image gets its own 4 GiB slot
// of the address space: mapping k spans [k << 32, (k + 1) << 32) with file offset 0, and a
// frame at offset O of the image is the address k << 32 | O. Images seen in different
// processes (loaded anywhere) and in different epochs thus never overlap, and for a file
// image, address - mapping start + mapping offset is its file offset, which is what the
// symbolizer needs. stacks.pb.gz files are written this way, with the image id in the
// mapping's build id field; profiles for queries carry the real build id there instead.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/profile.h"
#include "core/sample_merger.h"

namespace tally::store {

class ImageProfileBuilder {
 public:
  // Samples go into `profile`, whose sample types the caller has set; equal stacks sum.
  explicit ImageProfileBuilder(core::Profile& profile);

  // The location of `offset` in image `image_id`; the image's mapping is added on first
  // use with `path` as its file and `build_id_field` as its build id.
  core::LocationId location(std::string_view image_id, std::string_view path,
                            std::string_view build_id_field, uint32_t offset);
  void add(std::span<const core::LocationId> stack, std::span<const int64_t> values);

  // The image id (as given to location()) of a mapping this builder made.
  const std::string& image_of(core::MappingId mapping) const { return image_ids_[mapping - 1]; }

 private:
  core::Profile& profile_;
  core::SampleMerger merger_;
  std::map<std::string, core::MappingId, std::less<>> mappings_;
  std::vector<std::string> image_ids_;  // per mapping
  std::map<uint64_t, core::LocationId> locations_;  // by address
};

// A frame of a profile laid out as above: the mapping and the offset in its image. Fails
// when the location lies outside its mapping's slot (the file was not written by tally).
struct ImageFrame {
  core::MappingId mapping = 0;
  uint32_t offset = 0;
};
core::Expected<ImageFrame> image_frame(const core::Profile& profile, core::LocationId location,
                                       const std::string& source);

}  // namespace tally::store
