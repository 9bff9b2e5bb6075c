// The handler's stack walk on hand-built stacks and code bytes: the frame-pointer chain
// stays inside the stack bounds, ends on loops and wild pointers, and a frameless leaf's
// caller is recognized only when it follows a real call instruction.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "runtime/maps_snapshot.h"
#include "runtime/stack_walk.h"

namespace tally::runtime {
namespace {

constexpr uintptr_t kCaller1 = 0x401234, kCaller2 = 0x402345, kCaller3 = 0x403456;

// A fake stack: words[], with frames (saved fp, return address) at chosen indices.
struct FakeStack {
  std::vector<uintptr_t> words = std::vector<uintptr_t>(64, 0);
  uintptr_t at(size_t index) { return reinterpret_cast<uintptr_t>(&words[index]); }
  StackBounds bounds() { return {at(0), at(0) + words.size() * sizeof(uintptr_t)}; }
  // frame at `index` links to the frame at `next` (or `link` as is) and returns to `ra`.
  void frame(size_t index, uintptr_t link, uintptr_t ra) {
    words[index] = link;
    words[index + 1] = ra;
  }
};

class StackWalkTest : public ::testing::Test {
 protected:
  void SetUp() override { set_walk_pid(getpid()); }
};

TEST_F(StackWalkTest, FollowsTheFramePointerChain) {
  FakeStack stack;
  stack.frame(10, stack.at(20), kCaller1);
  stack.frame(20, stack.at(30), kCaller2);
  stack.frame(30, 0, kCaller3);  // outermost: the chain ends at 0
  uintptr_t pcs[16];
  int depth = walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, false, pcs, 16);
  ASSERT_EQ(depth, 4);
  EXPECT_EQ(pcs[0], 0x400100u);
  EXPECT_EQ(pcs[1], kCaller1);
  EXPECT_EQ(pcs[2], kCaller2);
  EXPECT_EQ(pcs[3], kCaller3);
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, false, pcs, 2), 2);
}

TEST_F(StackWalkTest, StopsAtLoopsWildPointersAndTheStackEnd) {
  FakeStack stack;
  uintptr_t pcs[16];
  stack.frame(10, stack.at(10), kCaller1);  // points at itself
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, false, pcs, 16), 2);
  stack.frame(10, stack.at(6), kCaller1);  // points downwards
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, false, pcs, 16), 2);
  stack.frame(10, 0x10, kCaller1);  // wild
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, false, pcs, 16), 2);
  // A frame pointer outside the bounds is never read.
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), 0x1000}, stack.bounds(), nullptr, false, pcs, 16), 1);
  // The last frame's return address word lies past the end of the stack.
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(63)}, stack.bounds(), nullptr, false, pcs, 16), 1);
  // A return address below the first page ends the walk.
  stack.frame(10, stack.at(20), 0x10);
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, false, pcs, 16), 1);
}

TEST_F(StackWalkTest, UnknownBoundsAreWalkedWithSafeReads) {
  FakeStack stack;
  stack.frame(10, stack.at(20), kCaller1);
  stack.frame(20, 0, kCaller2);
  uintptr_t pcs[16];
  ASSERT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, StackBounds{}, nullptr, true, pcs, 16), 3);
  EXPECT_EQ(pcs[1], kCaller1);
  EXPECT_EQ(pcs[2], kCaller2);
  // A frame pointer into unmapped memory ends the walk instead of faulting.
  void* gone = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gone, 4096);
  stack.frame(20, reinterpret_cast<uintptr_t>(gone), kCaller2);
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, StackBounds{}, nullptr, true, pcs, 16), 3);
  // A stack pointer outside the known stack (an alternate stack) is walked the same way.
  FakeStack other;
  other.frame(10, 0, kCaller3);
  EXPECT_EQ(walk_stack({0x400100, other.at(4), other.at(10)}, stack.bounds(), nullptr, true, pcs, 16), 2);
  EXPECT_EQ(pcs[1], kCaller3);
}

// Code bytes in a page of our own: a call instruction ending at `return_offset`.
class CodePage {
 public:
  CodePage() {
    page_ = static_cast<unsigned char*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    memset(page_, 0x90, 4096);  // nop
  }
  ~CodePage() { munmap(page_, 4096); }
  uintptr_t put(size_t return_offset, std::vector<unsigned char> instruction) {
    memcpy(page_ + return_offset - instruction.size(), instruction.data(), instruction.size());
    return address(return_offset);
  }
  uintptr_t address(size_t offset) const { return reinterpret_cast<uintptr_t>(page_) + offset; }

 private:
  unsigned char* page_;
};

TEST_F(StackWalkTest, RecognizesReturnAddressesAfterCallInstructions) {
  CodePage code;
  uintptr_t callee = code.address(3000);
  // call rel32 to 3000 (the callee that holds the leaf pc 3010), ending at 100.
  int32_t displacement = 3000 - 100;
  std::vector<unsigned char> direct = {0xE8};
  direct.insert(direct.end(), reinterpret_cast<unsigned char*>(&displacement),
                reinterpret_cast<unsigned char*>(&displacement) + 4);
  uintptr_t after_direct = code.put(100, direct);
  EXPECT_TRUE(follows_call(after_direct, callee + 10, nullptr));
  // The same call seen from a leaf that is not in the callee (nor known code): no.
  EXPECT_FALSE(follows_call(after_direct, callee - 100, nullptr));
  EXPECT_TRUE(follows_call(code.put(200, {0xFF, 0xD0}), 0, nullptr));                  // call *%rax
  EXPECT_TRUE(follows_call(code.put(300, {0x41, 0xFF, 0xD3}), 0, nullptr));            // call *%r11
  EXPECT_TRUE(follows_call(code.put(400, {0xFF, 0x50, 0x08}), 0, nullptr));            // call *8(%rax)
  EXPECT_TRUE(follows_call(code.put(500, {0xFF, 0x15, 1, 2, 3, 4}), 0, nullptr));      // call *x(%rip)
  EXPECT_TRUE(follows_call(code.put(600, {0xFF, 0x94, 0x24, 1, 0, 0, 0}), 0, nullptr));  // call *1(%rsp)
  EXPECT_FALSE(follows_call(code.put(700, {0xFF, 0xE0}), 0, nullptr));  // jmp *%rax: not a call
  EXPECT_FALSE(follows_call(code.address(800), 0, nullptr));            // nops
  EXPECT_FALSE(follows_call(0x10, 0, nullptr));
  // Unmapped memory is read safely (process_vm_readv), not faulted on.
  void* gone = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gone, 4096);
  EXPECT_FALSE(follows_call(reinterpret_cast<uintptr_t>(gone) + 64, 0, nullptr));
}

TEST_F(StackWalkTest, AFramelessLeafsCallerComesFromTheStackPointer) {
  CodePage code;
  uintptr_t return_into_caller = code.put(100, {0xFF, 0xD0});
  FakeStack stack;
  stack.words[4] = return_into_caller;      // [sp]: the leaf's return address
  stack.frame(10, 0, kCaller2);              // fp: still the caller's frame
  uintptr_t pcs[16];
  int depth = walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, true, pcs, 16);
  ASSERT_EQ(depth, 3);
  EXPECT_EQ(pcs[1], return_into_caller);
  EXPECT_EQ(pcs[2], kCaller2);
  // Not from a signal (ProfilerGetStackTrace of the caller): [sp] is not looked at.
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, false, pcs, 16), 2);
  // A value at [sp] that follows no call is a local, not a return address.
  stack.words[4] = code.address(800);
  EXPECT_EQ(walk_stack({0x400100, stack.at(4), stack.at(10)}, stack.bounds(), nullptr, true, pcs, 16), 2);
}

TEST(MapsSnapshot, FindsCodeAndData) {
  static MapsSnapshot maps;
  ASSERT_TRUE(maps.capture());
  EXPECT_GT(maps.size(), 5u);
  const MapRange* code = maps.find(reinterpret_cast<uintptr_t>(&follows_call));
  ASSERT_NE(code, nullptr);
  EXPECT_TRUE(code->executable);
  int local = 0;
  const MapRange* stack = maps.find(reinterpret_cast<uintptr_t>(&local));
  ASSERT_NE(stack, nullptr);
  EXPECT_TRUE(stack->writable);
  EXPECT_FALSE(stack->executable);
  EXPECT_EQ(maps.find(0), nullptr);
  // With the snapshot, a value pointing into data is not taken for a return address.
  set_walk_pid(getpid());
  EXPECT_FALSE(follows_call(reinterpret_cast<uintptr_t>(&local) + 8, 0, &maps));
}

}  // namespace
}  // namespace tally::runtime
