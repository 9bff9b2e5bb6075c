// The event `tally record` and `tally daemon` sample when none is given: cycles where the
// machine has a hardware cycle counter, else cpu-clock (virtual machines often have none).
#pragma once

#include <string>

#include "collect/event_spec.h"

namespace tally::collect {

struct DefaultEvent {
  EventSpec event;
  std::string why;  // "cycles (hardware counter)" / "cpu-clock: no hardware cycle counter ..."
};

DefaultEvent default_sampling_event();

}  // namespace tally::collect
