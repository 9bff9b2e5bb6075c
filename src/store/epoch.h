// Epochs: the database is split in time into epochs (DCPI's dcpiepoch), each a directory
// named by its start time in UTC as YYYYMMDDHHMMSS, so that names sort in time order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace tally::store {

// "20250102030405" for 2025-01-02 03:04:05 UTC.
std::string epoch_name(int64_t unix_seconds);

// The start time of an epoch name, or nullopt when `name` is not one (14 digits, a valid
// date and time).
std::optional<int64_t> epoch_seconds(std::string_view name);

// The name for an epoch starting `now`, later than every name in `existing` (two epochs
// started within a second get consecutive seconds).
std::string next_epoch_name(const std::vector<std::string>& existing, int64_t now);

// A point in time as --since takes it: an epoch-style UTC time with trailing fields left
// out ("20250102", "2025010203"), an ISO date "2025-01-02" or "2025-01-02T03:04:05"
// (UTC), or a duration before `now`: "90s", "30m", "2h", "7d".
core::Expected<int64_t> parse_time(std::string_view text, int64_t now);

}  // namespace tally::store
