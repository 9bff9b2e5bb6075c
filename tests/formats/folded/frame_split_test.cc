// Splitting a folded stack into frames: ';' separates frames only outside brackets, and
// operator names made of bracket characters do not count as brackets.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "formats/folded/frame_split.h"

namespace tally::folded {
namespace {

std::vector<std::string> split(std::string_view stack) {
  FrameSplitter splitter;
  const auto& frames = splitter.split(stack);
  return {frames.begin(), frames.end()};
}

using Frames = std::vector<std::string>;

TEST(FrameSplit, PlainFramesSplitAtEverySemicolon) {
  EXPECT_EQ(split("main;run;work"), (Frames{"main", "run", "work"}));
  EXPECT_EQ(split("main"), (Frames{"main"}));
}

TEST(FrameSplit, EmptyFramesAreKept) {
  EXPECT_EQ(split("a;;b"), (Frames{"a", "", "b"}));
  EXPECT_EQ(split(";a"), (Frames{"", "a"}));
  EXPECT_EQ(split("a;"), (Frames{"a", ""}));
}

TEST(FrameSplit, SemicolonsInsideTemplateArgumentsStayInTheFrame) {
  EXPECT_EQ(split("main;std::map<int, std::vector<a;b>>::find;leaf"),
            (Frames{"main", "std::map<int, std::vector<a;b>>::find", "leaf"}));
}

TEST(FrameSplit, SemicolonsInsideEachBracketKindStayInTheFrame) {
  EXPECT_EQ(split("foo(int; char);bar"), (Frames{"foo(int; char)", "bar"}));
  EXPECT_EQ(split("a[x;y];b{p;q};c"), (Frames{"a[x;y]", "b{p;q}", "c"}));
  EXPECT_EQ(split("f<g(h[i{j;k}];l)>;m"), (Frames{"f<g(h[i{j;k}];l)>", "m"}));
}

TEST(FrameSplit, OperatorNamesAreNotBrackets) {
  EXPECT_EQ(split("a::operator<;b"), (Frames{"a::operator<", "b"}));
  EXPECT_EQ(split("std::operator<<(std::ostream&, int);b"),
            (Frames{"std::operator<<(std::ostream&, int)", "b"}));
  EXPECT_EQ(split("X::operator<=(X const&);b"), (Frames{"X::operator<=(X const&)", "b"}));
  EXPECT_EQ(split("X::operator>(X const&);b"), (Frames{"X::operator>(X const&)", "b"}));
  EXPECT_EQ(split("X::operator>>(int);b"), (Frames{"X::operator>>(int)", "b"}));
  EXPECT_EQ(split("P::operator->() const;b"), (Frames{"P::operator->() const", "b"}));
  EXPECT_EQ(split("X::operator<=>(X const&) const;b"),
            (Frames{"X::operator<=>(X const&) const", "b"}));
  EXPECT_EQ(split("X::operator>=(X const&);b"), (Frames{"X::operator>=(X const&)", "b"}));
  EXPECT_EQ(split("X::operator<<=(int);b"), (Frames{"X::operator<<=(int)", "b"}));
}

TEST(FrameSplit, CallOperatorWithSemicolonInItsParameters) {
  // "operator()" is the name; the parameter list after it is a real bracket.
  EXPECT_EQ(split("main;Foo::operator()(int; long);bar"),
            (Frames{"main", "Foo::operator()(int; long)", "bar"}));
  EXPECT_EQ(split("main::{lambda(int)#1}::operator()(int) const;x"),
            (Frames{"main::{lambda(int)#1}::operator()(int) const", "x"}));
}

TEST(FrameSplit, OperatorTemplateWithSpaceBeforeItsArguments) {
  EXPECT_EQ(split("std::operator< <char>(a;b);c"), (Frames{"std::operator< <char>(a;b)", "c"}));
}

TEST(FrameSplit, OperatorInsideALongerIdentifierIsATemplate) {
  // "my_operator<" opens a template argument list; the ';' inside it stays.
  EXPECT_EQ(split("my_operator<a;b>;c"), (Frames{"my_operator<a;b>", "c"}));
}

TEST(FrameSplit, UnbalancedBracketsFallBackToEverySemicolon) {
  EXPECT_EQ(split("a<b;c;d"), (Frames{"a<b", "c", "d"}));
  EXPECT_EQ(split("f(x;g"), (Frames{"f(x", "g"}));
  EXPECT_EQ(split("a>b;c"), (Frames{"a>b", "c"}));
  EXPECT_EQ(split("a(b];c"), (Frames{"a(b]", "c"}));  // mismatched kinds
  // The fallback splits the whole stack, including inside the balanced frames.
  EXPECT_EQ(split("v<a;b>;x->y;z"), (Frames{"v<a", "b>", "x->y", "z"}));
}

TEST(FrameSplit, OperatorNameLength) {
  EXPECT_EQ(operator_name_length("operator<<", 0), 10u);
  EXPECT_EQ(operator_name_length("x::operator <=>", 3), 12u);
  EXPECT_EQ(operator_name_length("operator()", 0), 10u);
  EXPECT_EQ(operator_name_length("operator new", 0), 0u);
  EXPECT_EQ(operator_name_length("operatorX<", 0), 0u);
  EXPECT_EQ(operator_name_length("xoperator<", 1), 0u);
}

}  // namespace
}  // namespace tally::folded
