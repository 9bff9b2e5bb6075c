// `tally push` end to end against receiver.py (Pyroscope's push API decoded by
// python3-protobuf from proto/pyroscope, with the real pprof reading what arrived; OTLP
// decoded from proto/otlp and compared with pprof's own -top and -raw of the fixtures).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "receiver.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

#define REQUIRE_RECEIVER()                                                       \
  do {                                                                           \
    if (debian_python3().empty() || find_program("protoc").empty())              \
      TALLY_SKIP_OR_FAIL_IN_CI("python3 (with python3-protobuf) or protoc missing"); \
  } while (0)

std::string fixture(const std::string& name) { return shared("fixtures/" + name); }

RunResult pprof_top(const std::string& profile) {
  // -symbolize=none: what pprof shows must come from the pushed profile itself.
  return run({find_pprof(), "-top", "-symbolize=none", profile},
             RunOptions{.environment = {{"PPROF_BINARY_PATH", "/nonexistent"}},
                        .timeout_seconds = 120});
}

TEST(PushCommand, FixtureArrivesLabelledAndPprofReadsTheSameProfile) {
  REQUIRE_RECEIVER();
  const std::string pprof = find_pprof();
  TALLY_REQUIRE_PEER(pprof, "pprof");
  TempDir dir;
  Receiver receiver(dir.file("store"));
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  write_bytes(dir.file("token"), "s3cret-token\n");
  RunResult pushed = run_tally({"push", fixture("gperf/deep.prof"), "--binary-path",
                                fixture("bin"), "--to", receiver.url(), "--label", "env=ci",
                                "--label", "team=perf", "--push-header", "X-Scope-OrgID: tenant-7",
                                "--push-token-file", dir.file("token")});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.describe();

  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& headers = requests[0]["headers"];
  EXPECT_EQ(headers["X-Scope-OrgID"], "tenant-7");
  EXPECT_EQ(headers["Authorization"], "Bearer s3cret-token");
  EXPECT_EQ(headers["Content-Encoding"], "gzip");
  ASSERT_EQ(requests[0]["series"].size(), 1u);
  const auto& series = requests[0]["series"][0];
  EXPECT_EQ(series["labels"]["__name__"], "process_cpu");
  EXPECT_EQ(series["labels"]["service_name"], "deep");  // the profile's executable
  EXPECT_EQ(series["labels"]["env"], "ci");
  EXPECT_EQ(series["labels"]["team"], "perf");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_EQ(series["labels"]["hostname"], host);
  EXPECT_FALSE(series["labels"].contains("pid"));
  ASSERT_EQ(series["ids"].size(), 1u);
  const std::string id = series["ids"][0];
  EXPECT_EQ(id.size(), 36u);
  EXPECT_EQ(id[14], '4') << id;  // a version 4 UUID

  // The real pprof reads the pushed profile; names, flat and cum are those pprof itself
  // gives for the fixture with its binary.
  const auto files = receiver.profiles();
  ASSERT_EQ(files.size(), 1u);
  RunResult top = pprof_top(files[0]);
  ASSERT_EQ(top.exit_code, 0) << top.describe();
  EXPECT_EQ(top_rows(top.out), top_rows(read_text(fixture("gperf/deep.pprof-top.txt"))))
      << top.out;
}

TEST(PushCommand, ServiceFlagAndOneSeriesPerFileEachWithItsOwnId) {
  REQUIRE_RECEIVER();
  TempDir dir;
  Receiver receiver(dir.file("store"));
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  RunResult pushed = run_tally({"push", fixture("gperf/deep.prof"), fixture("gperf/deep.pb.gz"),
                                "--binary-path", fixture("bin"), "--to", receiver.url() + "/",
                                "--service", "checkout", "--label", "service_name=ignored-no",
                                "--label", "service_name=shop"});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.describe();
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 1u);
  ASSERT_EQ(requests[0]["series"].size(), 2u);
  // A --label of a built-in name replaces it: the last one given wins.
  for (const auto& series : requests[0]["series"]) EXPECT_EQ(series["labels"]["service_name"], "shop");
  EXPECT_NE(requests[0]["series"][0]["ids"][0], requests[0]["series"][1]["ids"][0]);
  EXPECT_EQ(receiver.profiles().size(), 2u);
}

TEST(PushCommand, ConnectErrorIsLoggedWithTheServersMessageAndNotRetried) {
  REQUIRE_RECEIVER();
  TempDir dir;
  Receiver receiver(dir.file("store"), {.status = 400});
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  RunResult pushed = run_tally({"push", fixture("gperf/deep.prof"), "--to", receiver.url(),
                                "--symbolize=none"});
  EXPECT_EQ(pushed.exit_code, 4) << pushed.describe();
  EXPECT_NE(pushed.err.find("HTTP 400: invalid_argument: test store says no"), std::string::npos)
      << pushed.err;
  EXPECT_EQ(text_lines(read_text(dir.file("store/refused"))).size(), 1u);  // one try only
}

TEST(PushCommand, OverloadedStoreIsRetriedWithBackoffThenGivenUp) {
  REQUIRE_RECEIVER();
  TempDir dir;
  Receiver receiver(dir.file("store"), {.status = 503});
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  RunResult pushed = run_tally({"push", fixture("gperf/deep.prof"), "--to", receiver.url(),
                                "--symbolize=none", "--attempts", "3"});
  EXPECT_EQ(pushed.exit_code, 3) << pushed.describe();
  EXPECT_EQ(text_lines(read_text(dir.file("store/refused"))).size(), 3u);
  // Two waits, the first in [0.5, 1] s, the second in [1, 2] s.
  EXPECT_GE(pushed.wall_seconds, 1.5);
  EXPECT_NE(pushed.err.find("HTTP 503"), std::string::npos) << pushed.err;
}

// pprof -top's "163ms", "1.50s", "0" in nanoseconds.
int64_t pprof_nanoseconds(const std::string& text) {
  const size_t digits = text.find_first_not_of("0123456789.");
  const double number = std::stod(text.substr(0, digits));
  const std::string unit = digits == std::string::npos ? "" : text.substr(digits);
  const double scale = unit == "s" ? 1e9 : unit == "ms" ? 1e6 : unit == "us" ? 1e3 : 1;
  return std::llround(number * scale);
}

// From pprof -raw's text: the first value column's total over the Samples rows, and Period.
struct RawFacts {
  int64_t first_values = 0, period = 0;
};
RawFacts raw_facts(const std::string& raw) {
  RawFacts facts;
  bool in_samples = false;
  for (const std::string& line : text_lines(raw)) {
    if (line.starts_with("Period: ")) facts.period = std::stoll(line.substr(8));
    if (line.starts_with("Locations")) in_samples = false;
    if (in_samples && line.find(':') != std::string::npos) facts.first_values += std::stoll(line);
    if (line.starts_with("samples/count")) in_samples = true;
  }
  return facts;
}

// The OTLP profile of `sample_type` in a resource of receiver.py's summary.
const nlohmann::json* otlp_profile(const nlohmann::json& resource, const std::string& sample_type) {
  for (const auto& scope : resource["scopes"])
    for (const auto& profile : scope["profiles"])
      if (profile["sample_type"] == sample_type) return &profile;
  return nullptr;
}

TEST(PushCommand, OtlpExportDecodesToTheFixturesNumbers) {
  REQUIRE_RECEIVER();
  TempDir dir;
  Receiver receiver(dir.file("store"), {.otlp = true});
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  RunResult pushed = run_tally({"push", "--format", "otlp", fixture("gperf/deep.prof"),
                                fixture("gperf/shlib.prof"), "--binary-path", fixture("bin"),
                                "--to", receiver.url(), "--label", "env=ci",
                                "--push-header", "X-Scope-OrgID: tenant-7"});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.describe();
  EXPECT_NE(pushed.err.find("/v1development/profiles"), std::string::npos) << pushed.err;

  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 1u) << read_text(dir.file("store/receiver.log"));
  const nlohmann::json& request = requests[0];
  // receiver.py checked the dictionary's rules: zero entries, indices in range, no
  // duplicate or unreferenced entries, one value per sample.
  EXPECT_TRUE(request["problems"].empty()) << request["problems"].dump();
  EXPECT_EQ(request["headers"]["Content-Type"], "application/x-protobuf");
  EXPECT_EQ(request["headers"]["X-Scope-OrgID"], "tenant-7");
  char host[256] = {};
  gethostname(host, sizeof host - 1);

  // One resource per file, named after its executable; per resource one Profile per sample
  // type. The numbers are those of pprof's own -top and -raw of the fixtures.
  const std::vector<std::string> names = {"deep", "shlib"};
  const std::vector<std::string> services = {"deep", "shlib_main"};
  ASSERT_EQ(request["resources"].size(), 2u) << request.dump();
  std::set<std::string> ids;
  for (size_t r = 0; r < 2; ++r) {
    SCOPED_TRACE(names[r]);
    const nlohmann::json& resource = request["resources"][r];
    EXPECT_EQ(resource["attributes"]["service.name"], services[r]);
    EXPECT_EQ(resource["attributes"]["host.name"], host);
    EXPECT_EQ(resource["attributes"]["env"], "ci");
    EXPECT_EQ(resource["attributes"].size(), 3u);
    ASSERT_EQ(resource["scopes"].size(), 1u);
    EXPECT_EQ(resource["scopes"][0]["name"], "tally");
    EXPECT_EQ(resource["scopes"][0]["profiles"].size(), 2u);
    const nlohmann::json* cpu = otlp_profile(resource, "cpu/nanoseconds");
    const nlohmann::json* count = otlp_profile(resource, "samples/count");
    ASSERT_TRUE(cpu != nullptr && count != nullptr) << resource.dump();

    const RawFacts raw = raw_facts(read_text(fixture("gperf/" + names[r] + ".pb.raw.txt")));
    ASSERT_GT(raw.first_values, 0);
    EXPECT_EQ((*count)["total"], raw.first_values);
    EXPECT_EQ((*cpu)["period_type"], "cpu/nanoseconds");
    EXPECT_EQ((*cpu)["period"], raw.period);

    const auto rows = top_rows(read_text(fixture("gperf/" + names[r] + ".pprof-top.txt")));
    ASSERT_FALSE(rows.empty());
    int64_t flat_total = 0;
    for (const TopRow& row : rows) {
      SCOPED_TRACE(row.name);
      const int64_t flat = pprof_nanoseconds(row.flat);
      flat_total += flat;
      EXPECT_EQ((*cpu)["flat"].value(row.name, int64_t(0)), flat);
      EXPECT_EQ((*cpu)["cum"].value(row.name, int64_t(0)), pprof_nanoseconds(row.cum));
    }
    EXPECT_EQ((*cpu)["cum"].size(), rows.size()) << (*cpu)["cum"].dump();
    EXPECT_EQ((*cpu)["total"], flat_total);
    for (const nlohmann::json* p : {cpu, count}) {
      const std::string id = (*p)["profile_id"];
      EXPECT_EQ(id.size(), 32u);
      ids.insert(id);
    }
  }
  EXPECT_EQ(ids.size(), 4u);  // every Profile its own id
}

TEST(PushCommand, OtlpServiceAndLabelsAreResourceAttributes) {
  REQUIRE_RECEIVER();
  TempDir dir;
  Receiver receiver(dir.file("store"), {.otlp = true});
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  RunResult pushed = run_tally({"push", "--format", "otlp", fixture("gperf/deep.prof"),
                                fixture("gperf/deep.pb.gz"), "--symbolize=none", "--to",
                                receiver.url(), "--service", "checkout", "--label",
                                "host.name=web-1"});
  ASSERT_EQ(pushed.exit_code, 0) << pushed.describe();
  const auto requests = receiver.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_TRUE(requests[0]["problems"].empty()) << requests[0]["problems"].dump();
  // Two files of one service: one resource holding both files' profiles.
  ASSERT_EQ(requests[0]["resources"].size(), 1u);
  const auto& resource = requests[0]["resources"][0];
  EXPECT_EQ(resource["attributes"]["service.name"], "checkout");
  EXPECT_EQ(resource["attributes"]["host.name"], "web-1");  // a --label replaces it
  EXPECT_EQ(resource["scopes"][0]["profiles"].size(), 4u);
}

TEST(PushCommand, UnreachableStoreIsAnIoError) {
  TempDir dir;
  RunResult pushed = run_tally({"push", fixture("gperf/deep.prof"), "--to", "http://127.0.0.1:1",
                                "--symbolize=none", "--attempts", "1"});
  EXPECT_EQ(pushed.exit_code, 3) << pushed.describe();
  EXPECT_NE(pushed.err.find("127.0.0.1"), std::string::npos) << pushed.err;
}

TEST(PushCommand, BadFlagsAreUsageErrors) {
  TempDir dir;
  EXPECT_EQ(run_tally({"push", fixture("gperf/deep.prof"), "--to", "ftp://x"}).exit_code, 2);
  EXPECT_EQ(run_tally({"push", fixture("gperf/deep.prof"), "--to", "http://x", "--label", "novalue"})
                .exit_code, 2);
  EXPECT_EQ(run_tally({"push", fixture("gperf/deep.prof"), "--to", "http://x", "--push-header",
                       "no colon"}).exit_code, 2);
  RunResult token = run_tally({"push", fixture("gperf/deep.prof"), "--to", "http://x",
                               "--push-token-file", dir.file("missing")});
  EXPECT_EQ(token.exit_code, 2);
  EXPECT_NE(token.err.find("missing: cannot read the token file"), std::string::npos) << token.err;
}

// A CA, and a server certificate it signs for 127.0.0.1.
struct TestCa {
  std::string ca, cert, key;
};
TestCa make_ca(const TempDir& dir, const std::string& name, bool with_server) {
  const std::string openssl = find_program("openssl");
  TestCa ca{dir.file(name + "-ca.pem"), dir.file(name + "-server.pem"), dir.file(name + "-server.key")};
  auto ok = [](const RunResult& r) { EXPECT_EQ(r.exit_code, 0) << r.describe(); };
  ok(run({openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
          "/CN=tally test CA " + name, "-keyout", dir.file(name + "-ca.key"), "-out", ca.ca}));
  if (!with_server) return ca;
  write_bytes(dir.file(name + "-ext.cnf"), "subjectAltName=IP:127.0.0.1\n");
  ok(run({openssl, "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout",
          ca.key, "-out", dir.file(name + "-server.csr")}));
  ok(run({openssl, "x509", "-req", "-in", dir.file(name + "-server.csr"), "-CA", ca.ca, "-CAkey",
          dir.file(name + "-ca.key"), "-CAcreateserial", "-days", "2", "-extfile",
          dir.file(name + "-ext.cnf"), "-out", ca.cert}));
  return ca;
}

TEST(PushCommand, HttpsWithTheTestCaIsTrustedAndAWrongCaRefused) {
  REQUIRE_RECEIVER();
  if (find_program("openssl").empty()) TALLY_SKIP_OR_FAIL_IN_CI("openssl is not installed");
  TempDir dir;
  const TestCa right = make_ca(dir, "right", true);
  const TestCa wrong = make_ca(dir, "wrong", false);
  Receiver receiver(dir.file("store"), {.tls_cert = right.cert, .tls_key = right.key});
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  ASSERT_TRUE(receiver.url().starts_with("https://"));

  RunResult refused = run_tally({"push", fixture("gperf/deep.prof"), "--symbolize=none",
                                 "--to", receiver.url(), "--push-ca", wrong.ca});
  EXPECT_EQ(refused.exit_code, 4) << refused.describe();  // no retry loop: final
  EXPECT_NE(refused.err.find("certificate"), std::string::npos) << refused.err;
  EXPECT_TRUE(receiver.requests().empty());

  RunResult pushed = run_tally({"push", fixture("gperf/deep.prof"), "--symbolize=none",
                                "--to", receiver.url(), "--push-ca", right.ca});
  EXPECT_EQ(pushed.exit_code, 0) << pushed.describe();
  EXPECT_EQ(receiver.requests().size(), 1u);
}

}  // namespace
}  // namespace tally::test
