// The inputs the robustness tests mangle: every gperf fixture, and the DCPI files that
// tally's own converter makes from them (one per image with samples).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tally::test {

struct NamedInput {
  std::string name;
  std::vector<uint8_t> bytes;
  // Where the binary part ends and the text begins (gperf: after the trailer), or where
  // the text header ends and the binary begins (DCPI: after the "samples" line).
  size_t boundary = 0;
};

std::vector<NamedInput> gperf_inputs();
std::vector<NamedInput> dcpi_inputs();

}  // namespace tally::test
