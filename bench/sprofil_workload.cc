// sprofil_workload MODE [REGIONS] [ROUNDS]: a fixed CPU workload (a few functions called in
// turn, so that ticks move between regions) profiled by MODE: none, glibc (sprofil) or
// tally (tally_sprofil), over this program's executable code cut into REGIONS regions of
// one 16-bit counter per 2 bytes, plus an overflow bin. Prints the process's CPU time in
// seconds, then the ticks counted. sprofil_vs_glibc.sh runs it.
#include <link.h>
#include <sys/profil.h>  // glibc's struct prof, which tally's header then uses
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tally/sprofil.h"

namespace {

struct Text {
  uint64_t start = 0, end = 0;
};

int find_text(dl_phdr_info* info, size_t, void* data) {
  auto* text = static_cast<Text*>(data);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
      text->start = info->dlpi_addr + ph.p_vaddr;
      text->end = text->start + ph.p_memsz;
      return 1;  // the first object is the executable
    }
  }
  return 0;
}

volatile uint64_t sink;

#define WORKER(name, op)                                                  \
  __attribute__((noinline)) void name(uint64_t n) {                      \
    uint64_t x = sink;                                                    \
    for (uint64_t i = 0; i < n; ++i) x = op;                              \
    sink = x;                                                             \
  }
WORKER(mix, x * 6364136223846793005ull + 1442695040888963407ull)
WORKER(rotate, (x << 13 | x >> 51) ^ i)
WORKER(shift, x ^ (x >> 7) ^ (x << 9) ^ i)
WORKER(divide, x / 7 + i * 3 + 1)

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sprofil_workload none|glibc|tally [REGIONS] [ROUNDS]\n");
    return 2;
  }
  const std::string mode = argv[1];
  size_t regions = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1000;
  const uint64_t rounds = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 4000;
  Text text;
  dl_iterate_phdr(find_text, &text);
  // At least 2 bytes (one counter) a region.
  if (regions == 0 || regions > (text.end - text.start) / 2) regions = (text.end - text.start) / 2;
  const uint64_t slice = std::max<uint64_t>(2, ((text.end - text.start) / regions) & ~uint64_t{1});
  std::vector<uint16_t> counters((slice / 2) * regions);
  uint16_t overflow = 0;
  std::vector<prof> entries(regions + 1);
  for (size_t i = 0; i < regions; ++i)
    entries[i] = prof{&counters[i * slice / 2], slice, text.start + i * slice, 65536};
  entries[regions] = prof{&overflow, sizeof overflow, 0, 2};
  const int n = static_cast<int>(regions + 1);
  int rc = 0;
  if (mode == "glibc") rc = sprofil(entries.data(), n, nullptr, PROF_USHORT);
  else if (mode == "tally") rc = tally_sprofil(entries.data(), n, nullptr, PROF_USHORT);
  else if (mode != "none") return 2;
  if (rc != 0) {
    std::perror("sprofil");
    return 1;
  }
  const double start = cpu_seconds();
  for (uint64_t r = 0; r < rounds; ++r) {
    mix(100000);
    rotate(100000);
    shift(100000);
    divide(20000);
  }
  const double cpu = cpu_seconds() - start;
  // Stop before the counters go: a tick after main returns would count into `overflow`'s
  // dead stack slot (the exit code's return addresses: a crash in _dl_fini, 1 run in 30).
  if (mode == "glibc") sprofil(nullptr, 0, nullptr, 0);
  else if (mode == "tally") tally_sprofil(nullptr, 0, nullptr, 0);
  uint64_t ticks = overflow;
  for (uint16_t c : counters) ticks += c;
  std::printf("%.4f %llu %zu\n", cpu, static_cast<unsigned long long>(ticks), regions);
  return 0;
}
