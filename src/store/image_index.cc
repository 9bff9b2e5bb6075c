#include "store/image_index.h"

#include <fmt/format.h>

#include <unistd.h>

#include <charconv>
#include <vector>

#include "io/input.h"
#include "io/output.h"

namespace tally::store {

namespace {

constexpr std::string_view kHeader =
    "# tally profile database: images by id\n"
    "# id\tbuild-id\tdevice\tinode\tsize\tmtime-ns\tpath\n";

std::string escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

bool unescape(std::string_view s, std::string& out) {
  out.clear();
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) return false;
    if (s[i] == '\\') out += '\\';
    else if (s[i] == 't') out += '\t';
    else if (s[i] == 'n') out += '\n';
    else return false;
  }
  return true;
}

template <class T>
bool parse_number(std::string_view s, T& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t pos = 0;
  while (true) {
    size_t tab = line.find('\t', pos);
    fields.push_back(line.substr(pos, tab == std::string_view::npos ? tab : tab - pos));
    if (tab == std::string_view::npos) return fields;
    pos = tab + 1;
  }
}

}  // namespace

core::Expected<ImageIndex> ImageIndex::read(const std::string& db_dir) {
  const std::string path = db_dir + "/" + std::string(kFileName);
  if (::access(path.c_str(), F_OK) != 0) return ImageIndex{};
  auto in = io::Input::open(path);
  if (!in) return in.error();
  return parse(in->text(), path);
}

core::Expected<ImageIndex> ImageIndex::parse(std::string_view text, const std::string& source) {
  ImageIndex index;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;
    const auto fail = [&](const std::string& what) {
      return core::Error{fmt::format("{}: line {}: {}", source, line_no, what)};
    };
    auto fields = split_tabs(line);
    if (fields.size() != 7)
      return fail(fmt::format("expected 7 tab-separated fields (id, build-id, device, inode, "
                              "size, mtime-ns, path), found {}", fields.size()));
    IndexEntry e;
    e.id = std::string(fields[0]);
    if (!is_image_id(e.id)) return fail("the image id '" + e.id + "' is not lower-case hex");
    if (fields[1] != "-") {
      if (!is_image_id(fields[1])) return fail("the build id is not lower-case hex");
      e.key.build_id = std::string(fields[1]);
    }
    auto colon = fields[2].find(':');
    if (colon == std::string_view::npos ||
        !parse_number(fields[2].substr(0, colon), e.key.dev_major) ||
        !parse_number(fields[2].substr(colon + 1), e.key.dev_minor))
      return fail("expected the device as MAJOR:MINOR, found '" + std::string(fields[2]) + "'");
    if (!parse_number(fields[3], e.key.inode)) return fail("expected the inode number");
    if (!parse_number(fields[4], e.key.size)) return fail("expected the file size");
    if (!parse_number(fields[5], e.key.mtime_ns)) return fail("expected the mtime in nanoseconds");
    if (!unescape(fields[6], e.key.path)) return fail("bad escape in the path");
    index.entries_.emplace(e.id, std::move(e));
  }
  return index;
}

std::string ImageIndex::text() const {
  std::string out(kHeader);
  for (const auto& [id, e] : entries_)
    out += fmt::format("{}\t{}\t{}:{}\t{}\t{}\t{}\t{}\n", id,
                       e.key.build_id.empty() ? "-" : e.key.build_id, e.key.dev_major,
                       e.key.dev_minor, e.key.inode, e.key.size, e.key.mtime_ns,
                       escape(e.key.path));
  return out;
}

const IndexEntry* ImageIndex::find(std::string_view id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second;
}

bool ImageIndex::add(const IndexEntry& entry) {
  return entries_.emplace(entry.id, entry).second;
}

core::Status ImageIndex::write(const std::string& db_dir) const {
  return io::write_file_atomically(db_dir + "/" + std::string(kFileName), text());
}

}  // namespace tally::store
