// Helpers shared by the tests: where the fixtures are, running the tally binary and the
// peer tools (google/pprof, google-pprof, valgrind...) as subprocesses, temporary dirs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tally::test {

// ../shared beside the project (or $TALLY_SHARED_DIR).
std::string shared_dir();
// shared_dir() + "/" + relative.
std::string shared(const std::string& relative);
// The tally executable under test.
std::string tally_binary();

std::vector<uint8_t> read_bytes(const std::string& path);
std::string read_text(const std::string& path);
void write_bytes(const std::string& path, const std::string& bytes);

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};
// Runs argv[0] with arguments (no shell), feeding `input` on stdin; `cwd` if not empty.
RunResult run(const std::vector<std::string>& argv, const std::string& input = "",
              const std::string& cwd = "");
// run({tally_binary(), args...})
RunResult run_tally(const std::vector<std::string>& args, const std::string& input = "");

// A peer tool's path, or "" when it is not installed. google/pprof is looked for in
// $TALLY_PPROF, /opt/peers/pprof, then PATH.
std::string find_pprof();
std::string find_program(const std::string& name);  // in PATH, or ""
// When a peer is missing the test skips with a clear message, unless TALLY_REQUIRE_PEERS=1
// (CI), where it fails: CI installs every peer.
#define TALLY_REQUIRE_PEER(path_var, name)                                                 \
  do {                                                                                     \
    if ((path_var).empty()) {                                                              \
      if (::tally::test::peers_required()) FAIL() << "peer tool missing: " << (name);     \
      GTEST_SKIP() << "peer tool " << (name)                                               \
                   << " is not installed (run ../shared/peers/setup.sh); skipping";        \
    }                                                                                      \
  } while (0)
bool peers_required();

// A fresh temporary directory, removed when the object goes away.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// The gperftools fixtures (names without .prof) and the binary each was recorded from.
struct GperfFixture {
  std::string name;    // "split"
  std::string binary;  // "split" (in shared/fixtures/bin)
};
const std::vector<GperfFixture>& gperf_fixtures();

}  // namespace tally::test
