// Field numbers of google/pprof's public proto/profile.proto, copied by hand from the
// published schema (github.com/google/pprof/blob/main/proto/profile.proto), independently
// of tally's own proto file: if tally's numbering drifted, the tests would notice.
#pragma once

#include <cstdint>

namespace tally::test::schema {

namespace profile {
constexpr uint32_t sample_type = 1, sample = 2, mapping = 3, location = 4, function = 5,
                   string_table = 6, drop_frames = 7, keep_frames = 8, time_nanos = 9,
                   duration_nanos = 10, period_type = 11, period = 12, comment = 13,
                   default_sample_type = 14, doc_url = 15;
}
namespace value_type {
constexpr uint32_t type = 1, unit = 2;
}
namespace sample {
constexpr uint32_t location_id = 1, value = 2, label = 3;
}
namespace label {
constexpr uint32_t key = 1, str = 2, num = 3, num_unit = 4;
}
namespace mapping {
constexpr uint32_t id = 1, memory_start = 2, memory_limit = 3, file_offset = 4, filename = 5,
                   build_id = 6, has_functions = 7, has_filenames = 8, has_line_numbers = 9,
                   has_inline_frames = 10;
}
namespace location {
constexpr uint32_t id = 1, mapping_id = 2, address = 3, line = 4, is_folded = 5;
}
namespace line {
constexpr uint32_t function_id = 1, line = 2, column = 3;
}
namespace function {
constexpr uint32_t id = 1, name = 2, system_name = 3, filename = 4, start_line = 5;
}

}  // namespace tally::test::schema
