// `tally merge A B... -o OUT`: sums profiles of the same sample types into one (pprof's
// `-proto` of several inputs, without its 2 GB of memory). Mappings of one file are unified
// by path + build id, addresses relocated to one load address.
#include <memory>

#include "cli/command.h"
#include "cli/output.h"
#include "core/merge.h"
#include "formats/format.h"
#include "formats/gperf/binary_inspector.h"
#include "io/input.h"

namespace tally::cli {

namespace {

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string to;  // empty: callgrind for call graphs, else pprof
};

int run_merge(const MergeOptions& opt) {
  auto format = formats::parse_format_name(opt.to.empty() ? "pprof" : opt.to);
  if (!format) {
    std::fprintf(stderr, "tally: error: unknown output format '%s' (expected %s)\n",
                 opt.to.c_str(), formats::writable_format_names().c_str());
    return kUsage;
  }
  core::Diagnostics diagnostics;
  const gperf::BinaryInspector binaries = gperf::binary_inspector();
  std::vector<core::Profile> profiles;
  profiles.reserve(opt.inputs.size());
  for (const auto& path : opt.inputs) {
    auto in = io::Input::open(path);
    if (!in) return report(in.error());
    auto profile = formats::read_profile(std::move(*in), diagnostics, nullptr, true, &binaries);
    if (!profile) {
      print_warnings(diagnostics);
      return report(profile.error());
    }
    profiles.push_back(std::move(*profile));
  }
  std::vector<const core::Profile*> views;
  for (const auto& p : profiles) views.push_back(&p);
  auto merged = core::merge_profiles(views, diagnostics);
  if (!merged) {
    print_warnings(diagnostics);
    return report(merged.error());
  }
  if (opt.to.empty() && merged->call_graph.present) format = formats::Format::callgrind;
  auto files = formats::write_profile(std::move(*merged), *format, diagnostics);
  print_warnings(diagnostics);
  if (!files) return report(files.error());
  return write_outputs(*files, opt.output, formats::format_name(*format));
}

}  // namespace

void add_merge_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<MergeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Sum several profiles of the same sample types into one. Mappings of the same "
               "file (path + build id) are unified and addresses relocated to one load address.");
  cmd->add_option("INPUTS", opt->inputs, "profile files (any readable format), - for stdin")
      ->required();
  cmd->add_option("-o,--output", opt->output, "output file, - for standard output")->required();
  cmd->add_option("--to", opt->to,
                  "output format: " + formats::writable_format_names() +
                      " (default: callgrind when the inputs are call graphs, else pprof)");
  cmd->final_callback([opt, &run] { run = [opt] { return run_merge(*opt); }; });
}

}  // namespace tally::cli
