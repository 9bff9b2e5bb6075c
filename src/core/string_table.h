// Interned strings: every name in a profile is stored once and referred to by a small id,
// as in pprof's string_table. Id 0 is always the empty string.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/id_table.h"

namespace tally::core {

using StringId = uint32_t;

class StringTable {
 public:
  StringTable();
  StringTable(const StringTable& other);
  StringTable& operator=(const StringTable& other);
  // A moved-from table is empty (size 0) until it interns again.
  StringTable(StringTable&& other) noexcept;
  StringTable& operator=(StringTable&& other) noexcept;

  StringId intern(std::string_view text);
  // Views stay valid as long as the table (or the table it was moved into) lives.
  std::string_view operator[](StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

 private:
  // The text lives in blocks that never move: views handed out, and the table's own,
  // survive any number of inserts. One block per ~32 KB of short strings instead of a heap
  // string each.
  const char* store(std::string_view text);

  std::vector<std::string_view> views_;
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* free_ = nullptr;  // the unused tail of the last block
  size_t free_size_ = 0;
  IdTable ids_;
};

}  // namespace tally::core
