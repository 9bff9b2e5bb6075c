// `tally convert IN -o OUT --to FORMAT`: any readable format to any writable one. The input
// format is detected from the content; "-" is stdin / stdout. Every loss is reported.
#include <fmt/format.h>

#include <memory>

#include "cli/command.h"
#include "formats/format.h"
#include "io/input.h"
#include "io/output.h"

namespace tally::cli {

namespace {

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string to;
};

int run_convert(const ConvertOptions& opt) {
  auto format = formats::parse_format_name(opt.to);
  if (!format) {
    std::fprintf(stderr, "tally: error: unknown output format '%s' (expected %s)\n",
                 opt.to.c_str(), formats::writable_format_names().c_str());
    return kUsage;
  }
  auto in = io::Input::open(opt.input);
  if (!in) return report(in.error());
  core::Diagnostics diagnostics;
  auto profile = formats::read_profile(*in, diagnostics);
  if (!profile) {
    print_warnings(diagnostics);
    return report(profile.error());
  }
  auto files = formats::write_profile(*profile, *format, diagnostics);
  print_warnings(diagnostics);
  if (!files) return report(files.error());
  if (files->empty()) {
    std::fprintf(stderr, "tally: error: %s: no samples to write\n", in->name().c_str());
    return kUnsupported;
  }

  // A format that writes one file per image writes into a directory when there are several
  // images, or when the output names a directory.
  bool per_image = !files->front().name.empty();
  bool directory = per_image && (files->size() > 1 || opt.output.ends_with('/') ||
                                 io::is_directory(opt.output));
  if (directory) {
    if (opt.output == "-") {
      std::fprintf(stderr, "tally: error: the profile has %zu images, which %s writes as one "
                           "file each: give -o DIRECTORY\n", files->size(), opt.to.c_str());
      return kUsage;
    }
    if (auto st = io::make_directories(opt.output); !st) return report(st.error());
    for (const auto& f : *files) {
      std::string path = opt.output + (opt.output.ends_with('/') ? "" : "/") + f.name;
      if (auto st = io::write_file_atomically(path, f.bytes); !st) return report(st.error());
      std::fprintf(stderr, "tally: wrote %s\n", path.c_str());
    }
    return kOk;
  }
  if (auto st = io::write_file_atomically(opt.output, files->front().bytes); !st)
    return report(st.error());
  return kOk;
}

}  // namespace

void add_convert_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert a profile to another format. The input format is detected from its "
                 "content; whatever the output format cannot hold is reported on stderr.");
  cmd->add_option("INPUT", opt->input, "profile file, or - for standard input")->required();
  cmd->add_option("-o,--output", opt->output,
                  "output file, - for standard output; for dcpi a directory when the profile "
                  "has several images (one file per image)")
      ->required();
  cmd->add_option("--to", opt->to, "output format: " + formats::writable_format_names())
      ->required();
  cmd->final_callback([opt, &run] { run = [opt] { return run_convert(*opt); }; });
}

}  // namespace tally::cli
