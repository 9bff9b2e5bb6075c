#include "random_pprof.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <vector>

#include "pprof_schema.h"
#include "proto_wire.h"

namespace tally::test {

namespace {

// splitmix64: the same numbers on every machine.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
  bool chance(unsigned percent) { return below(100) < percent; }
  // Zero, small, negative and extreme values, each often enough to matter.
  int64_t value() {
    switch (below(8)) {
      case 0: return 0;
      case 1: return -static_cast<int64_t>(below(1000));
      case 2: return std::numeric_limits<int64_t>::max();
      case 3: return std::numeric_limits<int64_t>::min();
      case 4: return static_cast<int64_t>(next());
      default: return static_cast<int64_t>(below(100000));
    }
  }
  uint64_t address() { return chance(20) ? 0 : chance(50) ? next() : 0x400000 + below(1 << 20); }
  std::string text() {
    static const char* const kWords[] = {"main", "std::vector<int>::push_back", "caf\xe9 \xff",
                                         "a;b c", "", "/usr/lib/libc.so.6", "\x01\x02",
                                         "worker", "bytes", "thread"};
    std::string s = kWords[below(std::size(kWords))];
    if (chance(40)) s += std::to_string(below(50));
    return s;
  }

 private:
  uint64_t state_;
};

}  // namespace

core::Profile random_profile(uint64_t seed) {
  Random r(seed);
  core::Profile p;
  std::vector<core::StringId> strings = {0};
  for (size_t i = 0, n = 1 + r.below(30); i < n; ++i) strings.push_back(p.intern(r.text()));
  auto str = [&] { return strings[r.below(strings.size())]; };

  for (size_t i = 0, n = 1 + r.below(3); i < n; ++i) p.sample_types.push_back({str(), str()});
  p.default_sample_type = r.chance(50) ? p.sample_types[0].type : 0;
  if (r.chance(70)) p.period_type = {str(), str()};
  p.period = r.value();
  p.time_nanos = r.value();
  p.duration_nanos = r.value();
  p.drop_frames = str();
  p.keep_frames = str();
  p.doc_url = str();
  for (size_t i = 0, n = r.below(4); i < n; ++i) p.comments.push_back(str());

  for (size_t i = 0, n = r.below(5); i < n; ++i) {
    core::Mapping m;
    m.start = r.address();
    m.limit = m.start + r.below(1 << 24);
    m.offset = r.chance(50) ? 0 : r.next();
    m.file = str();
    m.build_id = str();
    m.has_functions = r.chance(50);
    m.has_filenames = r.chance(50);
    m.has_line_numbers = r.chance(50);
    m.has_inline_frames = r.chance(50);
    p.add_mapping(m);
    if (r.chance(15)) p.add_mapping(m);  // an equal mapping: one id after canonicalize
  }
  for (size_t i = 0, n = r.below(20); i < n; ++i)
    p.add_function({str(), str(), str(), r.chance(30) ? 0 : r.value()});
  for (size_t i = 0, n = 1 + r.below(30); i < n; ++i) {
    core::Location l;
    l.mapping = static_cast<core::MappingId>(r.below(p.mappings.size() + 1));
    l.address = r.address();
    for (size_t k = 0, lines = r.below(4); k < lines; ++k)
      l.lines.push_back({static_cast<core::FunctionId>(r.below(p.functions.size() + 1)),
                         r.chance(20) ? -1 : static_cast<int64_t>(r.below(5000)),
                         static_cast<int64_t>(r.below(3))});
    l.is_folded = r.chance(10);
    if (r.chance(10)) p.add_location(l);  // an equal location
    p.add_location(std::move(l));
  }
  std::vector<core::LocationId> stack;
  std::vector<int64_t> values;
  std::vector<core::Label> labels;
  for (size_t i = 0, n = r.below(60); i < n; ++i) {
    if (i == 0 || !r.chance(20)) {  // else: the previous stack and labels again
      stack.clear();
      for (size_t k = 0, depth = r.below(9); k < depth; ++k)
        stack.push_back(static_cast<core::LocationId>(1 + r.below(p.locations.size())));
      labels.clear();
      for (size_t k = 0, count = r.below(4); k < count; ++k) {
        if (r.chance(50)) labels.push_back({str(), str(), 0, 0});
        else labels.push_back({str(), 0, r.value(), r.chance(50) ? str() : 0});
      }
    }
    values.clear();
    for (size_t k = 0; k < p.sample_types.size(); ++k) values.push_back(r.value());
    p.add_sample(stack, values, labels);
  }
  return p;
}

reference::Message random_message(uint64_t seed) {
  Random r(seed);
  reference::Message m;
  m.add_string_table("");
  for (size_t i = 0, n = 1 + r.below(30); i < n; ++i) m.add_string_table(r.text());
  auto str = [&] { return static_cast<int64_t>(r.below(static_cast<size_t>(m.string_table_size()))); };
  // Unique nonzero ids: small and dense, or anywhere up to 2^64 - 1.
  auto ids = [&](size_t n) {
    std::vector<uint64_t> out;
    const bool sparse = r.chance(50);
    std::map<uint64_t, bool> used;
    while (out.size() < n) {
      uint64_t id = sparse ? (r.chance(10) ? ~uint64_t(0) - r.below(3) : r.next()) : 1 + r.below(4 * n);
      if (id != 0 && used.emplace(id, true).second) out.push_back(id);
    }
    return out;
  };

  const size_t types = r.below(4);
  for (size_t i = 0; i < types; ++i) {
    auto* t = m.add_sample_type();
    t->set_type(str());
    t->set_unit(str());
  }
  m.set_default_sample_type(str());
  if (r.chance(70)) {
    m.mutable_period_type()->set_type(str());
    m.mutable_period_type()->set_unit(str());
  }
  m.set_period(r.value());
  m.set_time_nanos(r.value());
  m.set_duration_nanos(r.value());
  m.set_drop_frames(str());
  m.set_keep_frames(str());
  m.set_doc_url(str());
  for (size_t i = 0, n = r.below(4); i < n; ++i) m.add_comment(str());

  const std::vector<uint64_t> mapping_ids = ids(r.below(5));
  for (uint64_t id : mapping_ids) {
    auto* out = m.add_mapping();
    out->set_id(id);
    out->set_memory_start(r.address());
    out->set_memory_limit(out->memory_start() + r.below(1 << 24));
    out->set_file_offset(r.chance(50) ? 0 : r.next());
    out->set_filename(str());
    out->set_build_id(str());
    out->set_has_functions(r.chance(50));
    out->set_has_filenames(r.chance(50));
    out->set_has_line_numbers(r.chance(50));
    out->set_has_inline_frames(r.chance(50));
  }
  const std::vector<uint64_t> function_ids = ids(r.below(20));
  for (uint64_t id : function_ids) {
    auto* out = m.add_function();
    out->set_id(id);
    out->set_name(str());
    out->set_system_name(str());
    out->set_filename(str());
    out->set_start_line(r.chance(30) ? 0 : r.value());
  }
  const std::vector<uint64_t> location_ids = ids(1 + r.below(30));
  for (uint64_t id : location_ids) {
    auto* out = m.add_location();
    out->set_id(id);
    if (!mapping_ids.empty() && r.chance(80))
      out->set_mapping_id(mapping_ids[r.below(mapping_ids.size())]);
    out->set_address(r.address());
    for (size_t k = 0, lines = r.below(4); k < lines; ++k) {
      auto* line = out->add_line();
      if (!function_ids.empty() && r.chance(90))
        line->set_function_id(function_ids[r.below(function_ids.size())]);
      line->set_line(r.chance(20) ? -1 : static_cast<int64_t>(r.below(5000)));
      line->set_column(static_cast<int64_t>(r.below(3)));
    }
    out->set_is_folded(r.chance(10));
  }
  for (size_t i = 0, n = r.below(60); i < n; ++i) {
    auto* s = m.add_sample();
    if (i > 0 && r.chance(20)) {  // the previous stack and labels again
      *s = m.sample(static_cast<int>(i - 1));
      s->clear_value();
    } else {
      for (size_t k = 0, depth = r.below(9); k < depth; ++k)
        s->add_location_id(location_ids[r.below(location_ids.size())]);
      for (size_t k = 0, count = r.below(4); k < count; ++k) {
        auto* l = s->add_label();
        l->set_key(str());
        if (r.chance(50)) {
          l->set_str(str());
        } else {
          l->set_num(r.value());
          if (r.chance(50)) l->set_num_unit(str());
        }
      }
    }
    for (size_t k = 0; k < types; ++k) s->add_value(r.value());
  }
  return m;
}

namespace {

namespace S = schema;

// A message's fields again, each repeated varint field of `repeated_varints` written
// packed or one by one at random.
wire::Writer rewritten(const wire::Message& m, std::initializer_list<uint32_t> repeated_varints,
                       Random& r) {
  wire::Writer w;
  for (const wire::Field& f : m.fields()) {
    bool repeated = std::find(repeated_varints.begin(), repeated_varints.end(), f.number) !=
                    repeated_varints.end();
    if (repeated && f.wire_type == 2 && r.chance(50)) {
      for (uint64_t v : wire::Message(wire::Writer().bytes(f.number, f.bytes).str()).varints(f.number))
        w.varint(f.number, v);
    } else if (f.wire_type == 0) {
      w.varint(f.number, f.value);
    } else {
      w.bytes(f.number, f.bytes);
    }
  }
  return w;
}

}  // namespace

std::string reencoded(const std::string& serialized, uint64_t seed) {
  Random r(seed);
  // The fields of each number, in order.
  std::map<uint32_t, std::vector<std::string>> queues;
  const wire::Message message(serialized);
  for (const wire::Field& f : message.fields()) {
    wire::Writer one;
    if (f.number == S::profile::sample) {
      one.message(f.number, rewritten(wire::Message(f.bytes),
                                      {S::sample::location_id, S::sample::value}, r));
    } else if (f.number == S::profile::comment) {
      one = rewritten(wire::Message(wire::Writer().bytes(f.number, f.bytes).str()),
                      {S::profile::comment}, r);
    } else if (f.number == S::profile::period_type) {
      // Two occurrences of a singular message merge: the type in one, the unit in the other.
      wire::Message pt(f.bytes);
      one.message(f.number, wire::Writer().varint(S::value_type::type, pt.varint(S::value_type::type)))
          .message(f.number, wire::Writer().varint(S::value_type::unit, pt.varint(S::value_type::unit)));
    } else if (f.wire_type == 0) {
      one.varint(f.number, f.value);
    } else {
      one.bytes(f.number, f.bytes);
    }
    queues[f.number].push_back(one.str());
  }
  // Interleaved: each time the next field of a number drawn at random.
  std::vector<std::pair<std::vector<std::string>*, size_t>> open;
  for (auto& [number, q] : queues) open.push_back({&q, 0});
  std::string out;
  while (!open.empty()) {
    size_t i = r.below(open.size());
    auto& [q, next] = open[i];
    out += (*q)[next++];
    if (next == q->size()) open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
  }
  return out;
}

}  // namespace tally::test
