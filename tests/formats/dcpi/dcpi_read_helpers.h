// Shorthands for the tests: read a DCPI file from a string, and find header lines.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "formats/dcpi/dcpi_file.h"
#include "dcpi_encoder.h"
#include "support/test_support.h"

namespace tally::dcpi::test {

inline core::Expected<DcpiFile> read_string(const std::string& bytes,
                                            core::Diagnostics& diagnostics) {
  return read_dcpi(tally::test::bytes_of(bytes), "t.dcpi", diagnostics);
}

inline core::Expected<DcpiFile> read_string(const std::string& bytes) {
  core::Diagnostics diagnostics;
  return read_string(bytes, diagnostics);
}

// The error message of a read that must fail ("" and a test failure if it succeeded).
inline std::string read_error(const std::string& bytes) {
  auto r = read_string(bytes);
  EXPECT_FALSE(r.has_value()) << "the file was accepted";
  return r ? std::string() : r.error().message;
}

// required_lines() with the line starting with `key + " "` replaced (or removed if
// `replacement` is empty).
inline std::vector<std::string> with_line(const std::string& key, const std::string& replacement) {
  std::vector<std::string> lines = required_lines();
  auto it = std::find_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.starts_with(key + " "); });
  EXPECT_NE(it, lines.end()) << key;
  if (replacement.empty())
    lines.erase(it);
  else
    *it = replacement;
  return lines;
}

// A file with these header lines, one small chunk and its footer.
inline std::string file_with(const std::vector<std::string>& lines) {
  return canonical_file(lines, {{8, {2, 3}}});
}

}  // namespace tally::dcpi::test
