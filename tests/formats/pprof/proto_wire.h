// The tests' own protobuf wire encoder and decoder (varints and length-delimited fields are
// all profile.proto uses), so that test inputs, and what the tests expect of tally's output,
// come from the public schema's field numbers (pprof_schema.h) and never from the classes
// generated from tally's proto/profile.proto.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace tally::test::wire {

// Builds one message, field after field, in the order written.
class Writer {
 public:
  // int64 fields are written as their two's complement uint64 (10 bytes when negative).
  Writer& varint(uint32_t field, uint64_t value);
  Writer& bytes(uint32_t field, std::string_view value);
  Writer& message(uint32_t field, const Writer& nested) { return bytes(field, nested.str()); }
  Writer& packed(uint32_t field, std::initializer_list<uint64_t> values);
  Writer& packed(uint32_t field, const std::vector<uint64_t>& values);
  // Appends bytes as they are (for malformed input).
  Writer& raw(std::string_view bytes);

  const std::string& str() const { return out_; }
  size_t size() const { return out_.size(); }

  static std::string encode_varint(uint64_t value);

 private:
  void tag(uint32_t field, uint8_t wire_type);
  std::string out_;
};

struct Field {
  uint32_t number = 0;
  uint8_t wire_type = 0;
  uint64_t value = 0;  // varint, fixed32 and fixed64 fields
  std::string bytes;   // length-delimited fields
};

// One decoded message. Throws std::runtime_error on malformed bytes.
class Message {
 public:
  explicit Message(std::string_view bytes);

  const std::vector<Field>& fields() const { return fields_; }
  bool has(uint32_t number) const;
  // A scalar: the last occurrence (protobuf's rule), 0 when absent (proto3's default).
  uint64_t varint(uint32_t number) const;
  int64_t int64(uint32_t number) const { return static_cast<int64_t>(varint(number)); }
  // A repeated varint field, packed or not.
  std::vector<uint64_t> varints(uint32_t number) const;
  std::vector<int64_t> int64s(uint32_t number) const;
  std::vector<std::string> strings(uint32_t number) const;
  std::vector<Message> messages(uint32_t number) const;
  // The one sub-message `number` (an empty message when absent).
  Message message(uint32_t number) const;

 private:
  std::vector<Field> fields_;
};

}  // namespace tally::test::wire
