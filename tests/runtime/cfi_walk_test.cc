// The handler's CFI walk (src/runtime/cfi_walk.cc) on crafted stacks and rows: each rule
// kind applied, and every way a walk ends (the root, a cut with its reason and marker).
#include <gtest/gtest.h>

#include <ucontext.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "runtime/cfi_walk.h"
#include "runtime/stack_table.h"
#include "runtime/unwind_index.h"

namespace tally::runtime {
namespace {

constexpr uintptr_t kFrameless = 0x1000;  // CFA = rsp + 16, rbp saved at CFA - 16
constexpr uintptr_t kFramePointer = 0x2000;  // CFA = rbp + 16, rbp saved at CFA - 16
constexpr uintptr_t kRoot = 0x3000;
constexpr uintptr_t kPlt = 0x4000;  // CFA = rsp + 8, + 8 from (pc & 15) >= 11
constexpr uintptr_t kTrampoline = 0x5000;
constexpr uintptr_t kNoProgress = 0x6000;  // CFA = rsp + 0
constexpr uintptr_t kPushesRbx = 0x7000;   // CFA = rsp + 16, rbx saved at CFA - 16 (do_lookup_x)
constexpr uintptr_t kRbxCfa = 0x8000;      // CFA = rbx + 32, rbx saved at CFA - 32 (_dl_runtime_resolve)
constexpr uintptr_t kRealigned = 0xa000;   // CFA = *(rbp - 8), rbp saved at rbp, rbx at rbp - 16
constexpr uintptr_t kLosesRbx = 0xb000;    // CFA = rsp + 16, rbx saved where the rules cannot say

// An index as unwind_index.cc builds it, over hand-made rows.
class Index {
 public:
  Index() {
    auto row = [](uintptr_t address, RuleKind kind, int32_t cfa, RbpRule rbp = RbpRule::same, int16_t rbp_offset = 0) {
      UnwindRow r;
      r.address = address;
      r.kind = kind;
      r.cfa_offset = cfa;
      if (kind == RuleKind::plt) r.rbp_slot = static_cast<int8_t>(rbp_offset);  // the threshold
      else r.set_rbp(rbp, rbp_offset);
      return r;
    };
    auto with_rbx = [](UnwindRow r, SavedRule rule, int64_t offset) {
      r.set_rbx(rule, offset);
      return r;
    };
    std::vector<UnwindRow> rows = {
        row(kFrameless, RuleKind::cfa_rsp, 16, RbpRule::at_cfa, -16), row(kFrameless + 0x100, RuleKind::none, 0),
        row(kFramePointer, RuleKind::cfa_rbp, 16, RbpRule::at_cfa, -16), row(kFramePointer + 0x100, RuleKind::none, 0),
        row(kRoot, RuleKind::root, 0), row(kRoot + 0x100, RuleKind::none, 0),
        row(kPlt, RuleKind::plt, 8, RbpRule::same, 11), row(kPlt + 0x100, RuleKind::none, 0),
        row(kTrampoline, RuleKind::signal, 0), row(kTrampoline + 0x10, RuleKind::none, 0),
        row(kNoProgress, RuleKind::cfa_rsp, 0), row(kNoProgress + 0x100, RuleKind::none, 0),
        with_rbx(row(kPushesRbx, RuleKind::cfa_rsp, 16), SavedRule::at_cfa, -16), row(kPushesRbx + 0x100, RuleKind::none, 0),
        with_rbx(row(kRbxCfa, RuleKind::cfa_rbx, 32), SavedRule::at_cfa, -32), row(kRbxCfa + 0x100, RuleKind::none, 0),
        with_rbx(row(kRealigned, RuleKind::cfa_at_rbp, -8, SavedRule::at_rbp, 0), SavedRule::at_rbp, -16),
        row(kRealigned + 0x100, RuleKind::none, 0),
        with_rbx(row(kLosesRbx, RuleKind::cfa_rsp, 16), SavedRule::lost, 0), row(kLosesRbx + 0x100, RuleKind::none, 0),
    };
    memory_.resize(sizeof(UnwindIndex) + rows.size() * sizeof(UnwindRow));
    index_ = new (memory_.data()) UnwindIndex;
    std::memcpy(index_->rows, rows.data(), rows.size() * sizeof(UnwindRow));
    index_->count = rows.size();
  }
  const UnwindIndex* get() const { return index_; }
  UnwindIndex* get() { return index_; }

 private:
  std::vector<unsigned char> memory_;
  UnwindIndex* index_;
};

class CfiWalk : public ::testing::Test {
 protected:
  void SetUp() override { set_walk_pid(getpid()); }
  uintptr_t at(size_t word) { return reinterpret_cast<uintptr_t>(&stack_[word]); }
  StackBounds bounds() { return {at(0), at(kWords)}; }
  int walk(Registers registers, StackCut* cut, int max_depth = 64) {
    return walk_stack_cfi(index_.get(), registers, bounds(), pcs_, max_depth, cut);
  }

  static constexpr size_t kWords = 512;
  alignas(16) uintptr_t stack_[kWords] = {};
  uintptr_t pcs_[kMaxFrames] = {};
  Index index_;
};

// frameless leaf -> frame-pointer function -> root: every rule applied, the root ends it.
TEST_F(CfiWalk, FramelessThenFramePointerThenRoot) {
  stack_[0] = at(4);                  // the leaf saved the caller's rbp at CFA - 16
  stack_[1] = kFramePointer + 0x20;   // return address at CFA - 8 (CFA = rsp + 16)
  stack_[4] = at(20);                 // the caller's frame: its rbp points here, saved rbp
  stack_[5] = kRoot + 0x30;           // and its return address
  StackCut cut;
  int depth = walk({kFrameless + 0x10, at(0), 0x1234}, &cut);
  ASSERT_EQ(depth, 3);
  EXPECT_EQ(cut, StackCut::none);
  EXPECT_EQ(pcs_[0], kFrameless + 0x10);
  EXPECT_EQ(pcs_[1], kFramePointer + 0x20);
  EXPECT_EQ(pcs_[2], kRoot + 0x30);
}

// A return address is looked up one byte back: a call at the end of a function returns to
// the first byte of the next, whose rules are not the caller's.
TEST_F(CfiWalk, ReturnAddressesAreLookedUpOneByteBack) {
  stack_[1] = kRoot + 0x100;  // one past the root function's end: still the root's call
  StackCut cut;
  EXPECT_EQ(walk({kFrameless, at(0), 0}, &cut), 2);
  EXPECT_EQ(cut, StackCut::none);
}

TEST_F(CfiWalk, PltStubCfaDependsOnThePcWithinTheEntry) {
  stack_[0] = kRoot + 1;  // pushed-entry half (pc & 15 < 11): CFA = rsp + 8
  stack_[1] = kRoot + 2;  // after the push (pc & 15 >= 11): CFA = rsp + 16
  StackCut cut;
  ASSERT_EQ(walk({kPlt + 0x15, at(0), 0}, &cut), 2);
  EXPECT_EQ(pcs_[1], kRoot + 1);
  ASSERT_EQ(walk({kPlt + 0x1b, at(0), 0}, &cut), 2);
  EXPECT_EQ(pcs_[1], kRoot + 2);
}

// A program's signal handler interrupted: its return address is the trampoline, whose
// frame holds the interrupted registers (a ucontext_t at the CFA); the walk goes on from
// the interrupted pc itself (not one byte back).
TEST_F(CfiWalk, SignalTrampolineContinuesFromTheInterruptedRegisters) {
  stack_[1] = kTrampoline + 1;  // the handler (frameless) returns into __restore_rt
  auto* context = reinterpret_cast<ucontext_t*>(at(2));  // the CFA: sp at the trampoline
  ASSERT_LT(sizeof(ucontext_t), (kWords - 300) * sizeof(uintptr_t));
  context->uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(kFramePointer);  // interrupted at entry
  context->uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(at(300));
  context->uc_mcontext.gregs[REG_RBP] = static_cast<greg_t>(at(310));
  stack_[310] = 0;
  stack_[311] = kRoot + 8;
  StackCut cut;
  int depth = walk({kFrameless + 4, at(0), 0}, &cut);
  EXPECT_EQ(cut, StackCut::none);
  ASSERT_EQ(depth, 4);
  EXPECT_EQ(pcs_[1], kTrampoline + 1);
  EXPECT_EQ(pcs_[2], kFramePointer);
  EXPECT_EQ(pcs_[3], kRoot + 8);
}

TEST_F(CfiWalk, CodeWithoutRulesIsCutWithItsMarker) {
  StackCut cut;
  ASSERT_EQ(walk({0x9000, at(0), 0}, &cut), 2);
  EXPECT_EQ(cut, StackCut::no_unwind_info);
  EXPECT_EQ(pcs_[1], stack_cut_frame(StackCut::no_unwind_info));
  EXPECT_NE(stack_cut_frame(StackCut::no_unwind_info), stack_cut_frame(StackCut::bad_stack));
}

// frameless callee -> code without rules that keeps a frame pointer (crtstuff's
// __do_global_dtors_aux at exit) -> root: the frame pointer steps over the code without
// rules when it returns into code with rules.
TEST_F(CfiWalk, AReturnIntoCodeWithoutRulesFollowsItsFramePointer) {
  stack_[0] = at(10);          // the callee saved rbp (the frame of the code without rules)
  stack_[1] = 0x9000 + 0x20;   // and returns into that code
  stack_[10] = 0;              // its frame: the caller's rbp
  stack_[11] = kRoot + 0x40;   // and its return address, into code with rules
  StackCut cut;
  int depth = walk({kFrameless + 4, at(0), 0x1234}, &cut);
  EXPECT_EQ(cut, StackCut::none);
  ASSERT_EQ(depth, 3);
  EXPECT_EQ(pcs_[1], 0x9000u + 0x20);
  EXPECT_EQ(pcs_[2], kRoot + 0x40);

  // The same frame returning into code without rules either: cut, nothing guessed.
  stack_[11] = 0x9800;
  depth = walk({kFrameless + 4, at(0), 0x1234}, &cut);
  EXPECT_EQ(cut, StackCut::no_unwind_info);
  ASSERT_EQ(depth, 3);
  EXPECT_EQ(pcs_[2], stack_cut_frame(StackCut::no_unwind_info));

  // rbp below sp is no frame of a caller: cut.
  stack_[11] = kRoot + 0x40;
  stack_[0] = at(0) - 64;
  depth = walk({kFrameless + 4, at(0), 0x1234}, &cut);
  EXPECT_EQ(cut, StackCut::no_unwind_info);
}

TEST_F(CfiWalk, UnreadableStackIsCutNotAFault) {
  StackCut cut;
  // The CFA lands at address 16: outside the stack, and nothing is mapped there.
  int depth = walk({kFrameless, 0, 0}, &cut);
  EXPECT_EQ(cut, StackCut::bad_stack);
  EXPECT_EQ(depth, 2);
  // A frame-pointer rule with rbp far above the stack, where nothing is mapped.
  depth = walk({kFramePointer, at(0), at(0) + (uintptr_t{1} << 44)}, &cut);
  EXPECT_EQ(cut, StackCut::bad_stack);
  EXPECT_EQ(depth, 2);
}

TEST_F(CfiWalk, ACfaThatDoesNotMoveUpIsCut) {
  StackCut cut;
  EXPECT_EQ(walk({kNoProgress, at(0), 0}, &cut), 2);
  EXPECT_EQ(cut, StackCut::no_progress);
}

// Frames that never end (each frameless frame returning into another) stop at the limit,
// the marker in the last place.
TEST_F(CfiWalk, TooDeepStacksEndWithTheMarkerInTheLastPlace) {
  for (size_t word = 0; word + 1 < kWords; word += 2) stack_[word + 1] = kFrameless + 0x40;
  StackCut cut;
  int depth = walk({kFrameless, at(0), 0}, &cut, 8);
  EXPECT_EQ(cut, StackCut::too_deep);
  ASSERT_EQ(depth, 8);
  EXPECT_EQ(pcs_[7], stack_cut_frame(StackCut::too_deep));
}

// ld.so's lazy binding: a sample in do_lookup_x (pushes rbx), called from the trampoline
// _dl_runtime_resolve_xsavec, which realigned the stack and keeps its CFA in rbx: the
// trampoline's rbx is the one do_lookup_x saved, not the interrupted one.
TEST_F(CfiWalk, CfaInRbxUsesTheRbxTheCalleeSaved) {
  stack_[0] = at(20);            // do_lookup_x saved the trampoline's rbx (its old rsp)
  stack_[1] = kRbxCfa + 0x40;    // its return address: CFA = rsp + 16
  stack_[20] = 0x5555;           // the trampoline saved its caller's rbx at CFA - 32
  stack_[23] = kRoot + 0x30;     // CFA = rbx + 32 = at(24): return address at CFA - 8
  StackCut cut;
  Registers leaf{kPushesRbx + 8, at(0), 0, 0x777};  // rbx in the leaf: do_lookup_x's own
  int depth = walk(leaf, &cut);
  EXPECT_EQ(cut, StackCut::none);
  ASSERT_EQ(depth, 3);
  EXPECT_EQ(pcs_[1], kRbxCfa + 0x40);
  EXPECT_EQ(pcs_[2], kRoot + 0x30);

  // Interrupted in the trampoline itself: the interrupted rbx is its own.
  Registers in_trampoline{kRbxCfa + 8, at(4), 0, at(20)};
  depth = walk(in_trampoline, &cut);
  EXPECT_EQ(cut, StackCut::none);
  ASSERT_EQ(depth, 2);
  EXPECT_EQ(pcs_[1], kRoot + 0x30);

  // A callee whose rules lose rbx: the trampoline cannot be unwound, a cut (not garbage).
  stack_[1] = kRbxCfa + 0x40;
  depth = walk({kLosesRbx + 8, at(0), 0, at(20)}, &cut);
  EXPECT_EQ(cut, StackCut::unsupported);
  ASSERT_EQ(depth, 3);
  EXPECT_EQ(pcs_[1], kRbxCfa + 0x40);
  EXPECT_EQ(pcs_[2], stack_cut_frame(StackCut::unsupported));
}

// A signal handler that interrupted the trampoline: its rbx comes from the signal frame.
TEST_F(CfiWalk, CfaInRbxAfterASignalFrameUsesTheSavedRbx) {
  stack_[1] = kTrampoline + 1;
  auto* context = reinterpret_cast<ucontext_t*>(at(2));
  context->uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(kRbxCfa + 8);
  context->uc_mcontext.gregs[REG_RSP] = static_cast<greg_t>(at(300));
  context->uc_mcontext.gregs[REG_RBX] = static_cast<greg_t>(at(320));
  stack_[323] = kRoot + 8;  // CFA = rbx + 32 = at(324)
  StackCut cut;
  int depth = walk({kFrameless + 4, at(0), 0, 0x777}, &cut);
  EXPECT_EQ(cut, StackCut::none);
  ASSERT_EQ(depth, 4);
  EXPECT_EQ(pcs_[2], kRbxCfa + 8);
  EXPECT_EQ(pcs_[3], kRoot + 8);
}

// GCC's realigning prologue: the CFA is loaded from rbp - 8 (the DRAP register's save),
// rbp and rbx saved at rbp-relative addresses; the caller after it keeps its CFA in rbx.
TEST_F(CfiWalk, CfaLoadedFromTheFrameAndRegistersSavedByRbp) {
  stack_[6] = at(30);              // rbp - 16: the caller's rbx
  stack_[7] = at(16);              // rbp - 8: the CFA
  stack_[8] = at(50);              // rbp + 0: the caller's rbp
  stack_[15] = kRbxCfa + 0x10;     // CFA - 8: the return address
  stack_[33] = kRoot + 0x30;       // the caller's CFA = rbx + 32 = at(34)
  StackCut cut;
  int depth = walk({kRealigned + 0x20, at(2), at(8), 0x777}, &cut);
  EXPECT_EQ(cut, StackCut::none);
  ASSERT_EQ(depth, 3);
  EXPECT_EQ(pcs_[1], kRbxCfa + 0x10);
  EXPECT_EQ(pcs_[2], kRoot + 0x30);

  // rbp pointing where nothing is mapped: a checked read fails, a cut.
  depth = walk({kRealigned + 0x20, at(2), at(0) + (uintptr_t{1} << 44), 0}, &cut);
  EXPECT_EQ(cut, StackCut::bad_stack);
  EXPECT_EQ(depth, 2);
}

// swapcontext and setcontext (found by symbol when the index is built): a sample in them is
// a stack switch, whatever their rules say; a return address in them is walked.
TEST_F(CfiWalk, SamplesInContextSwitchesAreCut) {
  index_.get()->context_switches[1] = {kFrameless, kFrameless + 0x100};  // "setcontext"
  StackCut cut;
  ASSERT_EQ(walk({kFrameless + 4, at(0), 0}, &cut), 2);
  EXPECT_EQ(cut, StackCut::stack_switch);
  EXPECT_EQ(pcs_[1], stack_cut_frame(StackCut::stack_switch));
  stack_[2] = at(4);               // kFramePointer's frame (rbp = at(2)): saved rbp,
  stack_[3] = kFrameless + 0x40;   // and a return address into "setcontext": walked on
  stack_[5] = kRoot + 0x30;
  ASSERT_EQ(walk({kFramePointer + 4, at(0), at(2)}, &cut), 3);
  EXPECT_EQ(cut, StackCut::none);
  EXPECT_EQ(pcs_[1], kFrameless + 0x40);
  EXPECT_EQ(pcs_[2], kRoot + 0x30);
}

TEST_F(CfiWalk, NoIndexCutsAtTheLeaf) {
  StackCut cut;
  EXPECT_EQ(walk_stack_cfi(nullptr, {kFrameless, at(0), 0}, bounds(), pcs_, 64, &cut), 2);
  EXPECT_EQ(cut, StackCut::no_unwind_info);
}

}  // namespace
}  // namespace tally::runtime
