#include "reference_pprof.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace tally::test::reference {

namespace {

// Thrown inside to_profile, returned as its error.
struct Refused {
  std::string what;
};

class Converter {
 public:
  explicit Converter(const Message& m) : m_(m) {}

  core::Profile run() {
    if (m_.string_table_size() > 0 && !m_.string_table(0).empty())
      throw Refused{"string_table[0] is not empty"};
    for (const std::string& s : m_.string_table()) strings_.push_back(p_.intern(s));

    for (const auto& t : m_.sample_type())
      p_.sample_types.push_back({str(t.type()), str(t.unit())});
    p_.default_sample_type = str(m_.default_sample_type());
    p_.period_type = {str(m_.period_type().type()), str(m_.period_type().unit())};
    p_.period = m_.period();
    p_.time_nanos = m_.time_nanos();
    p_.duration_nanos = m_.duration_nanos();
    p_.drop_frames = str(m_.drop_frames());
    p_.keep_frames = str(m_.keep_frames());
    p_.doc_url = str(m_.doc_url());
    for (int64_t c : m_.comment()) p_.comments.push_back(str(c));

    for (const auto& mapping : m_.mapping()) {
      core::Mapping out;
      out.start = mapping.memory_start();
      out.limit = mapping.memory_limit();
      out.offset = mapping.file_offset();
      out.file = str(mapping.filename());
      out.build_id = str(mapping.build_id());
      out.has_functions = mapping.has_functions();
      out.has_filenames = mapping.has_filenames();
      out.has_line_numbers = mapping.has_line_numbers();
      out.has_inline_frames = mapping.has_inline_frames();
      add_id(mappings_, mapping.id(), p_.add_mapping(out));
    }
    for (const auto& function : m_.function()) {
      core::Function out;
      out.name = str(function.name());
      out.system_name = str(function.system_name());
      out.filename = str(function.filename());
      out.start_line = function.start_line();
      add_id(functions_, function.id(), p_.add_function(out));
    }
    for (const auto& location : m_.location()) {
      core::Location out;
      out.mapping = location.mapping_id() == 0 ? 0 : find(mappings_, location.mapping_id());
      out.address = location.address();
      for (const auto& line : location.line())
        out.lines.push_back({line.function_id() == 0 ? 0 : find(functions_, line.function_id()),
                             line.line(), line.column()});
      out.is_folded = location.is_folded();
      add_id(locations_, location.id(), p_.add_location(std::move(out)));
    }
    for (const auto& sample : m_.sample()) {
      if (static_cast<size_t>(sample.value_size()) != p_.sample_types.size())
        throw Refused{"a sample's value count differs from the sample types'"};
      std::vector<core::LocationId> stack;
      for (uint64_t id : sample.location_id()) stack.push_back(find(locations_, id));
      std::vector<int64_t> values(sample.value().begin(), sample.value().end());
      std::vector<core::Label> labels;
      for (const auto& l : sample.label())
        labels.push_back({str(l.key()), str(l.str()), l.num(), str(l.num_unit())});
      p_.add_sample(stack, values, labels);
    }
    return std::move(p_);
  }

 private:
  using Ids = std::unordered_map<uint64_t, uint32_t>;

  core::StringId str(int64_t index) const {
    if (index == 0) return 0;  // "" even when the table is empty
    if (index < 0 || static_cast<uint64_t>(index) >= strings_.size())
      throw Refused{"a string index is out of range"};
    return strings_[static_cast<size_t>(index)];
  }
  static void add_id(Ids& ids, uint64_t id, uint32_t model_id) {
    if (id == 0) throw Refused{"an id is 0"};
    if (!ids.emplace(id, model_id).second) throw Refused{"an id is used twice"};
  }
  static uint32_t find(const Ids& ids, uint64_t id) {
    auto it = ids.find(id);
    if (it == ids.end()) throw Refused{"a reference to a missing id"};
    return it->second;
  }

  const Message& m_;
  core::Profile p_;
  std::vector<core::StringId> strings_;
  Ids mappings_, functions_, locations_;
};

}  // namespace

std::optional<Message> parse(std::string_view bytes) {
  Message m;
  if (bytes.size() > size_t(std::numeric_limits<int>::max()) ||
      !m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return std::nullopt;
  return m;
}

core::Expected<core::Profile> to_profile(const Message& message) {
  try {
    return Converter(message).run();
  } catch (const Refused& r) {
    return core::Error{r.what};
  }
}

core::Expected<core::Profile> read_profile(std::string_view bytes) {
  auto m = parse(bytes);
  if (!m) return core::Error{"libprotobuf cannot parse the message"};
  auto p = to_profile(*m);
  if (p) p->canonicalize();
  return p;
}

Message from_profile(core::Profile p) {
  p.canonicalize();
  Message m;
  for (const core::ValueType& t : p.sample_types) {
    auto* out = m.add_sample_type();
    out->set_type(t.type);
    out->set_unit(t.unit);
  }
  for (size_t i = 0; i < p.sample_count(); ++i) {
    auto* out = m.add_sample();
    for (core::LocationId id : p.stack(i)) out->add_location_id(id);
    for (int64_t v : p.values(i)) out->add_value(v);
    for (const core::Label& l : p.labels(i)) {
      auto* label = out->add_label();
      label->set_key(l.key);
      label->set_str(l.str);
      label->set_num(l.num);
      label->set_num_unit(l.num_unit);
    }
  }
  for (size_t i = 0; i < p.mappings.size(); ++i) {
    const core::Mapping& in = p.mappings[i];
    auto* out = m.add_mapping();
    out->set_id(i + 1);
    out->set_memory_start(in.start);
    out->set_memory_limit(in.limit);
    out->set_file_offset(in.offset);
    out->set_filename(in.file);
    out->set_build_id(in.build_id);
    out->set_has_functions(in.has_functions);
    out->set_has_filenames(in.has_filenames);
    out->set_has_line_numbers(in.has_line_numbers);
    out->set_has_inline_frames(in.has_inline_frames);
  }
  for (size_t i = 0; i < p.locations.size(); ++i) {
    const core::Location& in = p.locations[i];
    auto* out = m.add_location();
    out->set_id(i + 1);
    out->set_mapping_id(in.mapping);
    out->set_address(in.address);
    for (const core::Line& line : in.lines) {
      auto* l = out->add_line();
      l->set_function_id(line.function);
      l->set_line(line.line);
      l->set_column(line.column);
    }
    out->set_is_folded(in.is_folded);
  }
  for (size_t i = 0; i < p.functions.size(); ++i) {
    const core::Function& in = p.functions[i];
    auto* out = m.add_function();
    out->set_id(i + 1);
    out->set_name(in.name);
    out->set_system_name(in.system_name);
    out->set_filename(in.filename);
    out->set_start_line(in.start_line);
  }
  for (size_t i = 0; i < p.strings.size(); ++i)
    m.add_string_table(std::string(p.str(static_cast<core::StringId>(i))));
  m.set_drop_frames(p.drop_frames);
  m.set_keep_frames(p.keep_frames);
  m.set_time_nanos(p.time_nanos);
  m.set_duration_nanos(p.duration_nanos);
  if (p.period_type.type != 0 || p.period_type.unit != 0) {
    m.mutable_period_type()->set_type(p.period_type.type);
    m.mutable_period_type()->set_unit(p.period_type.unit);
  }
  m.set_period(p.period);
  for (core::StringId c : p.comments) m.add_comment(c);
  m.set_default_sample_type(p.default_sample_type);
  m.set_doc_url(p.doc_url);
  return m;
}

std::string serialize(const Message& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    if (!message.SerializeToCodedStream(&coded)) throw std::runtime_error("libprotobuf cannot serialize");
  }
  return out;
}

}  // namespace tally::test::reference
