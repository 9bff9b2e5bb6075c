#include "collect/sample_stack.h"

namespace tally::collect {

SampleStack::SampleStack(CallGraphMode mode, bool kernel_frames)
    : mode_(mode), kernel_frames_(kernel_frames) {
  if (mode == CallGraphMode::dwarf) unwinder_ = std::make_unique<DwarfUnwinder>();
}

SampleStack::~SampleStack() = default;

std::span<const uint64_t> SampleStack::frames(const SampleRecord& sample,
                                              const ProcessTable& processes) {
  const bool in_kernel = sample.in_kernel();
  pcs_.clear();
  split_callchain(sample.callchain, in_kernel, split_);
  if (mode_ != CallGraphMode::none && kernel_frames_)
    pcs_.insert(pcs_.end(), split_.kernel.begin(), split_.kernel.end());
  else if (in_kernel && kernel_frames_)
    pcs_.push_back(sample.ip);  // -g none: the kernel ip alone
  switch (mode_) {
    case CallGraphMode::none:
      if (!in_kernel) pcs_.push_back(sample.ip);
      break;
    case CallGraphMode::fp:
      if (!split_.user.empty()) pcs_.insert(pcs_.end(), split_.user.begin(), split_.user.end());
      else if (!in_kernel) pcs_.push_back(sample.ip);
      break;
    case CallGraphMode::dwarf:
      user_.clear();
      if (sample.has_user_regs) {
        static const AddressSpace kNoMaps;
        const auto pid = static_cast<pid_t>(sample.origin.pid);
        const AddressSpace* space = processes.find(pid);
        unwinder_->unwind(pid, space ? *space : kNoMaps, sample.regs, sample.user_stack, user_);
      }
      if (user_.empty() && !in_kernel) user_.push_back(sample.ip);
      pcs_.insert(pcs_.end(), user_.begin(), user_.end());
      break;
  }
  if (pcs_.empty()) pcs_.push_back(sample.ip);
  for (size_t i = 1; i < pcs_.size(); ++i) --pcs_[i];
  return pcs_;
}

void SampleStack::forget(pid_t pid) {
  if (unwinder_) unwinder_->forget(pid);
}

UnwindStats SampleStack::unwind_stats() const { return unwinder_ ? unwinder_->stats() : UnwindStats{}; }

}  // namespace tally::collect
