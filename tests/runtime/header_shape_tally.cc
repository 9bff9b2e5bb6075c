#include <cstddef>
#include <typeinfo>

#include "header_shape.h"
#include "tally/profiler.h"

namespace tally::test {
TALLY_HEADER_SHAPE(tally_header_shape)
}  // namespace tally::test
