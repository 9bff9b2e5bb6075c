// libtally_dcpi.so: a region histogram as a DCPI profile file, with the DCPI format's own
// structs and writer (formats/dcpi) and tally's atomic file writer (io/), for
// tally_sprofil_write_dcpi() (sprofil_dcpi_module.h).
#include <sys/utsname.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <ctime>
#include <limits>
#include <map>
#include <cstdio>
#include <exception>
#include <string>

#include "formats/dcpi/dcpi_file.h"
#include "io/output.h"
#include "runtime/loaded_image.h"
#include "runtime/sprofil_dcpi_module.h"
#include "runtime/sprofil_regions.h"
#include "tally/sprofil.h"

namespace tally::runtime {

namespace {

// Counters may still be counting: read them as the handler writes them.
uint64_t read_counter(const void* base, uint64_t index, unsigned size) {
  auto load = [&]<class T>(T*) {
    return static_cast<uint64_t>(
        std::atomic_ref<T>(const_cast<T*>(static_cast<const T*>(base))[index])
            .load(std::memory_order_relaxed));
  };
  switch (size) {
    case 2:
      return load(static_cast<uint16_t*>(nullptr));
    case 4:
      return load(static_cast<uint32_t*>(nullptr));
    default:
      return load(static_cast<uint64_t*>(nullptr));
  }
}

// The first address of counter k: start + ceil(k * 2^shift / scale).
uint64_t bin_start(const ProfRegion& r, uint64_t k, unsigned shift) {
  __extension__ typedef unsigned __int128 u128;
  u128 off = ((static_cast<u128>(k) << shift) + r.scale - 1) / r.scale;
  return r.start + static_cast<uint64_t>(off);
}

std::string hex(uint64_t v) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kDigits[v & 15]);
    v >>= 4;
  } while (v != 0);
  return s;
}

std::string platform() {
  struct utsname u;
  if (uname(&u) != 0) return "unknown";
  return std::string(u.sysname) + " " + u.machine;
}

// Each segment's counts at the first address of each bin the segment starts, so that each
// region becomes a list of chunks that never crosses another region's addresses; a bin
// split by another region is written once, at its first address its region owns. Returns
// 0 or errno (EOVERFLOW: a count above 32 bits).
int fill_chunks(const RegionTable& table, uint64_t tstart, dcpi::DcpiFile& file) {
  std::vector<uint64_t> next_bin(table.region_count(), 0);
  for (size_t i = 0; i < table.segment_count(); ++i) {
    const Segment& s = table.segment(i);
    const ProfRegion& r = table.region(s.region);
    const unsigned shift = table.shift();
    uint64_t first = std::max(counter_index(s.start - r.start, r.scale, shift), next_bin[s.region]);
    const uint64_t last = counter_index(s.end - 1 - r.start, r.scale, shift);
    std::map<uint32_t, uint32_t> counts;
    for (uint64_t k = first; k <= last && k < r.counters; ++k) {
      const uint64_t n = read_counter(r.base, k, table.counter_size());
      if (n == 0) continue;
      if (n > std::numeric_limits<uint32_t>::max()) return EOVERFLOW;
      counts[static_cast<uint32_t>(std::max(s.start, bin_start(r, k, shift)) - tstart)] =
          static_cast<uint32_t>(n);
    }
    next_bin[s.region] = last + 1;
    for (dcpi::Chunk& c : dcpi::make_chunks(counts)) file.chunks.push_back(std::move(c));
  }
  return 0;
}

int write_dcpi_file(const prof* profp, int profcnt, unsigned flags, uint64_t interval_ns,
                    const char* path, std::string& error) {
  if (profp == nullptr || profcnt <= 0 || path == nullptr) return EINVAL;
  RegionTablePtr table;
  if (int e = RegionTable::build(profp, profcnt, flags, table)) return e;
  const size_t segments = table->segment_count();
  const uint64_t tstart = segments == 0 ? 0 : table->segment(0).start;
  const uint64_t tsize = segments == 0 ? 0 : table->segment(segments - 1).end - tstart;
  if (tsize > (uint64_t{1} << 32)) {
    error = "the regions span more than 4 GiB; DCPI offsets are 32-bit";
    return EOVERFLOW;
  }

  dcpi::DcpiFile file;
  auto line = [&](std::string key, std::string value) {
    file.header.push_back({std::move(key), std::move(value)});
  };
  std::optional<LoadedImage> image;
  if (segments > 0) image = find_loaded_image(tstart);
  line("version", "pdb-0.07");
  line("image", image && !image->build_id.empty() ? image->build_id : "0");
  if (image && !image->path.empty()) line("path", image->path);
  line("epoch", dcpi::Epoch::from_unix_seconds(std::time(nullptr), false).format());
  line("platform", platform());
  // One count is one kernel tick of CPU time.
  line("event", "cpu");
  line("period", std::to_string(interval_ns));
  line("tstart", hex(tstart));
  line("tsize", std::to_string(tsize));
  line("cpuspeed", "0");
  line("eventunit", "nanoseconds");
  if (image && image->file_offset != 0) line("tfileoffset", hex(image->file_offset));
  if (table->overflow_counter() != nullptr)
    line("sprofiloverflow",
         std::to_string(read_counter(table->overflow_counter(), 0, table->counter_size())));
  if (int e = fill_chunks(*table, tstart, file)) {
    error = "a count above 2^32-1; DCPI counts are 32-bit";
    return e;
  }
  auto bytes = dcpi::write_dcpi(file);
  if (!bytes) {
    error = bytes.error().message;  // the footer's 32-bit totals
    return EOVERFLOW;
  }
  if (auto written = io::write_file_atomically(path, *bytes); !written) {
    error = written.error().message;
    return EIO;
  }
  return 0;
}

}  // namespace

}  // namespace tally::runtime

extern "C" __attribute__((visibility("default"))) int tally_dcpi_write_sprofil(
    const struct prof* profp, int profcnt, unsigned flags, uint64_t interval_ns,
    const char* path, char* error, size_t error_size) {
  std::string message;
  int outcome;
  try {
    outcome = tally::runtime::write_dcpi_file(profp, profcnt, flags, interval_ns, path, message);
  } catch (const std::exception& e) {
    message = e.what();
    outcome = ENOMEM;
  }
  std::snprintf(error, error_size, "%s", message.c_str());
  return outcome;
}
