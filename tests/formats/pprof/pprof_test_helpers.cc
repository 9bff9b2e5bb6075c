#include "pprof_test_helpers.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "core/diagnostics.h"
#include "formats/pprof/pprof.h"
#include "support/test_support.h"

namespace tally::test {

std::string gzip_bytes(const std::string& data) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw std::runtime_error("deflate failed");
  return out;
}

namespace {

// Inflates every member of `gz`; calls on_member() at the end of each.
template <class F>
std::string inflate_members(const std::string& gz, F&& on_member) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) throw std::runtime_error("inflateInit2 failed");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  std::string out;
  char buffer[1 << 16];
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    int rc = inflate(&z, Z_NO_FLUSH);
    out.append(buffer, sizeof buffer - z.avail_out);
    if (rc == Z_STREAM_END) {
      on_member();
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another member follows
      continue;
    }
    if (rc != Z_OK) {
      inflateEnd(&z);
      throw std::runtime_error("not valid gzip data");
    }
    if (z.avail_in == 0 && z.avail_out != 0) {
      inflateEnd(&z);
      throw std::runtime_error("gzip data ends inside a member");
    }
  }
  inflateEnd(&z);
  return out;
}

}  // namespace

std::string gunzip_bytes(const std::string& gz) {
  return inflate_members(gz, [] {});
}

size_t gzip_member_count(const std::string& gz) {
  size_t members = 0;
  inflate_members(gz, [&] { ++members; });
  return members;
}

core::Expected<core::Profile> read_pprof_profile(const std::string& bytes) {
  core::Diagnostics diagnostics;
  return pprof::read_profile(bytes_of(bytes), "test.pb.gz", diagnostics);
}

std::string write_pprof_profile(const core::Profile& profile) { return pprof::write_profile(profile); }

std::string stack_names(const core::Profile& p, size_t sample) {
  std::vector<std::string> names;
  for (core::LocationId id : p.stack(sample)) {
    const core::Location& l = p.location(id);
    if (l.lines.empty()) names.push_back("?");
    for (const core::Line& line : l.lines)
      names.push_back(line.function ? std::string(p.str(p.function(line.function).name)) : "?");
  }
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ";") + n;
  return out;
}

std::vector<std::string> pprof_proto_fixture_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(shared("fixtures/gperf"))) {
    std::string file = e.path().filename().string();
    if (file.ends_with(".pb.gz")) names.push_back(file.substr(0, file.size() - 6));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string pprof_proto_fixture_path(const std::string& name) {
  return shared("fixtures/gperf/" + name + ".pb.gz");
}

std::string test_name(std::string name) {
  std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(uint8_t(c)); }, '_');
  return name;
}

}  // namespace tally::test
