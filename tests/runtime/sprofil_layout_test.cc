// tally's struct prof has glibc's layout and its flags glibc's values, so that one array
// is handed to glibc's sprofil() and to tally_sprofil(). glibc's header is read into a
// namespace of its own here, to compare the two definitions side by side.
#include <stddef.h>
#include <sys/time.h>
#include <sys/types.h>

namespace glibc {
#include <sys/profil.h>
}
#undef _PROFIL_H
#include "tally/sprofil.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace {

static_assert(sizeof(prof) == sizeof(glibc::prof));
static_assert(alignof(prof) == alignof(glibc::prof));
static_assert(offsetof(prof, pr_base) == offsetof(glibc::prof, pr_base));
static_assert(offsetof(prof, pr_size) == offsetof(glibc::prof, pr_size));
static_assert(offsetof(prof, pr_off) == offsetof(glibc::prof, pr_off));
static_assert(offsetof(prof, pr_offset) == offsetof(glibc::prof, pr_off));
static_assert(offsetof(prof, pr_scale) == offsetof(glibc::prof, pr_scale));
static_assert(sizeof(prof::pr_size) == sizeof(glibc::prof::pr_size));
static_assert(sizeof(prof::pr_off) == sizeof(glibc::prof::pr_off));
static_assert(sizeof(prof::pr_offset) == sizeof(glibc::prof::pr_off));
static_assert(sizeof(prof::pr_scale) == sizeof(glibc::prof::pr_scale));
static_assert(std::is_same_v<decltype(prof::pr_scale), decltype(glibc::prof::pr_scale)>);
static_assert(int{PROF_USHORT} == int{glibc::PROF_USHORT});
static_assert(int{PROF_UINT} == int{glibc::PROF_UINT});
static_assert(int{PROF_FAST} == int{glibc::PROF_FAST});
// HP-UX's 64-bit counters take a bit glibc does not use.
static_assert((PROF_UINT64 & (int{glibc::PROF_UINT} | int{glibc::PROF_FAST})) == 0);

TEST(SprofilLayout, HpUxSpellingIsTheSameField) {
  prof p{};
  int anchor = 0;
  p.pr_offset = &anchor;  // HP-UX code assigns a pointer
  EXPECT_EQ(p.pr_off, reinterpret_cast<size_t>(&anchor));
}

}  // namespace
