// Name compression ("fn=(12) main" defines id 12, "fn=(12)" refers to it). Real files share
// one table per kind of name, whatever the key: files for fl= fi= fe= cfi= cfl= jfi=,
// functions for fn= cfn= jfn=, objects for ob= cob= (valgrind's dump.c numbers file,
// function and object nodes; KCachegrind and callgrind_annotate resolve them that way).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/string_table.h"

namespace tally::callgrind {

enum class NameKind { object = 0, file = 1, function = 2 };

class CompressedNames {
 public:
  enum class Outcome { ok, undefined, redefined };

  // The name a position spec's value stands for, interned in `strings`. `id` receives the
  // compression id when there is one. A redefinition with another name takes the new one
  // and says so (KCachegrind does the same after an error message).
  Outcome resolve(NameKind kind, std::string_view value, core::StringTable& strings,
                  core::StringId& name, uint64_t& id);

 private:
  // Small ids (all that real writers use) index a vector; others go to a map, so that a
  // hostile "(4000000000)" costs no memory.
  static constexpr uint64_t kDenseLimit = 1 << 20;
  core::StringId lookup(NameKind kind, uint64_t id) const;
  void define(NameKind kind, uint64_t id, core::StringId name);

  std::vector<core::StringId> dense_[3];
  std::unordered_map<uint64_t, core::StringId> sparse_[3];
};

}  // namespace tally::callgrind
