#include "proto_wire.h"

#include <stdexcept>

namespace tally::test::wire {

namespace {

constexpr uint8_t kVarint = 0, kFixed64 = 1, kLen = 2, kFixed32 = 5;

uint64_t read_varint(std::string_view bytes, size_t& pos) {
  uint64_t value = 0;
  for (unsigned shift = 0; shift < 70; shift += 7) {
    if (pos >= bytes.size()) throw std::runtime_error("truncated varint");
    auto b = static_cast<uint8_t>(bytes[pos++]);
    value |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return value;
  }
  throw std::runtime_error("varint longer than 10 bytes");
}

}  // namespace

std::string Writer::encode_varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out += static_cast<char>(0x80 | (value & 0x7f));
    value >>= 7;
  }
  out += static_cast<char>(value);
  return out;
}

void Writer::tag(uint32_t field, uint8_t wire_type) {
  out_ += encode_varint(uint64_t(field) << 3 | wire_type);
}

Writer& Writer::varint(uint32_t field, uint64_t value) {
  tag(field, kVarint);
  out_ += encode_varint(value);
  return *this;
}

Writer& Writer::bytes(uint32_t field, std::string_view value) {
  tag(field, kLen);
  out_ += encode_varint(value.size());
  out_ += value;
  return *this;
}

Writer& Writer::packed(uint32_t field, std::initializer_list<uint64_t> values) {
  return packed(field, std::vector<uint64_t>(values));
}

Writer& Writer::packed(uint32_t field, const std::vector<uint64_t>& values) {
  std::string body;
  for (uint64_t v : values) body += encode_varint(v);
  return bytes(field, body);
}

Writer& Writer::raw(std::string_view bytes) {
  out_ += bytes;
  return *this;
}

Message::Message(std::string_view bytes) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t tag = read_varint(bytes, pos);
    Field f;
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wire_type = static_cast<uint8_t>(tag & 7);
    if (f.number == 0) throw std::runtime_error("field number 0");
    switch (f.wire_type) {
      case kVarint:
        f.value = read_varint(bytes, pos);
        break;
      case kFixed64:
      case kFixed32: {
        size_t n = f.wire_type == kFixed64 ? 8 : 4;
        if (bytes.size() - pos < n) throw std::runtime_error("truncated fixed-size field");
        for (size_t i = 0; i < n; ++i) f.value |= uint64_t(uint8_t(bytes[pos + i])) << (8 * i);
        pos += n;
        break;
      }
      case kLen: {
        uint64_t n = read_varint(bytes, pos);
        if (n > bytes.size() - pos) throw std::runtime_error("truncated length-delimited field");
        f.bytes = std::string(bytes.substr(pos, static_cast<size_t>(n)));
        pos += static_cast<size_t>(n);
        break;
      }
      default:
        throw std::runtime_error("wire type " + std::to_string(f.wire_type));
    }
    fields_.push_back(std::move(f));
  }
}

bool Message::has(uint32_t number) const {
  for (const Field& f : fields_)
    if (f.number == number) return true;
  return false;
}

uint64_t Message::varint(uint32_t number) const {
  uint64_t value = 0;
  for (const Field& f : fields_) {
    if (f.number != number) continue;
    if (f.wire_type != kVarint) throw std::runtime_error("field " + std::to_string(number) + " is not a varint");
    value = f.value;
  }
  return value;
}

std::vector<uint64_t> Message::varints(uint32_t number) const {
  std::vector<uint64_t> out;
  for (const Field& f : fields_) {
    if (f.number != number) continue;
    if (f.wire_type == kVarint) {
      out.push_back(f.value);
    } else if (f.wire_type == kLen) {
      for (size_t pos = 0; pos < f.bytes.size();) out.push_back(read_varint(f.bytes, pos));
    } else {
      throw std::runtime_error("field " + std::to_string(number) + " is not a repeated varint");
    }
  }
  return out;
}

std::vector<int64_t> Message::int64s(uint32_t number) const {
  std::vector<int64_t> out;
  for (uint64_t v : varints(number)) out.push_back(static_cast<int64_t>(v));
  return out;
}

std::vector<std::string> Message::strings(uint32_t number) const {
  std::vector<std::string> out;
  for (const Field& f : fields_) {
    if (f.number != number) continue;
    if (f.wire_type != kLen) throw std::runtime_error("field " + std::to_string(number) + " is not length-delimited");
    out.push_back(f.bytes);
  }
  return out;
}

std::vector<Message> Message::messages(uint32_t number) const {
  std::vector<Message> out;
  for (const std::string& s : strings(number)) out.emplace_back(s);
  return out;
}

Message Message::message(uint32_t number) const {
  std::vector<Message> all = messages(number);
  return all.empty() ? Message("") : all.back();
}

}  // namespace tally::test::wire
