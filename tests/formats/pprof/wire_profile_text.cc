#include "wire_profile_text.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <vector>

#include "pprof_schema.h"
#include "proto_wire.h"

namespace tally::test {

namespace {

namespace S = schema;
using wire::Message;

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

class Renderer {
 public:
  explicit Renderer(const Message& m) : m_(m), strings_(m.strings(S::profile::string_table)) {
    for (const Message& f : m.messages(S::profile::function))
      functions_.insert_or_assign(f.varint(S::function::id), f);
    for (const Message& mp : m.messages(S::profile::mapping))
      mappings_.insert_or_assign(mp.varint(S::mapping::id), mp);
    for (const Message& l : m.messages(S::profile::location))
      locations_.insert_or_assign(l.varint(S::location::id), l);
  }

  std::string render() const {
    std::string out;
    auto value_type = [&](const Message& vt) {
      return str(vt.int64(S::value_type::type)) + "/" + str(vt.int64(S::value_type::unit));
    };
    for (const Message& t : m_.messages(S::profile::sample_type)) out += "sample_type " + value_type(t) + "\n";
    out += "default_sample_type " + str(m_.int64(S::profile::default_sample_type)) + "\n";
    out += "period_type " + value_type(m_.message(S::profile::period_type)) + "\n";
    out += "period " + std::to_string(m_.int64(S::profile::period)) + "\n";
    out += "time_nanos " + std::to_string(m_.int64(S::profile::time_nanos)) + "\n";
    out += "duration_nanos " + std::to_string(m_.int64(S::profile::duration_nanos)) + "\n";
    out += "drop_frames " + str(m_.int64(S::profile::drop_frames)) + "\n";
    out += "keep_frames " + str(m_.int64(S::profile::keep_frames)) + "\n";
    out += "doc_url " + str(m_.int64(S::profile::doc_url)) + "\n";
    for (int64_t c : m_.int64s(S::profile::comment)) out += "comment " + str(c) + "\n";

    // Mappings by start address, each once, with what references them or not.
    std::vector<std::string> mappings;
    for (const auto& [id, mp] : mappings_) mappings.push_back("mapping " + mapping(id));
    std::sort(mappings.begin(), mappings.end());
    for (const std::string& s : mappings) out += s + "\n";

    std::vector<std::string> samples;
    for (const Message& s : m_.messages(S::profile::sample)) {
      std::string line = "sample";
      for (int64_t v : s.int64s(S::sample::value)) line += " " + std::to_string(v);
      std::vector<std::string> labels;
      for (const Message& l : s.messages(S::sample::label)) {
        std::string label = str(l.int64(S::label::key)) + "=";
        if (l.int64(S::label::str) != 0) label += "str:" + str(l.int64(S::label::str));
        else label += "num:" + std::to_string(l.int64(S::label::num)) + " " + str(l.int64(S::label::num_unit));
        labels.push_back(label);
      }
      std::sort(labels.begin(), labels.end());
      for (const std::string& l : labels) line += "\n  label " + l;
      for (uint64_t id : s.varints(S::sample::location_id)) line += "\n  " + location(id);
      samples.push_back(line);
    }
    std::sort(samples.begin(), samples.end());
    for (const std::string& s : samples) out += s + "\n";
    return out;
  }

 private:
  std::string str(int64_t index) const {
    if (index < 0 || static_cast<size_t>(index) >= std::max<size_t>(strings_.size(), 1))
      throw std::runtime_error("string index " + std::to_string(index) + " out of range");
    return strings_.empty() ? "" : strings_[static_cast<size_t>(index)];
  }

  std::string mapping(uint64_t id) const {
    auto it = mappings_.find(id);
    if (it == mappings_.end()) throw std::runtime_error("no mapping " + std::to_string(id));
    const Message& mp = it->second;
    namespace M = S::mapping;
    std::string flags;
    for (auto [field, name] : {std::pair{M::has_functions, "FN"}, {M::has_filenames, "FL"},
                               {M::has_line_numbers, "LN"}, {M::has_inline_frames, "IN"}})
      if (mp.varint(field)) flags += std::string("[") + name + "]";
    return hex(mp.varint(M::memory_start)) + "-" + hex(mp.varint(M::memory_limit)) + "@" +
           hex(mp.varint(M::file_offset)) + " " + str(mp.int64(M::filename)) + " build_id=" +
           str(mp.int64(M::build_id)) + " " + flags;
  }

  std::string location(uint64_t id) const {
    auto it = locations_.find(id);
    if (it == locations_.end()) throw std::runtime_error("no location " + std::to_string(id));
    const Message& l = it->second;
    std::string out = hex(l.varint(S::location::address));
    uint64_t mapping_id = l.varint(S::location::mapping_id);
    out += " in " + (mapping_id ? str(mappings_.at(mapping_id).int64(S::mapping::filename)) : "-");
    if (l.varint(S::location::is_folded)) out += " [folded]";
    for (const Message& line : l.messages(S::location::line)) {
      out += " | " + function(line.varint(S::line::function_id)) + ":" +
             std::to_string(line.int64(S::line::line)) + ":" +
             std::to_string(line.int64(S::line::column));
    }
    return out;
  }

  std::string function(uint64_t id) const {
    if (id == 0) return "-";
    auto it = functions_.find(id);
    if (it == functions_.end()) throw std::runtime_error("no function " + std::to_string(id));
    const Message& f = it->second;
    return str(f.int64(S::function::name)) + "{" + str(f.int64(S::function::system_name)) + " " +
           str(f.int64(S::function::filename)) + ":" + std::to_string(f.int64(S::function::start_line)) + "}";
  }

  const Message& m_;
  std::vector<std::string> strings_;
  std::map<uint64_t, Message> functions_, mappings_, locations_;
};

}  // namespace

std::string profile_text(const std::string& bytes) {
  Message m(bytes);
  return Renderer(m).render();
}

}  // namespace tally::test
