// MiniDebugInfo: the .gnu_debugdata section Fedora and RHEL add to stripped binaries, an
// xz-compressed ELF that holds a .symtab of the functions .dynsym lacks (GDB and systemd's
// coredump read it). Inflated with liblzma, bounded: the section is untrusted input.
#pragma once

#include <memory>

#include "core/error.h"

namespace tally::symbolize {

class ElfImage;

// The embedded ELF, or nullptr when `image` has no .gnu_debugdata; an error when it has
// one that does not inflate to an ELF (corrupt, or larger than the bound).
core::Expected<std::unique_ptr<ElfImage>> open_mini_debug_info(const ElfImage& image);

}  // namespace tally::symbolize
