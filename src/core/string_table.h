// Interned strings: every name in a profile is stored once and referred to by a small id,
// as in pprof's string_table. Id 0 is always the empty string.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tally::core {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable();
  StringTable(const StringTable& other);
  StringTable& operator=(const StringTable& other);
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  StringId intern(std::string_view text);
  std::string_view operator[](StringId id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  // A deque never moves its elements, so the views used as keys stay valid.
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, StringId> ids_;
};

}  // namespace tally::core
