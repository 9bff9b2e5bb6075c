// gzip (RFC 1952) with zlib: profiles may arrive compressed (pprof always is).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"

namespace tally::io {

bool is_gzip(std::span<const uint8_t> bytes);

// Inflates every gzip member of `bytes`. Fails with a clear message on corrupt or
// truncated data, and when the output would exceed `max_output` bytes.
core::Expected<std::vector<uint8_t>> gunzip(std::span<const uint8_t> bytes,
                                            const std::string& source,
                                            uint64_t max_output = uint64_t(16) << 30);

std::string gzip(std::string_view data, int level = 6);

}  // namespace tally::io
