#include "cli/report_driver.h"

#include <cstdio>

#include "cli/command.h"
#include "cli/db_flags.h"
#include "io/output.h"

namespace tally::cli {

int emit_report(const std::function<core::Expected<std::string>(std::vector<std::string>&)>& step,
                const ReportOutput& output) {
  std::vector<std::string> warnings;
  auto rendered = step(warnings);
  for (const std::string& w : warnings) std::fprintf(stderr, "tally: warning: %s\n", w.c_str());
  if (!rendered) return report(rendered.error());
  if (output.file.empty()) {
    std::fwrite(rendered->data(), 1, rendered->size(), stdout);
    return kOk;
  }
  if (auto st = io::write_file_atomically(output.file, *rendered); !st) return report(st.error());
  return kOk;
}

int run_report(const std::string& file, const ReportFlags& flags, const ReportStep& step,
               const ReportOutput& output) {
  if (!check_profile_source(file, flags.db)) return kUsage;
  auto profile = read_report_profile(file, flags);
  if (!profile) return report(profile.error());
  return emit_report(
      [&](std::vector<std::string>& warnings) { return step(*profile, warnings); }, output);
}

}  // namespace tally::cli
