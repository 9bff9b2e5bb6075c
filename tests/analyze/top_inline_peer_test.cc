// `tally top`'s "(inline)" and "(partial-inline)" marks against the real `pprof -top`, on
// a profile with inline frames made to hold each case: an edge that is inline in every
// sample, one that is inline in some and a call in others, a node reached both ways, and
// a sample that uses one edge twice (inline first, then as a call under recursion), which
// pprof counts by its first use only.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/profile.h"
#include "formats/pprof/pprof.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

core::Profile inline_profile() {
  core::Profile p;
  p.sample_types = {p.value_type("samples", "count"), p.value_type("cpu", "nanoseconds")};
  p.period_type = p.value_type("cpu", "nanoseconds");
  p.period = 10000000;
  const core::MappingId m = p.add_mapping({.start = 0x400000,
                                           .limit = 0x500000,
                                           .file = p.intern("/bin/prog"),
                                           .has_functions = true,
                                           .has_filenames = true,
                                           .has_line_numbers = true,
                                           .has_inline_frames = true});
  auto function = [&](const char* name) {
    return p.add_function({.name = p.intern(name), .system_name = p.intern(name),
                           .filename = p.intern("prog.cc")});
  };
  const core::FunctionId f_main = function("main"), f_a = function("fa"), f_b = function("fb"),
                         f_c = function("fc"), f_d = function("fd"), f_f = function("ff"),
                         f_g = function("fg");
  uint64_t address = 0x401000;
  // Lines innermost first: {fb, fa} is fb inlined into fa.
  auto location = [&](std::initializer_list<core::FunctionId> functions) {
    core::Location l{.mapping = m, .address = address += 0x10, .lines = {}};
    int64_t line = 10;
    for (core::FunctionId f : functions) l.lines.push_back({.function = f, .line = line++});
    return p.add_location(std::move(l));
  };
  const core::LocationId main_loc = location({f_main}), b_in_a = location({f_b, f_a}),
                         b = location({f_b}), c_in_b_in_a = location({f_c, f_b, f_a}),
                         d_in_c = location({f_d, f_c}), c = location({f_c}),
                         g_in_f = location({f_g, f_f}), f = location({f_f}), g = location({f_g});
  auto sample = [&](std::vector<core::LocationId> stack, int64_t count) {
    const int64_t values[2] = {count, count * p.period};
    p.add_sample(stack, values);
  };
  sample({b_in_a, main_loc}, 30);               // fa -> fb inline
  sample({b, main_loc}, 20);                    // main -> fb a call: fb partly inline
  sample({d_in_c, c, main_loc}, 25);            // fc -> fd inline only
  sample({d_in_c, c_in_b_in_a, main_loc}, 15);  // fa -> fb -> fc inline, fc -> fd inline
  // main -> ff, ff -> fg inline, fg -> ff, then ff -> fg again as a call: the sample's
  // first use of ff -> fg was inline, and only that one counts.
  sample({g, f, g_in_f, main_loc}, 40);
  sample({g_in_f, main_loc}, 10);
  return p;
}

TEST(TopInlineVsPprof, InlineAndPartialInlineMarks) {
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  TempDir dir;
  const std::string file = dir.file("inline.pb.gz");
  write_bytes(file, pprof::write_profile(inline_profile()));
  for (const std::vector<std::string>& options :
       std::vector<std::vector<std::string>>{{}, {"-cum"}, {"-lines"}, {"-nodecount=3"}}) {
    std::vector<std::string> pprof_argv{pprof, "-top"}, tally_argv{"top"};
    for (const std::string& o : options) {
      pprof_argv.push_back(o);
      if (o == "-cum") {
        tally_argv.insert(tally_argv.end(), {"--sort", "cum"});
      } else if (o == "-lines") {
        tally_argv.insert(tally_argv.end(), {"--granularity", "lines"});
      } else {
        tally_argv.insert(tally_argv.end(), {"--nodecount", "3"});
      }
    }
    pprof_argv.push_back(file);
    tally_argv.push_back(file);
    SCOPED_TRACE(options.empty() ? "no options" : options.front());
    const RunResult expected = run(pprof_argv);
    ASSERT_EQ(expected.exit_code, 0) << expected.err;
    const RunResult actual = run_tally(tally_argv);
    ASSERT_EQ(actual.exit_code, 0) << actual.err;
    const std::vector<TopRow> want = top_rows(expected.out), got = top_rows(actual.out);
    ASSERT_FALSE(want.empty()) << expected.out;
    EXPECT_EQ(ties_by_name(got), ties_by_name(want)) << "pprof:\n"
                                                     << expected.out << "tally:\n"
                                                     << actual.out;
    if (options.empty()) {  // the profile holds the cases it was made for
      const std::string out = expected.out;
      EXPECT_NE(out.find("fb (partial-inline)"), std::string::npos) << out;
      EXPECT_NE(out.find("fd (inline)"), std::string::npos) << out;
      EXPECT_NE(out.find("fg (inline)"), std::string::npos) << out;
    }
  }
}

}  // namespace
}  // namespace tally::test
