// `tally flush --db DIR` and `tally epoch --db DIR` (DCPI's dcpiflush and dcpiepoch): the
// daemon writing DIR flushes what it holds now; for epoch, it then starts a new epoch.
// Both print the daemon's answer (how many samples went where).
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/net_commands.h"
#include "daemon/control.h"

namespace tally::cli {

namespace {

void add_request_command(CLI::App& app, Runner& run, const std::string& name,
                         const std::string& description) {
  auto db = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->add_option("--db", *db, "the daemon's profile database directory")->required();
  cmd->final_callback([db, name, &run] {
    run = [db, name] {
      auto answer = daemon::send_control(*db, name, 120'000);
      if (!answer) return report(answer.error());
      std::printf("%s\n", answer->c_str());
      return static_cast<int>(kOk);
    };
  });
}

}  // namespace

void add_flush_command(CLI::App& app, Runner& run) {
  add_request_command(app, run, "flush", kFlushDescription);
}

void add_epoch_command(CLI::App& app, Runner& run) {
  add_request_command(app, run, "epoch", kEpochDescription);
}

}  // namespace tally::cli
