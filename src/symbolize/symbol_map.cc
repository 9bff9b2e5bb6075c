#include "symbolize/symbol_map.h"

#include <algorithm>
#include <unordered_map>

#include "symbolize/run_parallel.h"

namespace tally::symbolize {
namespace {

// An image whose DWARF addresses are fewer than this is resolved with one libdw handle:
// every handle keeps its own record of each compile unit it passes (a few MB for a big
// library), and this much work is not worth a second thread.
constexpr size_t kAddressesPerExtraHandle = 2000;
constexpr size_t kChunk = 4096;  // addresses outside DWARF per task

}  // namespace

core::Expected<std::unique_ptr<SymbolMap>> SymbolMap::open(const FoundBinary& found, unsigned threads,
                                                           InflatedCopies* copies,
                                                           const std::vector<uint64_t>* needed) {
  if (!found.found()) {
    std::string searched;
    for (const auto& path : found.searched) searched += (searched.empty() ? "" : ", ") + path;
    return core::Error{(found.problem.empty() ? "not found" : found.problem) + "; searched " + searched,
                       core::ErrorKind::io};
  }
  return std::unique_ptr<SymbolMap>(new SymbolMap(found, threads == 0 ? 1 : threads, copies, needed));
}

void SymbolMap::lookup(std::span<const uint64_t> addresses, std::vector<Frame>& frames,
                       std::vector<uint32_t>& ends) {
  if (!own_resolver_) own_resolver_ = std::make_unique<AddressResolver>(*index_, 0);
  frames.clear();
  ends.assign(addresses.size(), 0);
  // Each compile unit's run of addresses at once: its line program runs once per run.
  for (size_t begin = 0; begin < addresses.size();) {
    const size_t unit = index_->unit_of(addresses[begin]);
    size_t end = begin + 1;
    while (end < addresses.size() && index_->unit_of(addresses[end]) == unit) ++end;
    own_resolver_->resolve(unit, addresses.subspan(begin, end - begin), frames,
                           std::span(ends).subspan(begin, end - begin));
    begin = end;
  }
}

// One task per compile unit (the addresses outside DWARF in chunks); with one libdw handle
// all units go in one task, which one thread then runs.
std::vector<SymbolMap::Task> SymbolMap::make_tasks(std::span<const uint64_t> addresses,
                                                   unsigned threads) {
  std::vector<Task> tasks;
  std::unordered_map<size_t, size_t> unit_task;  // unit -> its task
  std::vector<size_t> unit_tasks;
  size_t symbols_task = SIZE_MAX;
  for (size_t slot = 0; slot < addresses.size(); ++slot) {
    const size_t unit = index_->unit_of(addresses[slot]);
    size_t task = 0;
    if (unit != ElfIndex::kNoUnit) {
      auto [it, added] = unit_task.try_emplace(unit, tasks.size());
      if (added) {
        tasks.push_back({{{unit, 0, 0}}, {}, {}});
        unit_tasks.push_back(it->second);
      }
      task = it->second;
    } else {
      if (symbols_task == SIZE_MAX || tasks[symbols_task].slots.size() >= kChunk) {
        symbols_task = tasks.size();
        tasks.push_back({{{ElfIndex::kNoUnit, 0, 0}}, {}, {}});
      }
      task = symbols_task;
    }
    tasks[task].slots.push_back(static_cast<uint32_t>(slot));
    tasks[task].runs.back().end = static_cast<uint32_t>(tasks[task].slots.size());
  }
  size_t dwarf_addresses = 0;
  for (size_t t : unit_tasks) dwarf_addresses += tasks[t].slots.size();
  if (threads > 1 && dwarf_addresses >= kAddressesPerExtraHandle) {
    index_->add_dwarf_handles(threads);
  } else if (unit_tasks.size() > 1) {
    // The units' tasks become runs of the first one; the others are left empty.
    Task& merged = tasks[unit_tasks.front()];
    for (size_t k = 1; k < unit_tasks.size(); ++k) {
      Task& from = tasks[unit_tasks[k]];
      const auto offset = static_cast<uint32_t>(merged.slots.size());
      merged.slots.insert(merged.slots.end(), from.slots.begin(), from.slots.end());
      merged.runs.push_back({from.runs.front().unit, offset, static_cast<uint32_t>(merged.slots.size())});
      from = Task{};
    }
  }
  std::erase_if(tasks, [](const Task& task) { return task.slots.empty(); });
  // The tasks in DWARF first, the biggest first within each kind, so that the threads
  // finish together.
  auto in_dwarf = [](const Task& task) {
    return std::any_of(task.runs.begin(), task.runs.end(),
                       [](const Task::Run& run) { return run.unit != ElfIndex::kNoUnit; });
  };
  std::stable_sort(tasks.begin(), tasks.end(), [&](const Task& a, const Task& b) {
    if (in_dwarf(a) != in_dwarf(b)) return in_dwarf(a);
    return a.slots.size() > b.slots.size();
  });
  return tasks;
}

void SymbolMap::resolve(std::span<const uint64_t> addresses, unsigned threads) {
  if (threads == 0) threads = 1;
  tasks_ = make_tasks(addresses, threads);
  spans_.assign(addresses.size(), Span{});
  // Each thread's resolver. With one libdw handle all units are in one task: whichever
  // thread takes it uses handle 0 (its other tasks use none).
  std::vector<std::unique_ptr<AddressResolver>> per_thread(threads);
  run_parallel(tasks_.size(), threads, [&](unsigned worker, size_t t) {
    Task& task = tasks_[t];
    auto& resolver = per_thread[worker];
    if (!resolver)
      resolver = std::make_unique<AddressResolver>(*index_, index_->dwarf_handles() > 1 ? worker : 0);
    std::vector<uint64_t> wanted(task.slots.size());
    std::vector<uint32_t> ends(task.slots.size());
    for (size_t k = 0; k < task.slots.size(); ++k) wanted[k] = addresses[task.slots[k]];
    for (const Task::Run& run : task.runs)
      resolver->resolve(run.unit, std::span(wanted).subspan(run.begin, run.end - run.begin),
                        task.frames, std::span(ends).subspan(run.begin, run.end - run.begin));
    for (size_t k = 0; k < task.slots.size(); ++k)
      spans_[task.slots[k]] = {static_cast<uint32_t>(t), k == 0 ? 0 : ends[k - 1], ends[k]};
    task.slots = {};  // only the frames are needed from here on
    task.runs = {};
  });
  for (auto& resolver : per_thread)
    if (resolver) resolvers_.push_back(std::move(resolver));
}

std::span<const Frame> SymbolMap::frames(size_t i) const {
  const Span& span = spans_[i];
  if (span.begin == span.end) return {};
  return std::span(tasks_[span.task].frames).subspan(span.begin, span.end - span.begin);
}

size_t SymbolMap::frame_count() const {
  size_t count = 0;
  for (const Task& task : tasks_) count += task.frames.size();
  return count;
}

}  // namespace tally::symbolize
