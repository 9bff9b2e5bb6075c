#include "collect/kernel_symbols.h"

#include <algorithm>
#include <charconv>
#include <fstream>

namespace tally::collect {

void KernelSymbols::load(const std::string& path) {
  symbols_.clear();
  std::ifstream in(path);
  std::string line;
  bool any_address = false;
  // "ffffffff81000000 T _stext" or "... t name\t[module]"
  while (std::getline(in, line)) {
    size_t space = line.find(' ');
    if (space == std::string::npos || space + 3 >= line.size()) continue;
    char type = line[space + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    uint64_t address = 0;
    auto [end, error] = std::from_chars(line.data(), line.data() + space, address, 16);
    if (error != std::errc{} || end != line.data() + space) continue;
    any_address |= address != 0;
    std::string name = line.substr(space + 3);
    if (size_t tab = name.find('\t'); tab != std::string::npos) name.resize(tab);
    symbols_.push_back({address, std::move(name)});
  }
  if (!any_address) {  // kernel.kptr_restrict: every address reads 0
    symbols_.clear();
    return;
  }
  std::stable_sort(symbols_.begin(), symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
}

std::string_view KernelSymbols::find(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return {};
  return std::prev(it)->name;
}

}  // namespace tally::collect
