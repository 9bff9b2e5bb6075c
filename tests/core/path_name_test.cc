// core::base_name: the last element of a path, as Go's filepath.Base (pprof) takes it.
#include <gtest/gtest.h>

#include "core/path_name.h"

namespace tally::core {
namespace {

TEST(BaseName, LastElementTrailingSlashesIgnored) {
  EXPECT_EQ(base_name("/usr/lib/x86_64-linux-gnu/libc.so.6"), "libc.so.6");
  EXPECT_EQ(base_name("split"), "split");
  EXPECT_EQ(base_name("../bin/split"), "split");
  EXPECT_EQ(base_name("/tmp/dir/"), "dir");
  EXPECT_EQ(base_name("dir//"), "dir");
  EXPECT_EQ(base_name("/"), "/");
  EXPECT_EQ(base_name("//"), "/");
  EXPECT_EQ(base_name("[vdso]"), "[vdso]");
  EXPECT_EQ(base_name(""), "");
}

}  // namespace
}  // namespace tally::core
