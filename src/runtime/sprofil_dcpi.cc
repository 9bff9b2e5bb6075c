// tally_sprofil_write_dcpi(): through the companion module libtally_dcpi.so.
#include <cerrno>
#include <cstdio>

#include "runtime/companion_module.h"
#include "runtime/sprofil_dcpi_module.h"
#include "runtime/sprofil_sampler.h"
#include "runtime/stderr_print.h"
#include "tally/sprofil.h"

extern "C" int tally_sprofil_write_dcpi(const struct prof* profp, int profcnt,
                                        unsigned int flags, const char* path) {
  char error[512] = "";
  auto writer = reinterpret_cast<TallySprofilDcpiWriter>(tally::runtime::companion_symbol(
      TALLY_DCPI_MODULE_NAME, "TALLY_DCPI_MODULE", TALLY_DCPI_WRITER_SYMBOL, error, sizeof error));
  int outcome = ELIBACC;
  if (writer != nullptr)
    outcome = writer(profp, profcnt, flags, tally::runtime::sprofil_interval_ns(), path, error,
                     sizeof error);
  if (outcome == 0) return 0;
  // Invalid arguments are the caller's to handle; anything else is worth a line.
  if (outcome != EINVAL && outcome != EFAULT && outcome != E2BIG)
    tally::runtime::print_to_stderr("tally: cannot write the DCPI profile %s: %s\n", path ? path : "(null)", error);
  errno = outcome;
  return -1;
}
