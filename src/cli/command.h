// The `tally` command line: one file per subcommand. Each add_*_command registers its
// options with CLI11 and, once parsed, leaves in `run` the function that does the work.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "core/diagnostics.h"
#include "core/error.h"

namespace tally::cli {

// Exit codes (documented in README.md).
enum ExitCode : int {
  kOk = 0,
  kInvalidInput = 1,  // the input is malformed
  kUsage = 2,         // the command line is wrong
  kIoError = 3,       // a file could not be opened, read or written
  kUnsupported = 4,   // the request cannot be met (e.g. a format that cannot hold the data)
};

using Runner = std::function<int()>;

void add_cat_command(CLI::App& app, Runner& run);
void add_convert_command(CLI::App& app, Runner& run);
void add_merge_command(CLI::App& app, Runner& run);
void add_top_command(CLI::App& app, Runner& run);
void add_peek_command(CLI::App& app, Runner& run);
void add_tree_command(CLI::App& app, Runner& run);
void add_traces_command(CLI::App& app, Runner& run);
void add_flame_command(CLI::App& app, Runner& run);
void add_diff_command(CLI::App& app, Runner& run);
void add_record_command(CLI::App& app, Runner& run);
void add_stat_command(CLI::App& app, Runner& run);
void add_daemon_command(CLI::App& app, Runner& run);
void add_flush_command(CLI::App& app, Runner& run);
void add_epoch_command(CLI::App& app, Runner& run);
void add_list_command(CLI::App& app, Runner& run);
void add_disasm_command(CLI::App& app, Runner& run);
void add_serve_command(CLI::App& app, Runner& run);
void add_push_command(CLI::App& app, Runner& run);

// The top-level command line of tally and tally-net: --version, the subcommands that
// add_commands registers, the exit code of the one parsed.
int run_app(int argc, char** argv, const std::function<void(CLI::App&, Runner&)>& add_commands);

// Prints "tally: error: MESSAGE" and returns the exit code for the error's kind.
int report(const core::Error& error);
// Prints "tally: error: MESSAGE" for a wrong command line and returns kUsage.
int usage_error(const std::string& message);
// Prints each warning as "tally: warning: ...".
void print_warnings(const core::Diagnostics& diagnostics);

}  // namespace tally::cli
