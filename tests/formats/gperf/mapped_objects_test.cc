// The text list of mapped objects, as the spec describes it: /proc/self/maps lines starting
// at the first column, build= lines (leading spaces allowed) whose path replaces "$build"
// when a non-word character or the end of the path follows, anything else ignored.
#include <gtest/gtest.h>

#include "formats/gperf/mapped_objects.h"

namespace tally::test {
namespace {

using gperf::MapsLine;
using gperf::parse_mapped_objects;

std::vector<std::string> paths(const std::vector<MapsLine>& lines) {
  std::vector<std::string> out;
  for (const MapsLine& l : lines) out.push_back(l.path);
  return out;
}

TEST(MappedObjects, ParsesAProcMapsLine) {
  auto lines = parse_mapped_objects(
      "7f763a244000-7f763a39a000 r-xp 00026000 fe:01 332835      "
      "/usr/lib/x86_64-linux-gnu/libc.so.6\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].start, 0x7f763a244000u);
  EXPECT_EQ(lines[0].limit, 0x7f763a39a000u);
  EXPECT_EQ(lines[0].offset, 0x26000u);
  EXPECT_EQ(lines[0].perms, "r-xp");
  EXPECT_TRUE(lines[0].executable());
  EXPECT_EQ(lines[0].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
}

TEST(MappedObjects, UpperCaseHexAndNonExecutablePerms) {
  auto lines = parse_mapped_objects("7FFF0B6E5000-7FFF0B706000 rw-p 0000ABCD 00:00 0 [stack]\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].start, 0x7fff0b6e5000u);
  EXPECT_EQ(lines[0].offset, 0xabcdu);
  EXPECT_FALSE(lines[0].executable());
  EXPECT_EQ(lines[0].path, "[stack]");
}

TEST(MappedObjects, AnonymousMappingHasAnEmptyPath) {
  auto lines = parse_mapped_objects(
      "7f76397ed000-7f763a1ef000 rw-p 00000000 00:00 0           \n"
      "7f763a1ef000-7f763a1f3000 r-xp 00000000 00:00 0\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].path, "");
  EXPECT_EQ(lines[1].path, "");
  EXPECT_EQ(lines[1].limit, 0x7f763a1f3000u);
}

TEST(MappedObjects, PathWithSpacesIsKeptWhole) {
  auto lines =
      parse_mapped_objects("00400000-00401000 r-xp 00000000 08:01 7 /home/me/my prog (deleted)\n");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].path, "/home/me/my prog (deleted)");
}

TEST(MappedObjects, LineWithLeadingSpacesIsNotAMappingLine) {
  auto lines = parse_mapped_objects(
      " 00400000-00401000 r-xp 00000000 08:01 7 /bin/indented\n"
      "\t00400000-00401000 r-xp 00000000 08:01 7 /bin/tabbed\n"
      "00500000-00501000 r-xp 00000000 08:01 7 /bin/ok\n");
  EXPECT_EQ(paths(lines), std::vector<std::string>{"/bin/ok"});
}

TEST(MappedObjects, UnrecognisedLinesAreIgnored) {
  auto lines = parse_mapped_objects(
      "MAPPED_LIBRARIES:\n"
      "\n"
      "garbage 1234\n"
      "00400000-00401000\n"                          // no perms
      "00400000-00401000 r-xp\n"                     // no offset
      "00400000-00401000 r-xp 0 08:01\n"             // no inode
      "00400000-00401000 r-xp 0 08:01 12x /bin/a\n"  // inode not a number
      "zz400000-00401000 r-xp 00000000 08:01 7 /bin/b\n"
      "00600000-00601000 r-xp 00000000 08:01 7 /bin/good\n"
      "\x01\xff\n");
  EXPECT_EQ(paths(lines), std::vector<std::string>{"/bin/good"});
}

TEST(MappedObjects, CrLfLineEndsAndAMissingFinalNewline) {
  auto lines = parse_mapped_objects(
      "00400000-00401000 r-xp 00000000 08:01 7 /bin/a\r\n"
      "00500000-00501000 r-xp 00000000 08:01 7 /bin/b");
  EXPECT_EQ(paths(lines), (std::vector<std::string>{"/bin/a", "/bin/b"}));
}

TEST(MappedObjects, BuildSubstitutedBeforeSlashAndAtTheEnd) {
  auto lines = parse_mapped_objects(
      "build=/opt/build\n"
      "00400000-00401000 r-xp 00000000 08:01 7 $build/bin/prog\n"
      "00500000-00501000 r-xp 00000000 08:01 7 /links/$build\n"
      "00600000-00601000 r-xp 00000000 08:01 7 $build.so\n"
      "00700000-00701000 r-xp 00000000 08:01 7 $build/$build\n");
  EXPECT_EQ(paths(lines),
            (std::vector<std::string>{"/opt/build/bin/prog", "/links//opt/build",
                                      "/opt/build.so", "/opt/build//opt/build"}));
}

TEST(MappedObjects, BuildFollowedByAWordCharacterIsNotSubstituted) {
  auto lines = parse_mapped_objects(
      "build=/opt/build\n"
      "00400000-00401000 r-xp 00000000 08:01 7 /x/$build_dir/a\n"
      "00500000-00501000 r-xp 00000000 08:01 7 /x/$buildX\n"
      "00600000-00601000 r-xp 00000000 08:01 7 /x/$build9\n"
      "00700000-00701000 r-xp 00000000 08:01 7 /x/$build9/$build\n");
  EXPECT_EQ(paths(lines), (std::vector<std::string>{"/x/$build_dir/a", "/x/$buildX", "/x/$build9",
                                                    "/x/$build9//opt/build"}));
}

TEST(MappedObjects, BuildLineWithLeadingSpacesCountsAndTheLastOneWins) {
  auto lines = parse_mapped_objects(
      "00300000-00301000 r-xp 00000000 08:01 7 $build/before\n"
      "build=/first\n"
      "00400000-00401000 r-xp 00000000 08:01 7 $build/a\n"
      "   build=/second\n"
      "00500000-00501000 r-xp 00000000 08:01 7 $build/b\n"
      "build=/third\n"
      "build=/fourth\n"
      "00600000-00601000 r-xp 00000000 08:01 7 $build/c\n");
  EXPECT_EQ(paths(lines), (std::vector<std::string>{"$build/before", "/first/a", "/second/b",
                                                    "/fourth/c"}));
}

TEST(MappedObjects, FormatMapsLineIsReadBack) {
  std::string line =
      gperf::format_maps_line(0x55fdbeefb000, 0x55fdbeefc000, "r-xp", 0x1000, "/bin/my prog");
  auto lines = parse_mapped_objects(line);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].start, 0x55fdbeefb000u);
  EXPECT_EQ(lines[0].limit, 0x55fdbeefc000u);
  EXPECT_EQ(lines[0].offset, 0x1000u);
  EXPECT_EQ(lines[0].path, "/bin/my prog");
  EXPECT_EQ(line.back(), '\n');
}

}  // namespace
}  // namespace tally::test
