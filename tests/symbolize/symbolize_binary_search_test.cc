// Finding the ELF of a mapping (--binary-path, PPROF_BINARY_PATH, build ids, separate
// debug files), the load bias, and what happens when nothing is found.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "symbolize/elf_image.h"
#include "symbolize/symbolize.h"
#include "symbolize/symbolize_test_helpers.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

constexpr uint64_t kLoadBase = 0x7f3a12340000;

uint64_t function_address(const std::string& binary, const std::string& name) {
  for (const auto& function : elf_functions(binary))
    if (function.name == name) return function.address;
  throw std::runtime_error(name + " not in " + binary);
}

std::string function_name(const core::Profile& profile, core::LocationId id) {
  const auto& lines = profile.location(id).lines;
  if (lines.empty()) return "<no lines>";
  return std::string(profile.str(profile.function(lines.back().function).name));
}

core::Profile symbolized(core::Profile profile, const std::vector<std::string>& dirs,
                         core::Diagnostics& diagnostics) {
  symbolize::Options options;
  options.binary_paths = dirs;
  EXPECT_TRUE(symbolize::symbolize(profile, options, diagnostics).has_value());
  return profile;
}

// A profile whose one mapping names `file` (which need not exist here) and is laid out
// like `layout_from`, the real binary, with one location at func_a.
core::Profile split_profile(const std::string& file, const std::string& build_id = "") {
  std::string split = shared("fixtures/bin/split");
  core::Profile profile = profile_mapping(split, kLoadBase, {function_address(split, "func_a")},
                                          build_id);
  profile.mappings[0].file = profile.intern(file);
  return profile;
}

TEST(SymbolizeMissingBinary, ReportedOnceWithPathsSearchedAndOffsetsAsNames) {
  TempDir dir;
  core::Profile profile;
  core::Mapping mapping;
  mapping.start = 0x7f0000000000;
  mapping.limit = 0x7f0000010000;
  mapping.offset = 0x1000;
  mapping.file = profile.intern("/nonexistent/dir/libfoo.so");
  core::MappingId first = profile.add_mapping(mapping);
  mapping.start = 0x7f0000010000;  // a second segment of the same library
  mapping.limit = 0x7f0000020000;
  mapping.offset = 0x11000;
  core::MappingId second = profile.add_mapping(mapping);
  profile.add_location({.mapping = first, .address = 0x7f0000000123, .lines = {}});
  profile.add_location({.mapping = first, .address = 0x7f0000000456, .lines = {}});
  profile.add_location({.mapping = second, .address = 0x7f0000010010, .lines = {}});

  core::Diagnostics diagnostics;
  profile = symbolized(std::move(profile), {dir.path()}, diagnostics);
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  const std::string& warning = diagnostics.warnings()[0];
  EXPECT_NE(warning.find("/nonexistent/dir/libfoo.so"), std::string::npos) << warning;
  EXPECT_NE(warning.find(dir.file("libfoo.so")), std::string::npos) << warning;
  EXPECT_NE(warning.find(dir.path() + "/nonexistent/dir/libfoo.so"), std::string::npos) << warning;
  // File offsets: address - start + offset, e.g. 0x123 - 0 + 0x1000.
  EXPECT_EQ(function_name(profile, 1), "[libfoo.so+0x1123]");
  EXPECT_EQ(function_name(profile, 2), "[libfoo.so+0x1456]");
  EXPECT_EQ(function_name(profile, 3), "[libfoo.so+0x11010]");
  EXPECT_FALSE(profile.mappings[0].has_functions);
}

TEST(SymbolizeBinarySearch, BinaryPathByBaseName) {
  core::Diagnostics diagnostics;
  auto profile = symbolized(split_profile("/tmp/tally-fx/elsewhere/split"),
                            {"/nonexistent", shared("fixtures/bin")}, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(function_name(profile, 1), "func_a");
}

TEST(SymbolizeBinarySearch, BinaryPathByFullPath) {
  TempDir dir;
  std::filesystem::create_directories(dir.file("some/where"));
  std::filesystem::copy_file(shared("fixtures/bin/split"), dir.file("some/where/split"));
  core::Diagnostics diagnostics;
  auto profile = symbolized(split_profile("/some/where/split"), {dir.path()}, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(function_name(profile, 1), "func_a");
}

TEST(SymbolizeBinarySearch, PprofBinaryPathEnvironment) {
  std::string dirs = "/nonexistent:" + shared("fixtures/bin");
  setenv("PPROF_BINARY_PATH", dirs.c_str(), 1);
  core::Diagnostics diagnostics;
  auto profile = symbolized(split_profile("/tmp/tally-fx/bin/split"), {}, diagnostics);
  unsetenv("PPROF_BINARY_PATH");
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(function_name(profile, 1), "func_a");
}

// The build id of bin/split, from `readelf -n bin/split`.
constexpr char kSplitBuildId[] = "85115c0d985f0b0603c2adb7d1a83899a0b46b11";

TEST(SymbolizeBinarySearch, MatchingBuildIdIsUsed) {
  core::Diagnostics diagnostics;
  auto profile = symbolized(split_profile("/tmp/tally-fx/bin/split", kSplitBuildId),
                            {shared("fixtures/bin")}, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(function_name(profile, 1), "func_a");
}

TEST(SymbolizeBinarySearch, MismatchedBuildIdIsNotUsedAndReported) {
  core::Diagnostics diagnostics;
  auto profile = symbolized(
      split_profile("/tmp/tally-fx/bin/split", "00112233445566778899aabbccddeeff00112233"),
      {shared("fixtures/bin")}, diagnostics);
  ASSERT_EQ(diagnostics.warnings().size(), 1u);
  EXPECT_NE(diagnostics.warnings()[0].find(kSplitBuildId), std::string::npos)
      << diagnostics.warnings()[0];
  EXPECT_EQ(function_name(profile, 1).rfind("[split+0x", 0), 0u) << function_name(profile, 1);
}

// A binary stripped of its DWARF, with the DWARF in a file named by .gnu_debuglink beside
// it (objcopy --only-keep-debug / --add-gnu-debuglink), resolves as the unstripped one.
TEST(SymbolizeBinarySearch, SeparateDebugFileByDebuglink) {
  std::string objcopy = find_program("objcopy");
  TALLY_REQUIRE_PEER(objcopy, "objcopy (binutils)");
  TempDir dir;
  std::string split = shared("fixtures/bin/split");
  ASSERT_EQ(run({objcopy, "--only-keep-debug", split, dir.file("split.debug")}).exit_code, 0);
  ASSERT_EQ(run({objcopy, "--strip-debug", "--add-gnu-debuglink=split.debug", split,
                 dir.file("split")}, "", dir.path())
                .exit_code,
            0);
  std::vector<uint64_t> addresses;
  for (const auto& function : elf_functions(split)) addresses.push_back(function.address + 1);

  core::Diagnostics diagnostics;
  core::Profile reference = profile_mapping(split, kLoadBase, addresses);
  reference = symbolized(std::move(reference), {}, diagnostics);
  core::Profile stripped = profile_mapping(dir.file("split"), kLoadBase, addresses);
  stripped = symbolized(std::move(stripped), {}, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_TRUE(stripped.mappings[0].has_line_numbers);
  for (size_t i = 1; i <= addresses.size(); ++i) {
    auto id = static_cast<core::LocationId>(i);
    EXPECT_EQ(location_frames(stripped, id), location_frames(reference, id));
  }
}

// -v: one note per image says where its symbols came from, what was searched, and a debug
// file of another build that was passed over (here found first, by .gnu_debuglink beside
// the binary; the right one is in .debug/). Without -v there are no notes.
TEST(SymbolizeExplainSources, NamesTheDebugFileUsedAndTheOneOfAnotherBuild) {
  std::string objcopy = find_program("objcopy");
  TALLY_REQUIRE_PEER(objcopy, "objcopy (binutils)");
  TempDir dir;
  std::filesystem::create_directory(dir.file(".debug"));
  const std::string split = shared("fixtures/bin/split");
  const std::string library = shared("fixtures/bin/libtallywork.so");
  ASSERT_EQ(run({objcopy, "--only-keep-debug", split, dir.file(".debug/split.debug")}).exit_code, 0);
  ASSERT_EQ(run({objcopy, "--only-keep-debug", library, dir.file("split.debug")}).exit_code, 0);
  ASSERT_EQ(run({objcopy, "--strip-debug", "--add-gnu-debuglink=" + dir.file(".debug/split.debug"),
                 split, dir.file("split")}).exit_code, 0);
  ASSERT_EQ(run({objcopy, "--strip-all", library, dir.file("libtallywork.so")}).exit_code, 0);

  for (bool explain : {true, false}) {
    core::Profile profile = profile_mapping(dir.file("split"), kLoadBase, {function_address(split, "func_a") + 1});
    core::Diagnostics diagnostics;
    symbolize::Options options;
    options.explain_sources = explain;
    ASSERT_TRUE(symbolize::symbolize(profile, options, diagnostics).has_value());
    EXPECT_EQ(function_name(profile, 1), "func_a");
    EXPECT_TRUE(profile.mappings[0].has_line_numbers);
    if (!explain) {
      EXPECT_TRUE(diagnostics.notes().empty());
      continue;
    }
    ASSERT_EQ(diagnostics.notes().size(), 1u);
    const std::string& note = diagnostics.notes()[0];
    EXPECT_TRUE(note.starts_with("symbolize: " + dir.file("split") + " (build id " + kSplitBuildId +
                                 "): symbols and DWARF from " + dir.file(".debug/split.debug") +
                                 "; searched " + dir.file("split") + ", "))
        << note;
    EXPECT_NE(note.find("/usr/lib/debug/.build-id/85/115c0d985f0b0603c2adb7d1a83899a0b46b11.debug"),
              std::string::npos) << note;
    EXPECT_NE(note.find("; not used: " + dir.file("split.debug") +
                        " has build id 7024fa6178fb58b4f71dd4a99f6434e80fa99082"),
              std::string::npos) << note;
  }

  core::Profile profile = profile_mapping(dir.file("libtallywork.so"), kLoadBase,
                                          {function_address(library, "lib_hot") + 2});
  core::Diagnostics diagnostics;
  symbolize::Options options;
  options.explain_sources = true;
  ASSERT_TRUE(symbolize::symbolize(profile, options, diagnostics).has_value());
  ASSERT_EQ(diagnostics.notes().size(), 1u);
  EXPECT_NE(diagnostics.notes()[0].find(dir.file("libtallywork.so") +
                                        " (build id 7024fa6178fb58b4f71dd4a99f6434e80fa99082): "
                                        "symbols from .dynsym only, no DWARF; searched "),
            std::string::npos) << diagnostics.notes()[0];
}

// Without DWARF, the dynamic symbol table still names exported functions.
TEST(SymbolizeBinarySearch, DynamicSymbolsOfAFullyStrippedLibrary) {
  std::string objcopy = find_program("objcopy");
  TALLY_REQUIRE_PEER(objcopy, "objcopy (binutils)");
  TempDir dir;
  std::string library = shared("fixtures/bin/libtallywork.so");
  ASSERT_EQ(run({objcopy, "--strip-all", library, dir.file("libtallywork.so")}).exit_code, 0);
  core::Profile profile = profile_mapping(dir.file("libtallywork.so"), kLoadBase,
                                          {function_address(library, "lib_hot") + 2});
  core::Diagnostics diagnostics;
  profile = symbolized(std::move(profile), {}, diagnostics);
  EXPECT_EQ(location_frames(profile, 1), std::vector<std::string>{"lib_hot||0"});
  EXPECT_TRUE(profile.mappings[0].has_functions);
  EXPECT_FALSE(profile.mappings[0].has_line_numbers);
}

// A kernel pseudo-mapping has no file to read: named by its own name, not reported.
TEST(SymbolizeMissingBinary, PseudoMappingsAreNamedNotReported) {
  core::Profile profile;
  core::Mapping mapping;
  mapping.start = 0x7ffd00000000;
  mapping.limit = 0x7ffd00002000;
  mapping.file = profile.intern("[vdso]");
  core::MappingId id = profile.add_mapping(mapping);
  profile.add_location({.mapping = id, .address = 0x7ffd00000a10, .lines = {}});
  core::Diagnostics diagnostics;
  profile = symbolized(std::move(profile), {}, diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(function_name(profile, 1), "[vdso+0xa10]");
}

// Locations that already have lines, and mappings that already have functions, are
// left as they are.
TEST(SymbolizeBinarySearch, ResolvedLocationsAreKept) {
  core::Profile profile = split_profile(shared("fixtures/bin/split"));
  core::FunctionId kept = profile.add_function({profile.intern("kept"), 0, 0, 0});
  profile.locations[0].lines.push_back({kept, 7, 0});
  core::Diagnostics diagnostics;
  profile = symbolized(std::move(profile), {}, diagnostics);
  ASSERT_EQ(profile.locations[0].lines.size(), 1u);
  EXPECT_EQ(function_name(profile, 1), "kept");
}

// Locations that share a link-time address (twice in one mapping, and in a second mapping
// of the same file at another load address) all get that address's lines, resolved once.
TEST(SymbolizeBinarySearch, LocationsSharingAnAddressAllGetItsLines) {
  std::string split = shared("fixtures/bin/split");
  const uint64_t a = function_address(split, "func_a"), b = function_address(split, "func_b");
  core::Profile profile = profile_mapping(split, kLoadBase, {a, b, a});
  ASSERT_EQ(profile.mappings.size(), 1u);
  constexpr uint64_t kShift = 0x10000000;
  core::Mapping again = profile.mappings[0];
  again.start += kShift;
  again.limit += kShift;
  const core::MappingId second = profile.add_mapping(again);
  profile.add_location({.mapping = second, .address = kShift + kLoadBase + b, .lines = {}});
  profile.add_location({.mapping = second, .address = kShift + kLoadBase + a, .lines = {}});
  core::Diagnostics diagnostics;
  profile = symbolized(std::move(profile), {}, diagnostics);
  for (core::LocationId id : {1u, 3u, 5u}) EXPECT_EQ(function_name(profile, id), "func_a") << id;
  for (core::LocationId id : {2u, 4u}) EXPECT_EQ(function_name(profile, id), "func_b") << id;
  EXPECT_EQ(location_frames(profile, 3), location_frames(profile, 1));
  EXPECT_EQ(location_frames(profile, 5), location_frames(profile, 1));
  EXPECT_EQ(location_frames(profile, 4), location_frames(profile, 2));
  EXPECT_NE(location_frames(profile, 1), location_frames(profile, 2));
}

// Work split over threads (one libdw handle per ELF per thread) gives the same result as
// one thread: every address of every function of split, on 1 and on 4 threads.
TEST(SymbolizeThreads, SameResultOnAnyThreadCount) {
  std::string split = shared("fixtures/bin/split");
  std::vector<uint64_t> addresses;
  for (const auto& function : elf_functions(split))
    for (uint64_t offset = 0; offset < function.size; ++offset)
      addresses.push_back(function.address + offset);
  ASSERT_GT(addresses.size(), 1000u);  // several chunks of work
  core::Profile one = profile_mapping(split, kLoadBase, addresses);
  core::Profile four = profile_mapping(split, kLoadBase, addresses);
  core::Diagnostics diagnostics;
  symbolize::Options options;
  options.threads = 1;
  ASSERT_TRUE(symbolize::symbolize(one, options, diagnostics).has_value());
  options.threads = 4;
  ASSERT_TRUE(symbolize::symbolize(four, options, diagnostics).has_value());
  for (size_t i = 1; i <= addresses.size(); ++i) {
    auto id = static_cast<core::LocationId>(i);
    ASSERT_FALSE(location_frames(one, id).empty());
    EXPECT_EQ(location_frames(four, id), location_frames(one, id));
  }
}

// Load bias, by hand: shlib.pb.raw.txt maps shlib_main's text (file offset 0x1000, which
// its R E PT_LOAD places at vaddr 0x1000) at 0x55b32b9ae000, so 0x55b32b9ae433 is 0x1433.
TEST(SymbolizeLoadBias, PieAndSharedLibrary) {
  std::vector<symbolize::LoadSegment> segments{{0, 0, 0xcb8, 0x1000, false},
                                               {0x1000, 0x1000, 0xb69, 0x1000, true}};
  EXPECT_EQ(symbolize::link_time_address(segments, false, 0x55b32b9ae000, 0x1000, 0x55b32b9ae433),
            0x1433u);
}

// A non-PIE executable whose text segment (offset 0x1000) is linked at 0x401000 and
// mapped there: addresses are link-time addresses.
TEST(SymbolizeLoadBias, NonPieExecutable) {
  std::vector<symbolize::LoadSegment> segments{{0, 0x400000, 0x500, 0x1000, false},
                                               {0x1000, 0x401000, 0x2000, 0x1000, true}};
  EXPECT_EQ(symbolize::link_time_address(segments, true, 0x401000, 0x1000, 0x401234), 0x401234u);
  // A library whose segment vaddr differs from its offset (lld layouts): offset 0x2000 at 0x3000.
  std::vector<symbolize::LoadSegment> shifted{{0x2000, 0x3000, 0x1000, 0x1000, true}};
  EXPECT_EQ(symbolize::link_time_address(shifted, false, 0x7f0000002000, 0x2000, 0x7f0000002010),
            0x3010u);
}

}  // namespace
}  // namespace tally::test
