// Function, file, line and inline chain of addresses inside every function of the fixture
// binaries, compared with what `addr2line -f -i -C` (binutils, the reference) prints for
// the same addresses, and with llvm-symbolizer where the two references differ.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <regex>

#include <string>
#include <vector>

#include "symbolize/elf_image.h"
#include "symbolize/symbolize.h"
#include "symbolize/symbolize_test_helpers.h"
#include "support/test_support.h"

namespace tally::test {
namespace {

// A PIE or shared library loaded at an address like the ones ASLR picks.
constexpr uint64_t kLoadBase = 0x7f3a12340000;

// The demanglers of binutils and LLVM spell a few things differently: "{lambda(int)#1}"
// and "'lambda'(int)", " [clone .cold]" and " (.cold)". One spelling for comparing.
std::string same_spelling(const std::string& frame) {
  static const std::regex gnu_lambda(R"(\{lambda\(([^()]*)\)#[0-9]+\})");
  static const std::regex llvm_lambda(R"('lambda'\(([^()]*)\))");
  static const std::regex gnu_clone(R"( \[clone ([^\]]*)\])");
  std::string text = std::regex_replace(frame, gnu_lambda, "lambda($1)");
  text = std::regex_replace(text, llvm_lambda, "lambda($1)");
  return std::regex_replace(text, gnu_clone, " ($1)");
}

// addr2line's "file:line" with "??" and "?" for unknown, " (discriminator N)" dropped.
std::string reference_position(const std::string& text) {
  std::string position = text.substr(0, text.find(" (discriminator"));
  auto colon = position.rfind(':');
  std::string file = position.substr(0, colon);
  std::string line = colon == std::string::npos ? "?" : position.substr(colon + 1);
  if (file == "??") file.clear();
  if (line == "?") line = "0";
  return file + "|" + line;
}

// `addr2line -a -f -i -C -e BINARY ADDRESS...` (or llvm-symbolizer with the same output
// style): per address, its frames innermost first as "function|file|line".
std::vector<std::vector<std::string>> reference_frames(const std::vector<std::string>& command,
                                                       const std::vector<uint64_t>& addresses) {
  std::vector<std::string> argv = command;
  for (uint64_t address : addresses) argv.push_back(fmt::format("{:#x}", address));
  RunResult result = run(argv);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::vector<std::string>> frames;
  std::vector<std::string> lines;
  for (size_t begin = 0; begin < result.out.size();) {
    size_t end = result.out.find('\n', begin);
    if (end == std::string::npos) end = result.out.size();
    lines.push_back(result.out.substr(begin, end - begin));
    begin = end + 1;
  }
  for (size_t i = 0; i < lines.size();) {
    if (lines[i].rfind("0x", 0) == 0) {  // -a: each address starts its block
      frames.emplace_back();
      ++i;
      continue;
    }
    if (i + 1 >= lines.size() || frames.empty()) break;
    frames.back().push_back(lines[i] + "|" + reference_position(lines[i + 1]));
    i += 2;
  }
  return frames;
}

// The two reference symbolizers; the tests that use them require both (TALLY_REQUIRE_PEER).
struct References {
  std::string addr2line = find_program("addr2line");
  std::string llvm_symbolizer = find_program("llvm-symbolizer");
};

// Symbolizes addresses spread over every function of `binary` and compares them with
// the reference tools; returns how many addresses had inline frames.
size_t compare_with_references(const std::string& binary, const std::string& label,
                               const References& references) {
  const std::string& addr2line = references.addr2line;

  // Sixteen addresses spread over every function in the symbol table, first and last
  // byte included.
  std::vector<uint64_t> addresses;
  for (const auto& function : elf_functions(binary)) {
    uint64_t step = std::max<uint64_t>(1, function.size / 16);
    for (uint64_t offset = 0; offset < function.size; offset += step)
      addresses.push_back(function.address + offset);
    addresses.push_back(function.address + function.size - 1);
  }
  EXPECT_GE(addresses.size(), 30u) << "the binary has its functions";

  core::Profile profile = profile_mapping(binary, kLoadBase, addresses);
  core::Diagnostics diagnostics;
  EXPECT_TRUE(symbolize::symbolize(profile, {}, diagnostics).has_value());
  EXPECT_TRUE(diagnostics.empty()) << diagnostics.warnings().front();
  EXPECT_TRUE(profile.mappings[0].has_functions);
  EXPECT_TRUE(profile.mappings[0].has_line_numbers);
  EXPECT_TRUE(profile.mappings[0].has_inline_frames);

  auto expected = reference_frames({addr2line, "-a", "-f", "-i", "-C", "-e", binary}, addresses);
  EXPECT_EQ(expected.size(), addresses.size());
  if (expected.size() != addresses.size()) return 0;
  // binutils 2.40 is not always right: it names the line of std_thread.h's destructor
  // after the CU's file (split.cc:200), and calls main's .cold part "main" or "main.cold"
  // depending on which addresses it was asked before. LLVM's symbolizer is a second,
  // independent reader of the same DWARF: where the two references agree, tally must
  // agree with them; where they differ, each of tally's frames must be one of theirs.
  const std::vector<std::vector<std::string>> second =
      reference_frames({references.llvm_symbolizer, "--obj=" + binary, "-a", "-f", "-i", "-C",
                        "--output-style=GNU"},
                       addresses);
  EXPECT_EQ(second.size(), addresses.size());
  if (second.size() != addresses.size()) return 0;
  size_t inlined = 0;
  size_t references_differ = 0;
  for (size_t i = 0; i < addresses.size(); ++i) {
    auto frames = location_frames(profile, static_cast<core::LocationId>(i + 1));
    if (expected[i].size() > 1) ++inlined;
    std::string where = fmt::format("{} at {:#x}", label, addresses[i]);
    if (expected[i] == second[i]) {
      EXPECT_EQ(frames, expected[i]) << where;
    } else {
      ++references_differ;
      if (std::getenv("TALLY_SHOW_DIFFS") != nullptr) {  // to look at what differs
        std::cout << where << "\n  addr2line:       " << fmt::format("{}", fmt::join(expected[i], "; "))
                  << "\n  llvm-symbolizer: " << fmt::format("{}", fmt::join(second[i], "; "))
                  << "\n  tally:           " << fmt::format("{}", fmt::join(frames, "; "))
                  << "\n";
      }
      // Frame by frame: the tools differ in demangler style ("{lambda()#1}" against
      // "'lambda'()") and in which name an inlined template without linkage name gets.
      EXPECT_TRUE(frames.size() == expected[i].size() || frames.size() == second[i].size())
          << where;
      for (size_t f = 0; f < frames.size(); ++f) {
        bool as_addr2line = f < expected[i].size() && frames[f] == expected[i][f];
        bool as_llvm =
            f < second[i].size() && same_spelling(frames[f]) == same_spelling(second[i][f]);
        EXPECT_TRUE(as_addr2line || as_llvm)
            << where << " frame " << f << ": tally " << frames[f] << "\n addr2line "
            << fmt::format("{}", fmt::join(expected[i], "; ")) << "\n llvm-symbolizer "
            << fmt::format("{}", fmt::join(second[i], "; "));
      }
    }
  }
  std::cout << label << ": " << addresses.size() << " addresses, " << inlined
            << " with inline frames; addr2line and llvm-symbolizer differ at "
            << references_differ << "\n";
  return inlined;
}

class Addr2lineTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Addr2lineTest, FramesEqualAddr2line) {
  const References references;
  TALLY_REQUIRE_PEER(references.addr2line, "addr2line (binutils)");
  TALLY_REQUIRE_PEER(references.llvm_symbolizer, "llvm-symbolizer (Debian package llvm)");
  size_t inlined =
      compare_with_references(shared("fixtures/bin/" + GetParam()), GetParam(), references);
  // split's main inlines std::thread's constructor: inline chains were compared.
  if (GetParam().rfind("split", 0) == 0) {
    EXPECT_GT(inlined, 0u);
  }
}

// C++ that the fixtures lack: a lambda (its DIE nested in the enclosing function's),
// templates, a namespace, a class member, deep inlining; built here with g++ -O2 -g.
TEST(Addr2lineCpp, LambdasTemplatesAndMembers) {
  const References references;
  TALLY_REQUIRE_PEER(references.addr2line, "addr2line (binutils)");
  TALLY_REQUIRE_PEER(references.llvm_symbolizer, "llvm-symbolizer (Debian package llvm)");
  std::string compiler = find_program("g++");
  TALLY_REQUIRE_PEER(compiler, "g++");
  TempDir dir;
  write_bytes(dir.file("program.cc"), R"(
#include <algorithm>
#include <map>
#include <string>
#include <vector>
namespace shapes {
template <class T> struct Box {
  T value;
  __attribute__((noinline)) T twice() const { return value + value; }
};
inline int square(int x) { return x * x; }
inline int sum_squares(const std::vector<int>& v) {
  int s = 0;
  for (int x : v) s += square(x);
  return s;
}
}  // namespace shapes
__attribute__((noinline)) int count_long(std::vector<std::string>& words, size_t n) {
  std::sort(words.begin(), words.end(), [](const std::string& a, const std::string& b) {
    return a.size() < b.size();
  });
  return static_cast<int>(std::count_if(words.begin(), words.end(),
                                        [n](const std::string& w) { return w.size() > n; }));
}
int main(int argc, char** argv) {
  std::vector<std::string> words(argv, argv + argc);
  std::map<std::string, int> seen;
  for (auto& w : words) ++seen[w];
  shapes::Box<long> box{argc};
  std::vector<int> v(static_cast<size_t>(argc), 3);
  return count_long(words, 3) + static_cast<int>(box.twice()) + shapes::sum_squares(v) +
         static_cast<int>(seen.size());
}
)");
  RunResult built = run({compiler, "-O2", "-g", "-o", dir.file("program"), dir.file("program.cc")});
  ASSERT_EQ(built.exit_code, 0) << built.err;
  EXPECT_GT(compare_with_references(dir.file("program"), "program", references), 10u);
}

// A stripped library whose DWARF and .symtab are in a separate debug file (libc6-dbg):
// the DWARF names a function without a linkage name, and only the library's own table
// (.dynsym) may rename it, as addr2line does; libc's debug file has local clones
// ("unlink_chunk.constprop.0") that must not.
TEST(Addr2lineDebugFile, LibcClonesKeepTheirDwarfNames) {
  TALLY_REQUIRE_PEER(find_program("addr2line"), "addr2line (binutils)");
  const std::string libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
  std::string debug;
  auto image = symbolize::ElfImage::open(libc);
  if (std::string id = image ? image->build_id() : ""; id.size() > 2)
    debug = "/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
  TALLY_REQUIRE_PEER(!debug.empty() && std::ifstream(debug).good() ? debug : "",
                     "libc6-dbg (libc's separate debug file)");
  // Four addresses in each clone. Function names only: libdw and binutils join glibc's
  // odd directories differently ("./csu/init-first.c" against "./csu/./csu/init-first.c"),
  // and pick different aliases for its assembly wrappers ("umask", "__GI_umask"), which
  // is not what this test is about.
  std::vector<uint64_t> addresses;
  size_t clones = 0;
  for (const auto& function : elf_functions(debug)) {
    bool clone = function.name.find(".constprop.") != std::string::npos ||
                 function.name.find(".isra.") != std::string::npos ||
                 function.name.find(".part.") != std::string::npos;
    if (!clone) continue;
    ++clones;
    for (uint64_t k = 0; k < 4; ++k) addresses.push_back(function.address + k * function.size / 4);
  }
  ASSERT_GT(clones, 10u);
  core::Profile profile = profile_mapping(libc, kLoadBase, addresses);
  core::Diagnostics diagnostics;
  ASSERT_TRUE(symbolize::symbolize(profile, {}, diagnostics).has_value());
  auto expected = reference_frames({find_program("addr2line"), "-a", "-f", "-i", "-C", "-e", libc},
                                   addresses);
  ASSERT_EQ(expected.size(), addresses.size());
  auto function_of = [](const std::string& frame) { return frame.substr(0, frame.find('|')); };
  size_t compared = 0;
  for (size_t i = 0; i < addresses.size(); ++i) {
    auto frames = location_frames(profile, static_cast<core::LocationId>(i + 1));
    ASSERT_EQ(frames.size(), expected[i].size()) << fmt::format("{:#x}", addresses[i]);
    for (size_t f = 0; f < frames.size(); ++f, ++compared)
      EXPECT_EQ(function_of(frames[f]), function_of(expected[i][f]))
          << fmt::format("{:#x} frame {}", addresses[i], f);
  }
  EXPECT_GT(compared, 200u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Addr2lineTest,
                         ::testing::Values("split", "split-nofp", "deep", "deep-nofp", "shlib_main",
                                           "shlib_main-nofp", "libtallywork.so",
                                           "libtallywork-nofp.so"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace tally::test
