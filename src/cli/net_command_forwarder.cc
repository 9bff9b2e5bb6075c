#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "cli/net_commands.h"

namespace tally::cli {

namespace {

// tally-net beside this binary (the build tree and `bin/` installs), else in
// ../libexec/tally/ (an FHS install keeps helper binaries off PATH).
std::string tally_net_path() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return "tally-net";
  const std::filesystem::path beside = self.parent_path() / "tally-net";
  if (::access(beside.c_str(), X_OK) == 0) return beside;
  return self.parent_path().parent_path() / "libexec" / "tally" / "tally-net";
}

int exec_tally_net(char** argv) {
  const std::string path = tally_net_path();
  ::execv(path.c_str(), argv);
  const int saved = errno;
  return report(core::Error{fmt::format("cannot run {}: {} (tally {} runs there; is tally "
                                        "installed whole?)",
                                        path, std::strerror(saved), argv[1] ? argv[1] : ""),
                            core::ErrorKind::io});
}

}  // namespace

void add_net_command_forwarder(CLI::App& app, Runner& run, const char* name,
                               const char* description, char** argv) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->prefix_command();  // the arguments after NAME stay as given, for tally-net to parse
  cmd->set_help_flag();   // --help too: tally-net prints the command's own options
  cmd->final_callback([&run, argv] { run = [argv] { return exec_tally_net(argv); }; });
}

}  // namespace tally::cli
