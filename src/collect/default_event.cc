#include "collect/default_event.h"

#include "collect/perf_open.h"

namespace tally::collect {

DefaultEvent default_sampling_event() {
  auto cycles = parse_event("cycles");
  if (cycles) {
    // Tried on ourselves, user space only, never enabled: whether the PMU has the event.
    perf_event_attr attr = counting_attr(*cycles, false, false);
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    if (open_event(attr, *cycles, 0, -1))
      return {*cycles, "sampling cycles (the hardware cycle counter)"};
  }
  auto clock = parse_event("cpu-clock");
  return {*clock, "sampling cpu-clock: this machine has no hardware cycle counter (-e to choose)"};
}

}  // namespace tally::collect
