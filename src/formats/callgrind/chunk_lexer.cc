#include "formats/callgrind/chunk_lexer.h"

#include <algorithm>
#include <cstring>

namespace tally::callgrind {

namespace {

// The words of a cost line, or false when one is not a subposition (the reader then reads
// the text and says what is wrong).
bool lex_cost_line(std::string_view line, std::vector<LexedWord>& words) {
  const size_t first = words.size();
  LineScan s(line);
  for (;;) {
    s.skip_spaces();
    if (s.at_end()) return true;
    SubPosition sp;
    if (scan_subposition(s, sp) != Scan::ok) {
      words.resize(first);
      return false;
    }
    words.push_back({sp.value, sp.kind, sp.range});
  }
}

}  // namespace

void lex_chunk(std::string_view text, LexedChunk& out) {
  out.lines.clear();
  out.words.clear();
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const auto* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const char* stop = nl ? nl : end;
    LexedLine line;
    line.text = p;
    line.size = static_cast<size_t>(stop - p);
    if (line.size > 0 && p[line.size - 1] == '\r') --line.size;
    // As the reader's dispatch: spaces and tabs first, then a cost line starts with one of
    // these.
    const char* q = p;
    const char* const line_end = p + line.size;
    while (q < line_end && (*q == ' ' || *q == '\t')) ++q;
    if (q < line_end && ((*q >= '0' && *q <= '9') || *q == '+' || *q == '-' || *q == '*')) {
      const size_t before = out.words.size();
      if (lex_cost_line({q, static_cast<size_t>(line_end - q)}, out.words) &&
          out.words.size() - before < LexedLine::kText)
        line.words = static_cast<uint32_t>(out.words.size() - before);
      else
        out.words.resize(before);
    }
    out.lines.push_back(line);
    p = nl ? nl + 1 : end;
  }
}

ChunkPipeline::ChunkPipeline(std::string_view text, size_t chunk_bytes, unsigned threads)
    : text_(text), chunk_bytes_(std::max<size_t>(chunk_bytes, 1)) {
  starts_.push_back(0);
  // A few chunks per thread ahead of the consumer: enough that no thread waits for a slot
  // while the consumer works, few enough that memory does not grow with the file.
  const size_t most_chunks = text.size() / chunk_bytes_ + 1;
  threads = std::clamp<unsigned>(threads, 1, static_cast<unsigned>(std::min<size_t>(most_chunks, 64)));
  ring_.resize(std::min<size_t>(most_chunks, 2 * size_t(threads) + 2));
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { lex_loop(); });
}

ChunkPipeline::~ChunkPipeline() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  released_.notify_all();
  for (std::thread& t : threads_) t.join();
}

size_t ChunkPipeline::end_of_chunk(size_t start) const {
  // At the first line end past chunk_bytes_. Found when the chunk is taken, not all at
  // once: a look at every boundary would map the whole file at the start.
  const size_t at = start + chunk_bytes_;
  if (at >= text_.size()) return text_.size();
  const void* nl = std::memchr(text_.data() + at, '\n', text_.size() - at);
  if (!nl) return text_.size();
  return static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) + 1;
}

void ChunkPipeline::lex_loop() {
  for (;;) {
    size_t k = 0, start = 0, end = 0;
    {
      std::unique_lock lock(mutex_);
      released_.wait(lock, [&] {
        return stop_ || last_found_ || next_to_lex_ < released_count_ + ring_.size();
      });
      if (stop_ || last_found_) return;
      k = next_to_lex_++;
      start = starts_[k];
      end = end_of_chunk(start);
      starts_.push_back(end);
      if (end == text_.size()) last_found_ = true;
    }
    if (end == text_.size()) released_.notify_all();  // the other lexers stop
    Slot& slot = ring_[k % ring_.size()];
    try {
      lex_chunk(text_.substr(start, end - start), slot.chunk);
    } catch (...) {  // std::bad_alloc: the consumer rethrows it
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
      stop_ = true;
      lexed_.notify_all();
      released_.notify_all();
      return;
    }
    {
      std::lock_guard lock(mutex_);
      slot.ready = true;
    }
    lexed_.notify_all();
  }
}

const LexedChunk* ChunkPipeline::next() {
  std::unique_lock lock(mutex_);
  if (given_ > released_count_) {
    ring_[(given_ - 1) % ring_.size()].ready = false;
    released_count_ = given_;
    released_.notify_all();
  }
  const auto past_the_last = [&] { return last_found_ && given_ + 1 >= starts_.size(); };
  Slot& slot = ring_[given_ % ring_.size()];
  lexed_.wait(lock, [&] { return slot.ready || error_ || past_the_last(); });
  if (slot.ready) {
    ++given_;
    return &slot.chunk;
  }
  if (error_) std::rethrow_exception(error_);
  return nullptr;
}

}  // namespace tally::callgrind
