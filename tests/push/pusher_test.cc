// The pusher's spool bound against a request in flight: receiver.py holds each request
// 3 s before answering, so the oldest spooled file is being sent when newer ones go past the
// bound. The bound must leave that file alone (the store is taking it) and drop the next
// oldest instead: every request is counted once, as pushed or as dropped, never both.
#include "daemon/pusher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <thread>

#include "daemon/push_payload.h"
#include "daemon/push_request.h"
#include "receiver.h"

namespace tally::daemon {
namespace {

std::string one_request(const std::string& service) {
  std::vector<ProfileSeries> series;
  series.push_back({series_labels("process_cpu", service, "host", {}), {raw_sample(core::Profile{})}});
  return encode_push_request(series);
}

TEST(Pusher, FileBeingSentIsNeitherDroppedNorCountedTwice) {
  if (test::debian_python3().empty()) GTEST_SKIP() << "no Debian python3 with python3-protobuf";
  test::TempDir dir;
  test::Receiver receiver(dir.file("store"), {.delay_seconds = 3});
  ASSERT_TRUE(receiver.started()) << test::read_text(dir.file("store/receiver.log"));
  auto transport = PushTransport::open({.url = receiver.url()});
  ASSERT_TRUE(transport) << transport.error().message;
  std::mutex mutex;
  std::string log;
  auto pusher = Pusher::start(std::move(*transport),
                              {.spool_dir = dir.file("spool"), .spool_max_bytes = 1},
                              [&](const std::string& line) {
                                std::lock_guard lock(mutex);
                                log += line + "\n";
                              });
  ASSERT_TRUE(pusher) << pusher.error().message;

  ASSERT_TRUE((*pusher)->enqueue(one_request("a"), 10));
  // Until the receiver holds the first request.
  for (int i = 0; i < 600 && !std::filesystem::exists(dir.file("store/receiving")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(std::filesystem::exists(dir.file("store/receiving")));
  ASSERT_TRUE((*pusher)->enqueue(one_request("b"), 20));  // over the bound: the first is in flight
  ASSERT_TRUE((*pusher)->enqueue(one_request("c"), 40));  // drops the second, keeps the newest
  ASSERT_TRUE((*pusher)->drain(30)) << log;

  const PushStats stats = (*pusher)->stats();
  EXPECT_EQ(stats.pushes, 2u) << log;
  EXPECT_EQ(stats.dropped_files, 1u) << log;
  EXPECT_EQ(stats.dropped_samples, 20u) << log;
  EXPECT_EQ(stats.spooled_files, 0u);
  EXPECT_NE(log.find("dropped the oldest 1 request(s), 20 samples"), std::string::npos) << log;
  // The store got the first and the third.
  std::vector<std::string> services;
  for (const auto& request : receiver.requests())
    for (const auto& series : request["series"]) services.push_back(series["labels"]["service_name"]);
  EXPECT_EQ(services, (std::vector<std::string>{"a", "c"}));
}

}  // namespace
}  // namespace tally::daemon
