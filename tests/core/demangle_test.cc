// Demangling, and pprof's simplified names (expected values written by hand from the
// C++ ABI and from how pprof shows these functions).
#include <gtest/gtest.h>

#include "core/demangle.h"

namespace tally::core {
namespace {

TEST(Demangle, MangledAndPlainNames) {
  EXPECT_EQ(demangle("_ZL10run_roundslm"), "run_rounds(long, unsigned long)");
  EXPECT_EQ(demangle("_ZNK2ns1fEi"), "ns::f(int) const");
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("_Znot_valid"), "_Znot_valid");
  // Rust's v0 scheme is not Itanium's: left alone.
  EXPECT_EQ(demangle("_RNvCs1234_5crate4main"), "_RNvCs1234_5crate4main");
}

TEST(Demangle, LongNamesDemangledOverlongOnesLeftAlone) {
  // f(int, int, ...) with 1000 ints: 1004 bytes, demangled (the 4096-byte limit is well
  // above real names). One of 5000 comes back as it was, not empty or cut.
  std::string params;
  for (int i = 0; i < 1000; ++i) params += i == 0 ? "int" : ", int";
  EXPECT_EQ(demangle("_Z1f" + std::string(1000, 'i')), "f(" + params + ")");
  const std::string overlong = "_Z1f" + std::string(5000, 'i');
  EXPECT_EQ(demangle(overlong), overlong);
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
}  // namespace tally::core
