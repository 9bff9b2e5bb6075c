// LineReader: walks a text buffer line by line (\n or \r\n), numbering lines from 1, for
// error messages of the form "FILE: line N: expected ...".
#pragma once

#include <cstdint>
#include <string_view>

namespace tally::io {

class LineReader {
 public:
  explicit LineReader(std::string_view text, uint64_t first_line = 1)
      : text_(text), next_number_(first_line) {}

  // Fetches the next line without its terminator; false at the end of the text.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    size_t stop = end == std::string_view::npos ? text_.size() : end;
    line = text_.substr(pos_, stop - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end == std::string_view::npos ? text_.size() : end + 1;
    number_ = next_number_++;
    return true;
  }
  uint64_t line_number() const { return number_; }  // of the line last returned
  size_t position() const { return pos_; }           // byte offset after that line

 private:
  std::string_view text_;
  size_t pos_ = 0;
  uint64_t next_number_;
  uint64_t number_ = 0;
};

}  // namespace tally::io
