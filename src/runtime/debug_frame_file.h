// An image's .debug_frame, read from its file: the section is not loaded (no PT_LOAD
// covers it), so the index builder maps the file read-only and finds it through the
// section headers. Used outside the signal handler only. Allocates nothing but the
// mapping; the file is untrusted: every offset is checked against its size. A separate
// debug file (.gnu_debuglink, build-id) is not looked for, nor a compressed section.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tally::runtime {

struct MappedDebugFrame {
  void* mapping = nullptr;
  size_t mapped_bytes = 0;
  const uint8_t* bytes = nullptr;  // the section, inside the mapping
  size_t size = 0;
};

// False when the file cannot be read, is not a 64-bit x86-64 ELF file, or has no
// (uncompressed) .debug_frame. On true, release with unmap_debug_frame.
bool map_debug_frame(const char* path, MappedDebugFrame* out);
void unmap_debug_frame(MappedDebugFrame* mapped);

}  // namespace tally::runtime
