// make_serve_db DIR: a profile database for tally serve --db's tests, built through
// src/store (as tests/cli/db_cli_test.cc does) with the fixture binaries' real offsets, so
// that reports symbolize it: epoch 20250102030405 with split's func_a 40, func_b 30,
// func_c 20, func_d 10 and libtallywork.so's lib_hot 25 samples; epoch 20250102040000 with
// func_a 10 and func_d 90. Each sample is 1 ms of cpu-clock.
#include <cstdio>
#include <string>

#include "store/database.h"
#include "store/epoch.h"

using namespace tally::store;

namespace {

// nm of the fixtures: func_a 0x1650, func_b 0x16b0, func_c 0x1710, func_d 0x1770,
// run_rounds 0x17d0 (split); lib_hot 0x1120 (libtallywork.so).
constexpr uint32_t kFuncA = 0x1660, kFuncB = 0x16c0, kFuncC = 0x1720, kFuncD = 0x1780,
                   kRunRounds = 0x1800, kLibHot = 0x1130;

IndexEntry fixture_image(const std::string& name, const std::string& build_id) {
  ImageKey k{.path = std::string(TALLY_SHARED_DIR) + "/fixtures/bin/" + name, .build_id = build_id};
  return {image_id(k), k};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_serve_db DIR\n");
    return 2;
  }
  auto db = Database::open(argv[1], true);
  if (!db) {
    std::fprintf(stderr, "make_serve_db: %s\n", db.error().message.c_str());
    return 1;
  }
  const IndexEntry split = fixture_image("split", "85115c0d985f0b0603c2adb7d1a83899a0b46b11");
  const IndexEntry lib = fixture_image("libtallywork.so", "");
  Aggregate a({{"cpu-clock", "nanoseconds"}}, true);
  const auto add = [&](uint32_t offset, int n, bool in_lib) {
    const uint32_t s = a.image(split, 0, 0x2000), l = a.image(lib, 0, 0x2000);
    const Frame frames[] = {{in_lib ? l : s, offset}, {s, kRunRounds}};
    for (int i = 0; i < n; ++i) a.add_sample(0, frames, 1'000'000);
  };
  const std::string first = *db->start_epoch(*epoch_seconds("20250102030405"));
  add(kFuncA, 40, false);
  add(kFuncB, 30, false);
  add(kFuncC, 20, false);
  add(kFuncD, 10, false);
  add(kLibHot, 25, true);
  if (!db->flush(first, a, {.platform = "x86_64 Linux"})) return 1;
  const std::string second = *db->start_epoch(*epoch_seconds("20250102040000"));
  add(kFuncA, 10, false);
  add(kFuncD, 90, false);
  if (!db->flush(second, a, {.platform = "x86_64 Linux"})) return 1;
  return 0;
}
