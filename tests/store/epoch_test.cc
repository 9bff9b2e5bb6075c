// Epoch names: UTC YYYYMMDDHHMMSS, sortable, unique even within one second; --since times.
#include <gtest/gtest.h>

#include <algorithm>

#include "store/epoch.h"

namespace tally::store {
namespace {

TEST(EpochName, IsTheUtcStartTimeAsFourteenDigits) {
  EXPECT_EQ(epoch_name(0), "19700101000000");
  // 2024-02-29 23:59:58 UTC (a leap day) = 1709251198.
  EXPECT_EQ(epoch_name(1709251198), "20240229235958");
  EXPECT_EQ(epoch_seconds("20240229235958"), 1709251198);
}

TEST(EpochName, RejectsWhatIsNotAnEpoch) {
  for (const char* bad : {"2024022923595", "202402292359589", "20230229000000", "20241301000000",
                          "2024022923595x", "20240229246000", "", "current", "index.tsv"})
    EXPECT_FALSE(epoch_seconds(bad)) << bad;
}

TEST(EpochName, NamesSortInTimeOrder) {
  std::vector<int64_t> times = {1, 59, 60, 3599, 86400, 951782400, 1709251198, 4102444800};
  std::vector<std::string> names;
  for (int64_t t : times) names.push_back(epoch_name(t));
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(NextEpochName, IsNowWhenNowIsLater) {
  EXPECT_EQ(next_epoch_name({"20240101000000"}, 1709251198), "20240229235958");
  EXPECT_EQ(next_epoch_name({}, 1709251198), "20240229235958");
}

TEST(NextEpochName, FollowsTheLatestWhenStartedWithinTheSameSecond) {
  std::vector<std::string> existing = {"20240229235958"};
  std::string second = next_epoch_name(existing, 1709251198);
  EXPECT_EQ(second, "20240229235959");
  existing.push_back(second);
  EXPECT_EQ(next_epoch_name(existing, 1709251198), "20240301000000");
  // Names that are not epochs are ignored.
  EXPECT_EQ(next_epoch_name({"notes", "99999999999999"}, 0), "19700101000000");
}

TEST(ParseTime, TakesEpochStylePrefixesIsoDatesAndDurations) {
  const int64_t now = 1709251198;
  EXPECT_EQ(*parse_time("20240229", now), 1709164800);
  EXPECT_EQ(*parse_time("2024022923", now), 1709164800 + 23 * 3600);
  EXPECT_EQ(*parse_time("20240229235958", now), 1709251198);
  EXPECT_EQ(*parse_time("2024-02-29", now), 1709164800);
  EXPECT_EQ(*parse_time("2024-02-29T23:59:58", now), 1709251198);
  EXPECT_EQ(*parse_time("2024-02-29 23:59:58", now), 1709251198);
  EXPECT_EQ(*parse_time("90s", now), now - 90);
  EXPECT_EQ(*parse_time("30m", now), now - 1800);
  EXPECT_EQ(*parse_time("2h", now), now - 7200);
  EXPECT_EQ(*parse_time("7d", now), now - 7 * 86400);
}

TEST(ParseTime, ExplainsWhatItTakes) {
  for (const char* bad : {"", "h", "2x", "yesterday", "2024-2-29", "20241301", "202402291",
                          "-5m", "99999999999999999999d"}) {
    auto t = parse_time(bad, 0);
    ASSERT_FALSE(t) << bad;
    EXPECT_NE(t.error().message.find("YYYYMMDD"), std::string::npos) << t.error().message;
  }
}

}  // namespace
}  // namespace tally::store
