// demo_workload: the program `scripts/demo.sh` records with `tally record`. It pretends to
// process a batch of records, and its four stages burn CPU in a known proportion, set by
// iteration counts: decode 40 %, transform 30 %, compress 20 %, checksum 10 % (every
// iteration costs the same), so the profile can be checked by eye. `--rounds N` (default
// 120, about a second) scales the run.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

// One unit of work, written out in each stage (a macro, not an inlined function, so that
// each stage's samples are its own); the empty asm keeps the compiler from folding the
// loop away.
#define SPIN(iterations, x)                          \
  for (uint64_t i = 0; i < (iterations); ++i) {      \
    x = x * 6364136223846793005ULL + i;              \
    asm volatile("" : "+r"(x));                      \
  }

constexpr uint64_t kUnit = 800000;

__attribute__((noinline)) uint64_t decode(uint64_t s) {
  SPIN(4 * kUnit, s);
  return s;
}
__attribute__((noinline)) uint64_t transform(uint64_t s) {
  SPIN(3 * kUnit, s);
  return s;
}
__attribute__((noinline)) uint64_t compress(uint64_t s) {
  SPIN(2 * kUnit, s);
  return s;
}
__attribute__((noinline)) uint64_t checksum(uint64_t s) {
  SPIN(1 * kUnit, s);
  return s;
}

__attribute__((noinline)) uint64_t process_batch(uint64_t s) {
  s = decode(s);
  s = transform(s);
  s = compress(s);
  return checksum(s) + 1;  // not a tail call: checksum keeps process_batch as its caller
}

int main(int argc, char** argv) {
  long rounds = 120;
  if (argc == 3 && std::strcmp(argv[1], "--rounds") == 0) rounds = std::atol(argv[2]);
  uint64_t s = 1;
  for (long r = 0; r < rounds; ++r) s = process_batch(s);
  std::printf("demo_workload: %ld batches (decode 40%%, transform 30%%, compress 20%%, "
              "checksum 10%% of the work), result %llx\n",
              rounds, static_cast<unsigned long long>(s));
  return 0;
}
