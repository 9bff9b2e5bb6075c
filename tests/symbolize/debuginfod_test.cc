// Debug files from a real debuginfod server (elfutils' own, Debian package debuginfod).
// Programs are built here with -g -O2 and an inlined function, their DWARF split off with
// objcopy --only-keep-debug and served, the binaries stripped; a profile of them is then
// reported by `tally top` / `tally traces`, whose functions, source lines and inline frames
// must be those addr2line reads from the unstripped binary.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

#include "core/diagnostics.h"
#include "formats/format.h"
#include "support/test_support.h"
#include "symbolize/debuginfod_fetch.h"
#include "symbolize/debuginfod_server.h"
#include "symbolize/elf_image.h"
#include "symbolize/symbolize_test_helpers.h"

namespace tally::test {
namespace {

// Each variant's SEED makes other code, so another build id.
const char kSource[] = R"(#include <stdio.h>
#include <stdlib.h>
static inline __attribute__((always_inline)) unsigned long mix_step(unsigned long x) {
  x ^= x >> 29;
  x *= 6364136223846793005UL;
  return x + SEED;
}
__attribute__((noinline)) unsigned long churn_numbers(unsigned long n) {
  unsigned long x = n;
  for (unsigned long i = 0; i < n; ++i) x = mix_step(x + i);
  return x;
}
int main(int argc, char** argv) {
  (void)argv;
  printf("%lu\n", churn_numbers((unsigned long)argc * 1000));
  return 0;
}
)";

struct Frame {
  std::string function, place;  // place: "file:line", as addr2line prints it
};

struct Program {
  std::string name;      // "churn0": the profile's mapping file's base name
  std::string full;      // as built, with its DWARF
  std::string stripped;  // strip --strip-all: the binary the profile names
  std::string debug;     // objcopy --only-keep-debug
  std::string build_id;
  uint64_t inline_address = 0;  // in churn_numbers, in code of the inlined mix_step
  uint64_t main_address = 0;
  std::vector<Frame> frames;  // addr2line's at inline_address, innermost first
};

std::string output_of(const std::vector<std::string>& argv) {
  RunResult r = run(argv);
  if (r.exit_code != 0) throw std::runtime_error(argv[0] + " failed: " + r.describe());
  return r.out;
}

std::string build_id_of(const std::string& path) {
  std::smatch m;
  const std::string notes = output_of({"readelf", "-n", path});
  if (!std::regex_search(notes, m, std::regex(R"(Build ID: ([0-9a-f]+))")))
    throw std::runtime_error("no build id in " + path);
  return m[1];
}

// addr2line -a -i -f: per address, its line "0x..." then function and place per frame.
std::map<uint64_t, std::vector<Frame>> addr2line_frames(const std::string& binary,
                                                        const std::vector<uint64_t>& addresses) {
  std::vector<std::string> argv = {"addr2line", "-a", "-i", "-f", "-e", binary};
  for (uint64_t a : addresses) argv.push_back(fmt::format("{:#x}", a));
  std::map<uint64_t, std::vector<Frame>> frames;
  const std::vector<std::string> lines = text_lines(output_of(argv));
  uint64_t address = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("0x", 0) == 0) {
      address = std::stoull(lines[i], nullptr, 16);
    } else if (i + 1 < lines.size()) {
      std::string place = lines[++i];
      if (auto d = place.find(" (discriminator"); d != std::string::npos) place.resize(d);
      frames[address].push_back({lines[i - 1], place});
    }
  }
  return frames;
}

Program build_program(const std::string& dir, int seed) {
  Program p;
  p.name = "churn" + std::to_string(seed);
  const std::string source = dir + "/" + p.name + ".c";
  write_bytes(source, kSource);
  p.full = dir + "/" + p.name + ".full";
  p.stripped = dir + "/" + p.name;
  p.debug = dir + "/" + p.name + ".debug";
  output_of({"cc", "-g", "-O2", "-Wl,--build-id", "-DSEED=" + std::to_string(1000003 * seed + 7),
             "-o", p.full, source});
  output_of({"objcopy", "--only-keep-debug", p.full, p.debug});
  output_of({"strip", "--strip-all", "-o", p.stripped, p.full});
  p.build_id = build_id_of(p.stripped);

  const ElfFunction* churn = nullptr;
  const std::vector<ElfFunction> functions = elf_functions(p.full);
  for (const ElfFunction& f : functions) {
    if (f.name == "churn_numbers") churn = &f;
    if (f.name == "main") p.main_address = f.address;
  }
  if (!churn || p.main_address == 0) throw std::runtime_error("no churn_numbers/main in " + p.full);
  std::vector<uint64_t> addresses;
  for (uint64_t a = churn->address; a < churn->address + churn->size; ++a) addresses.push_back(a);
  for (const auto& [address, frames] : addr2line_frames(p.full, addresses)) {
    if (frames.size() == 2 && frames[0].function == "mix_step" &&
        frames[1].function == "churn_numbers") {
      p.inline_address = address;
      p.frames = frames;
      break;
    }
  }
  if (p.inline_address == 0) throw std::runtime_error("no inlined mix_step in " + p.full);
  return p;
}

// A profile of the programs, each mapped as the loader maps a PIE (the mapping's file
// `file_dir`/NAME), one sample per program: main -> churn_numbers (mix_step inlined).
std::string write_profile_of(const std::vector<const Program*>& programs, const std::string& path,
                             const std::string& file_dir = "") {
  core::Profile profile;
  profile.sample_types.push_back({profile.intern("samples"), profile.intern("count")});
  for (size_t i = 0; i < programs.size(); ++i) {
    const Program& p = *programs[i];
    const uint64_t base = 0x555500000000 + i * 0x10000000;
    core::Profile one = profile_mapping(p.stripped, base, {p.inline_address, p.main_address},
                                        p.build_id);
    core::Mapping mapping = one.mappings[0];
    mapping.file = profile.intern(file_dir.empty() ? p.stripped : file_dir + "/" + p.name);
    mapping.build_id = profile.intern(p.build_id);
    const core::MappingId id = profile.add_mapping(mapping);
    std::vector<core::LocationId> stack;
    for (const core::Location& location : one.locations) {
      core::Location copy;
      copy.mapping = id;
      copy.address = location.address;
      stack.push_back(profile.add_location(copy));
    }
    const int64_t value = 10 * static_cast<int64_t>(i + 1);
    profile.add_sample(stack, std::span(&value, 1));
  }
  core::Diagnostics diagnostics;
  auto files = formats::write_profile(std::move(profile), formats::Format::pprof, diagnostics);
  if (!files) throw std::runtime_error("cannot write the profile: " + files.error().message);
  write_bytes(path, files->front().bytes);
  return path;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class Debuginfod : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* tool : {"cc", "objcopy", "strip", "readelf", "addr2line"}) {
      TALLY_REQUIRE_PEER(find_program(tool), tool);
    }
    debuginfod_ = find_program("debuginfod");
    TALLY_REQUIRE_PEER(debuginfod_, "debuginfod (elfutils' server, Debian package debuginfod)");
    python_ = find_program("python3");
    TALLY_REQUIRE_PEER(python_, "python3");
    // Only what each run sets: none of the developer's own debuginfod settings.
    for (const char* name : {"DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "DEBUGINFOD_TIMEOUT",
                             "DEBUGINFOD_PROGRESS", "DEBUGINFOD_VERBOSE", "DEBUGINFOD_MAXTIME",
                             "DEBUGINFOD_MAXSIZE", "DEBUGINFOD_RETRY_LIMIT"})
      ::unsetenv(name);
    if (!programs_) {
      programs_ = std::make_unique<Built>();
      for (int seed = 0; seed < 2; ++seed)
        programs_->list.push_back(build_program(programs_->dir.path(), seed));
    }
    ::mkdir(served_.c_str(), 0755);
  }
  static void TearDownTestSuite() { programs_.reset(); }

  const Program& program(size_t i) const { return programs_->list.at(i); }
  // Serves the debug files of these programs, and with `binaries` the stripped binaries.
  std::unique_ptr<DebuginfodServer> serve(const std::vector<const Program*>& programs,
                                          bool binaries = false) {
    for (const Program* p : programs) {
      write_bytes(served_ + "/" + p->name + ".debug", read_text(p->debug));
      if (binaries) write_bytes(served_ + "/" + p->name, read_text(p->stripped));
    }
    auto server = std::make_unique<DebuginfodServer>(debuginfod_, served_, dir_.path());
    for (const Program* p : programs) {
      for (const char* file : {"debuginfo", "executable"}) {
        std::string why;
        if ((binaries || file == std::string("debuginfo")) &&
            !server->wait_until_serving(p->build_id, file, why)) {
          ADD_FAILURE() << why;
          return nullptr;
        }
      }
    }
    return server;
  }
  // `tally ARGS` with these DEBUGINFOD_URLS (and this test's cache), and more variables.
  RunResult tally(const std::vector<std::string>& args, const std::string& urls,
                  Environment more = {}) const {
    RunOptions options;
    options.environment = {{"DEBUGINFOD_URLS", urls}, {"DEBUGINFOD_CACHE_PATH", cache_}};
    options.environment.insert(options.environment.end(), more.begin(), more.end());
    options.timeout_seconds = 120;  // a hang fails the test instead of the suite
    return run_tally(args, options);
  }

  struct Built {
    TempDir dir;
    std::vector<Program> list;
  };
  static inline std::unique_ptr<Built> programs_;
  TempDir dir_;
  const std::string served_ = dir_.file("served");
  const std::string cache_ = dir_.file("cache");
  std::string debuginfod_, python_;
};

// "mix_step FILE:LINE (inline)" and "churn_numbers FILE:LINE" rows of top
// --granularity=lines, from addr2line's frames.
void expect_lines_of(const Program& p, const std::string& top) {
  EXPECT_NE(top.find("mix_step " + p.frames[0].place + " (inline)"), std::string::npos)
      << p.frames[0].place << "\n" << top;
  EXPECT_NE(top.find("churn_numbers " + p.frames[1].place), std::string::npos)
      << p.frames[1].place << "\n" << top;
}

// traces: mix_step, inlined into churn_numbers, called by main.
bool has_inline_trace(const std::string& traces) {
  return std::regex_search(traces,
                           std::regex(R"(mix_step \(inline\)\s*\n\s*churn_numbers\s*\n\s*main)"));
}

TEST_F(Debuginfod, NamesLinesAndInlineFramesComeFromTheServedDebugFile) {
  const Program& served = program(0);
  const Program& unserved = program(1);  // a build id the server does not have
  const std::string profile = write_profile_of({&served, &unserved}, dir_.file("p.pb.gz"));
  auto server = serve({&served});
  ASSERT_TRUE(server);

  // The control: no DEBUGINFOD_URLS, no names (the binaries are stripped).
  RunResult control = tally({"top", "--granularity=lines", profile}, "");
  ASSERT_EQ(control.exit_code, 0) << control.describe();
  EXPECT_EQ(control.out.find("churn_numbers"), std::string::npos) << control.out;
  EXPECT_EQ(control.out.find("mix_step"), std::string::npos) << control.out;
  EXPECT_EQ(control.err.find("debuginfod:"), std::string::npos) << control.err;
  EXPECT_FALSE(exists(cache_));

  RunResult top = tally({"top", "--granularity=lines", profile}, server->url());
  ASSERT_EQ(top.exit_code, 0) << top.describe();
  expect_lines_of(served, top.out);
  EXPECT_EQ(top.out.find("churn1.c"), std::string::npos) << top.out;  // no DWARF came
  EXPECT_EQ(occurrences(top.err, "debuginfod: fetched 1 build id"), 1u) << top.err;
  EXPECT_NE(top.err.find("churn0 " + served.build_id), std::string::npos) << top.err;
  EXPECT_NE(top.err.find("debuginfod: not on the server (404): 1 build id: churn1 " +
                         unserved.build_id),
            std::string::npos)
      << top.err;
  EXPECT_TRUE(exists(cache_ + "/" + served.build_id + "/debuginfo"));

  RunResult traces = tally({"traces", profile}, server->url());
  ASSERT_EQ(traces.exit_code, 0) << traces.describe();
  EXPECT_TRUE(has_inline_trace(traces.out)) << traces.out;

  // From the cache, the server gone: the same names, no request (it would be refused).
  server->stop();
  RunResult cached = tally({"top", "--granularity=lines", profile}, server->url());
  ASSERT_EQ(cached.exit_code, 0) << cached.describe();
  expect_lines_of(served, cached.out);
  EXPECT_EQ(cached.err.find("fetched"), std::string::npos) << cached.err;
  EXPECT_EQ(cached.err.find("cannot reach"), std::string::npos) << cached.err;
  EXPECT_LT(cached.wall_seconds, 5) << cached.describe();
}

// The binary too: a debug file's segments have no file offsets to place the mapping with.
TEST_F(Debuginfod, ABinaryNotOnThisMachineIsFetchedWithItsDebugFile) {
  const Program& p = program(0);
  const std::string profile = write_profile_of({&p}, dir_.file("p.pb.gz"), "/nonexistent/dir");
  auto server = serve({&p}, /*binaries=*/true);
  ASSERT_TRUE(server);

  RunResult control = tally({"traces", profile}, "");
  ASSERT_EQ(control.exit_code, 0) << control.describe();
  EXPECT_NE(control.err.find("churn0: not found"), std::string::npos) << control.err;
  EXPECT_FALSE(has_inline_trace(control.out)) << control.out;

  RunResult traces = tally({"traces", profile}, server->url());
  ASSERT_EQ(traces.exit_code, 0) << traces.describe();
  EXPECT_TRUE(has_inline_trace(traces.out)) << traces.out;
  EXPECT_EQ(traces.err.find("not found"), std::string::npos) << traces.err;
  EXPECT_NE(traces.err.find("debuginfod: fetched 2 files"), std::string::npos) << traces.err;
  EXPECT_NE(traces.err.find("churn0 " + p.build_id + " (binary)"), std::string::npos)
      << traces.err;
  RunResult top = tally({"top", "--granularity=lines", profile}, server->url());
  expect_lines_of(p, top.out);

  // disasm reads the code from the fetched binary and the lines from its debug file.
  RunResult disasm = tally({"disasm", "churn_numbers", profile}, server->url());
  ASSERT_EQ(disasm.exit_code, 0) << disasm.describe();
  EXPECT_NE(disasm.out.find("ROUTINE ======================== churn_numbers"), std::string::npos)
      << disasm.out;
  EXPECT_NE(disasm.out.find(";churn_numbers "), std::string::npos) << disasm.out;  // a source line
  RunResult no_server = tally({"disasm", "churn_numbers", profile}, "");
  EXPECT_NE(no_server.exit_code, 0) << no_server.out;
}

TEST_F(Debuginfod, AStoppedServerOrAClosedPortIsReportedOnceWithoutWaiting) {
  const std::string profile = write_profile_of({&program(0), &program(1)}, dir_.file("p.pb.gz"));
  auto server = serve({&program(0), &program(1)});
  ASSERT_TRUE(server);
  server->stop();
  for (const std::string& url : {server->url(), "http://127.0.0.1:" + std::to_string(free_port())}) {
    SCOPED_TRACE(url);
    RunResult top = tally({"top", profile}, url);
    ASSERT_EQ(top.exit_code, 0) << top.describe();
    EXPECT_EQ(occurrences(top.err, "debuginfod:"), 1u) << top.err;
    EXPECT_NE(top.err.find("debuginfod: cannot reach " + url +
                           " (Connection refused): 2 build ids not fetched"),
              std::string::npos)
        << top.err;
    EXPECT_EQ(top.out.find("churn_numbers"), std::string::npos) << top.out;
    EXPECT_LT(top.wall_seconds, 5) << top.describe();
  }
}

TEST_F(Debuginfod, AServerThatNeverAnswersIsGivenUpAfterTheTimeout) {
  const std::string profile = write_profile_of({&program(0), &program(1)}, dir_.file("p.pb.gz"));
  SilentServer silent(python_, dir_.path());
  struct Case {
    Environment environment;
    double timeout;
  };
  // DEBUGINFOD_TIMEOUT when set, else tally's 10 s (libdebuginfod's own is 90 s).
  for (const Case& c : {Case{{{"DEBUGINFOD_TIMEOUT", "2"}}, 2}, Case{{}, 10}}) {
    SCOPED_TRACE(c.timeout);
    RunResult top = tally({"top", profile}, silent.url(), c.environment);
    ASSERT_EQ(top.exit_code, 0) << top.describe();
    EXPECT_EQ(occurrences(top.err, "debuginfod:"), 1u) << top.err;
    EXPECT_NE(top.err.find(fmt::format("debuginfod: cannot reach {} (no answer within {} s",
                                    silent.url(), c.timeout)),
              std::string::npos)
        << top.err;
    EXPECT_NE(top.err.find("2 build ids not fetched"), std::string::npos) << top.err;
    // Both requests wait at once, and the callback checks about once a second.
    EXPECT_GE(top.wall_seconds, c.timeout) << top.describe();
    EXPECT_LT(top.wall_seconds, c.timeout + 6) << top.describe();
  }
  // What was given up is not remembered as missing: a server that has it is asked.
  auto server = serve({&program(0)});
  ASSERT_TRUE(server);
  RunResult top = tally({"top", "--granularity=lines", profile}, server->url());
  ASSERT_EQ(top.exit_code, 0) << top.describe();
  expect_lines_of(program(0), top.out);
}

TEST_F(Debuginfod, NoDebuginfodAsksNoServer) {
  const std::string profile = write_profile_of({&program(0)}, dir_.file("p.pb.gz"));
  SilentServer silent(python_, dir_.path());
  for (const char* command : {"top", "traces"}) {
    RunResult r = tally({command, "--no-debuginfod", profile}, silent.url(),
                        {{"DEBUGINFOD_TIMEOUT", "3"}});
    ASSERT_EQ(r.exit_code, 0) << r.describe();
    EXPECT_EQ(r.err.find("debuginfod:"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("churn_numbers"), std::string::npos) << r.out;
    EXPECT_LT(r.wall_seconds, 3) << r.describe();
    EXPECT_FALSE(exists(cache_)) << "libdebuginfod was asked: it made its cache";
  }
  // One flag for every command that symbolizes.
  for (const char* command : {"top", "traces", "peek", "convert", "record", "disasm"}) {
    RunResult help = run_tally({command, "--help"});
    EXPECT_NE(help.out.find("--no-debuginfod"), std::string::npos) << command << "\n" << help.out;
  }
}

TEST_F(Debuginfod, ShowsItsProgressOnATerminalOnly) {
  const std::string script = find_program("script");
  TALLY_REQUIRE_PEER(script, "script (util-linux)");
  const std::string profile = write_profile_of({&program(0), &program(1)}, dir_.file("p.pb.gz"));
  SilentServer silent(python_, dir_.path());
  // script(1) runs it with a terminal as stdout and stderr, and copies what it writes.
  RunOptions options;
  options.environment = {{"DEBUGINFOD_URLS", silent.url()}, {"DEBUGINFOD_CACHE_PATH", cache_},
                         {"DEBUGINFOD_TIMEOUT", "2"}};
  options.timeout_seconds = 120;
  RunResult tty = run({script, "-qec", "'" + tally_binary() + "' top '" + profile + "' >/dev/null",
             "/dev/null"},
            options);
  ASSERT_EQ(tty.exit_code, 0) << tty.describe();
  EXPECT_NE(tty.out.find("\rdebuginfod: fetching 2 of 2 build ids"), std::string::npos)
      << tty.out;
  // The line is gone before the warnings come.
  EXPECT_NE(tty.out.find("\r\033[Ktally: warning: debuginfod: cannot reach"), std::string::npos)
      << tty.out;

  RunResult piped = tally({"top", profile}, silent.url(), {{"DEBUGINFOD_TIMEOUT", "2"}});
  EXPECT_EQ(piped.err.find("fetching"), std::string::npos) << piped.err;
}

// The API disasm can use as symbolization does: the binary and its debug file, both from
// the server, byte for byte.
TEST_F(Debuginfod, FillsInTheBinaryAndTheDebugFileFetched) {
  const Program& p = program(0);
  auto server = serve({&p}, /*binaries=*/true);
  ASSERT_TRUE(server);

  ::setenv("DEBUGINFOD_URLS", server->url().c_str(), 1);
  ::setenv("DEBUGINFOD_CACHE_PATH", cache_.c_str(), 1);
  symbolize::FoundBinary found = symbolize::find_binary("/nonexistent/churn0", p.build_id, {});
  ASSERT_FALSE(found.found());
  core::Diagnostics diagnostics;
  symbolize::FoundBinary* binaries[] = {&found};
  symbolize::fetch_missing_files(binaries, {}, diagnostics);
  ::unsetenv("DEBUGINFOD_URLS");
  ::unsetenv("DEBUGINFOD_CACHE_PATH");

  EXPECT_EQ(found.binary, cache_ + "/" + p.build_id + "/executable");
  EXPECT_EQ(found.debug, cache_ + "/" + p.build_id + "/debuginfo");
  EXPECT_EQ(found.key, p.build_id);
  EXPECT_EQ(read_text(found.binary), read_text(p.stripped));
  EXPECT_EQ(read_text(found.debug), read_text(p.debug));
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  const size_t bytes = read_text(p.stripped).size() + read_text(p.debug).size();
  EXPECT_EQ(diagnostics.warnings()[0],
            fmt::format("debuginfod: fetched 2 files ({:.1f} kB) from {}: churn0 {}, churn0 {} "
                        "(binary)",
                        static_cast<double>(bytes) / 1e3, server->url(), p.build_id, p.build_id));
}

}  // namespace
}  // namespace tally::test
