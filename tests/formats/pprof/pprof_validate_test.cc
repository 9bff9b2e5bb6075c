// read_profile refuses every broken cross-reference of a Profile message with a message that
// names the field and the problem. Each case breaks one thing in an otherwise valid message,
// built with libprotobuf's generated classes and serialized by libprotobuf; the reference
// reader (reference_pprof.h, which the fuzzer trusts) must refuse it too.
#include <gtest/gtest.h>

#include <functional>

#include "core/diagnostics.h"
#include "formats/pprof/pprof.h"
#include "pprof_test_helpers.h"
#include "profile_content.h"
#include "reference_pprof.h"

namespace tally::test {
namespace {

using reference::Message;

std::string serialized(const Message& m) { return reference::serialize(m); }

core::Expected<core::Profile> read(const std::string& bytes, const std::string& source) {
  core::Diagnostics diagnostics;
  return pprof::read_profile(bytes_of(bytes), source, diagnostics);
}

// strings: 0 "", 1 samples, 2 count, 3 main, 4 /bin/app, 5 abc123, 6 thread, 7 worker,
// 8 bytes, 9 app.c: ten entries.
Message valid_message() {
  Message m;
  for (const char* s : {"", "samples", "count", "main", "/bin/app", "abc123", "thread", "worker",
                        "bytes", "app.c"})
    m.add_string_table(s);
  auto* type = m.add_sample_type();
  type->set_type(1);
  type->set_unit(2);
  m.mutable_period_type()->set_type(1);
  m.mutable_period_type()->set_unit(2);
  m.add_comment(3);
  auto* mapping = m.add_mapping();
  mapping->set_id(1);
  mapping->set_memory_start(0x1000);
  mapping->set_memory_limit(0x2000);
  mapping->set_filename(4);
  mapping->set_build_id(5);
  auto* function = m.add_function();
  function->set_id(1);
  function->set_name(3);
  function->set_system_name(3);
  function->set_filename(9);
  auto* location = m.add_location();
  location->set_id(1);
  location->set_mapping_id(1);
  location->set_address(0x1234);
  location->add_line()->set_function_id(1);
  auto* sample = m.add_sample();
  sample->add_location_id(1);
  sample->add_value(7);
  auto* str_label = sample->add_label();
  str_label->set_key(6);
  str_label->set_str(7);
  auto* num_label = sample->add_label();
  num_label->set_key(8);
  num_label->set_num(4096);
  num_label->set_num_unit(8);
  return m;
}

struct Case {
  std::string name;
  std::function<void(Message&)> breaks;
  std::vector<std::string> message_says;  // substrings of the error message
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// The same break with index 99 (past the end of 10 strings) and -1.
std::vector<Case> string_index_cases() {
  struct Field {
    std::string name;       // as the message should name it
    std::function<void(Message&, int64_t)> set;
  };
  const std::vector<Field> fields = {
      {"sample_type 1 type", [](Message& m, int64_t i) { m.mutable_sample_type(0)->set_type(i); }},
      {"sample_type 1 unit", [](Message& m, int64_t i) { m.mutable_sample_type(0)->set_unit(i); }},
      {"period_type type", [](Message& m, int64_t i) { m.mutable_period_type()->set_type(i); }},
      {"period_type unit", [](Message& m, int64_t i) { m.mutable_period_type()->set_unit(i); }},
      {"drop_frames", [](Message& m, int64_t i) { m.set_drop_frames(i); }},
      {"keep_frames", [](Message& m, int64_t i) { m.set_keep_frames(i); }},
      {"default_sample_type", [](Message& m, int64_t i) { m.set_default_sample_type(i); }},
      {"doc_url", [](Message& m, int64_t i) { m.set_doc_url(i); }},
      {"comment 2", [](Message& m, int64_t i) { m.add_comment(i); }},
      {"mapping 1 filename", [](Message& m, int64_t i) { m.mutable_mapping(0)->set_filename(i); }},
      {"mapping 1 build_id", [](Message& m, int64_t i) { m.mutable_mapping(0)->set_build_id(i); }},
      {"function 1 name", [](Message& m, int64_t i) { m.mutable_function(0)->set_name(i); }},
      {"function 1 system_name",
       [](Message& m, int64_t i) { m.mutable_function(0)->set_system_name(i); }},
      {"function 1 filename", [](Message& m, int64_t i) { m.mutable_function(0)->set_filename(i); }},
      {"sample 1 label 1 key",
       [](Message& m, int64_t i) { m.mutable_sample(0)->mutable_label(0)->set_key(i); }},
      {"sample 1 label 1 str",
       [](Message& m, int64_t i) { m.mutable_sample(0)->mutable_label(0)->set_str(i); }},
      {"sample 1 label 2 num_unit",
       [](Message& m, int64_t i) { m.mutable_sample(0)->mutable_label(1)->set_num_unit(i); }},
  };
  std::vector<Case> cases;
  for (const Field& f : fields) {
    cases.push_back({f.name + " = 99", [f](Message& m) { f.set(m, 99); },
                     {f.name, "string 99", "10 entries"}});
    cases.push_back({f.name + " = -1", [f](Message& m) { f.set(m, -1); },
                     {f.name, "string -1", "10 entries"}});
  }
  // One past the end: the smallest out-of-range index.
  cases.push_back({"function name = 10", [](Message& m) { m.mutable_function(0)->set_name(10); },
                   {"function 1 name", "string 10", "10 entries"}});
  return cases;
}

std::vector<Case> reference_cases() {
  return {
      {"string_table[0] not empty", [](Message& m) { m.set_string_table(0, "oops"); },
       {"string_table[0]", "oops", "must be empty"}},
      {"duplicate mapping id",
       [](Message& m) { m.add_mapping()->set_id(1); }, {"two mappings", "id 1"}},
      {"duplicate location id",
       [](Message& m) { m.add_location()->set_id(1); }, {"two locations", "id 1"}},
      {"duplicate function id",
       [](Message& m) { m.add_function()->set_id(1); }, {"two functions", "id 1"}},
      {"mapping id 0", [](Message& m) { m.add_mapping(); }, {"mapping #2", "id 0", "nonzero"}},
      {"location id 0", [](Message& m) { m.mutable_location(0)->set_id(0); },
       {"location #1", "id 0", "nonzero"}},
      {"function id 0", [](Message& m) { m.add_function(); }, {"function #2", "id 0", "nonzero"}},
      {"sample references a missing location",
       [](Message& m) { m.mutable_sample(0)->add_location_id(42); },
       {"sample 1", "location 42", "does not exist"}},
      {"location references a missing mapping",
       [](Message& m) { m.mutable_location(0)->set_mapping_id(9); },
       {"location 1", "mapping 9", "does not exist"}},
      {"location references a missing function",
       [](Message& m) { m.mutable_location(0)->add_line()->set_function_id(5); },
       {"location 1", "function 5", "does not exist"}},
      {"sample with too many values", [](Message& m) { m.mutable_sample(0)->add_value(1); },
       {"sample 1", "2 values", "1 sample types"}},
      {"sample with no value", [](Message& m) { m.mutable_sample(0)->clear_value(); },
       {"sample 1", "0 values", "1 sample types"}},
  };
}

class PprofValidate : public ::testing::TestWithParam<Case> {};

TEST(PprofValidate, TheBaseMessageIsValid) {
  auto p = read(serialized(valid_message()), "base.pb");
  ASSERT_TRUE(p) << p.error().message;
  auto expected = reference::read_profile(serialized(valid_message()));
  ASSERT_TRUE(expected) << expected.error().message;
  EXPECT_EQ(profile_content(*p), profile_content(*expected));
  // What the base message says, resolved by hand from valid_message().
  ASSERT_EQ(p->sample_count(), 1u);
  EXPECT_EQ(p->values(0)[0], 7);
  EXPECT_EQ(stack_names(*p, 0), "main");
  EXPECT_EQ(p->str(p->mapping(p->location(p->stack(0)[0]).mapping).build_id), "abc123");
}

TEST_P(PprofValidate, RefusedWithAMessageNamingTheProblem) {
  Message m = valid_message();
  GetParam().breaks(m);
  auto p = read(serialized(m), "broken.pb");
  ASSERT_FALSE(p) << GetParam().name << " was accepted";
  EXPECT_EQ(p.error().message.rfind("broken.pb: ", 0), 0u) << p.error().message;
  EXPECT_EQ(p.error().kind, core::ErrorKind::invalid_input);
  for (const std::string& part : GetParam().message_says)
    EXPECT_NE(p.error().message.find(part), std::string::npos)
        << "\"" << p.error().message << "\" does not say \"" << part << "\"";
}

TEST_P(PprofValidate, RefusedGzippedWithTheSameMessage) {
  Message m = valid_message();
  GetParam().breaks(m);
  auto plain = read(serialized(m), "broken.pb.gz");
  auto gz = read(gzip_bytes(serialized(m)), "broken.pb.gz");
  ASSERT_FALSE(gz) << GetParam().name << " was accepted";
  ASSERT_FALSE(plain);
  EXPECT_EQ(gz.error().message, plain.error().message);
}

TEST_P(PprofValidate, TheReferenceRefusesItToo) {
  // The fuzzer compares read_profile's verdicts with the reference's: both must see it.
  Message m = valid_message();
  GetParam().breaks(m);
  EXPECT_FALSE(reference::to_profile(m)) << GetParam().name;
  EXPECT_TRUE(reference::to_profile(valid_message()));
}

std::vector<Case> all_cases() {
  std::vector<Case> cases = string_index_cases();
  for (Case& c : reference_cases()) cases.push_back(std::move(c));
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Breaks, PprofValidate, ::testing::ValuesIn(all_cases()),
                         [](const auto& p) { return test_name(p.param.name); });

// Reads `m`, which must be valid, and checks the result against the reference reader.
core::Profile read_valid(const Message& m) {
  auto p = read(serialized(m), "valid.pb");
  if (!p) {
    ADD_FAILURE() << p.error().message;
    return {};
  }
  auto expected = reference::read_profile(serialized(m));
  if (!expected) ADD_FAILURE() << "the reference refuses it: " << expected.error().message;
  else EXPECT_EQ(profile_content(*p), profile_content(*expected));
  return std::move(*p);
}

TEST(PprofValidate, IdsNeedNotBeDenseOrOrdered) {
  // pprof ids are any nonzero numbers: references by large, unordered ids are fine.
  Message m = valid_message();
  m.mutable_mapping(0)->set_id(1ull << 40);
  m.mutable_location(0)->set_mapping_id(1ull << 40);
  m.mutable_function(0)->set_id(77);
  m.mutable_location(0)->mutable_line(0)->set_function_id(77);
  m.mutable_location(0)->set_id(uint64_t(-1));
  m.mutable_sample(0)->set_location_id(0, uint64_t(-1));
  core::Profile p = read_valid(m);
  ASSERT_EQ(p.sample_count(), 1u);
  EXPECT_EQ(stack_names(p, 0), "main");
  const core::Location& l = p.location(p.stack(0)[0]);
  EXPECT_EQ(l.address, 0x1234u);
  EXPECT_EQ(p.str(p.mapping(l.mapping).file), "/bin/app");
}

TEST(PprofValidate, ZeroReferencesMeanNone) {
  // mapping_id 0 and function_id 0 are "unknown", not references to a missing id 0.
  Message m = valid_message();
  m.mutable_location(0)->set_mapping_id(0);
  m.mutable_location(0)->mutable_line(0)->set_function_id(0);
  core::Profile p = read_valid(m);
  ASSERT_EQ(p.sample_count(), 1u);
  const core::Location& l = p.location(p.stack(0)[0]);
  EXPECT_EQ(l.mapping, 0u);
  ASSERT_EQ(l.lines.size(), 1u);
  EXPECT_EQ(l.lines[0].function, 0u);
}

TEST(PprofValidate, AnEmptyStringTableAllowsOnlyIndexZero) {
  // Index 0 is "" with or without a table; index 1 needs a table of two.
  Message m;
  m.add_sample_type();
  m.add_sample()->add_value(3);
  core::Profile p = read_valid(m);
  EXPECT_EQ(p.total(0), 3);
  m.mutable_sample_type(0)->set_unit(1);
  auto refused = read(serialized(m), "empty-table.pb");
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("sample_type 1 unit refers to string 1, but the string "
                                         "table has 0 entries"),
            std::string::npos)
      << refused.error().message;
}

}  // namespace
}  // namespace tally::test
