// tally daemon --push end to end (as root, as CI runs): the daemon samples the machine and
// pushes to receiver.py; the real pprof reads what arrived. The split workload's shares,
// the labels, the pushed numbers against the daemon's own database (Pyroscope and OTLP),
// an outage (every sample exactly once), a full spool, and a store that refuses (no retry
// loop).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "daemon_process.h"
#include "receiver.h"
#include "support/measured_split.h"
#include "support/test_support.h"
#include "symbolize/debuginfod_server.h"
#include "symbolize/elf_image.h"

namespace tally::test {
namespace {

#define REQUIRE_DAEMON_AND_RECEIVER()                                                    \
  do {                                                                                   \
    if (!can_sample_system_wide())                                                       \
      TALLY_SKIP_OR_FAIL_IN_CI("system-wide sampling is not permitted here");            \
    if (debian_python3().empty() || find_program("protoc").empty())                      \
      TALLY_SKIP_OR_FAIL_IN_CI("python3 (with python3-protobuf) or protoc missing");     \
    TALLY_REQUIRE_PEER(find_pprof(), "pprof");                                           \
  } while (0)

// The profiles of the series whose service_name is `service` (all when empty), and checks
// that no sample id came twice.
std::vector<std::string> profiles_of(const Receiver& receiver, const std::string& service) {
  std::vector<std::string> files;
  for (const auto& request : receiver.requests())
    for (const auto& series : request["series"])
      if (service.empty() || series["labels"]["service_name"] == service)
        for (const auto& id : series["ids"])
          files.push_back(receiver.out() + "/profiles/" + id.get<std::string>() + ".pb.gz");
  return files;
}

RunResult pprof_top(const std::vector<std::string>& files, const std::string& sample_index) {
  std::vector<std::string> argv = {find_pprof(), "-top", "-nodecount=1000",
                                   "-sample_index=" + sample_index, "-symbolize=none"};
  argv.insert(argv.end(), files.begin(), files.end());
  return run(argv, RunOptions{.environment = {{"PPROF_BINARY_PATH", "/nonexistent"}},
                              .timeout_seconds = 300});
}

// "Showing nodes accounting for X, 100% of X total": X.
int64_t pprof_total(const std::string& top) {
  std::smatch m;
  if (!std::regex_search(top, m, std::regex(R"(of (\d+) total)"))) return -1;
  return std::stoll(m[1]);
}

// The flat column of the rows named in `names`.
std::map<std::string, std::string> flat_of(const std::string& top, const std::set<std::string>& names) {
  std::map<std::string, std::string> out;
  for (const TopRow& row : top_rows(top))
    if (names.count(row.name)) out[row.name] = row.flat;
  return out;
}

// The number in the daemon's stopping line after `what` ("pushes 3", "retries 0", ...).
int64_t status_number(const std::string& log, const std::string& what) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(what + R"( (\d+))"))) return -1;
  return std::stoll(m[1]);
}

size_t files_in(const std::string& dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.path().extension() == ".push") ++n;
  return n;
}

TEST(DaemonPush, SplitWorkloadArrivesLabelledAndEqualsTheDatabase) {
  REQUIRE_DAEMON_AND_RECEIVER();
  TempDir dir;
  Receiver receiver(dir.file("store"));
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  const std::string db = dir.file("db");
  DaemonProcess daemon(db, {"-F", "999", "--flush", "3600", "--push", receiver.url(),
                            "--push-every", "2", "--label", "env=test"});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  RunResult workload = run({measured_split_program(), "-r", "14", "-u", "15000000"});
  ASSERT_EQ(workload.exit_code, 0) << workload.describe();
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();

  const std::string service = std::filesystem::path(measured_split_program()).filename();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::set<std::string> ids;
  size_t total_ids = 0;
  for (const auto& request : receiver.requests())
    for (const auto& series : request["series"]) {
      EXPECT_EQ(series["labels"]["__name__"], "process_cpu");
      EXPECT_EQ(series["labels"]["hostname"], host);
      EXPECT_EQ(series["labels"]["env"], "test");
      EXPECT_EQ(series["labels"].size(), 4u) << series["labels"].dump();  // no pid label
      for (const auto& id : series["ids"]) ids.insert(id.get<std::string>()), ++total_ids;
    }
  EXPECT_EQ(ids.size(), total_ids);
  EXPECT_FALSE(std::filesystem::exists(receiver.out() + "/duplicates"));
  const auto files = profiles_of(receiver, service);
  ASSERT_GE(files.size(), 2u) << "pushes every 2 s over a few seconds of work";

  // pprof's view of the pushed profiles: the split the workload measured.
  RunResult pushed = pprof_top(files, "cpu-clock");
  ASSERT_EQ(pushed.exit_code, 0) << pushed.describe();
  const auto truth = measured_split_shares(workload.out);
  const auto shares = flat_percent(pushed.out, {"func_a", "func_b", "func_c", "func_d"});
  for (const auto& [name, percent] : truth) {
    ASSERT_TRUE(shares.count(name)) << name << " missing from\n" << pushed.out;
    // flat% of the process's samples; the truth is of func_a..d's: rescaled to theirs.
    double sum = 0;
    for (const auto& [n, p] : shares) sum += p;
    EXPECT_NEAR(shares.at(name) * 100 / sum, percent, 3.0) << name << " in\n" << pushed.out;
  }

  // The same numbers as the daemon's own database, both read by pprof.
  RunResult converted = run_tally({"convert", "--db", db, "--image", "/" + service + "$", "--to",
                                   "pprof", "-o", dir.file("db.pb.gz")});
  ASSERT_EQ(converted.exit_code, 0) << converted.describe();
  RunResult from_db = run({find_pprof(), "-top", "-nodecount=1000", "-sample_index=samples",
                           dir.file("db.pb.gz")},
                          RunOptions{.timeout_seconds = 300});
  RunResult pushed_samples = pprof_top(files, "samples");
  const std::set<std::string> funcs = {"func_a", "func_b", "func_c", "func_d"};
  EXPECT_EQ(flat_of(pushed_samples.out, funcs), flat_of(from_db.out, funcs))
      << pushed_samples.out << "\n" << from_db.out;
  EXPECT_EQ(flat_of(from_db.out, funcs).size(), 4u) << from_db.describe();
}

TEST(DaemonPush, OtlpIntervalsDecodeToTheSplitAndTheDatabasesNumbers) {
  REQUIRE_DAEMON_AND_RECEIVER();
  TempDir dir;
  Receiver receiver(dir.file("store"), {.otlp = true});
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  const std::string db = dir.file("db");
  DaemonProcess daemon(db, {"-F", "999", "--flush", "3600", "--push", receiver.url(),
                            "--push-format", "otlp", "--push-every", "1", "--label", "env=test"});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  RunResult workload = run({measured_split_program(), "-r", "7", "-u", "15000000"});
  ASSERT_EQ(workload.exit_code, 0) << workload.describe();
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();

  const std::string service = std::filesystem::path(measured_split_program()).filename();
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  // Summed over every request: the split service's flat per function (samples and
  // cpu-clock), and every sample of every service.
  std::map<std::string, int64_t> flat_samples, flat_time;
  int64_t all_samples = 0;
  size_t requests = 0, with_service = 0;
  for (const auto& request : receiver.requests()) {
    ++requests;
    EXPECT_TRUE(request["problems"].empty()) << request["problems"].dump();
    for (const auto& resource : request["resources"]) {
      EXPECT_EQ(resource["attributes"]["host.name"], host);
      EXPECT_EQ(resource["attributes"]["env"], "test");
      EXPECT_EQ(resource["attributes"].size(), 3u) << resource["attributes"].dump();
      for (const auto& scope : resource["scopes"])
        for (const auto& profile : scope["profiles"]) {
          const bool counts = profile["sample_type"] == "samples/count";
          EXPECT_TRUE(counts || profile["sample_type"] == "cpu-clock/nanoseconds")
              << profile["sample_type"];
          EXPECT_GT(profile["duration_nano"].get<int64_t>(), 0);
          if (counts) all_samples += profile["total"].get<int64_t>();
          if (resource["attributes"]["service.name"] != service) continue;
          with_service += counts;
          for (const auto& [name, value] : profile["flat"].items())
            (counts ? flat_samples : flat_time)[name] += value.get<int64_t>();
        }
    }
  }
  ASSERT_GE(requests, 2u) << "pushes every second over a few seconds of work";
  ASSERT_GE(with_service, 2u);
  const std::string log = daemon.log();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m, std::regex(R"((\d+) samples spooled in all)"))) << log;
  EXPECT_EQ(all_samples, std::stoll(m[1])) << log;
  // The later intervals' addresses came from the symbolizer's cache (the numbers below are
  // the database's all the same).
  ASSERT_TRUE(std::regex_search(log, m, std::regex(R"(symbol cache (\d+) addresses, (\d+) hits)")))
      << log;
  EXPECT_GT(std::stoll(m[2]), 0) << log;

  // cpu-clock's split is the one the workload measured.
  const auto truth = measured_split_shares(workload.out);
  double sum = 0;
  for (const auto& [name, percent] : truth) sum += double(flat_time[name]);
  ASSERT_GT(sum, 0);
  for (const auto& [name, percent] : truth)
    EXPECT_NEAR(double(flat_time[name]) * 100 / sum, percent, 3.0) << name;

  // The sample counts are the daemon's own database's, as pprof reads it.
  RunResult converted = run_tally({"convert", "--db", db, "--image", "/" + service + "$", "--to",
                                   "pprof", "-o", dir.file("db.pb.gz")});
  ASSERT_EQ(converted.exit_code, 0) << converted.describe();
  RunResult from_db = run({find_pprof(), "-top", "-nodecount=1000", "-sample_index=samples",
                           dir.file("db.pb.gz")},
                          RunOptions{.timeout_seconds = 300});
  ASSERT_EQ(from_db.exit_code, 0) << from_db.describe();
  const std::set<std::string> funcs = {"func_a", "func_b", "func_c", "func_d"};
  const auto db_flat = flat_of(from_db.out, funcs);
  ASSERT_EQ(db_flat.size(), 4u) << from_db.out;
  for (const auto& [name, flat] : db_flat) EXPECT_EQ(flat_samples[name], std::stoll(flat)) << name;
}

TEST(DaemonPush, OutageEverySampleArrivesExactlyOnce) {
  REQUIRE_DAEMON_AND_RECEIVER();
  TempDir dir;
  auto receiver = std::make_unique<Receiver>(dir.file("store"));
  ASSERT_TRUE(receiver->started()) << read_text(dir.file("store/receiver.log"));
  const int port = receiver->port();
  const std::string url = receiver->url();
  DaemonProcess daemon(dir.file("db"), {"-F", "999", "--flush", "3600", "--push", url,
                                        "--push-every", "1", "--push-retry-max", "2",
                                        "--spool", dir.file("spool")});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  std::this_thread::sleep_for(std::chrono::seconds(2));
  receiver->stop();  // the outage
  ASSERT_EQ(run({measured_split_program(), "-r", "7", "-u", "15000000"}).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_GT(files_in(dir.file("spool")), 0u) << "the outage's intervals wait in the spool";
  RunResult status = run_tally({"daemon", "--status", "--db", dir.file("db")});
  EXPECT_EQ(status.exit_code, 0) << status.describe();
  EXPECT_GT(status_number(status.out, "retries"), 0) << status.out;
  EXPECT_GT(status_number(status.out, "spooled"), 0) << status.out;
  receiver = std::make_unique<Receiver>(dir.file("store"), ReceiverOptions{.port = port});
  ASSERT_TRUE(receiver->started()) << read_text(dir.file("store/receiver.log"));
  for (int i = 0; i < 300 && files_in(dir.file("spool")) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();
  EXPECT_EQ(files_in(dir.file("spool")), 0u) << daemon.log();

  const std::string log = daemon.log();
  EXPECT_GT(status_number(log, "retries"), 0) << log;
  EXPECT_EQ(status_number(log, "dropped"), 0) << log;
  EXPECT_FALSE(std::filesystem::exists(receiver->out() + "/duplicates"))
      << read_text(receiver->out() + "/duplicates");
  // Every sample the daemon spooled, once: pprof's total over everything received.
  RunResult all = pprof_top(profiles_of(*receiver, ""), "samples");
  ASSERT_EQ(all.exit_code, 0) << all.describe();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m, std::regex(R"((\d+) samples spooled in all)"))) << log;
  EXPECT_EQ(pprof_total(all.out), std::stoll(m[1])) << log;
}

// The samples the spool's files hold (their names say: SEQUENCE-SAMPLES.push).
int64_t spooled_samples(const std::string& dir) {
  int64_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename();
    if (name.ends_with(".push")) n += std::stoll(name.substr(name.find('-') + 1));
  }
  return n;
}

TEST(DaemonPush, KilledDaemonsSpoolIsSentByTheNextOne) {
  REQUIRE_DAEMON_AND_RECEIVER();
  TempDir dir;
  int port = 0;
  {
    Receiver gone(dir.file("gone"));
    port = gone.port();
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  const std::vector<std::string> args = {"-F", "999", "--flush", "3600", "--push", url,
                                         "--push-every", "1", "--spool", dir.file("spool")};
  {
    DaemonProcess first(dir.file("db"), args);
    ASSERT_TRUE(first.started()) << first.log();
    ASSERT_EQ(run({measured_split_program(), "-r", "7", "-u", "15000000"}).exit_code, 0);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    first.stop(SIGKILL);
  }
  const int64_t left = spooled_samples(dir.file("spool"));
  ASSERT_GT(left, 0);
  Receiver receiver(dir.file("store"), {.port = port});
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  DaemonProcess second(dir.file("db"), args);
  ASSERT_TRUE(second.started()) << second.log();
  for (int i = 0; i < 300 && files_in(dir.file("spool")) > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(second.stop(SIGTERM), 0) << second.log();
  EXPECT_EQ(files_in(dir.file("spool")), 0u) << second.log();
  const std::string log = second.log();
  EXPECT_NE(log.find("left in the spool"), std::string::npos) << log;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m, std::regex(R"((\d+) samples spooled in all)"))) << log;
  RunResult all = pprof_top(profiles_of(receiver, ""), "samples");
  ASSERT_EQ(all.exit_code, 0) << all.describe();
  // What the killed daemon spooled, and all the second one sampled: each once.
  EXPECT_EQ(pprof_total(all.out), left + std::stoll(m[1])) << log;
  EXPECT_FALSE(std::filesystem::exists(receiver.out() + "/duplicates"));
}

TEST(DaemonPush, FullSpoolDropsTheOldestWithALogLine) {
  REQUIRE_DAEMON_AND_RECEIVER();
  TempDir dir;
  int port = 0;
  {
    Receiver gone(dir.file("gone"));  // a port nothing listens on once it stops
    port = gone.port();
  }
  DaemonProcess daemon(dir.file("db"), {"-F", "999", "--flush", "3600", "--push",
                                        "http://127.0.0.1:" + std::to_string(port),
                                        "--push-every", "1", "--spool-max-mb", "0.001",
                                        "--spool", dir.file("spool")});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  // The bound (1 KB) is below one request's size (each is a few KB gzipped), so the
  // second request spooled must drop the first however fast the machine runs the
  // workload: there are always two, one during the run and the one at exit.
  ASSERT_EQ(run({measured_split_program(), "-r", "14", "-u", "15000000"}).exit_code, 0);
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();
  const std::string log = daemon.log();
  EXPECT_NE(log.find("the spool is full"), std::string::npos) << log;
  EXPECT_GT(status_number(log, "dropped"), 0) << log;
  // Within the bound, but for the newest file, which always stays.
  uint64_t bytes = 0, largest = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("spool"))) {
    bytes += entry.file_size();
    largest = std::max<uint64_t>(largest, entry.file_size());
  }
  EXPECT_LE(bytes, uint64_t(0.001 * 1024 * 1024) + largest) << log;
}

TEST(DaemonPush, RefusedPushIsLoggedAndNotRetried) {
  REQUIRE_DAEMON_AND_RECEIVER();
  TempDir dir;
  Receiver receiver(dir.file("store"), {.status = 400});
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  DaemonProcess daemon(dir.file("db"), {"-F", "99", "--flush", "3600", "--push", receiver.url(),
                                        "--push-every", "1"});
  ASSERT_TRUE(daemon.started()) << daemon.log();
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();
  const std::string log = daemon.log();
  EXPECT_NE(log.find("push refused"), std::string::npos) << log;
  EXPECT_NE(log.find("test store says no"), std::string::npos) << log;
  EXPECT_EQ(status_number(log, "retries"), 0) << log;
  // Each request reached the store once: as many 400s as refusals counted.
  const auto refused = text_lines(read_text(receiver.out() + "/refused"));
  EXPECT_EQ(int64_t(refused.size()), status_number(log, "refused")) << log;
  EXPECT_GE(refused.size(), 2u);
  EXPECT_LE(refused.size(), 6u) << "about one a second, no retry loop";
}

// A stripped program whose debug file only elfutils' debuginfod serves: the daemon fetches
// it (DEBUGINFOD_URLS in its environment) and the pushed profile names the program's
// static function, which the stripped binary does not hold.
TEST(DaemonPush, StrippedBinaryIsNamedThroughDebuginfod) {
  REQUIRE_DAEMON_AND_RECEIVER();
  for (const char* tool : {"cc", "objcopy", "strip"}) TALLY_REQUIRE_PEER(find_program(tool), tool);
  const std::string debuginfod = find_program("debuginfod");
  TALLY_REQUIRE_PEER(debuginfod, "debuginfod (elfutils' server, Debian package debuginfod)");
  TempDir dir;
  const std::string name = "pushdbgspin";
  write_bytes(dir.file("spin.c"), R"(#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin_named_by_debuginfod(void) {
  for (unsigned long i = 0; i < 100000; ++i) sink += i;
}
int main(void) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    spin_named_by_debuginfod();
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while (now.tv_sec - start.tv_sec < 4);
  return 0;
}
)");
  const std::string full = dir.file("full"), stripped = dir.file(name);
  ASSERT_EQ(run({find_program("cc"), "-g", "-O1", "-o", full, dir.file("spin.c")}).exit_code, 0);
  std::filesystem::create_directories(dir.file("served"));
  ASSERT_EQ(run({find_program("objcopy"), "--only-keep-debug", full, dir.file("served/" + name + ".debug")}).exit_code, 0);
  ASSERT_EQ(run({find_program("strip"), "--strip-all", "-o", stripped, full}).exit_code, 0);
  // The control: the name is in the debug file alone.
  ASSERT_EQ(read_text(stripped).find("spin_named_by_debuginfod"), std::string::npos);
  auto image = symbolize::ElfImage::open(stripped);
  ASSERT_NE(image, nullptr);
  const std::string build_id = image->build_id();
  ASSERT_FALSE(build_id.empty());

  DebuginfodServer server(debuginfod, dir.file("served"), dir.path());
  std::string why;
  ASSERT_TRUE(server.wait_until_serving(build_id, "debuginfo", why)) << why;
  for (const char* variable : {"DEBUGINFOD_PROGRESS", "DEBUGINFOD_VERBOSE", "DEBUGINFOD_MAXTIME"})
    ::unsetenv(variable);
  ::setenv("DEBUGINFOD_URLS", server.url().c_str(), 1);
  ::setenv("DEBUGINFOD_CACHE_PATH", dir.file("cache").c_str(), 1);
  Receiver receiver(dir.file("store"));
  ASSERT_TRUE(receiver.started()) << read_text(dir.file("store/receiver.log"));
  DaemonProcess daemon(dir.file("db"), {"-F", "999", "--push", receiver.url(), "--push-every", "2"});
  ::unsetenv("DEBUGINFOD_URLS");
  ::unsetenv("DEBUGINFOD_CACHE_PATH");
  ASSERT_TRUE(daemon.started()) << daemon.log();
  RunResult workload = run({stripped});
  ASSERT_EQ(workload.exit_code, 0) << workload.describe();
  ASSERT_EQ(daemon.stop(SIGTERM), 0) << daemon.log();

  const auto files = profiles_of(receiver, name);
  ASSERT_FALSE(files.empty()) << daemon.log();
  RunResult pushed = pprof_top(files, "samples");
  ASSERT_EQ(pushed.exit_code, 0) << pushed.describe();
  bool named = false;
  for (const TopRow& row : top_rows(pushed.out)) named |= row.name == "spin_named_by_debuginfod";
  EXPECT_TRUE(named) << pushed.out << "\n" << daemon.log() << "\n" << server.log();
}

}  // namespace
}  // namespace tally::test
