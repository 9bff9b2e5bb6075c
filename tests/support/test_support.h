// Helpers shared by the tests: where the fixtures are, running the tally binary and the
// peer tools (google/pprof, google-pprof, valgrind...) as subprocesses, temporary dirs.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tally::test {

// ../shared beside the project (or $TALLY_SHARED_DIR).
std::string shared_dir();
// shared_dir() + "/" + relative.
std::string shared(const std::string& relative);
// The tally executable under test.
std::string tally_binary();

std::vector<uint8_t> read_bytes(const std::string& path);
// The bytes of a text, as the readers take them (valid as long as the text).
inline std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}
std::string read_text(const std::string& path);
// The lines of a text, without their '\n'.
std::vector<std::string> text_lines(const std::string& text);
void write_bytes(const std::string& path, const std::string& bytes);

// Variables added to (or replacing those of the same name in) this process's environment.
using Environment = std::vector<std::pair<std::string, std::string>>;

struct RunOptions {
  std::string input{};        // fed on stdin (empty: stdin is closed at once)
  std::string cwd{};          // run there when not empty
  Environment environment{};  // added to this process's environment
  // > 0: the program's process group (it runs in its own) is killed with SIGKILL after
  // this many seconds, and the result says timed_out.
  double timeout_seconds = 0;
  // > 0: `signal` is sent to the program (not its group: as `kill PID` would) once, this
  // many seconds after it started.
  double signal_after_seconds = 0;
  int signal = SIGINT;
  // When not empty, the delay above counts from the moment stdout first holds this text:
  // a program slow to start on a loaded machine is signalled only once it is under way.
  std::string signal_after_output{};
  // When true, the delay counts from the moment the program catches `signal` (its handler
  // is installed): a fixed delay from the start can hit a loaded machine's slow starter
  // before it handles the signal at all, and it dies of it instead.
  bool signal_once_caught = false;
};

// Whether process `pid` has a handler for `signal` (SigCgt in /proc/PID/status).
bool catches_signal(pid_t pid, int signal);
// Waits until process `pid` catches `signal`, at most `timeout_seconds`; false if it never
// did (it exited, or was too slow).
bool wait_until_catches(pid_t pid, int signal, double timeout_seconds = 60);

// User + system time of a wait4 rusage.
double cpu_seconds(const rusage& usage);
// The CPU time this process has used so far (all its threads): what a "this is quick"
// limit measures, since wall time also counts the waits of a loaded machine.
double process_cpu_seconds();

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal
  int signal = 0;      // the signal that ended it, or 0
  bool timed_out = false;
  std::string out;
  std::string err;
  rusage usage{};  // wait4's: the program and the children it waited for
  double wall_seconds = 0;
  double cpu_seconds() const { return test::cpu_seconds(usage); }
  std::string describe() const;  // status, stdout and stderr, for failure messages
};
// Runs argv[0] (looked up in PATH) with arguments, no shell, stdout and stderr captured.
RunResult run(const std::vector<std::string>& argv, const RunOptions& options);
// Feeding `input` on stdin; in `cwd` if not empty.
RunResult run(const std::vector<std::string>& argv, const std::string& input = "",
              const std::string& cwd = "");
// run({tally_binary(), args...})
RunResult run_tally(const std::vector<std::string>& args, const std::string& input = "");
RunResult run_tally(const std::vector<std::string>& args, const RunOptions& options);

// A program running beside the test (no shell; argv[0] looked up in PATH), its stdout and
// stderr appended to `log` (inherited when empty). Killed (SIGKILL) and reaped when the
// object goes away, unless it was waited for.
class BackgroundProcess {
 public:
  explicit BackgroundProcess(const std::vector<std::string>& argv, const std::string& log = "");
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running();  // false once it has exited (then it is reaped)
  void signal(int signal);
  // Waits for the end: the exit status as a shell reports it (128 + N when signal N
  // ended it).
  int wait();
  // signal(), then wait().
  int stop(int signal);

 private:
  pid_t pid_ = -1;
  int status_ = -1;  // once reaped
};

// One row of a `pprof -top` or `tally top` table.
struct TopRow {
  std::string flat, flat_percent, sum_percent, cum, cum_percent;
  std::string name;  // the rest of the line (tally's ± column left out)
  bool operator==(const TopRow&) const = default;
};
void PrintTo(const TopRow& row, std::ostream* os);  // for GoogleTest's messages
// The rows of every table in a top output: the lines after a column title line
// ("flat  flat%"; tally's has a ± column, which is skipped) whose percent columns are
// percentages.
std::vector<TopRow> top_rows(const std::string& text);

// `text` with tally's names for code no symbol names spelled as pprof lumps them, "[lib]":
// an address no function holds, "[lib+0xOFFSET]", and a function known only by its
// call-frame information, "lib!sub_START" (pprof has no such function: all of a library's
// unnamed code is one node).
std::string as_pprof_names(const std::string& text);

// Rows (or the blocks of a -tree / -peek text, each a node with its callers and callees)
// whose flat and cum are equal are ordered by name, in each run of them: pprof and tally
// order such ties by name, so a name that differs on purpose (as_pprof_names) moves a row
// among its ties but nowhere else.
std::vector<TopRow> ties_by_name(std::vector<TopRow> rows);
std::string ties_by_name(const std::string& tree_text);

// A peer tool's path, or "" when it is not installed. google/pprof is looked for in
// $TALLY_PPROF, /opt/peers/pprof, then PATH.
std::string find_pprof();
std::string find_program(const std::string& name);  // in PATH, or ""
// A precondition this machine lacks (a peer tool, root, a kernel feature): the test skips
// with `why` on a developer's machine, and fails under CI (TALLY_REQUIRE_PEERS=1, which
// .ci/run exports), where every precondition is met and a skip would hide a broken test.
// `why` is streamed: TALLY_SKIP_OR_FAIL_IN_CI("cannot mount: " << std::strerror(errno)).
#define TALLY_SKIP_OR_FAIL_IN_CI(why)                                                      \
  do {                                                                                     \
    if (::tally::test::peers_required())                                                   \
      FAIL() << "required under CI (TALLY_REQUIRE_PEERS=1): " << why;                      \
    GTEST_SKIP() << why;                                                                   \
  } while (0)
// A peer tool's path, "" when it is missing: skips (fails under CI) as above.
#define TALLY_REQUIRE_PEER(path_var, name)                                                 \
  do {                                                                                     \
    if ((path_var).empty())                                                                \
      TALLY_SKIP_OR_FAIL_IN_CI("peer tool " << (name) << " is not installed "              \
                               "(scripts/install-deps.sh, ../shared/peers/setup.sh)");     \
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
