// core::merge_profiles: samples of several profiles summed where stack and labels agree;
// mappings of one file unified across inputs, with the addresses of later inputs relocated
// to the first input's load address; header data combined as google/pprof's merge does.
// Profiles are built by hand here and compared through names and addresses, never ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/merge.h"
#include "core/profile.h"

namespace tally::core {
namespace {

// Builds a profile from file names, addresses and function names.
class Builder {
 public:
  using Types = std::vector<std::pair<std::string, std::string>>;
  Builder() : Builder(Types{{"samples", "count"}, {"cpu", "nanoseconds"}}) {}
  explicit Builder(const Types& types) {
    for (const auto& [type, unit] : types) p.sample_types.push_back(p.value_type(type, unit));
  }
  MappingId mapping(const std::string& file, uint64_t start, uint64_t limit, uint64_t offset = 0,
                    const std::string& build_id = "") {
    return p.add_mapping({.start = start, .limit = limit, .offset = offset, .file = p.intern(file),
                          .build_id = p.intern(build_id)});
  }
  LocationId location(MappingId mapping, uint64_t address, const std::string& function) {
    FunctionId f = p.add_function({.name = p.intern(function), .system_name = p.intern(function)});
    return p.add_location({.mapping = mapping, .address = address, .lines = {{.function = f, .line = 0, .column = 0}}});
  }
  Builder& sample(std::vector<LocationId> stack, std::vector<int64_t> values,
                  std::vector<std::pair<std::string, std::string>> labels = {}) {
    std::vector<Label> ls;
    for (const auto& [k, v] : labels) ls.push_back({.key = p.intern(k), .str = p.intern(v)});
    p.add_sample(stack, values, ls);
    return *this;
  }
  Profile p;
};

// "file+0xoffset fn" per frame, leaf first, then labels: a stack named by what it means.
std::string frame(const Profile& p, LocationId id) {
  const Location& l = p.location(id);
  char buf[64];
  std::string file = l.mapping ? std::string(p.str(p.mapping(l.mapping).file)) : "?";
  std::snprintf(buf, sizeof buf, "@0x%llx ", static_cast<unsigned long long>(l.address));
  return file + buf + (l.lines.empty() ? "?" : std::string(p.str(p.function(l.lines[0].function).name)));
}

std::map<std::string, std::vector<int64_t>> samples_by_stack(const Profile& p) {
  std::map<std::string, std::vector<int64_t>> out;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    std::string key;
    for (LocationId id : p.stack(i)) key += frame(p, id) + "; ";
    for (const Label& l : p.labels(i))
      key += "[" + std::string(p.str(l.key)) + "=" + std::string(p.str(l.str)) + "]";
    auto v = p.values(i);
    auto [it, inserted] = out.emplace(key, std::vector<int64_t>(v.begin(), v.end()));
    EXPECT_TRUE(inserted) << "two samples with the same stack and labels: " << key;
  }
  return out;
}

Profile merge_ok(const std::vector<const Profile*>& inputs, Diagnostics& diagnostics) {
  auto merged = merge_profiles(inputs, diagnostics);
  if (!merged) throw std::runtime_error(merged.error().message);
  return std::move(merged).value();
}

bool any_warning_has(const Diagnostics& d, const std::vector<std::string>& parts) {
  for (const std::string& w : d.warnings()) {
    bool all = true;
    for (const std::string& part : parts) all = all && w.find(part) != std::string::npos;
    if (all) return true;
  }
  return false;
}

TEST(MergeProfiles, SumsIdenticalStacksAcrossInputs) {
  Builder a;
  MappingId app = a.mapping("/bin/app", 0x400000, 0x500000);
  LocationId f = a.location(app, 0x401000, "f"), g = a.location(app, 0x402000, "g");
  a.sample({f, g}, {3, 30}).sample({g}, {1, 10});
  Builder b;
  MappingId app_b = b.mapping("/bin/app", 0x400000, 0x500000);
  LocationId g_b = b.location(app_b, 0x402000, "g"), f_b = b.location(app_b, 0x401000, "f");
  b.sample({f_b}, {2, 20}).sample({f_b, g_b}, {4, 40});

  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p}, d);
  EXPECT_EQ(samples_by_stack(m), (std::map<std::string, std::vector<int64_t>>{
                                     {"/bin/app@0x401000 f; /bin/app@0x402000 g; ", {7, 70}},
                                     {"/bin/app@0x402000 g; ", {1, 10}},
                                     {"/bin/app@0x401000 f; ", {2, 20}}}));
  EXPECT_EQ(m.total(0), 10);
  EXPECT_EQ(m.mappings.size(), 1u);
  EXPECT_EQ(m.locations.size(), 2u);
  EXPECT_EQ(m.functions.size(), 2u);
  EXPECT_TRUE(d.empty()) << d.warnings().front();
}

TEST(MergeProfiles, LabelsKeepSamplesApart) {
  Builder a;
  LocationId f = a.location(0, 0x10, "f");
  a.sample({f}, {1, 1}, {{"thread", "1"}}).sample({f}, {2, 2}, {{"thread", "2"}});
  Builder b;
  LocationId f_b = b.location(0, 0x10, "f");
  b.sample({f_b}, {4, 4}, {{"thread", "2"}});
  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p}, d);
  EXPECT_EQ(samples_by_stack(m), (std::map<std::string, std::vector<int64_t>>{
                                     {"?@0x10 f; [thread=1]", {1, 1}},
                                     {"?@0x10 f; [thread=2]", {6, 6}}}));
}

TEST(MergeProfiles, RefusesDifferentSampleTypes) {
  Builder a;
  Builder fewer(Builder::Types{{"samples", "count"}});
  Builder other_unit(Builder::Types{{"samples", "count"}, {"cpu", "microseconds"}});
  for (const Profile* other : {&fewer.p, &other_unit.p}) {
    Diagnostics d;
    auto merged = merge_profiles({&a.p, &a.p, other}, d);
    ASSERT_FALSE(merged);
    EXPECT_EQ(merged.error().kind, ErrorKind::unsupported);
    const std::string& msg = merged.error().message;
    EXPECT_NE(msg.find("different sample types"), std::string::npos) << msg;
    EXPECT_NE(msg.find("samples/count, cpu/nanoseconds"), std::string::npos) << msg;
    EXPECT_NE(msg.find("profile 3"), std::string::npos) << msg;
  }
}

TEST(MergeProfiles, RelocatesTheSameFileLoadedAtDifferentStarts) {
  // Two runs of one PIE binary under ASLR: the same code, other load addresses.
  Builder a;
  MappingId app = a.mapping("/bin/app", 0x400000, 0x500000, 0x1000);
  MappingId libc = a.mapping("/lib/libc.so.6", 0x7f0000000000, 0x7f0000200000);
  a.sample({a.location(app, 0x401234, "leaf"), a.location(libc, 0x7f0000005678, "start")}, {1, 10});
  Builder b;
  MappingId libc_b = b.mapping("/lib/libc.so.6", 0x7fff10000000, 0x7fff10200000);
  MappingId app_b = b.mapping("/bin/app", 0x555555554000, 0x555555654000, 0x1000);
  b.sample({b.location(app_b, 0x555555555234, "leaf"), b.location(libc_b, 0x7fff10005678, "start")}, {2, 20});
  b.sample({b.location(app_b, 0x555555555300, "other")}, {5, 50});

  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p}, d);
  ASSERT_EQ(m.mappings.size(), 2u) << "one mapping per file";
  EXPECT_EQ(samples_by_stack(m),
            (std::map<std::string, std::vector<int64_t>>{
                {"/bin/app@0x401234 leaf; /lib/libc.so.6@0x7f0000005678 start; ", {3, 30}},
                {"/bin/app@0x401300 other; ", {5, 50}}}));
  // Every address lies inside its (first input's) mapping.
  for (const Location& l : m.locations) {
    const Mapping& mp = m.mapping(l.mapping);
    EXPECT_GE(l.address, mp.start);
    EXPECT_LT(l.address, mp.limit);
  }
  EXPECT_EQ(m.mapping(1).start, 0x400000u) << "the first input's main binary stays first";
  EXPECT_EQ(m.mapping(1).offset, 0x1000u);
}

TEST(MergeProfiles, SamePathWithOtherBuildIdIsAnotherFile) {
  Builder a;
  a.sample({a.location(a.mapping("/bin/app", 0x400000, 0x500000, 0, "aaaa"), 0x401000, "f")}, {1, 1});
  Builder b;
  b.sample({b.location(b.mapping("/bin/app", 0x600000, 0x700000, 0, "bbbb"), 0x601000, "f")}, {1, 1});
  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p}, d);
  EXPECT_EQ(m.mappings.size(), 2u);
  EXPECT_EQ(samples_by_stack(m), (std::map<std::string, std::vector<int64_t>>{
                                     {"/bin/app@0x401000 f; ", {1, 1}},
                                     {"/bin/app@0x601000 f; ", {1, 1}}}));
}

TEST(MergeProfiles, EarliestTimeSummedDurationLargestPeriod) {
  Builder a, b, c;
  a.p.time_nanos = 2000, a.p.duration_nanos = 10, a.p.period = 100;
  b.p.time_nanos = 1000, b.p.duration_nanos = 5, b.p.period = 300;
  c.p.time_nanos = 0, c.p.duration_nanos = 1, c.p.period = 300;  // time unknown
  for (Builder* x : {&a, &b, &c}) x->p.period_type = x->p.value_type("cpu", "nanoseconds");
  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p, &c.p}, d);
  EXPECT_EQ(m.time_nanos, 1000);
  EXPECT_EQ(m.duration_nanos, 16);
  EXPECT_EQ(m.period, 300);
  EXPECT_EQ(m.str(m.period_type.type), "cpu");
  EXPECT_TRUE(any_warning_has(d, {"period", "100", "300"})) << (d.empty() ? "" : d.warnings()[0]);
}

TEST(MergeProfiles, NoWarningWhenTheHeadersAgree) {
  Builder a, b;
  for (Builder* x : {&a, &b}) {
    x->p.period = 10'000'000;
    x->p.period_type = x->p.value_type("cpu", "nanoseconds");
    x->p.attributes = {{"gperf.format", "legacy"}};
  }
  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p}, d);
  EXPECT_EQ(m.period, 10'000'000);
  EXPECT_EQ(m.attribute("gperf.format"), "legacy");
  EXPECT_TRUE(d.empty()) << d.warnings().front();
}

TEST(MergeProfiles, OtherPeriodTypeIsReported) {
  Builder a, b;
  a.p.period_type = a.p.value_type("cpu", "nanoseconds");
  b.p.period_type = b.p.value_type("cycles", "count");
  Diagnostics d;
  merge_ok({&a.p, &b.p}, d);
  EXPECT_TRUE(any_warning_has(d, {"period type", "cycles/count", "cpu/nanoseconds"}));
}

TEST(MergeProfiles, AttributesKeptOnlyWhereAllInputsAgree) {
  Builder a, b, c;
  a.p.attributes = {{"same", "v"}, {"differs", "x"}};
  b.p.attributes = {{"same", "v"}, {"differs", "y"}};
  c.p.attributes = {{"differs", "x"}, {"same", "v"}, {"only_in_last", "z"}};
  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p, &c.p}, d);
  EXPECT_EQ(m.attributes, (std::vector<std::pair<std::string, std::string>>{{"same", "v"}}));
  EXPECT_TRUE(any_warning_has(d, {"differs"}));
  EXPECT_TRUE(any_warning_has(d, {"only_in_last"})) << "dropped data is always reported";
  EXPECT_FALSE(any_warning_has(d, {"same"}));
}

TEST(MergeProfiles, CommentsOfAllInputsOnceEach) {
  Builder a, b;
  a.p.comments = {a.p.intern("x"), a.p.intern("y")};
  b.p.comments = {b.p.intern("y"), b.p.intern("z")};
  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p}, d);
  std::vector<std::string> comments;
  for (StringId c : m.comments) comments.emplace_back(m.str(c));
  EXPECT_EQ(comments, (std::vector<std::string>{"x", "y", "z"}));
}

TEST(MergeProfiles, OneInputIsItself) {
  Builder a;
  MappingId app = a.mapping("/bin/app", 0x400000, 0x500000);
  LocationId f = a.location(app, 0x401000, "f");
  a.sample({f}, {1, 1}).sample({f}, {2, 2}).sample({f, f}, {0, 0});
  a.p.default_sample_type = a.p.intern("cpu");
  Diagnostics d;
  Profile m = merge_ok({&a.p}, d);
  EXPECT_EQ(samples_by_stack(m), (std::map<std::string, std::vector<int64_t>>{
                                     {"/bin/app@0x401000 f; ", {3, 3}}}))
      << "identical samples summed, all-zero ones dropped (pprof's merge does both)";
  EXPECT_EQ(m.str(m.default_sample_type), "cpu");
  EXPECT_TRUE(d.empty());
}

TEST(MergeProfiles, NoInputIsAnEmptyProfile) {
  Diagnostics d;
  Profile m = merge_ok({}, d);
  EXPECT_EQ(m.sample_count(), 0u);
  EXPECT_TRUE(m.sample_types.empty());
}

// A call graph (as callgrind reads one): main's call site calls work; work has self cost.
Builder call_graph(int64_t self, int64_t calls, int64_t inclusive, uint64_t load = 0x1000) {
  Builder b(Builder::Types{{"Ir", "count"}});
  MappingId m = b.mapping("/bin/prog", load, load + 0x1000);
  LocationId site = b.location(m, load + 0x10, "main");
  LocationId work = b.location(m, load + 0x40, "work");
  b.sample({work}, {self});
  b.p.call_graph.present = true;
  b.p.call_graph.parts.push_back({});
  b.p.call_graph.calls.push_back({.caller = site, .callee = work, .count = calls, .part = 0,
                                  .inclusive = {inclusive}});
  b.p.call_graph.jumps.push_back({.from = work, .to = work, .executed = calls, .followed = calls,
                                  .conditional = true, .part = 0});
  return b;
}

TEST(MergeProfiles, CallGraphsSumSelfCostsEdgesAndJumps) {
  Builder a = call_graph(100, 2, 100), b = call_graph(50, 3, 70, 0x9000);
  Diagnostics d;
  Profile m = merge_ok({&a.p, &b.p}, d);
  ASSERT_TRUE(m.call_graph.present);
  ASSERT_EQ(m.sample_count(), 1u);  // the same position in both, relocated
  EXPECT_EQ(m.values(0)[0], 150);
  ASSERT_EQ(m.call_graph.calls.size(), 1u);
  const CallEdge& e = m.call_graph.calls[0];
  EXPECT_EQ(e.count, 5);
  EXPECT_EQ(e.inclusive, std::vector<int64_t>{170});
  EXPECT_EQ(frame(m, e.caller), "/bin/prog@0x1010 main");
  EXPECT_EQ(frame(m, e.callee), "/bin/prog@0x1040 work");
  ASSERT_EQ(m.call_graph.jumps.size(), 1u);
  EXPECT_EQ(m.call_graph.jumps[0].executed, 5);
  EXPECT_EQ(m.call_graph.parts.size(), 1u);
}

TEST(MergeProfiles, ACallGraphAndStacksAreRefused) {
  Builder a = call_graph(100, 2, 100);
  Builder b(Builder::Types{{"Ir", "count"}});
  MappingId m = b.mapping("/bin/prog", 0x1000, 0x2000);
  b.sample({b.location(m, 0x1040, "work")}, {7});
  Diagnostics d;
  auto merged = merge_profiles({&a.p, &b.p}, d);
  ASSERT_FALSE(merged);
  EXPECT_NE(merged.error().message.find("call-graph"), std::string::npos) << merged.error().message;
}

}  // namespace
}  // namespace tally::core
