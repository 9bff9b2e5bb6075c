// tally-net: the commands that link the network libraries (cli/net_commands.h). `tally
// daemon|flush|epoch|serve|push ...` execs it with its own arguments.
#include "cli/command.h"

int main(int argc, char** argv) {
  using namespace tally::cli;
  return run_app(argc, argv, [](CLI::App& app, Runner& run) {
    add_daemon_command(app, run);
    add_flush_command(app, run);
    add_epoch_command(app, run);
    add_serve_command(app, run);
    add_push_command(app, run);
  });
}
