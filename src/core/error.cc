#include "core/error.h"

namespace tally::core {

Error FormatError::located(const std::string& source) const {
  const char* unit = kind_ == PositionKind::byte ? "byte" : "line";
  return Error{source + ": " + unit + " " + std::to_string(position_) + ": " + what()};
}

}  // namespace tally::core
