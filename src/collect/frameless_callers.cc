#include "collect/frameless_callers.h"

#include "core/hash.h"

namespace tally::collect {

namespace {

// A runaway table (addresses of many short-lived processes) is simply started over.
constexpr size_t kMaxCachedAddresses = 1 << 18;

}  // namespace

size_t FramelessCallers::KeyHash::operator()(const Key& k) const {
  return core::mix64(k.address ^ core::mix64(uint64_t(uint32_t(k.pid)) ^ (k.generation << 32)));
}

int64_t FramelessCallers::stack_pointer_offset(pid_t pid, const AddressSpace& maps,
                                               uint64_t address) {
  const Key key{pid, maps.generation(), address};
  if (auto it = offsets_.find(key); it != offsets_.end()) return it->second;
  int64_t offset = 0;
  const ImageMapping* mapping = maps.find(address);
  if (mapping != nullptr && mapping->executable) {
    if (auto elf = files_.get(*mapping, pid)) {
      if (auto bias = elf->bias_of(*mapping)) {
        const CfaRule rule = elf->cfa_rule(address - *bias);
        // The CFA is above the return address, and a frame's size is whole words.
        if (rule.kind == CfaRule::Kind::stack_pointer && rule.offset >= 8 && rule.offset % 8 == 0)
          offset = rule.offset;
      }
    }
  }
  if (offsets_.size() >= kMaxCachedAddresses) offsets_.clear();
  offsets_.emplace(key, offset);
  return offset;
}

void FramelessCallers::recover(pid_t pid, const AddressSpace& maps, uint64_t pc,
                               std::span<const uint64_t> words, std::vector<uint64_t>& callers) {
  // The leaf's pc is where it stopped (after its syscall, or where it was interrupted);
  // a return address is one past its call, which may be the last instruction of a function.
  uint64_t lookup = pc;
  uint64_t offset_in_copy = 0;  // of the current frame's sp, in bytes from the leaf's
  while (true) {
    const int64_t cfa = stack_pointer_offset(pid, maps, lookup);
    if (cfa == 0) break;
    const uint64_t return_slot = offset_in_copy + static_cast<uint64_t>(cfa) - 8;
    if (return_slot / 8 >= words.size()) break;
    const uint64_t return_address = words[return_slot / 8];
    if (return_address == 0) break;  // the outermost frame
    callers.push_back(return_address);
    offset_in_copy = return_slot + 8;
    lookup = return_address - 1;
  }
}

void FramelessCallers::splice(std::span<const uint64_t> walked, std::span<const uint64_t> callers,
                              std::vector<uint64_t>& out) {
  if (walked.empty()) return;
  out.push_back(walked[0]);
  for (uint64_t caller : callers) {
    if (walked.size() > 1 && caller == walked[1]) break;
    out.push_back(caller);
  }
  out.insert(out.end(), walked.begin() + 1, walked.end());
}

}  // namespace tally::collect
