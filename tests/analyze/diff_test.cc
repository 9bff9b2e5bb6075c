// `tally diff`: the two-proportion z-test against hand-computed values, the shares and
// ordering on hand-built profiles, and the CLI on two recordings of the same workload
// (split at 1000 Hz and 100 Hz), where no change may be called significant.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "analyze/diff.h"
#include "core/profile.h"
#include "support/test_support.h"

namespace tally::analyze {
namespace {

TEST(TwoProportionZTest, HandComputed) {
  // 40/100 vs 60/100: pooled 0.5, se = sqrt(0.25 * (1/100 + 1/100)) = 0.0707107,
  // z = 0.2 / 0.0707107 = 2.828427, p = erfc(z / sqrt 2) = erfc(2) = 0.0046777.
  ZTest t = two_proportion_z_test(40, 100, 60, 100);
  EXPECT_NEAR(t.z, 2.828427, 1e-6);
  EXPECT_NEAR(t.p, 0.0046777, 1e-7);
  // Swapped: the sign flips, p stays.
  ZTest back = two_proportion_z_test(60, 100, 40, 100);
  EXPECT_NEAR(back.z, -2.828427, 1e-6);
  EXPECT_NEAR(back.p, 0.0046777, 1e-7);
  // Nothing to tell: no samples, or the share 0 (or 1) in both.
  EXPECT_EQ(two_proportion_z_test(0, 0, 5, 10).p, 1.0);
  EXPECT_EQ(two_proportion_z_test(0, 100, 0, 50).p, 1.0);
  EXPECT_EQ(two_proportion_z_test(100, 100, 50, 50).p, 1.0);
}

core::Profile make_profile(const std::vector<std::pair<std::string, int64_t>>& leaves) {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count")};
  const auto main_fn = p.add_function({.name = p.intern("main")});
  const auto main_loc = p.add_location({.address = 1, .lines = {{.function = main_fn}}});
  uint64_t address = 2;
  for (const auto& [name, count] : leaves) {
    const auto f = p.add_function({.name = p.intern(name)});
    const auto loc = p.add_location({.address = address++, .lines = {{.function = f}}});
    const core::LocationId stack[] = {loc, main_loc};
    const int64_t v[] = {count};
    p.add_sample(stack, v);
  }
  return p;
}

const DiffRow* row(const DiffReport& r, const std::string& name) {
  for (const DiffRow& d : r.rows)
    if (d.name == name) return &d;
  return nullptr;
}

TEST(Diff, SharesOfEachTotalAndSignificance) {
  const core::Profile base = make_profile({{"a", 40}, {"b", 60}});
  const core::Profile next = make_profile({{"a", 60}, {"b", 40}, {"c", 100}});
  auto r = compute_diff(base, next, {});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->base_total, 100);
  EXPECT_EQ(r->new_total, 200);
  ASSERT_EQ(r->rows.size(), 4u);
  // Largest |flat change| first: c +50pp, b -40pp, a -10pp, main 0.
  EXPECT_EQ(r->rows[0].name, "c");
  EXPECT_EQ(r->rows[1].name, "b");
  EXPECT_EQ(r->rows[2].name, "a");
  EXPECT_EQ(r->rows[3].name, "main");
  // Every test below has n1 = 100, n2 = 200 and a pooled share of 100/300, so
  // se = sqrt(1/3 * 2/3 * (1/100 + 1/200)) = 0.0577350.
  const DiffRow* a = row(*r, "a");  // 0.4 -> 0.3: z = -0.1/se = -1.732051, p = 0.083265
  EXPECT_DOUBLE_EQ(a->base_flat_share, 0.4);
  EXPECT_DOUBLE_EQ(a->new_flat_share, 0.3);
  EXPECT_NEAR(a->test.z, -1.732051, 1e-6);
  EXPECT_NEAR(a->test.p, 0.083265, 1e-6);
  EXPECT_FALSE(a->significant);
  const DiffRow* b = row(*r, "b");  // 0.6 -> 0.2: z = -0.4/se = -6.928203
  EXPECT_NEAR(b->test.z, -6.928203, 1e-6);
  EXPECT_TRUE(b->significant);
  const DiffRow* c = row(*r, "c");  // 0 -> 0.5: z = 0.5/se = 8.660254
  EXPECT_DOUBLE_EQ(c->base_flat_share, 0.0);
  EXPECT_NEAR(c->test.z, 8.660254, 1e-6);
  EXPECT_TRUE(c->significant);
  const DiffRow* m = row(*r, "main");  // on every stack in both: cum 100% -> 100%
  EXPECT_DOUBLE_EQ(m->base_cum_share, 1.0);
  EXPECT_DOUBLE_EQ(m->new_cum_share, 1.0);
  EXPECT_EQ(r->significant, 2u);

  DiffOptions strict;
  strict.significance = 1e-13;  // b's p is 4.3e-12, c's 4.7e-18
  auto s = compute_diff(base, next, strict);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->significant, 1u);
  EXPECT_TRUE(row(*s, "c")->significant);

  DiffOptions top2;
  top2.node_count = 2;
  auto t = compute_diff(base, next, top2);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->dropped, 2u);
}

TEST(DiffCommand, SameWorkloadAtTwoRatesHasNoSignificantChange) {
  auto r = test::run_tally({"diff", test::shared("fixtures/gperf/split.pb.gz"),
                            test::shared("fixtures/gperf/split-f100.pb.gz")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("0 of 9 changes in flat% are significant"), std::string::npos) << r.out;
  // pprof -top of each: func_a 111 of 276 samples (40.22%) and 45 of 111 (450ms of
  // 1110ms, 40.54%). Pooled 156/387, se = sqrt(0.40310 * 0.59690 * (1/276 + 1/111)) =
  // 0.055131, z = (0.405405 - 0.402174) / se = 0.0586, p = 0.9533.
  EXPECT_NE(r.out.find("  40.22%   40.54%   +0.32pp   40.22%   40.54%   +0.32pp    0.06    "
                       "0.9533   func_a\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Base: total 276ms in 276 samples"), std::string::npos);
  EXPECT_NE(r.out.find("New:  total 1.11s in 111 samples"), std::string::npos);
}

TEST(DiffCommand, AProfileAgainstItselfChangesNothing) {
  const std::string f = test::shared("fixtures/gperf/split.pb.gz");
  auto r = test::run_tally({"diff", "--nodecount", "2", f, f});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("+0.00pp"), std::string::npos);
  EXPECT_NE(r.out.find("0 of 9 changes in flat% are significant"), std::string::npos);
  EXPECT_NE(r.out.find("Dropped 7 nodes"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tally::analyze
