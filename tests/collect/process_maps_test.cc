#include "collect/process_maps.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "support/test_support.h"

namespace tally::collect {
namespace {

ImageMapping mapping(uint64_t start, uint64_t limit, uint64_t pgoff, const std::string& path) {
  ImageMapping m;
  m.start = start;
  m.limit = limit;
  m.pgoff = pgoff;
  m.path = path;
  m.executable = true;
  return m;
}

TEST(AddressSpace, FindsTheMappingHoldingAnAddress) {
  AddressSpace space;
  space.add(mapping(0x1000, 0x3000, 0, "/a"));
  space.add(mapping(0x5000, 0x6000, 0x2000, "/b"));
  EXPECT_EQ(space.find(0xfff), nullptr);
  ASSERT_NE(space.find(0x1000), nullptr);
  EXPECT_EQ(space.find(0x2fff)->path, "/a");
  EXPECT_EQ(space.find(0x3000), nullptr);
  EXPECT_EQ(space.find(0x5800)->path, "/b");
  EXPECT_EQ(space.find(0x6000), nullptr);
  EXPECT_EQ(space.all().size(), 2u);
}

TEST(AddressSpace, NewMappingCutsWhatItOverlaps) {
  AddressSpace space;
  space.add(mapping(0x1000, 0x9000, 0x10000, "/old"));
  uint64_t before = space.generation();
  space.add(mapping(0x3000, 0x5000, 0, "/new"));
  EXPECT_NE(space.generation(), before);
  auto all = space.all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->path, "/old");
  EXPECT_EQ(all[0]->start, 0x1000u);
  EXPECT_EQ(all[0]->limit, 0x3000u);
  EXPECT_EQ(all[0]->pgoff, 0x10000u);
  EXPECT_EQ(all[1]->path, "/new");
  EXPECT_EQ(all[2]->path, "/old");
  EXPECT_EQ(all[2]->start, 0x5000u);
  EXPECT_EQ(all[2]->limit, 0x9000u);
  EXPECT_EQ(all[2]->pgoff, 0x14000u);  // the tail's file offset moved with it

  // One mapping over several: the ones inside go, the edges are trimmed.
  space.add(mapping(0x2000, 0x8000, 0, "/over"));
  all = space.all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0]->limit, 0x2000u);
  EXPECT_EQ(all[1]->path, "/over");
  EXPECT_EQ(all[2]->start, 0x8000u);
  EXPECT_EQ(all[2]->pgoff, 0x17000u);
  EXPECT_EQ(space.find(0x4000)->path, "/over");
}

TEST(AddressSpace, EmptyRangeIsIgnored) {
  AddressSpace space;
  space.add(mapping(0x2000, 0x2000, 0, "/empty"));
  space.add(mapping(0x3000, 0x1000, 0, "/backwards"));
  EXPECT_TRUE(space.all().empty());
}

TEST(AddressSpace, GenerationsAreUniqueAcrossSpaces) {
  AddressSpace a, b;
  a.add(mapping(0x1000, 0x2000, 0, "/a"));
  b.add(mapping(0x1000, 0x2000, 0, "/a"));
  EXPECT_NE(a.generation(), b.generation());
}

TEST(ProcessTable, ForkCopiesExecClears) {
  ProcessTable table;
  table.process(10).add(mapping(0x1000, 0x2000, 0, "/bin/parent"));
  table.fork(10, 11);
  ASSERT_NE(table.find(11), nullptr);
  ASSERT_NE(table.find(11)->find(0x1800), nullptr);
  EXPECT_EQ(table.find(11)->find(0x1800)->path, "/bin/parent");
  // The child's maps are its own.
  table.process(11).add(mapping(0x1000, 0x2000, 0, "/bin/child"));
  EXPECT_EQ(table.find(10)->find(0x1800)->path, "/bin/parent");
  table.exec(10);
  EXPECT_EQ(table.find(10)->find(0x1800), nullptr);
  EXPECT_EQ(table.find(12), nullptr);
  table.fork(12, 13);  // an unknown parent: an empty child
  ASSERT_NE(table.find(13), nullptr);
  EXPECT_TRUE(table.find(13)->all().empty());
}

std::string proc_self_exe() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "";
}

TEST(ProcessTable, LoadsProcMaps) {
  // A file whose name holds spaces, mapped at a known offset.
  test::TempDir dir;
  std::string name = dir.file("maps test file");
  {
    std::ofstream out(name);
    out << std::string(3 * 4096, 'x');
  }
  FILE* file = fopen(name.c_str(), "r");
  ASSERT_NE(file, nullptr);
  void* area = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fileno(file), 8192);
  ASSERT_NE(area, MAP_FAILED);

  ProcessTable table;
  ASSERT_TRUE(table.load_proc_maps(getpid()));
  const AddressSpace* self = table.find(getpid());
  ASSERT_NE(self, nullptr);

  const ImageMapping* code = self->find(reinterpret_cast<uint64_t>(&proc_self_exe));
  ASSERT_NE(code, nullptr);
  EXPECT_EQ(code->path, proc_self_exe());
  EXPECT_TRUE(code->executable);
  EXPECT_NE(code->inode, 0u);

  const ImageMapping* mapped = self->find(reinterpret_cast<uint64_t>(area) + 100);
  ASSERT_NE(mapped, nullptr);
  EXPECT_EQ(mapped->path, name);
  EXPECT_EQ(mapped->pgoff, 8192u);
  EXPECT_EQ(mapped->start, reinterpret_cast<uint64_t>(area));
  EXPECT_EQ(mapped->limit, reinterpret_cast<uint64_t>(area) + 4096);
  EXPECT_FALSE(mapped->executable);

  int local = 0;
  const ImageMapping* stack = self->find(reinterpret_cast<uint64_t>(&local));
  ASSERT_NE(stack, nullptr);
  EXPECT_EQ(stack->path, "[stack]");

  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&dladdr), &info), 0);
  const ImageMapping* libc = self->find(reinterpret_cast<uint64_t>(&dladdr));
  ASSERT_NE(libc, nullptr);
  char* resolved = realpath(info.dli_fname, nullptr);
  ASSERT_NE(resolved, nullptr);
  EXPECT_EQ(libc->path, resolved);  // the kernel names the file itself, not the symlinked dir
  free(resolved);

  munmap(area, 4096);
  fclose(file);
  unlink(name.c_str());
}

TEST(ProcessTable, MissingProcessIsFalse) {
  ProcessTable table;
  EXPECT_FALSE(table.load_proc_maps(-5));
  EXPECT_EQ(table.find(-5), nullptr);
}

}  // namespace
}  // namespace tally::collect
