#include <cstddef>
#include <typeinfo>

#include "header_shape.h"
#ifdef TALLY_HAVE_GPERFTOOLS_HEADER
#include <gperftools/profiler.h>
#endif

namespace tally::test {
#ifdef TALLY_HAVE_GPERFTOOLS_HEADER
TALLY_HEADER_SHAPE(gperftools_header_shape)
#else
HeaderShape gperftools_header_shape() { return {}; }
#endif
}  // namespace tally::test
