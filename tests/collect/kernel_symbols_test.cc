// KernelSymbols: text symbols from a kallsyms file (module names after a tab, data symbols
// left out, lines out of address order), _text from the same read, kptr_restrict's zeros.
#include "collect/kernel_symbols.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tally::collect
