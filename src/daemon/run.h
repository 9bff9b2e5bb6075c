// `tally daemon`: continuous profiling of the whole machine (DCPI's dcpid). Samples every
// CPU for every process, attributes each sample to its image and offset (collector.h),
// aggregates in memory and flushes into the profile database every flush_seconds, on
// `tally flush`, before `tally epoch` starts a new epoch, and on SIGTERM / SIGINT before it
// exits. With --push it also pushes each interval's profiles to a fleet store (pusher.h).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "collect/event_spec.h"
#include "core/error.h"
#include "daemon/options.h"
#include "daemon/push_transport.h"

namespace tally::daemon {

// Runs until SIGTERM / SIGINT (or a failure to read the rings). `transport`: the push's,
// opened by the caller from the command line (present exactly when options.push.url is
// set). An error when the daemon cannot start, or when its last flush failed (logged too).
core::Status run(const Options& options, std::optional<PushTransport> transport);

// EVENT or EVENT:PERIOD (a fixed period: every PERIOD events, or nanoseconds of a clock).
core::Expected<std::pair<collect::EventSpec, uint64_t>> parse_event_and_period(const std::string& text);

}  // namespace tally::daemon
