// The push library's small parts: service names from cgroups, labels, sample ids, backoff,
// server messages.
#include <gtest/gtest.h>

#include <set>

#include "daemon/backoff.h"
#include "daemon/push_payload.h"
#include "daemon/push_request.h"
#include "daemon/push_transport.h"
#include "daemon/service_name.h"

namespace tally::daemon {
namespace {

TEST(ServiceName, SystemdServiceUnitFromCgroup) {
  EXPECT_EQ(service_from_cgroup("0::/system.slice/nginx.service\n"), "nginx");
  EXPECT_EQ(service_from_cgroup("0::/system.slice/docker-1.scope\n"), "");
  EXPECT_EQ(service_from_cgroup("0::/user.slice/user-1000.slice/session-3.scope\n"), "");
  // The per-user manager is no service of its own; a unit under it is.
  EXPECT_EQ(service_from_cgroup("0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
                                "backup.service\n"), "backup");
  EXPECT_EQ(service_from_cgroup("0::/user.slice/user-1000.slice/user@1000.service/init.scope\n"), "");
  // cgroup v1: several hierarchies, one names the unit.
  EXPECT_EQ(service_from_cgroup("12:cpu,cpuacct:/system.slice/cron.service\n"
                                "1:name=systemd:/system.slice/cron.service\n"), "cron");
  EXPECT_EQ(service_from_cgroup(""), "");
  EXPECT_EQ(service_from_cgroup("garbage"), "");
  EXPECT_EQ(service_from_cgroup("0::/.service"), "");
}

TEST(ServiceName, OwnProcessIsNamed) {
  EXPECT_FALSE(service_of_process(getpid()).empty());
  EXPECT_EQ(service_of_process(-5), "unknown");
}

TEST(Labels, FixedOrderAndOverrides) {
  auto labels = series_labels("process_cpu", "svc", "h1", {{"env", "ci"}, {"hostname", "h2"}});
  ASSERT_EQ(labels.size(), 4u);
  EXPECT_EQ(labels[0], Label("__name__", "process_cpu"));
  EXPECT_EQ(labels[1], Label("service_name", "svc"));
  EXPECT_EQ(labels[2], Label("hostname", "h2"));
  EXPECT_EQ(labels[3], Label("env", "ci"));
  Label label;
  EXPECT_EQ(parse_label("a=b=c", label), "");
  EXPECT_EQ(label, Label("a", "b=c"));
  EXPECT_NE(parse_label("=b", label), "");
  EXPECT_NE(parse_label("ab", label), "");
}

TEST(SampleId, Version4UuidsAreDistinct) {
  std::set<std::string> ids;
  for (int i = 0; i < 1000; ++i) {
    const std::string id = new_sample_id();
    ASSERT_EQ(id.size(), 36u);
    EXPECT_EQ(id[14], '4');
    EXPECT_TRUE(id[19] == '8' || id[19] == '9' || id[19] == 'a' || id[19] == 'b') << id;
    ids.insert(id);
  }
  EXPECT_EQ(ids.size(), 1000u);
}

TEST(PushRequest, WireBytesOfOneSeries) {
  // PushRequest{series{labels{name:"a" value:"b"} samples{raw_profile:"P" ID:"i"}}}, by hand
  // from push.proto's field numbers.
  const std::string bytes = encode_push_request({{{{"a", "b"}}, {{"P", "i"}}}});
  const std::string label = "\x0a\x01" "a" "\x12\x01" "b";
  const std::string sample = "\x0a\x01" "P" "\x12\x01" "i";
  const std::string series = "\x0a" + std::string(1, char(label.size())) + label + "\x12" +
                             std::string(1, char(sample.size())) + sample;
  EXPECT_EQ(bytes, "\x0a" + std::string(1, char(series.size())) + series);
  EXPECT_EQ(encode_push_request({}), "");
}

TEST(Backoff, DoublesWithJitterUpToTheCap) {
  Backoff backoff(1.0, 8.0);
  const double bounds[] = {1, 2, 4, 8, 8, 8};
  for (double bound : bounds) {
    const double wait = backoff.next();
    EXPECT_GE(wait, bound / 2);
    EXPECT_LE(wait, bound);
  }
  backoff.reset();
  EXPECT_LE(backoff.next(), 1.0);
}

TEST(ServerMessage, ConnectErrorBodyOrText) {
  EXPECT_EQ(server_message(R"({"code":"invalid_argument","message":"bad labels"})"),
            "invalid_argument: bad labels");
  EXPECT_EQ(server_message("upstream\nbroke"), "upstream broke");
  EXPECT_EQ(server_message(""), "(no message)");
}

}  // namespace
}  // namespace tally::daemon
