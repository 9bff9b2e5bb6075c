#include "fixture_inputs.h"

#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "formats/format.h"
#include "io/input.h"
#include "support/test_support.h"

namespace tally::test {

namespace {

// The end of the trailer (0, 1, 0) in a 64-bit little-endian profile, found by walking the
// records by hand: the fixtures' layout is known, and tally's reader is what is under test.
size_t gperf_text_start(const std::vector<uint8_t>& b) {
  auto word = [&](size_t i) {
    if ((i + 1) * 8 > b.size()) throw std::runtime_error("fixture ends inside a word");
    uint64_t v;
    std::memcpy(&v, b.data() + i * 8, 8);
    return v;
  };
  size_t w = 2 + word(1);
  while (!(word(w) == 0 && word(w + 1) == 1 && word(w + 2) == 0)) w += 2 + word(w + 1);
  return (w + 3) * 8;
}

}  // namespace

std::vector<NamedInput> gperf_inputs() {
  std::vector<NamedInput> out;
  for (const GperfFixture& f : gperf_fixtures()) {
    NamedInput in{f.name + ".prof", read_bytes(shared("fixtures/gperf/" + f.name + ".prof")), 0};
    in.boundary = gperf_text_start(in.bytes);
    out.push_back(std::move(in));
  }
  return out;
}

std::vector<NamedInput> dcpi_inputs() {
  std::vector<NamedInput> out;
  for (const NamedInput& g : gperf_inputs()) {
    auto input = io::Input::from_bytes(g.name, g.bytes);
    core::Diagnostics diagnostics;
    auto profile = formats::read_profile(input, diagnostics);
    if (!profile) throw std::runtime_error(profile.error().message);
    auto files = formats::write_profile(*profile, formats::Format::dcpi, diagnostics);
    if (!files) throw std::runtime_error(files.error().message);
    for (const formats::OutputFile& f : *files) {
      NamedInput in{g.name + "/" + f.name, {f.bytes.begin(), f.bytes.end()}, 0};
      const std::string_view text(f.bytes);
      in.boundary = text.find("\nsamples") + 1;
      in.boundary = text.find('\n', in.boundary) + 1;
      out.push_back(std::move(in));
    }
  }
  return out;
}

}  // namespace tally::test
