// A debug file whose DWARF is compressed (SHF_COMPRESSED, as Debian's -dbg packages ship
// libc's), laid out again in memory with the sections the symbolizer reads inflated, by
// libdeflate and several sections at once, and the ones it never reads (variable
// locations, call frames, macros, name indexes) left empty. libdw then opens an image with
// nothing to inflate: on its own it inflates every debug section with zlib, one after the
// other, which on a profile through libc was a third of a report's CPU time, and keeps
// the unread ones in memory too.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "symbolize/elf_image.h"

namespace tally::symbolize {

// nullptr when `path` cannot be read or is not a 64-bit little-endian ELF whose compressed
// sections are all zlib SHF_COMPRESSED ones (nor refers to a dwz file): the caller then
// opens the file as it is. `threads`: how many sections may be inflated at once.
std::unique_ptr<ElfImage> open_inflated(const std::string& path, unsigned threads);

// The same on the file's bytes: the new image, or nullopt.
std::optional<std::vector<uint8_t>> inflate_elf(std::span<const uint8_t> file, unsigned threads);

// The same laid out into the empty file `fd`, streamed: `path` read with pread and its
// sections inflated with zlib a piece at a time, so that neither the file nor the image is
// in memory whole (the daemon's copies, made once: InflatedCopies). The image's size, or
// nullopt when the file is not one this reader takes or reading, inflating or writing failed.
std::optional<uint64_t> write_inflated_elf(const std::string& path, int fd);

}  // namespace tally::symbolize
