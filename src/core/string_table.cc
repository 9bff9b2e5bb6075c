#include "core/string_table.h"

#include <cstring>
#include <functional>
#include <utility>

namespace tally::core {

namespace {

constexpr size_t kBlockSize = 32 * 1024;

uint64_t hash_text(std::string_view text) { return std::hash<std::string_view>()(text); }

}  // namespace

StringTable::StringTable() { views_.emplace_back(""); }

StringTable::StringTable(const StringTable& other) : StringTable() {
  ids_.reserve(other.size());
  views_.reserve(other.size());
  for (std::string_view s : other.views_) intern(s);
}

StringTable& StringTable::operator=(const StringTable& other) {
  if (this != &other) *this = StringTable(other);
  return *this;
}

StringTable::StringTable(StringTable&& other) noexcept
    : views_(std::move(other.views_)),
      blocks_(std::move(other.blocks_)),
      free_(std::exchange(other.free_, nullptr)),
      free_size_(std::exchange(other.free_size_, 0)),
      ids_(std::move(other.ids_)) {
  other.views_.clear();
  other.blocks_.clear();
  other.ids_.clear();
}

StringTable& StringTable::operator=(StringTable&& other) noexcept {
  if (this != &other) {
    views_ = std::move(other.views_);
    blocks_ = std::move(other.blocks_);
    free_ = std::exchange(other.free_, nullptr);
    free_size_ = std::exchange(other.free_size_, 0);
    ids_ = std::move(other.ids_);
    other.views_.clear();
    other.blocks_.clear();
    other.ids_.clear();
  }
  return *this;
}

const char* StringTable::store(std::string_view text) {
  if (text.size() > free_size_) {
    if (text.size() > kBlockSize / 4) {  // a long string gets a block of its own
      blocks_.push_back(std::make_unique_for_overwrite<char[]>(text.size()));
      std::memcpy(blocks_.back().get(), text.data(), text.size());
      return blocks_.back().get();
    }
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockSize));
    free_ = blocks_.back().get();
    free_size_ = kBlockSize;
  }
  char* out = free_;
  std::memcpy(out, text.data(), text.size());
  free_ += text.size();
  free_size_ -= text.size();
  return out;
}

StringId StringTable::intern(std::string_view text) {
  if (views_.empty()) views_.emplace_back("");  // a moved-from table starts again
  if (text.empty()) return 0;
  const auto next = static_cast<StringId>(views_.size());
  bool inserted = false;
  const StringId id = ids_.find_or_insert(
      hash_text(text), [&](uint32_t candidate) { return views_[candidate] == text; }, next,
      inserted);
  if (inserted) views_.emplace_back(store(text), text.size());
  return id;
}

}  // namespace tally::core
