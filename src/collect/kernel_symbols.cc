#include "collect/kernel_symbols.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iterator>
#include <optional>

#include <fmt/format.h>

namespace tally::collect {

namespace {

struct TextSymbol {
  uint64_t address = 0;
  std::string_view name;
};

// A text symbol's line of kallsyms, "ffffffff81000000 T _stext" or "... t name\t[module]"
// (the module left out); nothing for data symbols and lines of another shape.
std::optional<TextSymbol> text_symbol(std::string_view line) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || space + 3 >= line.size()) return std::nullopt;
  const char type = line[space + 1];
  if (type != 't' && type != 'T' && type != 'w' && type != 'W') return std::nullopt;
  TextSymbol symbol;
  auto [end, error] = std::from_chars(line.data(), line.data() + space, symbol.address, 16);
  if (error != std::errc{} || end != line.data() + space) return std::nullopt;
  symbol.name = line.substr(space + 3);
  if (size_t tab = symbol.name.find('\t'); tab != std::string_view::npos)
    symbol.name = symbol.name.substr(0, tab);
  return symbol;
}

}  // namespace

void KernelSymbols::load(const std::string& path) {
  symbols_.clear();
  names_.clear();
  text_start_ = 0;
  uint64_t stext = 0;
  std::ifstream in(path);
  std::string line;
  bool any_address = false;
  while (std::getline(in, line)) {
    const std::optional<TextSymbol> symbol = text_symbol(line);
    if (!symbol) continue;
    const uint64_t address = symbol->address;
    const std::string_view name = symbol->name;
    any_address |= address != 0;
    if (name == "_text" && text_start_ == 0) text_start_ = address;
    if (name == "_stext" && stext == 0) stext = address;
    symbols_.push_back({address, static_cast<uint32_t>(names_.size()), static_cast<uint32_t>(name.size())});
    names_.append(name);
  }
  if (!any_address) {  // kernel.kptr_restrict: every address reads 0
    symbols_.clear();
    names_.clear();
    text_start_ = 0;
    return;
  }
  if (text_start_ == 0) text_start_ = stext;
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  symbols_.shrink_to_fit();
  names_.shrink_to_fit();
}

std::string_view KernelSymbols::find(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return {};
  --it;
  return std::string_view(names_).substr(it->name_offset, it->name_size);
}

uint64_t kernel_text_start(const std::string& kallsyms) {
  // The rule of KernelSymbols::text_start, reading only up to _text (near the top).
  std::ifstream in(kallsyms);
  uint64_t stext = 0;
  for (std::string line; std::getline(in, line);) {
    const std::optional<TextSymbol> symbol = text_symbol(line);
    if (!symbol) continue;
    if (symbol->name == "_text") return symbol->address;
    if (symbol->name == "_stext" && stext == 0) stext = symbol->address;
  }
  return stext;
}

std::string kernel_build_id(const std::string& notes) {
  std::ifstream in(notes, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // ELF notes: namesz, descsz, type (4 bytes each), name and desc padded to 4 bytes.
  const auto u32 = [&](size_t at) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = v << 8 | uint8_t(bytes[at + size_t(i)]);
    return v;
  };
  size_t at = 0;
  while (at + 12 <= bytes.size()) {
    const uint64_t namesz = u32(at), descsz = u32(at + 4), type = u32(at + 8);
    const uint64_t name_at = at + 12, desc_at = name_at + (namesz + 3) / 4 * 4;
    const uint64_t next = desc_at + (descsz + 3) / 4 * 4;
    if (next > bytes.size()) break;
    if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && bytes.compare(name_at, 4, "GNU\0", 4) == 0) {
      std::string hex;
      for (uint64_t i = 0; i < descsz; ++i) hex += fmt::format("{:02x}", uint8_t(bytes[desc_at + i]));
      return hex;
    }
    at = next;
  }
  return "";
}

}  // namespace tally::collect
