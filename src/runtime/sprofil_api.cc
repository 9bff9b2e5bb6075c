// tally_sprofil() and tally_profil(): argument rules (sprofil_regions.cc) and the switch to
// the new regions (sprofil_sampler.cc).
#include <cerrno>

#include "runtime/sprofil_regions.h"
#include "runtime/sprofil_sampler.h"
#include "tally/sprofil.h"

using tally::runtime::RegionTable;
using tally::runtime::RegionTablePtr;

namespace {

void put_interval(struct timeval* tvp) {
  const uint64_t us = tally::runtime::sprofil_interval_ns() / 1000u;
  tvp->tv_sec = static_cast<time_t>(us / 1'000'000u);
  tvp->tv_usec = static_cast<suseconds_t>(us % 1'000'000u);
}

int fail(int error) {
  errno = error;
  return -1;
}

int enable(const struct prof* profp, int profcnt, unsigned flags,
           RegionTable::Entries entries = RegionTable::Entries::sprofil) {
  RegionTablePtr table;
  // A failed call changes nothing: the regions counted so far stay.
  if (int e = RegionTable::build(profp, profcnt, flags, table, entries)) return fail(e);
  if (int e = tally::runtime::replace_sprofil_table(std::move(table))) return fail(e);
  return 0;
}

int disable() {
  if (int e = tally::runtime::replace_sprofil_table(nullptr)) return fail(e);
  return 0;
}

}  // namespace

extern "C" int tally_sprofil(struct prof* profp, int profcnt, struct timeval* tvp,
                             unsigned int flags) {
  if (profcnt < 0 || profcnt > TALLY_PROFIL_MAX) return fail(E2BIG);
  if (tvp != nullptr) put_interval(tvp);
  if (profp == nullptr || profcnt == 0) return disable();
  return enable(profp, profcnt, flags);
}

extern "C" int tally_profil(unsigned short* buf, size_t bufsiz, size_t offset,
                            unsigned int scale) {
  // profil(2): "turned off by giving a scale of 0 or 1", "rendered ineffective by giving a
  // bufsiz of 0"; an odd byte at the end holds no counter.
  bufsiz -= bufsiz % sizeof(unsigned short);
  if (buf == nullptr || scale < 2 || bufsiz == 0) return disable();
  // profil() is sprofil() with one entry, tvp NULL and PROF_USHORT (sprofil(2)); its entry
  // is a region even at offset 0 with scale 2, where sprofil() would see an overflow bin.
  struct prof one{};
  one.pr_base = buf;
  one.pr_size = bufsiz;
  one.pr_off = offset;
  one.pr_scale = scale;
  return enable(&one, 1, PROF_USHORT, RegionTable::Entries::profil);
}
