// `tally convert IN -o OUT --to FORMAT`: any readable format to any writable one. The input
// format is detected from the content; "-" is stdin / stdout. Every loss is reported.
#include <fmt/format.h>

#include <memory>

#include "cli/command.h"
#include "cli/db_flags.h"
#include "cli/output.h"
#include "cli/symbolize_flags.h"
#include "formats/format.h"
#include "formats/gperf/binary_inspector.h"
#include "io/input.h"

namespace tally::cli {

namespace {

// gperf and DCPI hold addresses only: what a symbolizer finds has nowhere to go.
bool holds_function_names(formats::Format format) {
  return format != formats::Format::gperf && format != formats::Format::dcpi;
}

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string to;
  std::string value;
  bool approximate = false;
  bool compress_names = true;
  bool compress_positions = true;
  SymbolizeFlags symbolize;
  store::Selection db;
};

int run_convert(const ConvertOptions& opt) {
  auto format = formats::parse_format_name(opt.to);
  if (!format) {
    std::fprintf(stderr, "tally: error: unknown output format '%s' (expected %s)\n",
                 opt.to.c_str(), formats::writable_format_names().c_str());
    return kUsage;
  }
  if (!check_profile_source(opt.input, opt.db)) return kUsage;
  SymbolizeFlags symbolize = opt.symbolize;
  if (!holds_function_names(*format)) symbolize.mode = "none";
  core::Diagnostics diagnostics;
  std::string name = opt.db.db;
  core::Expected<core::Profile> profile = core::Profile{};
  if (using_db(opt.db)) {
    profile = read_db_selection(opt.db, symbolize);
    if (!profile) return report(profile.error());
  } else {
    auto in = io::Input::open(opt.input);
    if (!in) return report(in.error());
    name = in->name();
    const gperf::BinaryInspector binaries = gperf::binary_inspector(opt.symbolize.binary_paths);
    profile = formats::read_profile(std::move(*in), diagnostics, nullptr, true, &binaries);
    if (!profile) {
      print_warnings(diagnostics);
      return report(profile.error());
    }
    // What the symbolizer says (a binary not found) is said on stderr but is no loss of the
    // conversion: it stays out of the output's comments.
    core::Diagnostics symbolize_notes;
    auto symbolized = apply_symbolize_flags(symbolize, *profile, symbolize_notes);
    print_warnings(symbolize_notes);
    if (!symbolized) {
      print_warnings(diagnostics);
      return report(symbolized.error());
    }
  }
  auto files = formats::write_profile(std::move(*profile), *format, diagnostics,
                                        {.value = opt.value,
                                         .approximate = opt.approximate,
                                         .compress_names = opt.compress_names,
                                         .compress_positions = opt.compress_positions});
  print_warnings(diagnostics);
  if (!files) return report(files.error());
  if (files->empty()) {
    std::fprintf(stderr, "tally: error: %s: no samples to write\n", name.c_str());
    return kUnsupported;
  }

  return write_outputs(*files, opt.output, opt.to);
}

}  // namespace

void add_convert_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert a profile to another format. The input format is detected from its "
                 "content; whatever the output format cannot hold is reported on stderr.");
  cmd->add_option("INPUT", opt->input, "profile file, or - for standard input (or --db DIR)");
  cmd->add_option("-o,--output", opt->output,
                  "output file, - for standard output; for dcpi a directory when the profile "
                  "has several images (one file per image)")
      ->required();
  cmd->add_option("--to", opt->to, "output format: " + formats::writable_format_names())
      ->required();
  cmd->add_option("--value", opt->value,
                  "for formats with one value per stack (folded): the sample type to write, by "
                  "name (e.g. cpu) or index; default: samples if present, else the profile's "
                  "default type");
  cmd->add_flag("--approximate", opt->approximate,
                "write a call-graph profile (callgrind) to a stack format anyway: each self cost "
                "becomes a one-frame stack; call edges and jumps are dropped (reported)");
  cmd->add_flag("--compress-names,!--no-compress-names", opt->compress_names,
                "callgrind output: define each name once as (id) and refer to it by id (default on)");
  cmd->add_flag("--compress-positions,!--no-compress-positions", opt->compress_positions,
                "callgrind output: positions relative to the previous line (+N, -N, *) where "
                "shorter (default on)");
  // As pprof -proto: names from the binaries where they are found; an address whose binary
  // is not found stays an address (a later symbolizer may resolve it).
  opt->symbolize.name_unresolved = false;
  add_symbolize_flags(cmd, opt->symbolize, "local",
                      "local for pprof, callgrind and folded; gperf and dcpi hold addresses "
                      "only and are never symbolized");
  add_db_flags(cmd, opt->db);
  cmd->final_callback([opt, &run] { run = [opt] { return run_convert(*opt); }; });
}

}  // namespace tally::cli
