// callgrind_parse FILE [--lexers N] [--chunk BYTES] [--by-function]: reads FILE into memory
// and times callgrind::read_profile on it (the reader alone, as callgrind_vs_annotate.sh
// uses it). Prints what it read (so that a fast but wrong reader shows), the parse time,
// the CPU time of the thread that applies the lines (the critical path when others lex)
// and of the process, and the throughput; exits 1 if the file does not read.
//   --lexers N     lexer threads (callgrind::Lexing; 0: the reading thread lexes too);
//                  default: what read_profile chooses for the file's size on this machine
//   --chunk BYTES  chunk size of the lexers (default 64 KiB)
//   --by-function  read by function with counts, as `tally cat --summary` and `tally top` do
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "formats/callgrind/callgrind.h"

using namespace tally;

namespace {

double cpu_seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int usage(const char* self) {
  std::fprintf(stderr, "usage: %s FILE [--lexers N] [--chunk BYTES] [--by-function]\n", self);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage(argv[0]);
  const char* path = argv[1];
  long lexers = -1;
  long chunk = 0;
  bool by_function = false;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--lexers") == 0 && i + 1 < argc) {
      lexers = std::strtol(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--chunk") == 0 && i + 1 < argc) {
      chunk = std::strtol(argv[++i], nullptr, 10);
    } else if (std::strcmp(argv[i], "--by-function") == 0) {
      by_function = true;
    } else {
      return usage(argv[0]);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "callgrind_parse: cannot open %s\n", path);
    return 1;
  }
  in.seekg(0, std::ios::end);
  std::vector<uint8_t> bytes(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  callgrind::Lexing lexing = callgrind::default_lexing(bytes.size());
  if (lexers >= 0) lexing.threads = static_cast<unsigned>(lexers);
  if (chunk > 0) lexing.chunk_bytes = static_cast<size_t>(chunk);
  const auto t1 = std::chrono::steady_clock::now();
  const double thread0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  const double process0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
  core::Diagnostics diagnostics;
  core::PositionCounts counts;
  auto profile = callgrind::read_profile_with(
      bytes, path, diagnostics, lexing, nullptr, nullptr,
      by_function ? core::PositionDetail::functions : core::PositionDetail::full,
      by_function ? &counts : nullptr);
  const auto t2 = std::chrono::steady_clock::now();
  const double thread_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - thread0;
  const double process_cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - process0;
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
  if (by_function)
    std::printf("counted_locations %llu\ncounted_self_costs %llu\n",
                static_cast<unsigned long long>(counts.locations),
                static_cast<unsigned long long>(counts.samples));
  for (size_t k = 0; k < p.sample_types.size(); ++k)
    std::printf("total %s %lld\n", std::string(p.str(p.sample_types[k].type)).c_str(),
                static_cast<long long>(p.total(k)));
  std::printf("warnings %zu\nlexers %u\nload_s %.3f\nparse_s %.3f\nreader_thread_cpu_s %.3f\n"
              "process_cpu_s %.3f\nparse_MB_per_s %.1f\n",
              diagnostics.warnings().size(), lexing.threads, load, parse, thread_cpu, process_cpu,
              mb / parse);
  return 0;
}
