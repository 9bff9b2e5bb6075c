// Reading one format's input in its tests, text in and a profile out: read_ok(text),
// read_ok(text, diagnostics), read_error(text) and read_file(path, diagnostics). `Reader`
// names the format's reader (`read`, called as read(bytes, source, diagnostics), which every
// format's read_profile can be) and the `source` its test inputs are called by. read_ok and
// read_file throw on an error, so that the test fails with the reader's message. A format's
// test helpers declare them once:
//   inline constexpr tally::test::ReadOk<Reader> read_ok{};
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/diagnostics.h"
#include "core/profile.h"
#include "support/test_support.h"

namespace tally::test {

template <class Reader>
struct ReadOk {
  core::Profile operator()(std::string_view text, core::Diagnostics& diagnostics) const {
    auto p = Reader::read(bytes_of(text), std::string(Reader::source), diagnostics);
    if (!p) throw std::runtime_error("unexpected read error: " + p.error().message);
    return std::move(p).value();
  }
  core::Profile operator()(std::string_view text) const {
    core::Diagnostics diagnostics;
    return (*this)(text, diagnostics);
  }
};

// The error message of a read that must fail ("" if it succeeded).
template <class Reader>
struct ReadError {
  std::string operator()(std::string_view text) const {
    core::Diagnostics diagnostics;
    auto p = Reader::read(bytes_of(text), std::string(Reader::source), diagnostics);
    return p ? std::string() : p.error().message;
  }
};

template <class Reader>
struct ReadFile {
  core::Profile operator()(const std::string& path, core::Diagnostics& diagnostics) const {
    const std::vector<uint8_t> bytes = read_bytes(path);
    auto p = Reader::read(bytes, path, diagnostics);
    if (!p) throw std::runtime_error("unexpected read error: " + p.error().message);
    return std::move(p).value();
  }
};

}  // namespace tally::test
