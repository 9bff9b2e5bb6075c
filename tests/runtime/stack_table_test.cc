// The signal handler's sample store: the lock-free stack table and the eviction queue,
// alone and under concurrent writers with a harvesting reader (nothing may be lost or
// counted twice).
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "runtime/stack_table.h"

namespace tally::runtime {
namespace {

using Stack = std::vector<uintptr_t>;

struct Collected {
  std::map<Stack, uint64_t> counts;
  uint64_t records = 0;
};

void collect(void* context, uint64_t count, const uintptr_t* pcs, int depth) {
  auto* collected = static_cast<Collected*>(context);
  collected->counts[Stack(pcs, pcs + depth)] += count;
  ++collected->records;
}

Stack stack_of(uintptr_t id, int depth) {
  Stack stack;
  for (int i = 0; i < depth; ++i) stack.push_back(0x400000 + id * 0x100 + static_cast<uintptr_t>(i));
  return stack;
}

bool add(StackTable& table, const Stack& stack, uint64_t count) {
  return table.add(hash_stack(stack.data(), static_cast<int>(stack.size())), stack.data(),
                   static_cast<int>(stack.size()), count);
}

TEST(StackTable, SameStackAccumulatesInOneEntry) {
  static StackTable table;
  ASSERT_TRUE(table.reset());
  Stack a = stack_of(1, 5), b = stack_of(2, 5), c = stack_of(1, 4);  // c: a prefix of a
  EXPECT_TRUE(add(table, a, 3));
  EXPECT_TRUE(add(table, b, 1));
  EXPECT_TRUE(add(table, a, 2));
  EXPECT_TRUE(add(table, c, 7));
  EXPECT_EQ(table.occupied(), 3u);
  Collected collected;
  table.harvest(collect, &collected, false);
  EXPECT_EQ(collected.records, 3u);
  EXPECT_EQ(collected.counts[a], 5u);
  EXPECT_EQ(collected.counts[b], 1u);
  EXPECT_EQ(collected.counts[c], 7u);
  // Harvested counts are zeroed; the entries stay until reclaimed.
  Collected again;
  table.harvest(collect, &again, false);
  EXPECT_EQ(again.records, 0u);
  EXPECT_EQ(table.occupied(), 3u);
  table.harvest(collect, &again, true);
  EXPECT_EQ(table.occupied(), 0u);
}

TEST(StackTable, FullProbeWindowRefusesAndAReclaimedEntryIsReused) {
  static StackTable table;
  ASSERT_TRUE(table.reset());
  const uint64_t same_hash = 42;
  std::vector<Stack> stacks;
  for (uintptr_t i = 0; i <= StackTable::kProbes; ++i) stacks.push_back(stack_of(i, 3));
  for (uintptr_t i = 0; i < StackTable::kProbes; ++i) {
    EXPECT_TRUE(table.add(same_hash, stacks[i].data(), 3, 1));
  }
  EXPECT_FALSE(table.add(same_hash, stacks.back().data(), 3, 1));
  Collected collected;
  table.harvest(collect, &collected, true);  // hands out the counts
  table.harvest(collect, &collected, true);  // frees the idle entries
  EXPECT_EQ(table.occupied(), 0u);
  EXPECT_TRUE(table.add(same_hash, stacks.back().data(), 3, 1));
}

TEST(StackTable, AddsToARememberedEntryOnlyWhileItHoldsTheSameStack) {
  static StackTable table;
  ASSERT_TRUE(table.reset());
  Stack a = stack_of(1, 4);
  EntryRef where;
  ASSERT_TRUE(table.add(hash_stack(a.data(), 4), a.data(), 4, 2, &where));
  ASSERT_TRUE(where.valid);
  EXPECT_TRUE(table.add_to(where, 5));
  Collected collected;
  table.harvest(collect, &collected, true);
  EXPECT_EQ(collected.counts[a], 7u);
  table.harvest(collect, &collected, true);  // idle: freed
  EXPECT_FALSE(table.add_to(where, 1));
  // Another stack in the same entry: the old reference no longer adds to it.
  Stack b = stack_of(2, 4);
  EntryRef other;
  ASSERT_TRUE(table.add(hash_stack(a.data(), 4), b.data(), 4, 1, &other));
  EXPECT_EQ(other.index, where.index);
  EXPECT_FALSE(table.add_to(where, 1));
  EXPECT_TRUE(table.add_to(other, 1));
}

TEST(EvictionQueue, KeepsOrderAndRefusesWhenFull) {
  static EvictionQueue queue;
  ASSERT_TRUE(queue.reset());
  for (uint64_t i = 0; i < EvictionQueue::kSlots; ++i) {
    Stack stack = stack_of(i, 2);
    ASSERT_TRUE(queue.push(i + 1, stack.data(), 2));
  }
  Stack extra = stack_of(9999, 2);
  EXPECT_FALSE(queue.push(1, extra.data(), 2));
  std::vector<uint64_t> order;
  queue.drain([](void* context, uint64_t count, const uintptr_t*, int) {
    static_cast<std::vector<uint64_t>*>(context)->push_back(count);
  }, &order);
  ASSERT_EQ(order.size(), EvictionQueue::kSlots);
  for (uint64_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i + 1);
  EXPECT_TRUE(queue.push(1, extra.data(), 2));
}

// Writers add (falling back to the queue, as the handler does) while a harvester takes
// counts out and reclaims idle entries: every unit added comes out exactly once, on the
// stack it was added to.
TEST(StackTable, ConcurrentWritersAndHarvesterLoseNothing) {
  static StackTable table;
  static EvictionQueue queue;
  ASSERT_TRUE(table.reset());
  ASSERT_TRUE(queue.reset());
  constexpr int kWriters = 4;
  constexpr int kAddsPerWriter = 200000;
  constexpr uintptr_t kDistinct = 6000;  // more than the table holds: evictions happen
  std::atomic<bool> done{false};
  std::atomic<uint64_t> dropped{0};
  std::vector<std::map<Stack, uint64_t>> added(kWriters);
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      uint64_t x = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(w + 1);
      for (int i = 0; i < kAddsPerWriter; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Mostly a few hot stacks, sometimes a cold one.
        uintptr_t id = (x % 10 < 8) ? x % 16 : x % kDistinct;
        Stack stack = stack_of(id, 1 + static_cast<int>(id % 7));
        uint64_t count = 1 + x % 3;
        added[w][stack] += count;
        if (!add(table, stack, count) &&
            !queue.push(count, stack.data(), static_cast<int>(stack.size()))) {
          dropped += count;
          added[w][stack] -= count;
        }
      }
    });
  }
  Collected collected;
  std::thread harvester([&] {
    while (!done.load()) {
      queue.drain(collect, &collected);
      table.harvest(collect, &collected, true);
    }
  });
  for (auto& writer : writers) writer.join();
  done = true;
  harvester.join();
  queue.drain(collect, &collected);
  table.harvest(collect, &collected, false);

  std::map<Stack, uint64_t> expected;
  for (const auto& per_writer : added) {
    for (const auto& [stack, count] : per_writer) expected[stack] += count;
  }
  for (auto it = expected.begin(); it != expected.end();) {
    it = it->second == 0 ? expected.erase(it) : std::next(it);
  }
  EXPECT_EQ(collected.counts, expected);
  std::printf("records %llu, dropped %llu units\n",
              static_cast<unsigned long long>(collected.records),
              static_cast<unsigned long long>(dropped.load()));
}

}  // namespace
}  // namespace tally::runtime
