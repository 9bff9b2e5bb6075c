#include "collect/process_maps.h"

#include <atomic>
#include <charconv>
#include <fstream>
#include <string_view>

namespace tally::collect {

namespace {

// Generations are unique across every AddressSpace of the program, so that a cache keyed
// by (pid, generation) never mistakes a process's new maps (after exec, or a reused pid)
// for the old ones.
uint64_t next_generation() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

std::optional<ImageMapping> executable_mapping(const MmapRecord& record) {
  if (!record.executable() || record.length == 0 || record.start + record.length < record.start)
    return std::nullopt;
  return ImageMapping{.start = record.start,
                      .limit = record.start + record.length,
                      .pgoff = record.pgoff,
                      .path = std::string(record.filename),
                      .build_id = record.build_id,
                      .dev_major = record.dev_major,
                      .dev_minor = record.dev_minor,
                      .inode = record.inode,
                      .executable = true};
}

void AddressSpace::add(const ImageMapping& mapping) {
  if (mapping.limit <= mapping.start) return;
  // Cut whatever the new mapping overlaps: a mapping that starts before it keeps its head,
  // one that ends after it keeps its tail (its file offset moves along).
  auto it = by_start_.lower_bound(mapping.start);
  if (it != by_start_.begin()) {
    auto before = std::prev(it);
    ImageMapping& previous = before->second;
    if (previous.limit > mapping.start) {
      if (previous.limit > mapping.limit) {
        ImageMapping tail = previous;
        tail.pgoff += mapping.limit - previous.start;
        tail.start = mapping.limit;
        by_start_.emplace(tail.start, std::move(tail));
      }
      previous.limit = mapping.start;
    }
  }
  while (it != by_start_.end() && it->first < mapping.limit) {
    if (it->second.limit > mapping.limit) {
      ImageMapping tail = std::move(it->second);
      tail.pgoff += mapping.limit - tail.start;
      tail.start = mapping.limit;
      by_start_.erase(it);
      by_start_.emplace(tail.start, std::move(tail));
      break;
    }
    it = by_start_.erase(it);
  }
  by_start_.emplace(mapping.start, mapping);
  generation_ = next_generation();
}

const ImageMapping* AddressSpace::find(uint64_t address) const {
  auto it = by_start_.upper_bound(address);
  if (it == by_start_.begin()) return nullptr;
  --it;
  return address < it->second.limit ? &it->second : nullptr;
}

std::vector<const ImageMapping*> AddressSpace::all() const {
  std::vector<const ImageMapping*> mappings;
  mappings.reserve(by_start_.size());
  for (const auto& [start, mapping] : by_start_) mappings.push_back(&mapping);
  return mappings;
}

AddressSpace& ProcessTable::process(pid_t pid) {
  auto& slot = processes_[pid];
  if (!slot) slot = std::make_unique<AddressSpace>();
  return *slot;
}

const AddressSpace* ProcessTable::find(pid_t pid) const {
  auto it = processes_.find(pid);
  return it == processes_.end() ? nullptr : it->second.get();
}

void ProcessTable::fork(pid_t parent, pid_t child) {
  if (parent == child) return;  // a new thread shares its process's maps
  auto it = processes_.find(parent);
  auto copy = std::make_unique<AddressSpace>();
  if (it != processes_.end()) {
    for (const ImageMapping* mapping : it->second->all()) copy->add(*mapping);
  }
  processes_[child] = std::move(copy);
}

void ProcessTable::exec(pid_t pid) { processes_[pid] = std::make_unique<AddressSpace>(); }

namespace {

// One field of a /proc/PID/maps line, separated by single spaces.
std::string_view next_field(std::string_view& line) {
  size_t end = line.find(' ');
  std::string_view field = line.substr(0, end);
  line = end == std::string_view::npos ? std::string_view{} : line.substr(end + 1);
  return field;
}

template <class T>
bool parse_hex(std::string_view text, T& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
  return error == std::errc{} && end == text.data() + text.size() && !text.empty();
}

// "start-limit perms offset major:minor inode      path" (the path may hold spaces and
// ends in " (deleted)" when the file was removed; both are kept as the kernel wrote them,
// as PERF_RECORD_MMAP2 reports them).
bool parse_maps_line(std::string_view line, ImageMapping& mapping) {
  std::string_view range = next_field(line);
  std::string_view perms = next_field(line);
  std::string_view offset = next_field(line);
  std::string_view device = next_field(line);
  std::string_view inode = next_field(line);
  size_t dash = range.find('-');
  size_t colon = device.find(':');
  if (dash == std::string_view::npos || colon == std::string_view::npos || perms.size() < 4)
    return false;
  if (!parse_hex(range.substr(0, dash), mapping.start) ||
      !parse_hex(range.substr(dash + 1), mapping.limit) || !parse_hex(offset, mapping.pgoff) ||
      !parse_hex(device.substr(0, colon), mapping.dev_major) ||
      !parse_hex(device.substr(colon + 1), mapping.dev_minor))
    return false;
  auto [end, error] = std::from_chars(inode.data(), inode.data() + inode.size(), mapping.inode);
  if (error != std::errc{} || end != inode.data() + inode.size()) return false;
  size_t path_start = line.find_first_not_of(' ');
  mapping.path = path_start == std::string_view::npos ? "" : std::string(line.substr(path_start));
  mapping.executable = perms[2] == 'x';
  return true;
}

}  // namespace

bool ProcessTable::load_proc_maps(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  if (!in) return false;
  auto fresh = std::make_unique<AddressSpace>();
  std::string line;
  while (std::getline(in, line)) {
    ImageMapping mapping;
    if (parse_maps_line(line, mapping)) fresh->add(mapping);
  }
  if (in.bad()) return false;
  processes_[pid] = std::move(fresh);
  return true;
}

}  // namespace tally::collect
