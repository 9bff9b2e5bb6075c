// Image ids (build id, else a hash of the file's identity) and the index file.
#include <gtest/gtest.h>

#include "store/image_index.h"
#include "support/test_support.h"

namespace tally::store {
namespace {

ImageKey true_key() {
  return {.path = "/usr/bin/true", .build_id = "", .dev_major = 8, .dev_minor = 1, .inode = 1234,
          .size = 4096, .mtime_ns = 1700000000000000000};
}

TEST(ImageId, IsTheBuildIdWhenThereIsOne) {
  ImageKey k = true_key();
  k.build_id = "0123456789abcdef0123456789abcdef01234567";
  EXPECT_EQ(image_id(k), k.build_id);
}

TEST(ImageId, IsTheFnv1aHashOfTheFileIdentityOtherwise) {
  // FNV-1a 64 of "8:1:1234:4096:1700000000000000000", NUL, "/usr/bin/true", computed
  // independently (Python).
  EXPECT_EQ(image_id(true_key()), "664af5d8ce1908bb");
}

TEST(ImageId, ChangesWhenTheFileChanges) {
  const std::string base = image_id(true_key());
  ImageKey k = true_key();
  k.inode = 1235;
  EXPECT_NE(image_id(k), base);
  k = true_key();
  k.mtime_ns += 1;
  EXPECT_NE(image_id(k), base);
  k = true_key();
  k.size = 4097;
  EXPECT_NE(image_id(k), base);
  k = true_key();
  k.path = "/usr/bin/false";
  EXPECT_NE(image_id(k), base);
  k = true_key();
  k.dev_minor = 2;
  EXPECT_NE(image_id(k), base);
}

TEST(ImageId, AnInvalidBuildIdIsNotUsed) {
  ImageKey k = true_key();
  k.build_id = "../../etc";
  EXPECT_EQ(image_id(k), image_id(true_key()));
  EXPECT_TRUE(is_image_id("00ff"));
  EXPECT_FALSE(is_image_id("00FF"));
  EXPECT_FALSE(is_image_id(""));
  EXPECT_FALSE(is_image_id(std::string(129, 'a')));
}

TEST(ImageIndex, RoundTripsEveryFieldAndOddPaths) {
  ImageIndex index;
  ImageKey odd = true_key();
  odd.path = "/tmp/a b\tc\\d\ne";
  IndexEntry a{image_id(odd), odd};
  ImageKey built = true_key();
  built.build_id = "abcdef";
  built.path = "/usr/lib/libc.so.6";
  IndexEntry b{"abcdef", built};
  EXPECT_TRUE(index.add(a));
  EXPECT_TRUE(index.add(b));
  EXPECT_FALSE(index.add(b));  // already there
  const std::string text = index.text();
  EXPECT_NE(text.find("abcdef\tabcdef\t8:1\t1234\t4096\t1700000000000000000\t/usr/lib/libc.so.6\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find("\t/tmp/a b\\tc\\\\d\\ne\n"), std::string::npos) << text;
  auto parsed = ImageIndex::parse(text, "index.tsv");
  ASSERT_TRUE(parsed) << parsed.error().message;
  ASSERT_EQ(parsed->entries().size(), 2u);
  EXPECT_EQ(*parsed->find(a.id), a);
  EXPECT_EQ(*parsed->find("abcdef"), b);
}

TEST(ImageIndex, AnIdKeepsItsFirstEntry) {
  ImageIndex index;
  ImageKey k = true_key();
  k.build_id = "beef";
  index.add({"beef", k});
  ImageKey moved = k;
  moved.path = "/opt/copy/true";
  EXPECT_FALSE(index.add({"beef", moved}));
  EXPECT_EQ(index.find("beef")->key.path, "/usr/bin/true");
}

TEST(ImageIndex, NamesTheLineOfABadEntry) {
  for (const char* bad : {"abc\t-\t8:1\t1\t2\t3\n", "ABC\t-\t8:1\t1\t2\t3\t/x\n",
                          "abc\t-\t81\t1\t2\t3\t/x\n", "abc\t-\t8:1\tx\t2\t3\t/x\n",
                          "abc\t-\t8:1\t1\t2\t3\t/x\\q\n"}) {
    auto parsed = ImageIndex::parse(std::string("# comment\n") + bad, "DB/index.tsv");
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().message.rfind("DB/index.tsv: line 2: ", 0), 0u) << parsed.error().message;
  }
}

TEST(ImageIndex, TruncatedOrCorruptedTextIsReadOrRefusedWithItsLine) {
  ImageIndex index;
  ImageKey odd = true_key();
  odd.path = "/tmp/x\ty";
  index.add({image_id(odd), odd});
  ImageKey built = true_key();
  built.build_id = "abcdef";
  index.add({"abcdef", built});
  const std::string text = index.text();
  size_t refused = 0;
  for (size_t cut = 0; cut < text.size(); ++cut) {
    auto parsed = ImageIndex::parse(text.substr(0, cut), "cut");
    if (!parsed) {
      ++refused;
      EXPECT_EQ(parsed.error().message.rfind("cut: line ", 0), 0u) << parsed.error().message;
    }
  }
  EXPECT_GT(refused, 0u);
  for (size_t at = 0; at < text.size(); ++at) {
    for (char c : {'\t', '\n', '\\', 'Z', ':', '\0'}) {
      std::string bad = text;
      bad[at] = c;
      auto parsed = ImageIndex::parse(bad, "flip");
      if (!parsed) {
        EXPECT_EQ(parsed.error().message.rfind("flip: line ", 0), 0u);
      }
    }
  }
}

TEST(ImageIndex, ReadsAMissingFileAsEmptyAndWritesAtomically) {
  test::TempDir dir;
  auto empty = ImageIndex::read(dir.path());
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->entries().empty());
  ImageIndex index;
  index.add({image_id(true_key()), true_key()});
  ASSERT_TRUE(index.write(dir.path()));
  auto back = ImageIndex::read(dir.path());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->entries(), index.entries());
}

}  // namespace
}  // namespace tally::store
