// Peer test: tally reads google/pprof's callgrind dialect as the real callgrind_annotate
// does. The gperftools fixtures' NAME.pprof-callgrind.txt were written by `pprof -callgrind`
// (fixtures/MANIFEST.tsv): `positions: instr line`, relative subpositions, ob=/fl=/fn=
// compressed and repeated before every block, calls=0 on every edge. callgrind_annotate,
// run on the same file, must print the self cost that tally read for each function.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "callgrind_annotate_self.h"
#include "callgrind_annotate_tables.h"
#include "callgrind_peer_helpers.h"
#include "callgrind_test_helpers.h"

namespace tally::callgrind::test {
namespace {

std::vector<std::string> pprof_callgrind_files() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(tally::test::shared("fixtures/gperf")))
    if (e.path().filename().string().ends_with(".pprof-callgrind.txt")) out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

class PprofCallgrindDialect : public ::testing::TestWithParam<std::string> {};

// callgrind_annotate reads calls=0 as no call and adds the cost line after it to the
// caller's self cost (annotate_self_cost undoes that on tally's side), so its total is
// tally's total plus those edges' inclusive costs.
TEST_P(PprofCallgrindDialect, SelfCostsAndTotalAsCallgrindAnnotatePrintsThem) {
  TALLY_REQUIRE_PEER(callgrind_annotate_path(), "callgrind_annotate (valgrind)");
  const std::string path = GetParam();
  core::Diagnostics d;
  const core::Profile p = read_file(path, d);
  const AnnotateTables peer =
      parse_annotate(annotate(path, {}, std::filesystem::path(path).parent_path().string()));
  ASSERT_TRUE(peer.program_total.has_value());
  ASSERT_EQ(p.sample_types.size(), 1u);
  int64_t zero_count_edges = 0;
  for (const core::CallEdge& c : p.call_graph.calls)
    if (c.count == 0) zero_count_edges += c.inclusive[0];
  EXPECT_GT(zero_count_edges, 0);
  EXPECT_GT(p.total(0), 0);
  EXPECT_EQ(p.total(0) + zero_count_edges, *peer.program_total);
  ASSERT_FALSE(peer.self.empty());
  for (const AnnotateEntry& e : peer.self)
    EXPECT_EQ(annotate_self_cost(p, e), e.cost) << e.file << ":" << e.function << " [" << e.object << "]";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PprofCallgrindDialect, ::testing::ValuesIn(pprof_callgrind_files()),
                         file_param_name);

}  // namespace
}  // namespace tally::callgrind::test
