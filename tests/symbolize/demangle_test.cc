// Demangling, and pprof's simplified names (expected values written by hand from the
// C++ ABI and from how pprof shows these functions).
#include <gtest/gtest.h>

#include "symbolize/demangle.h"

namespace tally::symbolize {
namespace {

TEST(Demangle, MangledAndPlainNames) {
  EXPECT_EQ(demangle("_ZL10run_roundslm"), "run_rounds(long, unsigned long)");
  EXPECT_EQ(demangle("_ZNK2ns1fEi"), "ns::f(int) const");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("_Znot_valid"), "_Znot_valid");
}

TEST(SimplifyName, DropsParametersTemplatesAndReturnTypes) {
  EXPECT_EQ(simplify_name("run_rounds(long, unsigned long)"), "run_rounds");
  EXPECT_EQ(simplify_name("ns::f(int) const"), "ns::f");
  EXPECT_EQ(simplify_name("std::vector<int, std::allocator<int> >::push_back(int const&)"),
            "std::vector::push_back");
  EXPECT_EQ(simplify_name("int ns::g<int>(int)"), "ns::g");
  EXPECT_EQ(simplify_name("(anonymous namespace)::h()"), "(anonymous namespace)::h");
  EXPECT_EQ(simplify_name("ns::A::operator()(int)"), "ns::A::operator()");
  EXPECT_EQ(simplify_name("ns::operator<<(std::ostream&, ns::A const&)"), "ns::operator<<");
  EXPECT_EQ(simplify_name("f(int) [clone .cold]"), "f");
  EXPECT_EQ(simplify_name("main"), "main");
}

TEST(SimplifyName, KeepsPseudoFramesWhole) {
  EXPECT_EQ(simplify_name("[tally: sampling]"), "[tally: sampling]");
  EXPECT_EQ(simplify_name("[not profiled: process start-up]"), "[not profiled: process start-up]");
  EXPECT_EQ(simplify_name("[unknown]"), "[unknown]");
}

}  // namespace
}  // namespace tally::symbolize
