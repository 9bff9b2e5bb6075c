#include "runtime/pprof_module.h"

#include "runtime/companion_module.h"

namespace tally::runtime {

int write_pprof_from_gperf(int gperf_fd, const char* path, char* error, size_t error_size) {
  auto writer = reinterpret_cast<TallyPprofWriter>(companion_symbol(
      TALLY_PPROF_MODULE_NAME, "TALLY_PPROF_MODULE", TALLY_PPROF_WRITER_SYMBOL, error, error_size));
  if (writer == nullptr) return -1;
  return writer(gperf_fd, path, error, error_size);
}

}  // namespace tally::runtime
