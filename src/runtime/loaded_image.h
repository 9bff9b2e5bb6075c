// The loaded ELF object (executable or shared library) that holds an address, as the
// dynamic loader lists them: what a profile needs to symbolize the address later.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tally::runtime {

struct LoadedImage {
  std::string path;         // the file (the executable's from /proc/self/exe)
  uint64_t file_offset = 0; // the file offset mapped at the address looked up
  std::string build_id;     // NT_GNU_BUILD_ID in hex, or empty
};

// The image whose loadable segment holds `address`, or nullopt. Not async-signal-safe.
std::optional<LoadedImage> find_loaded_image(uint64_t address);

}  // namespace tally::runtime
