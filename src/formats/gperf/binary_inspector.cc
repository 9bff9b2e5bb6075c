#include "formats/gperf/binary_inspector.h"

#include <elfutils/libdw.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "symbolize/elf_image.h"
#include "symbolize/find_binary.h"
#include "symbolize/function_range.h"

namespace tally::gperf {

namespace {

// x86-64 and i386 glibc (__restore_rt, __restore), the vDSO of arm64, i386, ppc... (__kernel_*).
constexpr std::string_view kTrampolineNames[] = {"__restore_rt", "__restore",
                                                 "__kernel_rt_sigreturn", "__kernel_sigreturn"};

// Whether the FDE that holds link-time `address` is marked as a signal frame; nullopt when
// no FDE of .eh_frame holds it.
std::optional<bool> in_signal_fde(Elf* elf, uint64_t address) {
  Dwarf_CFI* cfi = dwarf_getcfi_elf(elf);
  if (cfi == nullptr) return std::nullopt;
  std::optional<bool> signal;
  Dwarf_Frame* frame = nullptr;
  if (dwarf_cfi_addrframe(cfi, address, &frame) == 0) {
    Dwarf_Addr start = 0, end = 0;
    bool is_signal = false;
    if (dwarf_frame_info(frame, &start, &end, &is_signal) >= 0) signal = is_signal;
    std::free(frame);  // libdw mallocs the frame for the caller
  }
  dwarf_cfi_end(cfi);
  return signal;
}

std::string searched_paths(const symbolize::FoundBinary& found) {
  std::string out;
  for (const auto& path : found.searched) out += (out.empty() ? "" : ", ") + path;
  return out;
}

BinaryAnswer inspect(const MappedAddress& a, const std::vector<std::string>& dirs) {
  using Kind = BinaryAnswer::Kind;
  // "[vdso]" and the like are not files; the vDSO of the profiled process is long gone.
  if (a.file.empty() || a.file.front() == '[') return {Kind::not_at_hand, ""};
  const std::string file(a.file);
  symbolize::FoundBinary found = symbolize::find_binary(file, "", dirs);
  if (found.binary.empty())
    return {Kind::not_at_hand, fmt::format("{} not found (searched {})", file, searched_paths(found))};
  auto image = symbolize::ElfImage::open(found.binary);
  if (!image) return {Kind::not_at_hand, found.binary + " cannot be read"};
  const auto address = symbolize::link_time_address(image->load_segments(), image->is_exec(),
                                                    a.start, a.offset, a.address);
  if (!address)
    return {Kind::not_at_hand,
            fmt::format("{} has no loadable segment at file offset 0x{:x}: not the file that was "
                        "mapped", found.binary, a.address - a.start + a.offset)};

  std::string symbol;
  bool trampoline_name = false;
  if (auto ranges = symbolize::FunctionRanges::load(found)) {
    if (const symbolize::SymbolRange* range = ranges->containing(*address)) {
      for (const std::string& name : range->names)
        trampoline_name |= std::find(std::begin(kTrampolineNames), std::end(kTrampolineNames),
                                     name) != std::end(kTrampolineNames);
      symbol = range->names.front();
      if (*address != range->start) symbol += fmt::format("+0x{:x}", *address - range->start);
    }
  }
  const std::optional<bool> signal_fde = in_signal_fde(image->elf(), *address);
  const std::string where = fmt::format("{} at 0x{:x}{}", found.binary, *address,
                                        symbol.empty() ? "" : " (" + symbol + ")");
  if (signal_fde.value_or(false))
    return {Kind::signal_frame, where + ": its FDE is marked 'S', a signal frame"};
  if (trampoline_name)
    return {Kind::signal_frame, where + ": the signal-return trampoline, by its name"};
  return {Kind::other_code, where + (signal_fde ? ": its FDE is not a signal frame's"
                                                : ": no FDE, and not the trampoline's name")};
}

}  // namespace

BinaryInspector binary_inspector(std::vector<std::string> binary_paths) {
  return [dirs = symbolize::binary_search_dirs(std::move(binary_paths))](const MappedAddress& a) {
    return inspect(a, dirs);
  };
}

}  // namespace tally::gperf
