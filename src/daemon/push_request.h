// The body of a Grafana Pyroscope push (proto/pyroscope/push/v1/push.proto): PushRequest
// { series: [ { labels, samples: [ { raw_profile, ID } ] } ] }, encoded with the same wire
// writer as tally's pprof output (tally does not link generated protobuf classes).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tally::daemon {

using Label = std::pair<std::string, std::string>;  // name, value

struct RawSample {
  std::string raw_profile;  // a gzipped, symbolized pprof profile.proto
  std::string id;           // a UUID: the store drops a sample whose id it has seen
};

struct ProfileSeries {
  std::vector<Label> labels;
  std::vector<RawSample> samples;
};

// The serialized PushRequest (not compressed).
std::string encode_push_request(const std::vector<ProfileSeries>& series);

// 16 random bytes from getrandom(2) (the C++ library's random device without it): an OTLP
// profile_id, the bytes of a sample id.
std::array<uint8_t, 16> random_id_bytes();

// A random (version 4) UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", from getrandom(2).
std::string new_sample_id();

// "K=V" as a label: an error text when there is no '=' or K is empty.
std::string parse_label(const std::string& text, Label& label);

}  // namespace tally::daemon
