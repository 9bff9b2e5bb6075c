#include "core/string_table.h"

namespace tally::core {

StringTable::StringTable() { intern(""); }

StringTable::StringTable(const StringTable& other) {
  for (const auto& s : other.strings_) intern(s);
}

StringTable& StringTable::operator=(const StringTable& other) {
  if (this != &other) {
    strings_.clear();
    ids_.clear();
    for (const auto& s : other.strings_) intern(s);
  }
  return *this;
}

StringId StringTable::intern(std::string_view text) {
  if (auto it = ids_.find(text); it != ids_.end()) return it->second;
  auto id = static_cast<StringId>(strings_.size());
  strings_.emplace_back(text);
  ids_.emplace(strings_.back(), id);
  return id;
}

}  // namespace tally::core
