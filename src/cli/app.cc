// The top-level command line shared by tally and tally-net, and the error printing of every
// command.
#include <cstdio>

#include "cli/command.h"

namespace tally::cli {

int report(const core::Error& error) {
  std::fprintf(stderr, "tally: error: %s\n", error.message.c_str());
  switch (error.kind) {
    case core::ErrorKind::io: return kIoError;
    case core::ErrorKind::unsupported: return kUnsupported;
    case core::ErrorKind::invalid_input: break;
  }
  return kInvalidInput;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "tally: error: %s\n", message.c_str());
  return kUsage;
}

void print_warnings(const core::Diagnostics& diagnostics) {
  for (const auto& n : diagnostics.notes()) std::fprintf(stderr, "tally: %s\n", n.c_str());
  for (const auto& w : diagnostics.warnings()) std::fprintf(stderr, "tally: warning: %s\n", w.c_str());
}

}  // namespace tally::cli

namespace tally::cli {

int run_app(int argc, char** argv, const std::function<void(CLI::App&, Runner&)>& add_commands) {
  CLI::App app{
      "tally: where did the cycles go? Reads, converts and reports CPU profiles.\n"
      "Exit codes: 0 ok, 1 malformed input, 2 usage error, 3 I/O error, 4 unsupported "
      "conversion."};
  app.name("tally");
  app.require_subcommand(1);
  app.set_version_flag("--version", "tally 0.1.0");
  Runner run;
  add_commands(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  try {
    return run ? run() : kUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tally: internal error: %s\n", e.what());
    return kInvalidInput;
  }
}

}  // namespace tally::cli
