// tally: every command but those of tally-net (cli/net_commands.h), which it execs.
#include "cli/command.h"
#include "cli/net_commands.h"

int main(int argc, char** argv) {
  using namespace tally::cli;
  return run_app(argc, argv, [argv](CLI::App& app, Runner& run) {
    add_cat_command(app, run);
    add_convert_command(app, run);
    add_merge_command(app, run);
    add_top_command(app, run);
    add_peek_command(app, run);
    add_tree_command(app, run);
    add_traces_command(app, run);
    add_flame_command(app, run);
    add_diff_command(app, run);
    add_record_command(app, run);
    add_stat_command(app, run);
    add_net_command_forwarder(app, run, "daemon", kDaemonDescription, argv);
    add_net_command_forwarder(app, run, "flush", kFlushDescription, argv);
    add_net_command_forwarder(app, run, "epoch", kEpochDescription, argv);
    add_list_command(app, run);
    add_disasm_command(app, run);
    add_net_command_forwarder(app, run, "serve", kServeDescription, argv);
    add_net_command_forwarder(app, run, "push", kPushDescription, argv);
  });
}
