// Tests that need an unprivileged process or a stricter kernel.perf_event_paranoid than the
// machine has: CI runs as root, so it can make both instead of skipping.
#pragma once

#include <string>

namespace tally::test {

// The value of /proc/sys/kernel/perf_event_paranoid, or INT_MIN when it cannot be read.
int perf_event_paranoid();

// Raises kernel.perf_event_paranoid to `level` while it lives when it is lower (root
// only) and writes the old value back when it goes away. Only processes without
// CAP_PERFMON feel the setting, and in CI every test but those that drop root (such as the
// ones using this) runs as root, so tests beside it are not affected.
class ParanoidAtLeast {
 public:
  explicit ParanoidAtLeast(int level);
  ~ParanoidAtLeast();
  ParanoidAtLeast(const ParanoidAtLeast&) = delete;
  ParanoidAtLeast& operator=(const ParanoidAtLeast&) = delete;

  // "" when the setting is now at least `level`; otherwise why it is not.
  const std::string& problem() const { return problem_; }

 private:
  std::string original_;  // the text to write back, "" when nothing was changed
  std::string problem_;
};

// In a forked child: as root, becomes user and group nobody (65534) with no supplementary
// groups (another user stays who it is); then checks that no capability is left (CAP_PERFMON and CAP_SYS_ADMIN would bypass
// perf_event_paranoid). "" on success, else what failed; the child should then _exit.
std::string drop_to_nobody();

}  // namespace tally::test
