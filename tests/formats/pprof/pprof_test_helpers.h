// What the pprof tests share: gzip done by the tests themselves (zlib directly), tally's
// pprof reader and writer end to end, readable views of a core::Profile, and the fixtures.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/profile.h"
#include "support/test_support.h"  // bytes_of

namespace tally::test {

// gzip / gunzip with zlib, not with tally's io::gzip. gzip_bytes writes one member;
// gunzip_bytes reads every member of a multi-member file, as gzip(1) does.
std::string gzip_bytes(const std::string& data);
std::string gunzip_bytes(const std::string& gz);
// The number of gzip members in `gz` (each ends where zlib reports the end of a stream).
size_t gzip_member_count(const std::string& gz);

// pprof::read_profile on `bytes` (gzipped or plain), named "test.pb.gz" in errors.
core::Expected<core::Profile> read_pprof_profile(const std::string& bytes);
// pprof::write_profile: the gzipped bytes tally writes for `profile`.
std::string write_pprof_profile(const core::Profile& profile);

// Frame names of sample i, leaf first: each location's lines innermost first, named by
// function name ("?" without one), joined with ";".
std::string stack_names(const core::Profile& profile, size_t sample);

// google/pprof's own -proto outputs in shared/fixtures/gperf: names without .pb.gz, sorted.
std::vector<std::string> pprof_proto_fixture_names();
std::string pprof_proto_fixture_path(const std::string& name);

// Names a GoogleTest parameter: "split-f100" -> "split_f100".
std::string test_name(std::string name);

}  // namespace tally::test
