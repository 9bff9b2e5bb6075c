// KernelSymbols: text symbols from a kallsyms file (module names after a tab, data symbols
// left out, lines out of address order), _text from the same read, kptr_restrict's zeros.
// kernel_text_start (the same rule from a partial read) and kernel_build_id (the GNU build-id
// note among /sys/kernel/notes' notes), the latter checked against perf buildid-list -k.
#include "collect/kernel_symbols.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "support/test_support.h"

namespace tally::collect {
namespace {

TEST(KernelSymbols, FindsTheFunctionHoldingAnAddressAndTheTextStart) {
  test::TempDir dir;
  test::write_bytes(dir.file("kallsyms"),
                    "ffffffff81000000 T _stext\n"
                    "ffffffff81000000 T _text\n"
                    "ffffffff81001000 t do_one\n"
                    "ffffffff81003000 D some_data\n"
                    "ffffffffc0002000 t mod_func\t[a_module]\n"
                    "ffffffff81002000 W weak_two\n"
                    "garbage line\n");
  KernelSymbols symbols;
  symbols.load(dir.file("kallsyms"));
  ASSERT_FALSE(symbols.empty());
  EXPECT_EQ(symbols.text_start(), 0xffffffff81000000ULL);
  EXPECT_EQ(symbols.find(0xffffffff80ffffffULL), "");
  EXPECT_EQ(symbols.find(0xffffffff81001000ULL), "do_one");
  EXPECT_EQ(symbols.find(0xffffffff81001fffULL), "do_one");
  EXPECT_EQ(symbols.find(0xffffffff81003010ULL), "weak_two");  // data symbols are not functions
  EXPECT_EQ(symbols.find(0xffffffffc0002004ULL), "mod_func");   // no "\t[a_module]"
}

TEST(KernelSymbols, StextWhenNoText) {
  test::TempDir dir;
  test::write_bytes(dir.file("kallsyms"), "ffffffff81000100 T _stext\nffffffff81001000 t f\n");
  KernelSymbols symbols;
  symbols.load(dir.file("kallsyms"));
  EXPECT_EQ(symbols.text_start(), 0xffffffff81000100ULL);
}

TEST(KernelSymbols, HiddenAddressesGiveNothing) {
  test::TempDir dir;
  test::write_bytes(dir.file("kallsyms"),
                    "0000000000000000 T _text\n0000000000000000 t do_one\n");
  KernelSymbols symbols;
  symbols.load(dir.file("kallsyms"));
  EXPECT_TRUE(symbols.empty());
  EXPECT_EQ(symbols.text_start(), 0u);
  EXPECT_EQ(symbols.find(0x1000), "");
}

TEST(KernelSymbols, RunningKernelsTextStartAgreesWithTheOtherReader) {
  KernelSymbols symbols;
  symbols.load();
  if (symbols.empty()) GTEST_SKIP() << "/proc/kallsyms hides its addresses here";
  EXPECT_EQ(symbols.text_start(), kernel_text_start());
}

TEST(KernelTextStart, PrefersTextToAnEarlierStextAsTheFullReadDoes) {
  test::TempDir dir;
  const std::string text = "ffffffff81000200 T _stext\n"
                           "ffffffff81000100 D _text_data\n"
                           "ffffffff81000000 T _text\n"
                           "ffffffff81001000 t f\n";
  test::write_bytes(dir.file("kallsyms"), text);
  EXPECT_EQ(kernel_text_start(dir.file("kallsyms")), 0xffffffff81000000ULL);
  KernelSymbols symbols;
  symbols.load(dir.file("kallsyms"));
  EXPECT_EQ(symbols.text_start(), 0xffffffff81000000ULL);
}

TEST(KernelTextStart, StextWithoutTextAndZeroWhenAbsentOrMissing) {
  test::TempDir dir;
  test::write_bytes(dir.file("stext"), "ffffffff81001000 t f\nffffffff81000100 T _stext\n");
  EXPECT_EQ(kernel_text_start(dir.file("stext")), 0xffffffff81000100ULL);
  test::write_bytes(dir.file("none"), "ffffffff81001000 t f\nffffffff81000000 D _text\n");
  EXPECT_EQ(kernel_text_start(dir.file("none")), 0u);  // a data symbol of that name
  EXPECT_EQ(kernel_text_start(dir.file("absent")), 0u);
}

// One ELF note: namesz, descsz, type (little-endian, as x86-64 writes them), name and desc
// padded to 4 bytes.
std::string note(const std::string& name, const std::string& desc, uint32_t type) {
  std::string out;
  for (uint32_t v : {uint32_t(name.size()), uint32_t(desc.size()), type})
    for (int i = 0; i < 4; ++i) out.push_back(char(v >> (8 * i) & 0xff));
  out += name;
  out.append((4 - name.size() % 4) % 4, '\0');
  out += desc;
  out.append((4 - desc.size() % 4) % 4, '\0');
  return out;
}

TEST(KernelBuildId, TheGnuBuildIdNoteAmongOthers) {
  test::TempDir dir;
  const std::string id("\x01\x23\x45\x67\x89\xab\xcd\xef\x10\x32\x54\x76\x98\xba\xdc\xfe\x00\x11\x22\x33", 20);
  test::write_bytes(dir.file("notes"), note(std::string("Xen\0", 4), "abcdefg", 6) +
                                           note(std::string("GNU\0", 4), "odd", 1) +  // not type 3
                                           note(std::string("GNU\0", 4), id, 3));
  EXPECT_EQ(kernel_build_id(dir.file("notes")), "0123456789abcdef1032547698badcfe00112233");
}

TEST(KernelBuildId, NothingFromATruncatedNoteOrAMissingFile) {
  test::TempDir dir;
  std::string whole = note(std::string("GNU\0", 4), std::string(20, '\x5a'), 3);
  test::write_bytes(dir.file("cut"), whole.substr(0, whole.size() - 1));
  EXPECT_EQ(kernel_build_id(dir.file("cut")), "");
  EXPECT_EQ(kernel_build_id(dir.file("absent")), "");
}

// The running kernel's build id as perf, the peer, reads it.
TEST(KernelBuildId, RunningKernelsAgreesWithPerf) {
  const std::string ours = kernel_build_id();
  if (ours.empty()) GTEST_SKIP() << "/sys/kernel/notes is unreadable here";
  std::FILE* pipe = ::popen("perf buildid-list -k 2>/dev/null", "r");
  ASSERT_NE(pipe, nullptr);
  char buf[256] = {};
  const bool got = std::fgets(buf, sizeof buf, pipe) != nullptr;
  ::pclose(pipe);
  if (!got) GTEST_SKIP() << "perf buildid-list -k gave nothing";
  std::string theirs(buf);
  while (!theirs.empty() && (theirs.back() == '\n' || theirs.back() == ' ')) theirs.pop_back();
  EXPECT_EQ(ours, theirs);
}

}  // namespace
}  // namespace tally::collect
