#include "formats/callgrind/compressed_names.h"

namespace tally::callgrind {

core::StringId CompressedNames::lookup(NameKind kind, uint64_t id) const {
  const auto k = static_cast<size_t>(kind);
  if (id < kDenseLimit) return id < dense_[k].size() ? dense_[k][id] : 0;
  auto it = sparse_[k].find(id);
  return it == sparse_[k].end() ? 0 : it->second;
}

void CompressedNames::define(NameKind kind, uint64_t id, core::StringId name) {
  const auto k = static_cast<size_t>(kind);
  if (id < kDenseLimit) {
    if (id >= dense_[k].size()) dense_[k].resize(id + 1, 0);
    dense_[k][id] = name;
  } else {
    sparse_[k][id] = name;
  }
}

CompressedNames::Outcome CompressedNames::resolve(NameKind kind, std::string_view value,
                                                  core::StringTable& strings,
                                                  core::StringId& name, uint64_t& id) {
  id = 0;
  // The spec allows spaces after "=" (PositionSpec := Position "=" Space* PositionName):
  // they are not part of the name, compressed or not.
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  // "(" digits ")": compressed. Anything else, "(below main)" included, is a plain name.
  size_t close = 1;
  uint64_t n = 0;
  bool digits = false;
  if (!value.empty() && value[0] == '(') {
    while (close < value.size() && value[close] >= '0' && value[close] <= '9') {
      if (n > (UINT64_MAX - 9) / 10) {
        digits = false;
        break;
      }
      n = n * 10 + static_cast<uint64_t>(value[close] - '0');
      digits = true;
      ++close;
    }
  }
  if (!digits || close >= value.size() || value[close] != ')') {
    name = strings.intern(value);
    return Outcome::ok;
  }
  id = n;
  std::string_view rest = value.substr(close + 1);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  const core::StringId known = lookup(kind, n);
  if (rest.empty()) {
    name = known;
    return known == 0 ? Outcome::undefined : Outcome::ok;
  }
  // valgrind starts its tables afresh in every dump, so a file of many parts defines the
  // same names again and again: comparing with the known name spares hashing it.
  if (known != 0 && strings[known] == rest) {
    name = known;
    return Outcome::ok;
  }
  name = strings.intern(rest);
  define(kind, n, name);
  return known != 0 && known != name ? Outcome::redefined : Outcome::ok;
}

}  // namespace tally::callgrind
