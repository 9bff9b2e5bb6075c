// Lexing ahead of the reader: the text is cut into chunks at line ends; other threads cut
// each chunk into lines and scan the numbers of its cost lines, while the reader applies the
// chunks one after the other in file order. Only this scanning runs in parallel. Names,
// positions relative to the previous cost line, locations and sums stay in the one reader,
// in order, so the profile, its ids and its errors (with their line numbers) are those of
// the serial read whatever the number of threads. A line the lexer does not read as a
// plain cost line (a spec or header line, a scan error, a range) keeps only its text: the
// reader reads it as the serial read does.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "formats/callgrind/line_scan.h"

namespace tally::callgrind {

// One space-separated word of a cost line, scanned as a subposition (a cost is a word of
// the same grammar: the reader takes an absolute one without a range as a cost).
struct LexedWord {
  uint64_t value = 0;
  SubPosition::Kind kind = SubPosition::Kind::absolute;
  bool range = false;
};

struct LexedLine {
  static constexpr uint32_t kText = UINT32_MAX;  // `words` of a line left to the reader
  const char* text = nullptr;  // without its "\n" or "\r\n"
  size_t size = 0;
  uint32_t words = kText;  // of a cost line: how many words it has in LexedChunk::words
};

struct LexedChunk {
  std::vector<LexedLine> lines;
  std::vector<LexedWord> words;  // of all cost lines, in order
};

// `text` is whole lines (the last may lack its '\n'), cut as the serial read cuts them.
void lex_chunk(std::string_view text, LexedChunk& out);

// Lexes `text` in chunks of about `chunk_bytes` on `threads` threads (at least 1), at most
// a few chunks ahead of the consumer, and gives them out in file order.
class ChunkPipeline {
 public:
  ChunkPipeline(std::string_view text, size_t chunk_bytes, unsigned threads);
  ~ChunkPipeline();
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // The next chunk, or null after the last. The one given before is reused from this call.
  const LexedChunk* next();

 private:
  struct Slot {
    LexedChunk chunk;
    bool ready = false;
  };
  void lex_loop();
  size_t end_of_chunk(size_t start) const;

  std::string_view text_;
  size_t chunk_bytes_;
  std::vector<size_t> starts_;  // chunk k is [starts_[k], starts_[k + 1]), as they are taken
  bool last_found_ = false;     // starts_.back() is the end of the text
  std::vector<Slot> ring_;      // chunk k in slot k % size
  std::mutex mutex_;
  std::condition_variable lexed_, released_;
  size_t next_to_lex_ = 0;
  size_t given_ = 0;          // chunks given to the consumer
  size_t released_count_ = 0; // chunks the consumer is done with
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> threads_;
};

}  // namespace tally::callgrind
