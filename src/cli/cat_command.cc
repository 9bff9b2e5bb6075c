// `tally cat FILE`: the contents of any supported file in readable form (header fields,
// then every record or address with its counts), like dcpicat; `--summary` prints totals.
#include <fmt/format.h>

#include <memory>

#include "cli/command.h"
#include "cli/summary.h"
#include "formats/dcpi/dcpi_file.h"
#include "formats/format.h"
#include "formats/gperf/binary_inspector.h"
#include "formats/gperf/gperf_file.h"
#include "io/input.h"

namespace tally::cli {

namespace {

struct CatOptions {
  std::string file;
  bool summary = false;
};

void cat_gperf(const io::Input& in) {
  gperf::RecordScanner scanner(in.bytes());
  const gperf::Header& h = scanner.header();
  fmt::print("# {}: gperftools CPU profile, {}, {} bytes\n", in.name(), layout_name(h.layout),
             in.bytes().size());
  fmt::print("header 0 {} {} {}", h.slots_after_count, h.version, h.period_us);
  for (uint64_t slot : h.extra) fmt::print(" {}", slot);
  fmt::print("\nperiod {} us\n", h.period_us);
  gperf::Record r;
  uint64_t records = 0, samples = 0;
  std::string line;
  while (scanner.next(r)) {
    ++records;
    samples += r.count;
    line = fmt::format("record {} at byte {}: count {}, {} pcs:", records, r.offset, r.count,
                       r.pcs.size());
    for (uint64_t pc : r.pcs) fmt::format_to(std::back_inserter(line), " 0x{:x}", pc);
    line += '\n';
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  if (scanner.has_trailer()) fmt::print("trailer 0 1 0\n");
  else fmt::print("# no trailer: the binary part ends at byte {}\n", scanner.offset());
  fmt::print("# {} records, {} samples\n", records, samples);
  std::string_view maps = scanner.mapped_objects();
  fmt::print("# mapped objects ({} bytes)\n", maps.size());
  std::fwrite(maps.data(), 1, maps.size(), stdout);
  if (!maps.empty() && maps.back() != '\n') fmt::print("\n");
}

core::Status cat_dcpi(const io::Input& in, core::Diagnostics& diagnostics) {
  auto file = dcpi::read_dcpi(in.bytes(), in.name(), diagnostics);
  if (!file) return file.error();
  auto fields = dcpi::parse_fields(*file, in.name());
  if (!fields) return fields.error();
  fmt::print("# {}: DCPI profile, {} bytes\n", in.name(), in.bytes().size());
  for (const auto& l : file->header) fmt::print("{} {}\n", l.key, l.value);
  fmt::print("samples\n# address count (tstart 0x{:x} + offset)\n", fields->tstart);
  std::string out;
  for (const auto& c : file->chunks) {
    for (size_t i = 0; i < c.counts.size(); ++i) {
      if (c.counts[i] == 0) continue;
      fmt::format_to(std::back_inserter(out), "0x{:x} {}\n", fields->tstart + c.offset + i,
                     c.counts[i]);
    }
    if (out.size() > (1 << 20)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  fmt::print("# chunks {}, total_offsets {}, total_samples {}\n", file->chunks.size(),
             file->total_offsets(), file->total_samples());
  return core::ok();
}

int run_cat(const CatOptions& opt) {
  auto in = io::Input::open(opt.file);
  if (!in) return report(in.error());
  core::Diagnostics diagnostics;
  if (opt.summary) {
    formats::Format format;
    const std::string name = in->name();
    const bool gzipped = in->was_gzipped();
    // A gperftools profile's signal frame is judged with the binaries at hand, as the
    // reports judge it (found at their recorded paths and in $PPROF_BINARY_PATH).
    const gperf::BinaryInspector binaries = gperf::binary_inspector();
    // The summary counts positions but lists none: a callgrind file is read by function,
    // its positions counted without a location each (most of the time and memory).
    core::PositionCounts positions;
    auto profile = formats::read_profile(std::move(*in), diagnostics, &format, true, &binaries,
                                         core::PositionDetail::functions, &positions);
    print_warnings(diagnostics);
    if (!profile) return report(profile.error());
    print_summary(*profile, name, format, gzipped, positions);
    return kOk;
  }
  switch (formats::detect(in->bytes())) {
    case formats::Format::gperf:
      try {
        cat_gperf(*in);
      } catch (const core::FormatError& e) {
        std::fflush(stdout);
        return report(e.located(in->name()));
      }
      break;
    case formats::Format::dcpi: {
      auto st = cat_dcpi(*in, diagnostics);
      print_warnings(diagnostics);
      if (!st) return report(st.error());
      break;
    }
    default: {  // formats without a file-level view: the model, record by record
      formats::Format format;
      auto profile = formats::read_profile(*in, diagnostics, &format);
      print_warnings(diagnostics);
      if (!profile) return report(profile.error());
      print_profile(*profile, in->name(), format);
      break;
    }
  }
  return kOk;
}

}  // namespace

void add_cat_command(CLI::App& app, Runner& run) {
  auto opt = std::make_shared<CatOptions>();
  CLI::App* cmd = app.add_subcommand(
      "cat", "Print a profile file in readable form: its header, then every record or address "
             "with its counts (like dcpicat). The format is detected from the content.");
  cmd->add_option("FILE", opt->file, "profile file, or - for standard input")->required();
  cmd->add_flag("-s,--summary", opt->summary,
                "print only the totals: samples, distinct stacks, mappings, period");
  cmd->final_callback([opt, &run] { run = [opt] { return run_cat(*opt); }; });
}

}  // namespace tally::cli
