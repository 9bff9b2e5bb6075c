// Names in a library stripped to .dynsym, as Debian ships them: a function no symbol
// covers is known by its call-frame information (one function, named after its start and
// its file), an exported function keeps its name, a PLT entry is "function@plt". The truth
// is the library's own .symtab before `strip --strip-all`.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include "core/diagnostics.h"
#include "support/test_support.h"
#include "symbolize/elf_image.h"
#include "symbolize/symbolize.h"
#include "symbolize/symbolize_test_helpers.h"

namespace tally::symbolize {
namespace {

constexpr const char* kSource = R"(
#include <string.h>
__attribute__((noipa)) static unsigned hidden_mix(const char* text, unsigned seed) {
  unsigned h = seed;
  for (size_t i = 0; i < strlen(text); ++i) h = h * 31 + (unsigned char)text[i];
  return h;
}
__attribute__((noipa)) static unsigned hidden_fold(unsigned h, int rounds) {
  for (int i = 0; i < rounds; ++i) h ^= (h << 7) | (h >> 25);
  return h;
}
__attribute__((visibility("default"))) unsigned exported_entry(const char* text, int rounds) {
  return hidden_fold(hidden_mix(text, 17), rounds);
}
)";

class StrippedNames : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string source = dir_.file("names.c");
    test::write_bytes(source, kSource);
    full_ = dir_.file("full/libnames.so");
    stripped_ = dir_.file("libnames.so");
    std::filesystem::create_directories(dir_.file("full"));
    test::RunResult cc = test::run({test::find_program("cc"), "-O2", "-shared", "-fPIC",
                                    "-fvisibility=hidden", "-o", full_, source});
    ASSERT_EQ(cc.exit_code, 0) << cc.err;
    test::RunResult strip = test::run({test::find_program("strip"), "--strip-all", "-o", stripped_, full_});
    ASSERT_EQ(strip.exit_code, 0) << strip.err;
    for (const test::ElfFunction& f : test::elf_functions(full_)) truth_[f.name] = f;
    ASSERT_TRUE(truth_.count("hidden_mix") && truth_.count("hidden_fold") && truth_.count("exported_entry"))
        << "the compiler kept the functions apart";
  }

  // The outermost frame's function name of each address in the stripped library.
  std::vector<std::string> names_of(const std::vector<uint64_t>& addresses) {
    core::Profile profile = test::profile_mapping(stripped_, 0x7f0000000000, addresses);
    core::Diagnostics diagnostics;
    EXPECT_TRUE(symbolize::symbolize(profile, {}, diagnostics).has_value());
    std::vector<std::string> names;
    for (size_t i = 1; i <= addresses.size(); ++i) {
      auto frames = test::location_frames(profile, static_cast<core::LocationId>(i));
      names.push_back(frames.empty() ? "" : frames.back().substr(0, frames.back().find('|')));
    }
    return names;
  }

  test::TempDir dir_;
  std::string full_, stripped_;
  std::map<std::string, test::ElfFunction> truth_;
};

TEST_F(StrippedNames, EveryAddressOfAFunctionWithoutASymbolIsOneFunctionNamedAfterItsStart) {
  for (const char* hidden : {"hidden_mix", "hidden_fold"}) {
    const test::ElfFunction& f = truth_[hidden];
    const std::string expected = fmt::format("libnames.so!sub_{:x}", f.address);
    std::vector<uint64_t> addresses{f.address, f.address + f.size / 2, f.address + f.size - 1};
    for (const std::string& name : names_of(addresses)) EXPECT_EQ(name, expected) << hidden;
  }
}

TEST_F(StrippedNames, ExportedFunctionsKeepTheirNamesAndNoneClaimsTheNextFunction) {
  const test::ElfFunction& entry = truth_["exported_entry"];
  std::vector<uint64_t> addresses{entry.address, entry.address + entry.size - 1};
  for (const std::string& name : names_of(addresses)) EXPECT_EQ(name, "exported_entry");
  // The function laid out after the exported one is not the exported one's (its size
  // ends before): with .dynsym only, nothing else names it.
  for (const auto& [name, f] : truth_) {
    if (f.address < entry.address + entry.size || name.rfind("hidden_", 0) != 0) continue;
    EXPECT_EQ(names_of({uint64_t{f.address + 1}})[0], fmt::format("libnames.so!sub_{:x}", f.address)) << name;
  }
}

// MiniDebugInfo made with the documented recipe (GDB's manual, "MiniDebugInfo"): the
// functions .dynsym lacks go in a .symtab, xz-compressed into .gnu_debugdata.
TEST_F(StrippedNames, MiniDebugInfoNamesTheFunctionsDynsymLacks) {
  const std::string mini = dir_.file("libmini.so");
  const std::string recipe = R"(set -e
cd ")" + dir_.path() + R"("
cp full/libnames.so libmini.so
nm -D libmini.so --format=posix --defined-only | awk '{ print $1 }' | sort > dynsyms
nm libmini.so --format=posix --defined-only | awk '{ if ($2 == "T" || $2 == "t") print $1 }' | sort > funcsyms
comm -13 dynsyms funcsyms > keep_symbols
objcopy --only-keep-debug libmini.so mini_debuginfo
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols=keep_symbols mini_debuginfo mini_debuginfo
strip --strip-all -R .comment libmini.so
xz -f mini_debuginfo
objcopy --add-section .gnu_debugdata=mini_debuginfo.xz libmini.so
)";
  test::RunResult made = test::run({test::find_program("bash"), "-c", recipe});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  stripped_ = mini;
  for (const char* hidden : {"hidden_mix", "hidden_fold"}) {
    const test::ElfFunction& f = truth_[hidden];
    EXPECT_EQ(names_of({f.address + f.size / 2})[0], hidden);
  }
  EXPECT_EQ(names_of({truth_["exported_entry"].address})[0], "exported_entry");
}

TEST_F(StrippedNames, CorruptMiniDebugInfoIsReportedAndTheFdesStillName) {
  const std::string bad = dir_.file("libbad.so");
  test::write_bytes(dir_.file("garbage.xz"), "this is not an xz stream");
  test::RunResult made = test::run({test::find_program("objcopy"), "--add-section",
                                    ".gnu_debugdata=" + dir_.file("garbage.xz"), stripped_, bad});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  stripped_ = bad;
  const test::ElfFunction& f = truth_["hidden_fold"];
  EXPECT_EQ(names_of({f.address})[0], fmt::format("libbad.so!sub_{:x}", f.address));
}

// A library with .dynsym alone is said once, on one short line: which file, why (no debug
// symbols) and what fixes it; not where its debug file was looked for. One with its
// .symtab is not.
TEST_F(StrippedNames, ALibraryWithoutDebugSymbolsIsOneShortWarningSayingWhatWouldNameIt) {
  for (const std::string& library : {stripped_, full_}) {
    const test::ElfFunction& f = truth_["hidden_fold"];
    core::Profile profile = test::profile_mapping(library, 0x7f0000000000, {f.address, f.address + 1});
    core::Diagnostics diagnostics;
    Options options;
    options.debuginfod.enabled = false;
    ASSERT_TRUE(symbolize::symbolize(profile, options, diagnostics).has_value());
    std::vector<std::string> about_symbols;
    for (const std::string& w : diagnostics.warnings())
      if (w.find("debug") != std::string::npos) about_symbols.push_back(w);
    if (library == full_) {
      EXPECT_TRUE(about_symbols.empty()) << testing::PrintToString(about_symbols);
      EXPECT_TRUE(binaries_without_debug_symbols(diagnostics).empty());
      continue;
    }
    ASSERT_EQ(about_symbols.size(), 1u) << testing::PrintToString(diagnostics.warnings());
    const std::string& w = about_symbols.front();
    EXPECT_TRUE(w.starts_with(stripped_ + ": ")) << w;
    EXPECT_NE(w.find("no debug symbols (.dynsym only)"), std::string::npos) << w;
    EXPECT_NE(w.find("install its -dbgsym package or set DEBUGINFOD_URLS"), std::string::npos) << w;
    EXPECT_EQ(w.find(".build-id"), std::string::npos) << "the paths searched: " << w;
    EXPECT_EQ(w.find('\n'), std::string::npos) << w;
    EXPECT_LT(w.size(), stripped_.size() + 100) << w;
    EXPECT_EQ(binaries_without_debug_symbols(diagnostics), std::vector<std::string>{stripped_});
  }
}

// The summary line counts the binaries without debug symbols among all those symbolized
// (pseudo-files and binaries not symbolized aside), names them by file name, and stays one
// line when there are many.
TEST(MissingSymbolsSummary, CountsAmongTheSymbolizedBinariesAndNamesAFewOfThem) {
  core::Profile profile;
  auto map = [&](const std::string& file, bool has_functions) {
    core::Mapping m;
    m.start = 0x1000 * (profile.mappings.size() + 1);
    m.limit = m.start + 0x1000;
    m.file = profile.intern(file);
    m.has_functions = has_functions;
    profile.add_mapping(m);
  };
  map("/usr/bin/xz", true);
  map("/usr/lib/liblzma.so.5", true);
  map("/usr/lib/libc.so.6", true);
  map("/usr/lib/libc.so.6", true);  // a second mapping of one file
  map("[vdso]", true);
  map("/usr/lib/libnever.so", false);  // no address of it was resolved
  EXPECT_EQ(missing_symbols_summary(profile, {"/usr/lib/liblzma.so.5", "/usr/bin/xz"}),
            "symbols: 2 of 3 binaries have no debug symbols (.dynsym only): liblzma.so.5, xz");

  std::vector<std::string> stripped;
  for (int i = 0; i < 9; ++i) stripped.push_back(fmt::format("/usr/lib/lib{}.so", i));
  EXPECT_EQ(missing_symbols_summary(profile, stripped),
            "symbols: 9 of 12 binaries have no debug symbols (.dynsym only): lib0.so, lib1.so, "
            "lib2.so, lib3.so, lib4.so, lib5.so and 3 more");
}

TEST_F(StrippedNames, PltEntriesAreNamedFunctionAtPlt) {
  auto image = ElfImage::open(stripped_);
  ASSERT_NE(image, nullptr);
  auto plt = image->section_header(".plt");
  ASSERT_TRUE(plt.has_value());
  // The entry after the resolver's: the library's only import, strlen.
  EXPECT_EQ(names_of({uint64_t{plt->sh_addr + 16 + 4}})[0], "strlen@plt");
}

}  // namespace
}  // namespace tally::symbolize

namespace tally::symbolize {
namespace {

// glibc's malloc is __libc_malloc in its DWARF, with the linkage name __GI___libc_malloc
// (a hidden alias), and malloc, __libc_malloc in .dynsym: a person knows it as malloc.
// libc6-dbg's DWARF is there (install-deps), so this goes through the DWARF path.
TEST(PublicNames, LibcMallocAndFreeShowAsMallocAndFree) {
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  test::RunResult nm = test::run({test::find_program("nm"), "-D", "--defined-only", libc});
  ASSERT_EQ(nm.exit_code, 0) << nm.err;
  std::map<std::string, uint64_t> address;
  std::istringstream lines(nm.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string value, type, name;
    if (fields >> value >> type >> name) address[name.substr(0, name.find('@'))] = std::stoull(value, nullptr, 16);
  }
  ASSERT_TRUE(address.count("malloc") && address.count("free"));
  ASSERT_EQ(address["malloc"], address["__libc_malloc"]) << "the aliases this test is about";
  core::Profile profile = test::profile_mapping(libc, 0x7f1000000000,
                                                {address["malloc"] + 4, address["free"] + 4});
  core::Diagnostics diagnostics;
  ASSERT_TRUE(symbolize::symbolize(profile, {}, diagnostics).has_value());
  auto outer = [&](core::LocationId id) {
    auto frames = test::location_frames(profile, id);
    return frames.empty() ? std::string() : frames.back().substr(0, frames.back().find('|'));
  };
  EXPECT_EQ(outer(1), "malloc");
  EXPECT_EQ(outer(2), "free");
}

}  // namespace
}  // namespace tally::symbolize
