// The reader on small hand-written files: the spec's examples, then each rule of the
// grammar and of the real-world dialect. Expected numbers are worked out by hand from the
// text (the spec gives them for its examples: main 20 self, 820 inclusive, ...).
#include <gtest/gtest.h>

#include "callgrind_test_helpers.h"

namespace tally::callgrind::test {
namespace {

// The spec's "Extended Example", with the line numbers its prose gives.
constexpr std::string_view kSpecExample = R"(# callgrind format
events: Instructions

fl=file1.c
fn=main
16 20
cfn=func1
calls=1 50
16 400
cfi=file2.c
cfn=func2
calls=3 20
16 400

fn=func1
51 100
cfi=file2.c
cfn=func2
calls=2 20
51 300

fl=file2.c
fn=func2
20 700
)";

TEST(CallgrindReader, SpecExtendedExample) {
  core::Profile p = read_ok(kSpecExample);
  ASSERT_EQ(p.sample_types.size(), 1u);
  EXPECT_EQ(p.str(p.sample_types[0].type), "Instructions");
  EXPECT_EQ(p.str(p.sample_types[0].unit), "count");
  EXPECT_TRUE(p.call_graph.present);
  EXPECT_EQ(p.call_graph.parts.size(), 1u);
  EXPECT_EQ(p.total(0), 820);
  EXPECT_EQ(self_cost(p, "main"), 20);
  EXPECT_EQ(self_cost(p, "func1", 0, "file1.c"), 100);
  EXPECT_EQ(self_cost(p, "func2", 0, "file2.c"), 700);
  const EdgeSum main_func1 = calls_between(p, "main", "func1");
  EXPECT_EQ(main_func1.count, 1);
  EXPECT_EQ(main_func1.inclusive, 400);
  EXPECT_EQ(calls_between(p, "main", "func2").count, 3);
  EXPECT_EQ(calls_between(p, "main", "func2").inclusive, 400);
  EXPECT_EQ(calls_between(p, "func1", "func2").count, 2);
  EXPECT_EQ(calls_between(p, "func1", "func2").inclusive, 300);
  // The call site and the target are positions: main's line 16 calls func1 at line 50.
  for (const core::CallEdge& e : p.call_graph.calls) {
    if (function_of(p, e.callee) != "func1") continue;
    EXPECT_EQ(p.location(e.caller).lines[0].line, 16);
    EXPECT_EQ(p.location(e.callee).lines[0].line, 50);
    EXPECT_EQ(file_of(p, e.callee), "file1.c");  // no cfi=: the caller's file
  }
  // "positions:" absent means "line".
  EXPECT_TRUE(p.call_graph.has_line);
  EXPECT_FALSE(p.call_graph.has_instr);
}

TEST(CallgrindReader, NameCompressionSharesOneTablePerKind) {
  // fl=(1) defines file 1 for cfi= too; cfn=(2) defines function 2 for fn=; ob= and cob=
  // share objects.
  core::Profile p = read_ok(R"(events: Ir
ob=(1) /bin/app
fl=(1) a.c
fn=(1) main
1 5
cob=(2) /lib/libc.so
cfi=(2) b.c
cfn=(2) helper
calls=1 7
1 30
ob=(2)
fl=(2)
fn=(2)
7 30
cob=(1)
cfi=(1)
cfn=(1)
calls=1 1
7 2
)");
  EXPECT_EQ(self_cost(p, "helper", 0, "b.c"), 30);
  EXPECT_EQ(calls_between(p, "main", "helper").inclusive, 30);
  EXPECT_EQ(calls_between(p, "helper", "main").inclusive, 2);
  // The helper positions, from fn= and from cfn=, are in the same mapping.
  for (size_t i = 0; i < p.sample_count(); ++i) {
    const core::LocationId id = p.stack(i)[0];
    const std::string_view object = p.str(p.mapping(p.location(id).mapping).file);
    EXPECT_EQ(object, function_of(p, id) == "helper" ? "/lib/libc.so" : "/bin/app");
  }
  EXPECT_EQ(p.mappings.size(), 2u);
}

TEST(CallgrindReader, SubpositionCompressionAndCallLinesDoNotMoveTheBase) {
  // Relative to the last *cost* line: the calls= target (+256) and the call's line (+2)
  // must not move the base, so "+1" after them is 0x1001, line 11.
  core::Profile p = read_ok(R"(positions: instr line
events: ticks
fn=f
0x1000 10 1
cfn=g
calls=1 +256 +50
+2 * 7
+1 +1 3
fn=g
0x1100 60 7
)");
  int64_t found = 0;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    const core::Location& l = p.location(p.stack(i)[0]);
    if (l.address == 0x1001) {
      EXPECT_EQ(l.lines[0].line, 11);
      EXPECT_EQ(p.values(i)[0], 3);
      ++found;
    }
  }
  EXPECT_EQ(found, 1);
  ASSERT_EQ(p.call_graph.calls.size(), 1u);
  const core::CallEdge& e = p.call_graph.calls[0];
  EXPECT_EQ(p.location(e.caller).address, 0x1002u);
  EXPECT_EQ(p.location(e.caller).lines[0].line, 10);
  EXPECT_EQ(p.location(e.callee).address, 0x1100u);
  EXPECT_EQ(p.location(e.callee).lines[0].line, 60);
  EXPECT_TRUE(p.call_graph.has_instr);
}

TEST(CallgrindReader, RelativePositionsAndHexAnywhere) {
  core::Profile p = read_ok("events: A\nfn=f\n0x10 1\n+5 2\n-3 4\n* 8\n");
  // Lines 16, 21, 18, 18 (the last two summed).
  std::vector<std::pair<int64_t, int64_t>> got;
  for (size_t i = 0; i < p.sample_count(); ++i)
    got.emplace_back(p.location(p.stack(i)[0]).lines[0].line, p.values(i)[0]);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<std::pair<int64_t, int64_t>>{{16, 1}, {18, 12}, {21, 2}}));
}

TEST(CallgrindReader, FewerCostsAreZerosMoreAreAnError) {
  core::Profile p = read_ok("events: A B C\nfn=f\n1 5\n2 1 2 3\n");
  EXPECT_EQ(p.total(0), 6);
  EXPECT_EQ(p.total(1), 2);
  EXPECT_EQ(p.total(2), 3);
  EXPECT_EQ(read_error("events: A B\nfn=f\n1 2\n2 1 2 3\n"),
            "test.callgrind: line 4: cost line has 3 costs, but the events: line names 2 events");
}

TEST(CallgrindReader, VersionTwoIsRejectedOneAndZeroRead) {
  EXPECT_EQ(read_error("# callgrind format\nversion: 2\nevents: A\n"),
            "test.callgrind: line 2: callgrind format version 2 is not supported: tally reads "
            "version 1 (and 0, its predecessor)");
  EXPECT_EQ(read_error("version: 1\nevents: A\nfn=f\n1 1\n"), "");
  EXPECT_EQ(read_error("version: 0\nevents: A\nfn=f\n1 1\n"), "");
  EXPECT_NE(read_error("version: x\nevents: A\n"), "");
}

TEST(CallgrindReader, ErrorsNameTheLine) {
  EXPECT_EQ(read_error("fn=f\n1 2\n"),
            "test.callgrind: line 2: a cost line before the events: line");
  EXPECT_EQ(read_error("events: A\n1 2\n"),
            "test.callgrind: line 2: a cost line before any fn= line");
  EXPECT_EQ(read_error("events: A\nfn=f\ncfn=g\ncalls=1 5\nfn=h\n"),
            "test.callgrind: line 5: expected the call's cost line after calls= (line 4), "
            "found 'fn=h'");
  EXPECT_EQ(read_error("events: A\nfn=f\ncfn=g\ncalls=1 5\n"),
            "test.callgrind: line 4: the file ends after calls= (line 4) without the call's "
            "cost line");
  EXPECT_EQ(read_error("events: A\nfn=f\ncalls=1 5\n1 1\n"),
            "test.callgrind: line 3: calls= without a cfn= naming the called function");
  EXPECT_EQ(read_error("events: A\nfn=f\n5 1\n-6 1\n"),
            "test.callgrind: line 4: cost line: relative position -6 goes below 0 (the last "
            "cost line is at 5)");
  EXPECT_EQ(read_error("events: A\nfn=f\n1 x\n"),
            "test.callgrind: line 3: cost line expects numbers, found 'x'");
  EXPECT_EQ(read_error("events: A\nfn=f\n1 99999999999999999999\n"),
            "test.callgrind: line 3: cost line has a cost beyond the 64-bit range");
  EXPECT_EQ(read_error("events: A\n%%%\n"),
            "test.callgrind: line 2: expected a cost line, a position such as fn=NAME, or a "
            "header line such as events:, found '%%%'");
  EXPECT_EQ(read_error("desc: only a header\n"),
            "test.callgrind: line 1: no events: line: a callgrind file names its events "
            "before the costs");
  EXPECT_EQ(read_error("events: A A\n"), "test.callgrind: line 1: events: names 'A' twice");
  EXPECT_EQ(read_error("positions: line instr\nevents: A\n"),
            "test.callgrind: line 1: positions: must list instr, bb and line in that order, each once");
  EXPECT_EQ(read_error("positions: instr line\nevents: A\nfn=f\n0x10\n"),
            "test.callgrind: line 4: cost line: expected 2 subpositions (instr line), found ''");
  EXPECT_EQ(read_error("events: A\nsummary: 1 2\n"),
            "test.callgrind: line 2: summary: has 2 costs, but the events: line names 1 event");
}

TEST(CallgrindReader, InheritedEventsAreComputedLongNamesKept) {
  core::Diagnostics d;
  core::Profile p = read_ok(R"(event: Ir : Instruction Fetches
event: Sum = Ir + 2 * Dr : Weighted sum
event: Twice = 2 Sum
events: Ir Dr
fn=f
1 10 3
2 5
)", d);
  ASSERT_EQ(p.sample_types.size(), 4u);
  EXPECT_EQ(p.str(p.sample_types[2].type), "Sum");
  EXPECT_EQ(p.str(p.sample_types[3].type), "Twice");
  EXPECT_EQ(p.total(0), 15);
  EXPECT_EQ(p.total(1), 3);
  EXPECT_EQ(p.total(2), 10 + 2 * 3 + 5);  // per position, then summed
  EXPECT_EQ(p.total(3), 2 * 21);
  ASSERT_EQ(p.call_graph.events.size(), 4u);
  EXPECT_EQ(p.str(p.call_graph.events[0].long_name), "Instruction Fetches");
  EXPECT_EQ(p.call_graph.events[0].formula, "");
  EXPECT_EQ(p.call_graph.events[2].formula, "Ir + 2 * Dr");
  EXPECT_EQ(p.str(p.call_graph.events[2].long_name), "Weighted sum");
  // A formula over an unknown event is dropped with a warning, not an error.
  core::Diagnostics d2;
  core::Profile q = read_ok("event: Bad = Ir + Nope\nevents: Ir\nfn=f\n1 1\n", d2);
  EXPECT_EQ(q.sample_types.size(), 1u);
  EXPECT_TRUE(warned(d2, "inherited event Bad = Ir + Nope is dropped: unknown event 'Nope'"));
}

TEST(CallgrindReader, EventNamesWithUnits) {
  core::Profile p = read_ok("events: cpu(ms) Time_(10ns) Ir\nfn=f\n1 1 2 3\n");
  EXPECT_EQ(p.str(p.sample_types[0].type), "cpu");
  EXPECT_EQ(p.str(p.sample_types[0].unit), "ms");
  EXPECT_EQ(p.str(p.sample_types[1].type), "Time_");
  EXPECT_EQ(p.str(p.sample_types[1].unit), "10ns");
  EXPECT_EQ(p.str(p.sample_types[2].unit), "count");
}

TEST(CallgrindReader, InlinedFilesKeepTheirFunctionsFile) {
  // fi= switches the file of the positions, fe= back; the next fn= starts in the fl= file.
  core::Profile p = read_ok(R"(events: Ir
ob=/bin/a
fl=main.c
fn=work
10 1
fi=header.h
3 20
fe=main.c
11 2
fn=other
5 4
)");
  EXPECT_EQ(self_cost(p, "work", 0, "main.c"), 3);
  EXPECT_EQ(self_cost(p, "work", 0, "header.h"), 20);
  EXPECT_EQ(self_cost(p, "other", 0, "main.c"), 4);
  ASSERT_EQ(p.call_graph.inlined_files.size(), 1u);
  const core::InlinedFile& f = p.call_graph.inlined_files[0];
  EXPECT_EQ(f.object, "/bin/a");
  EXPECT_EQ(f.function, "work");
  EXPECT_EQ(f.file, "header.h");
  EXPECT_EQ(f.home, "main.c");
}

TEST(CallgrindReader, FnResetsTheFileUnlessFiNamesItJustBefore) {
  // valgrind: fi= inside work, then fn=other starts in main.c again. lsprof (no fl=):
  // "fi=x.py" right before fn= is that function's file.
  core::Profile p = read_ok(R"(events: Ticks
fl=main.c
fn=work
fi=header.h
3 20
fn=other
5 4
fi=x.py
fn=py_func
7 9
fi=y.py
fn=py_other
8 1
)");
  EXPECT_EQ(self_cost(p, "other", 0, "main.c"), 4);
  EXPECT_EQ(self_cost(p, "py_func", 0, "x.py"), 9);
  EXPECT_EQ(self_cost(p, "py_other", 0, "y.py"), 1);
  // py_func's file is its own, not inlined code.
  for (const auto& f : p.call_graph.inlined_files) EXPECT_NE(f.function, "py_func");
}

TEST(CallgrindReader, CobAndCfiApplyToTheNextCallOnlyCfnStays) {
  core::Profile p = read_ok(R"(events: I
ob=/bin/a
fl=a.c
fn=f
1 1
cob=/lib/b.so
cfi=b.c
cfn=g
calls=1 10
1 5
calls=2 10
1 6
cfn=h
calls=1 20
1 7
)");
  ASSERT_EQ(p.call_graph.calls.size(), 3u);
  int checked = 0;
  for (const core::CallEdge& e : p.call_graph.calls) {
    const std::string_view object = p.str(p.mapping(p.location(e.callee).mapping).file);
    if (e.inclusive[0] == 5) {
      EXPECT_EQ(function_of(p, e.callee), "g");
      EXPECT_EQ(file_of(p, e.callee), "b.c");
      EXPECT_EQ(object, "/lib/b.so");
      ++checked;
    } else {
      // The second call to g (cfn= stays) and the call to h: in f's object and file.
      EXPECT_EQ(file_of(p, e.callee), "a.c");
      EXPECT_EQ(object, "/bin/a");
      EXPECT_EQ(function_of(p, e.callee), e.inclusive[0] == 6 ? "g" : "h");
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3);
}

TEST(CallgrindReader, CalleeResolvedAtTheCallsLineSoCfnCfiOrderDoesNotMatter) {
  // lsprof-style writers put cfi= after cfn=.
  core::Profile p = read_ok("events: T\nfi=a.py\nfn=f\n1 1\ncfn=g\ncfi=b.py\ncalls=4 9\n1 50\n");
  ASSERT_EQ(p.call_graph.calls.size(), 1u);
  EXPECT_EQ(file_of(p, p.call_graph.calls[0].callee), "b.py");
  EXPECT_EQ(p.call_graph.calls[0].count, 4);
}

TEST(CallgrindReader, JumpsInBothJcndFormsWithTargets) {
  core::Profile p = read_ok(R"(positions: instr line
events: Ir
fl=a.c
fn=f
0x100 5 1
jcnd=3/10 +16 6
* *
+4 * 1
jump=7 0x200 9
+4 *
jfi=b.h
jfn=g
jcnd=10 4 0x300 2
* *
)");
  const auto& jumps = p.call_graph.jumps;
  ASSERT_EQ(jumps.size(), 3u);
  // Slash form: followed/executed. Source 0x100 (the "* *" line), target 0x110.
  EXPECT_TRUE(jumps[0].conditional);
  EXPECT_EQ(jumps[0].followed, 3);
  EXPECT_EQ(jumps[0].executed, 10);
  EXPECT_EQ(p.location(jumps[0].from).address, 0x100u);
  EXPECT_EQ(p.location(jumps[0].to).address, 0x110u);
  EXPECT_EQ(p.location(jumps[0].to).lines[0].line, 6);
  // jump=: unconditional; its source line "+4 *" is relative to the cost line at 0x104.
  EXPECT_FALSE(jumps[1].conditional);
  EXPECT_EQ(jumps[1].executed, 7);
  EXPECT_EQ(jumps[1].followed, 7);
  EXPECT_EQ(p.location(jumps[1].from).address, 0x108u);
  // The spec's space form: executed followed; jfi=/jfn= name the target.
  EXPECT_EQ(jumps[2].executed, 10);
  EXPECT_EQ(jumps[2].followed, 4);
  EXPECT_EQ(function_of(p, jumps[2].to), "g");
  EXPECT_EQ(file_of(p, jumps[2].to), "b.h");
  EXPECT_EQ(function_of(p, jumps[2].from), "f");
  // Jump lines carry no cost: the self costs are the two cost lines.
  EXPECT_EQ(p.total(0), 2);
  EXPECT_NE(read_error("events: A\nfn=f\njump=1 5\n5 3\n"), "");  // costs on a jump's line
}

TEST(CallgrindReader, PartsLabelSamplesAndKeepTheirHeaders) {
  core::Diagnostics d;
  core::Profile p = read_ok(R"(version: 1
creator: test
pid: 42
cmd: ./app -x
part: 1
desc: Trigger: first dump
events: Ir
summary: 10
fl=(1) a.c
fn=(1) f
1 10
totals: 10

part: 2
desc: Trigger: second
events: Ir
fn=(1)
1 3
cfn=(1)
calls=2 1
1 1
totals: 4
)", d);
  const auto& parts = p.call_graph.parts;
  ASSERT_EQ(parts.size(), 2u);
  using Header = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(parts[0].header, (Header{{"pid", "42"}, {"cmd", "./app -x"}, {"part", "1"},
                                     {"desc", "Trigger: first dump"}}));
  EXPECT_EQ(parts[1].header, (Header{{"part", "2"}, {"desc", "Trigger: second"}}));
  EXPECT_EQ(parts[0].summary, std::vector<int64_t>{10});
  EXPECT_EQ(parts[0].totals, std::vector<int64_t>{10});
  EXPECT_EQ(parts[1].totals, std::vector<int64_t>{4});
  // The name (1) of part 1 is known in part 2; each sample says its part.
  ASSERT_EQ(p.sample_count(), 2u);
  for (size_t i = 0; i < p.sample_count(); ++i) {
    ASSERT_EQ(p.labels(i).size(), 1u);
    EXPECT_EQ(p.str(p.labels(i)[0].key), "part");
    EXPECT_EQ(p.values(i)[0], p.labels(i)[0].num == 1 ? 10 : 3);
  }
  ASSERT_EQ(p.call_graph.calls.size(), 1u);
  EXPECT_EQ(p.call_graph.calls[0].part, 1u);
  // totals: 4 while the costs add up to 3.
  EXPECT_TRUE(warned(d, "line 22: totals: says 4 but the costs of part 2 add up to 3"));
  EXPECT_EQ(p.attribute("callgrind.creator"), "test");
}

TEST(CallgrindReader, OnePartHasNoLabels) {
  core::Profile p = read_ok(kSpecExample);
  for (size_t i = 0; i < p.sample_count(); ++i) EXPECT_TRUE(p.labels(i).empty());
}

TEST(CallgrindReader, SkippedLinesAreReported) {
  core::Diagnostics d;
  core::Profile p = read_ok(R"(positions: instr bb line
events: Ir
rec=2
frfn=(spontaneous)
fn=f
bb=0x10 1 5
ln=7
0x10 0x10 7 5
+1:4 * * 1
)", d);
  EXPECT_EQ(p.total(0), 6);
  EXPECT_TRUE(warned(d, "1 rec= line skipped"));
  EXPECT_TRUE(warned(d, "1 frfn= line skipped"));
  EXPECT_TRUE(warned(d, "1 bb= line skipped"));
  EXPECT_TRUE(warned(d, "1 ln= line skipped"));
  EXPECT_TRUE(warned(d, "the bb subposition"));
  EXPECT_TRUE(warned(d, "1 subposition range (a+n, a-b, a:b) read as its first position"));
}

TEST(CallgrindReader, UnknownAndEmptyNames) {
  core::Diagnostics d;
  // "???" is valgrind's unknown file, "" in the model (a function named "???" stays); an
  // empty ob= is no object; a compressed name never defined reads as its id (KCachegrind
  // goes on too).
  core::Profile p = read_ok("events: I\nob=\nfl=???\nfn=???\n0 4\ncob=(8)\ncfn=g\ncalls=1 0\n0 1\n", d);
  EXPECT_EQ(self_cost(p, "???"), 4);
  EXPECT_EQ(file_of(p, p.stack(0)[0]), "");
  EXPECT_EQ(p.location(p.stack(0)[0]).mapping, 0u);
  ASSERT_EQ(p.call_graph.calls.size(), 1u);
  EXPECT_EQ(p.str(p.mapping(p.location(p.call_graph.calls[0].callee).mapping).file), "(8)");
  EXPECT_TRUE(warned(d, "1 reference to compressed names never defined (the first: line 6: cob=(8))"));
}

TEST(CallgrindReader, CommentsBlankLinesAndCrLfAnywhere) {
  core::Profile p = read_ok(
      "# callgrind format\r\n# made by hand\r\n\r\nevents: I\r\n   \r\nfn=f\r\n# inside\r\n 3 4\r\n");
  EXPECT_EQ(p.total(0), 4);
  ASSERT_EQ(p.comments.size(), 2u);
  EXPECT_EQ(p.str(p.comments[0]), "made by hand");
  EXPECT_EQ(p.str(p.comments[1]), "inside");
}

TEST(CallgrindReader, RelativeCostsOfSpeedscopesSamples) {
  // speedscope's subposition-compression sample compresses costs too: "*" = the previous
  // cost line's value, "-300" = previous - 300.
  core::Diagnostics d;
  core::Profile p = read_ok("events: I\nfn=f\n1 400\n* *\n+1 -300\n", d);
  EXPECT_EQ(p.total(0), 400 + 400 + 100);
  EXPECT_TRUE(warned(d, "2 costs written relative to the previous cost line"));
}

TEST(CallgrindReader, RecursionEdgesAreKept) {
  // valgrind writes self-recursion as calls= from a function to itself.
  core::Profile p = read_ok("events: I\nfn=descend\n5 2\ncfn=descend\ncalls=199 5\n6 100\n");
  EXPECT_EQ(calls_between(p, "descend", "descend").count, 199);
  EXPECT_EQ(calls_between(p, "descend", "descend").inclusive, 100);
}

}  // namespace
}  // namespace tally::callgrind::test
