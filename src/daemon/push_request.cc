#include "daemon/push_request.h"

#include <sys/random.h>

#include <array>
#include <cstdint>
#include <random>

#include <fmt/format.h>

#include "formats/pprof/wire_writer.h"

namespace tally::daemon {

namespace {

// Field numbers of push.proto and types.proto.
constexpr uint32_t kPushRequestSeries = 1;
constexpr uint32_t kSeriesLabels = 1;
constexpr uint32_t kSeriesSamples = 2;
constexpr uint32_t kLabelName = 1;
constexpr uint32_t kLabelValue = 2;
constexpr uint32_t kSampleRawProfile = 1;
constexpr uint32_t kSampleId = 2;

// proto3 leaves empty strings out.
void string_field(pprof::WireWriter& w, uint32_t field, const std::string& s) {
  if (!s.empty()) w.bytes(field, s);
}

}  // namespace

std::string encode_push_request(const std::vector<ProfileSeries>& series) {
  std::string out, message, part;
  pprof::WireWriter request(out);
  for (const ProfileSeries& s : series) {
    message.clear();
    pprof::WireWriter w(message);
    for (const Label& label : s.labels) {
      part.clear();
      pprof::WireWriter l(part);
      string_field(l, kLabelName, label.first);
      string_field(l, kLabelValue, label.second);
      w.bytes(kSeriesLabels, part);
    }
    for (const RawSample& sample : s.samples) {
      part.clear();
      pprof::WireWriter r(part);
      string_field(r, kSampleRawProfile, sample.raw_profile);
      string_field(r, kSampleId, sample.id);
      w.bytes(kSeriesSamples, part);
    }
    request.bytes(kPushRequestSeries, message);
  }
  return out;
}

std::array<uint8_t, 16> random_id_bytes() {
  std::array<uint8_t, 16> b{};
  size_t got = 0;
  while (got < b.size()) {
    const ssize_t n = ::getrandom(b.data() + got, b.size() - got, 0);
    if (n <= 0) break;
    got += size_t(n);
  }
  if (got < b.size()) {  // no getrandom (an old kernel): the C++ library's device
    std::random_device device;
    for (uint8_t& byte : b) byte = static_cast<uint8_t>(device());
  }
  return b;
}

std::string new_sample_id() {
  std::array<uint8_t, 16> b = random_id_bytes();
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  std::string hex;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) hex += '-';
    hex += fmt::format("{:02x}", b[i]);
  }
  return hex;
}

std::string parse_label(const std::string& text, Label& label) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return "--label " + text + ": expected NAME=VALUE";
  label = {text.substr(0, eq), text.substr(eq + 1)};
  return "";
}

}  // namespace tally::daemon
