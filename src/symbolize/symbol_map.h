// One image's symbols, lines and inline frames behind one narrow interface: open the map
// of a binary found by find_binary(), then ask for the frames of link-time addresses, a
// few on one thread (lookup: disasm) or a whole profile's on all threads (resolve:
// symbolize). It hides the compile units, the libdw handles and the per-thread resolvers.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/error.h"
#include "symbolize/address_resolver.h"

namespace tally::symbolize {

class SymbolMap {
 public:
  // An error (with the paths tried) when neither the binary nor a debug file was found.
  // `threads`: how many threads may inflate its compressed debug sections at once.
  // `copies`: compressed debug files are read from their inflated copies there.
  // `needed`: the only addresses that will be resolved (ElfIndex's).
  static core::Expected<std::unique_ptr<SymbolMap>> open(const FoundBinary& found, unsigned threads = 1,
                                                         InflatedCopies* copies = nullptr,
                                                         const std::vector<uint64_t>* needed = nullptr);

  // What the image holds (symbols, call-frame ranges, what could not be read); gone after
  // release_index().
  const ElfIndex& index() const { return *index_; }

  // On this thread: the frames of each of `addresses` (ascending), innermost first: frames
  // [ends[i-1], ends[i]) are address i's (none when no function holds it).
  void lookup(std::span<const uint64_t> addresses, std::vector<Frame>& frames,
              std::vector<uint32_t>& ends);

  // On `threads` threads: every one of `addresses` (ascending, unique), after which
  // frames(i) are address i's. Each compile unit is decoded by the one thread that takes
  // it; the biggest units go first, so that the threads finish together.
  void resolve(std::span<const uint64_t> addresses, unsigned threads);
  std::span<const Frame> frames(size_t i) const;
  size_t frame_count() const;

  // The files, their inflated debug sections and libdw's handles go; the frames (which
  // point into the resolvers, not the index) stay valid.
  void release_index() { index_.reset(); }

 private:
  SymbolMap(const FoundBinary& found, unsigned threads, InflatedCopies* copies,
            const std::vector<uint64_t>* needed)
      : index_(std::make_unique<ElfIndex>(found, 1, threads, copies, needed)) {}

  // One thread's share of resolve(): runs of addresses each in one compile unit (or outside
  // DWARF), and once resolved their frames, address after address.
  struct Task {
    struct Run {
      size_t unit = ElfIndex::kNoUnit;
      uint32_t begin = 0, end = 0;  // in `slots`
    };
    std::vector<Run> runs;
    std::vector<uint32_t> slots;  // indexes into resolve()'s addresses
    std::vector<Frame> frames;
  };
  struct Span {
    uint32_t task = 0, begin = 0, end = 0;
  };
  std::vector<Task> make_tasks(std::span<const uint64_t> addresses, unsigned threads);

  std::unique_ptr<ElfIndex> index_;
  std::unique_ptr<AddressResolver> own_resolver_;  // lookup()'s
  std::vector<std::unique_ptr<AddressResolver>> resolvers_;  // resolve()'s, kept for the frames
  std::vector<Task> tasks_;
  std::vector<Span> spans_;  // per address of resolve()
};

}  // namespace tally::symbolize
