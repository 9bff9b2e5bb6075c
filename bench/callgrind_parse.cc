// callgrind_parse FILE: reads FILE into memory and times callgrind::read_profile on it,
// the stand-in for `tally convert FILE --to callgrind` in callgrind_vs_annotate.sh until
// the CLI reads callgrind. Prints what it read (so that a fast but wrong reader shows) and
// the parse time and throughput; exits 1 if the file does not read.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/diagnostics.h"
#include "formats/callgrind/callgrind.h"

using namespace tally;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FILE\n", argv[0]);
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "callgrind_parse: cannot open %s\n", argv[1]);
    return 1;
  }
  in.seekg(0, std::ios::end);
  std::vector<uint8_t> bytes(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  const auto t1 = std::chrono::steady_clock::now();
  core::Diagnostics diagnostics;
  auto profile = callgrind::read_profile(bytes, argv[1], diagnostics);
  const auto t2 = std::chrono::steady_clock::now();
  if (!profile) {
    std::fprintf(stderr, "%s\n", profile.error().message.c_str());
    return 1;
  }
  const double load = std::chrono::duration<double>(t1 - t0).count();
  const double parse = std::chrono::duration<double>(t2 - t1).count();
  const double mb = static_cast<double>(bytes.size()) / 1e6;
  const core::Profile& p = *profile;
  std::printf("bytes %zu\nparts %zu\nself_costs %zu\nlocations %zu\nfunctions %zu\n"
              "calls %zu\njumps %zu\n",
              bytes.size(), p.call_graph.parts.size(), p.sample_count(), p.locations.size(),
              p.functions.size(), p.call_graph.calls.size(), p.call_graph.jumps.size());
  for (size_t k = 0; k < p.sample_types.size(); ++k)
    std::printf("total %s %lld\n", std::string(p.str(p.sample_types[k].type)).c_str(),
                static_cast<long long>(p.total(k)));
  std::printf("warnings %zu\nload_s %.3f\nparse_s %.3f\nparse_MB_per_s %.1f\n",
              diagnostics.warnings().size(), load, parse, mb / parse);
  return 0;
}
