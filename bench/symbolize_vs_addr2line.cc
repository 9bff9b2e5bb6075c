// Times tally's symbolizer against `addr2line -f -i -C -e BINARY` on the same set of N
// unique addresses inside the functions of a big binary (issue 5 aims at >= 10x).
//   symbolize_vs_addr2line BINARY [N] [--runs R] [--dump FILE]
// Each of R rounds (default 5) runs tally on 1 thread, tally on every core and addr2line
// once, in that order, so that a change of load hits all three; the medians are compared.
// --dump FILE writes every address's frames (function, system name, file, line), for
// comparing two builds of the symbolizer.
// BINARY: a big library such as /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1 (symbol table
// only without its debug package) or a big program built with -g (DWARF and inlines).
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/profile.h"
#include "symbolize/symbolize.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Function {
  uint64_t address, size;
};

// Sized functions of .symtab, or of .dynsym when the file has no .symtab.
std::vector<Function> functions_of(Elf* elf) {
  std::vector<Function> found[2];
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (!gelf_getshdr(scn, &header) ||
        (header.sh_type != SHT_SYMTAB && header.sh_type != SHT_DYNSYM))
      continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    auto& out = found[header.sh_type == SHT_SYMTAB ? 0 : 1];
    for (size_t i = 0; i < header.sh_size / header.sh_entsize; ++i) {
      GElf_Sym sym;
      gelf_getsym(data, static_cast<int>(i), &sym);
      if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF && sym.st_size > 0)
        out.push_back({sym.st_value, sym.st_size});
    }
  }
  return found[0].empty() ? found[1] : found[0];
}

double cpu_seconds(const rusage& usage) {
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// The middle value, or the mean of the two middle ones.
double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One line per address (in address order): its frames, innermost first.
void dump_frames(const tally::core::Profile& profile, const std::string& path) {
  std::vector<std::pair<uint64_t, std::string>> rows;
  for (const auto& location : profile.locations) {
    std::string row;
    for (const auto& line : location.lines) {
      const auto& function = profile.function(line.function);
      row += std::string(profile.str(function.name)) + "|" +
             std::string(profile.str(function.system_name)) + "|" +
             std::string(profile.str(function.filename)) + "|" +
             std::to_string(function.start_line) + "|" + std::to_string(line.line) + "; ";
    }
    rows.emplace_back(location.address, std::move(row));
  }
  std::sort(rows.begin(), rows.end());
  FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return;
  for (const auto& [address, row] : rows)
    std::fprintf(out, "%#llx %s\n", static_cast<unsigned long long>(address), row.c_str());
  std::fclose(out);
}

}  // namespace

int main(int argc, char** argv) {
  std::string binary, dump_path;
  size_t wanted = 20000, runs = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--dump" || arg == "--runs") && i + 1 < argc) {
      if (arg == "--dump") dump_path = argv[++i];
      else runs = std::strtoull(argv[++i], nullptr, 10);
    } else if (binary.empty()) {
      binary = arg;
    } else {
      wanted = std::strtoull(arg.c_str(), nullptr, 10);
    }
  }
  if (binary.empty() || wanted == 0 || runs == 0) {
    std::fprintf(stderr, "usage: %s BINARY [N] [--runs R] [--dump FILE]\n", argv[0]);
    return 2;
  }

  elf_version(EV_CURRENT);
  int fd = open(binary.c_str(), O_RDONLY);
  Elf* elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, nullptr) : nullptr;
  if (elf == nullptr) {
    std::fprintf(stderr, "cannot read %s\n", binary.c_str());
    return 1;
  }
  // The executable segment, for a mapping laid out as the loader would.
  GElf_Phdr text{};
  size_t count = 0;
  elf_getphdrnum(elf, &count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr header;
    gelf_getphdr(elf, static_cast<int>(i), &header);
    if (header.p_type == PT_LOAD && (header.p_flags & PF_X)) {
      text = header;
      break;
    }
  }
  // N unique addresses spread over the functions, in random order (as samples come).
  std::vector<uint64_t> addresses;
  std::mt19937_64 random(42);
  auto functions = functions_of(elf);
  // Enough per function to reach N after duplicates are dropped.
  const uint64_t per_function = std::max<uint64_t>(4, 2 * wanted / std::max<size_t>(1, functions.size()));
  for (const auto& f : functions)
    for (uint64_t k = 0; k < per_function; ++k) addresses.push_back(f.address + (random() % f.size));
  elf_end(elf);
  close(fd);
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  std::shuffle(addresses.begin(), addresses.end(), random);
  if (addresses.size() > wanted) addresses.resize(wanted);

  const uint64_t base = 0x7f0000000000;
  auto make_profile = [&] {
    tally::core::Profile profile;
    tally::core::Mapping mapping;
    mapping.start = base + (text.p_vaddr & ~uint64_t{0xfff});
    mapping.limit = base + text.p_vaddr + text.p_memsz;
    mapping.offset = text.p_offset & ~uint64_t{0xfff};
    mapping.file = profile.intern(binary);
    auto id = profile.add_mapping(mapping);
    for (uint64_t a : addresses) profile.add_location({.mapping = id, .address = base + a, .lines = {}});
    return profile;
  };

  std::printf("%s: %zu functions, %zu unique addresses, %zu runs\n", binary.c_str(),
              functions.size(), addresses.size(), runs);

  char list[] = "/tmp/tally-sym-bench-XXXXXX";
  int list_fd = mkstemp(list);
  std::string text_list;
  for (uint64_t a : addresses) {
    char line[32];
    std::snprintf(line, sizeof line, "%#llx\n", static_cast<unsigned long long>(a));
    text_list += line;
  }
  if (list_fd < 0 ||
      write(list_fd, text_list.data(), text_list.size()) != static_cast<ssize_t>(text_list.size()))
    return 1;
  close(list_fd);
  const std::string command = "addr2line -f -i -C -e '" + binary + "' < " + list + " > /dev/null";

  const unsigned thread_counts[2] = {1, std::max(1u, std::thread::hardware_concurrency())};
  std::vector<double> tally_wall[2], tally_cpu[2], addr2line_wall, addr2line_cpu;
  size_t frames = 0;
  for (size_t run = 0; run < runs; ++run) {
    for (int i = 0; i < 2; ++i) {
      auto profile = make_profile();
      tally::core::Diagnostics diagnostics;
      tally::symbolize::Options options;
      options.threads = thread_counts[i];
      rusage before{}, after{};
      getrusage(RUSAGE_SELF, &before);
      auto start = Clock::now();
      (void)tally::symbolize::symbolize(profile, options, diagnostics);
      tally_wall[i].push_back(seconds_since(start));
      getrusage(RUSAGE_SELF, &after);
      tally_cpu[i].push_back(cpu_seconds(after) - cpu_seconds(before));
      frames = 0;
      for (const auto& l : profile.locations) frames += l.lines.size();
      std::printf("run %zu: tally symbolize, %u thread(s): %.3f s (%zu frames, %.3f s cpu, %ld page faults)\n",
                  run + 1, thread_counts[i], tally_wall[i].back(), frames, tally_cpu[i].back(),
                  after.ru_minflt - before.ru_minflt);
      if (run == 0 && i == 1 && !dump_path.empty()) dump_frames(profile, dump_path);
    }
    rusage children_before{}, children_after{};
    getrusage(RUSAGE_CHILDREN, &children_before);
    auto start = Clock::now();
    int status = std::system(command.c_str());
    addr2line_wall.push_back(seconds_since(start));
    getrusage(RUSAGE_CHILDREN, &children_after);
    addr2line_cpu.push_back(cpu_seconds(children_after) - cpu_seconds(children_before));
    if (status != 0) {
      unlink(list);
      std::fprintf(stderr, "addr2line failed\n");
      return 1;
    }
    std::printf("run %zu: addr2line -f -i -C: %.3f s (%.3f s cpu)\n", run + 1,
                addr2line_wall.back(), addr2line_cpu.back());
  }
  unlink(list);

  const double a_wall = median(addr2line_wall), a_cpu = median(addr2line_cpu);
  std::printf("medians of %zu runs:\n", runs);
  for (int i = 0; i < 2; ++i)
    std::printf("  tally, %u thread(s): %.3f s wall, %.3f s cpu\n", thread_counts[i],
                median(tally_wall[i]), median(tally_cpu[i]));
  std::printf("  addr2line -f -i -C: %.3f s wall, %.3f s cpu\n", a_wall, a_cpu);
  std::printf("ratio addr2line / tally, wall: %.1fx (1 thread), %.1fx (%u threads)\n",
              a_wall / median(tally_wall[0]), a_wall / median(tally_wall[1]), thread_counts[1]);
  // CPU time is what a loaded machine distorts least; all threads' time added up.
  std::printf("ratio addr2line / tally, cpu:  %.1fx (1 thread), %.1fx (%u threads)\n",
              a_cpu / median(tally_cpu[0]), a_cpu / median(tally_cpu[1]), thread_counts[1]);
  return 0;
}
