// PLT entries named "function@plt" against objdump's own names for them (binutils decodes
// each entry's jump through the GOT and the relocation of that slot, as tally does), on
// binaries and libraries of this machine.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "support/test_support.h"
#include "symbolize/elf_image.h"
#include "symbolize/plt_entries.h"

namespace tally::symbolize {
namespace {

// "0000000000004040 <free@plt>:" lines of objdump -d over the PLT sections.
std::map<uint64_t, std::string> objdump_plt(const std::string& path) {
  const std::string objdump = test::find_program("objdump");
  EXPECT_FALSE(objdump.empty()) << "objdump (binutils) is needed";
  auto image = ElfImage::open(path);
  std::vector<std::string> argv{objdump, "-d"};
  for (const char* section : {".plt", ".plt.sec", ".plt.got"}) {
    if (image && image->has_section(section, true)) {
      argv.push_back("-j");
      argv.push_back(section);
    }
  }
  argv.push_back(path);
  test::RunResult r = test::run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<uint64_t, std::string> names;
  std::regex label("^([0-9a-f]+) <(.+@plt)>:$");
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    // IRELATIVE slots have no symbol: objdump names them "*ABS*+0x...@plt", tally not at all.
    if (std::regex_match(line, match, label) && match[2].str().rfind("*ABS*", 0) != 0)
      names[std::stoull(match[1].str(), nullptr, 16)] = match[2].str();
  }
  return names;
}

TEST(PltEntries, NamedAsObjdumpNamesThem) {
  for (const char* path : {"/usr/bin/xz", "/lib/x86_64-linux-gnu/liblzma.so.5",
                           "/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libstdc++.so.6"}) {
    SCOPED_TRACE(path);
    auto image = ElfImage::open(path);
    ASSERT_NE(image, nullptr);
    std::map<uint64_t, std::string> expected = objdump_plt(path);
    ASSERT_GE(expected.size(), 5u) << "objdump named too few entries to compare with";
    std::map<uint64_t, std::string> found;
    for (const PltEntry& entry : read_plt_entries(*image)) {
      EXPECT_TRUE(found.emplace(entry.address, entry.name).second) << entry.name;
      EXPECT_GT(entry.size, 0u);
    }
    EXPECT_EQ(found, expected);
  }
}

// The daemon's needed addresses: .plt.got (named from .rela.dyn, tens of MB in big
// binaries) is read only when one of them is in it; the other entries are objdump's all
// the same, and a needed address in a .plt.got entry gets that entry.
TEST(PltEntries, PltGotOnlyForANeededAddressInIt) {
  const char* const path = "/lib/x86_64-linux-gnu/libstdc++.so.6";
  auto image = ElfImage::open(path);
  ASSERT_NE(image, nullptr);
  auto plt_got = image->section_data(".plt.got");
  ASSERT_TRUE(plt_got);
  const uint64_t got_begin = plt_got->address, got_end = got_begin + plt_got->bytes.size();
  std::map<uint64_t, std::string> expected = objdump_plt(path), outside, inside;
  for (const auto& [address, name] : expected)
    (address >= got_begin && address < got_end ? inside : outside).emplace(address, name);
  ASSERT_GE(inside.size(), 5u);
  ASSERT_GE(outside.size(), 5u);
  auto named = [&](const std::vector<uint64_t>& needed) {
    std::map<uint64_t, std::string> found;
    for (const PltEntry& entry : read_plt_entries(*image, &needed)) found.emplace(entry.address, entry.name);
    return found;
  };
  EXPECT_EQ(named({got_begin - 1, got_end, 0x1000}), outside);
  auto with_one = named({std::next(inside.begin(), 2)->first + 3});
  EXPECT_EQ(with_one.size(), expected.size());
  EXPECT_EQ(with_one, expected);
}

}  // namespace
}  // namespace tally::symbolize
