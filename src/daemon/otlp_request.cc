#include "daemon/otlp_request.h"

#include <algorithm>
#include <array>
#include <map>
#include <unordered_map>

#include "formats/pprof/wire_writer.h"

namespace tally::daemon {

namespace {

// Field numbers of proto/otlp (opentelemetry-proto v1.11.0).
namespace request {
constexpr uint32_t kResourceProfiles = 1, kDictionary = 2;
}
namespace dictionary {  // ProfilesDictionary: also the table ids below
constexpr uint32_t kMappings = 1, kLocations = 2, kFunctions = 3, kLinks = 4, kStrings = 5,
                   kAttributes = 6, kStacks = 7, kTables = 7;
}
namespace resource_profiles {
constexpr uint32_t kResource = 1, kScopeProfiles = 2;
}
namespace resource {
constexpr uint32_t kAttributes = 1;
}
namespace key_value_field {
constexpr uint32_t kKey = 1, kValue = 2;
}
namespace any_value {
constexpr uint32_t kString = 1, kInt = 3;
}
namespace scope_profiles {
constexpr uint32_t kScope = 1, kProfiles = 2;
}
namespace scope {
constexpr uint32_t kName = 1, kVersion = 2;
}
namespace profile {
constexpr uint32_t kSampleType = 1, kSamples = 2, kTimeUnixNano = 3, kDurationNano = 4,
                   kPeriodType = 5, kPeriod = 6, kProfileId = 7;
}
namespace value_type_field {
constexpr uint32_t kType = 1, kUnit = 2;
}
namespace sample {
constexpr uint32_t kStack = 1, kAttributes = 2, kValues = 4;
}
namespace mapping {
constexpr uint32_t kStart = 1, kLimit = 2, kOffset = 3, kFilename = 4, kAttributes = 5;
}
namespace stack {
constexpr uint32_t kLocations = 1;
}
namespace location {
constexpr uint32_t kMapping = 1, kAddress = 2, kLines = 3;
}
namespace line {
constexpr uint32_t kFunction = 1, kLine = 2, kColumn = 3;
}
namespace function {
constexpr uint32_t kName = 1, kSystemName = 2, kFilename = 3, kStartLine = 4;
}
namespace attribute {
constexpr uint32_t kKey = 1, kValue = 2, kUnit = 3;
}
namespace link {
constexpr uint32_t kTraceId = 1, kSpanId = 2;
}

constexpr std::string_view kBuildIdAttribute = "process.executable.build_id.gnu";

using pprof::WireWriter;

// The request's shared tables: each entry kept as its encoded message (a string's bytes for
// the string table), deduplicated by those bytes, entry 0 the zero value.
class Dictionary {
 public:
  Dictionary() {
    for (uint32_t table = 1; table <= dictionary::kTables; ++table) add(table, "");
    // link_table[0]: the zero link with ids of their full lengths, as the format advises.
    std::string zero_link;
    WireWriter w(zero_link);
    w.bytes(link::kTraceId, std::string(16, '\0'));
    w.bytes(link::kSpanId, std::string(8, '\0'));
    entries_[dictionary::kLinks - 1][0] = zero_link;
  }
  int32_t add(uint32_t table, std::string encoded) {
    auto [it, added] = index_[table - 1].try_emplace(
        encoded, static_cast<int32_t>(entries_[table - 1].size()));
    if (added) entries_[table - 1].push_back(std::move(encoded));
    return it->second;
  }
  int32_t string(std::string_view s) { return add(dictionary::kStrings, std::string(s)); }
  std::string encode() const {
    std::string out;
    WireWriter w(out);
    for (uint32_t table = 1; table <= dictionary::kTables; ++table)
      for (const std::string& entry : entries_[table - 1]) w.bytes(table, entry);
    return out;
  }

 private:
  std::array<std::vector<std::string>, dictionary::kTables> entries_;
  std::array<std::unordered_map<std::string, int32_t>, dictionary::kTables> index_;
};

void packed_indices(WireWriter& w, uint32_t field, const std::vector<int32_t>& indices) {
  w.packed(field, std::span<const int32_t>(indices));
}

// A KeyValueAndUnit of the attribute table. A oneof member is written even when zero.
int32_t attribute_entry(Dictionary& dict, std::string_view key, const std::string* text,
                        int64_t number, std::string_view unit) {
  std::string value;
  WireWriter v(value);
  if (text != nullptr) {
    v.bytes(any_value::kString, *text);
  } else {
    v.tag(any_value::kInt, 0);
    v.varint(static_cast<uint64_t>(number));
  }
  std::string entry;
  WireWriter w(entry);
  w.scalar(attribute::kKey, uint64_t(dict.string(key)));
  w.bytes(attribute::kValue, value);
  w.scalar(attribute::kUnit, uint64_t(unit.empty() ? 0 : dict.string(unit)));
  return dict.add(dictionary::kAttributes, std::move(entry));
}

std::string value_type(Dictionary& dict, const core::Profile& p, const core::ValueType& type) {
  std::string out;
  WireWriter w(out);
  w.scalar(value_type_field::kType, uint64_t(dict.string(p.str(type.type))));
  w.scalar(value_type_field::kUnit, uint64_t(dict.string(p.str(type.unit))));
  return out;
}

// One tally profile's tables as the dictionary's indices, each entry added when first used
// (the format wants no unreferenced entries: a gperftools profile lists every mapping).
class ProfileIndices {
 public:
  ProfileIndices(Dictionary& dict, const core::Profile& p)
      : dict_(dict), p_(p), mappings_(p.mappings.size() + 1, -1),
        functions_(p.functions.size() + 1, -1), locations_(p.locations.size() + 1, -1) {
    mappings_[0] = functions_[0] = locations_[0] = 0;
  }

  int32_t location(core::LocationId id) {
    if (locations_[id] >= 0) return locations_[id];
    const core::Location& loc = p_.location(id);
    std::string entry, line_message;
    WireWriter w(entry);
    w.scalar(location::kMapping, uint64_t(mapping(loc.mapping)));
    w.scalar(location::kAddress, loc.address);
    for (const core::Line& line : loc.lines) {
      line_message.clear();
      WireWriter lw(line_message);
      lw.scalar(line::kFunction, uint64_t(function(line.function)));
      lw.scalar(line::kLine, line.line);
      lw.scalar(line::kColumn, line.column);
      w.bytes(location::kLines, line_message);
    }
    return locations_[id] = dict_.add(dictionary::kLocations, std::move(entry));
  }

 private:
  int32_t mapping(core::MappingId id) {
    if (mappings_[id] >= 0) return mappings_[id];
    const core::Mapping& m = p_.mapping(id);
    std::string entry;
    WireWriter w(entry);
    w.scalar(mapping::kStart, m.start);
    w.scalar(mapping::kLimit, m.limit);
    w.scalar(mapping::kOffset, m.offset);
    w.scalar(mapping::kFilename, uint64_t(dict_.string(p_.str(m.file))));
    if (m.build_id != 0) {
      const std::string build_id(p_.str(m.build_id));
      packed_indices(w, mapping::kAttributes,
                     {attribute_entry(dict_, kBuildIdAttribute, &build_id, 0, "")});
    }
    return mappings_[id] = dict_.add(dictionary::kMappings, std::move(entry));
  }
  int32_t function(core::FunctionId id) {
    if (functions_[id] >= 0) return functions_[id];
    const core::Function& f = p_.function(id);
    std::string entry;
    WireWriter w(entry);
    w.scalar(function::kName, uint64_t(dict_.string(p_.str(f.name))));
    w.scalar(function::kSystemName, uint64_t(dict_.string(p_.str(f.system_name))));
    w.scalar(function::kFilename, uint64_t(dict_.string(p_.str(f.filename))));
    w.scalar(function::kStartLine, f.start_line);
    return functions_[id] = dict_.add(dictionary::kFunctions, std::move(entry));
  }

  Dictionary& dict_;
  const core::Profile& p_;
  std::vector<int32_t> mappings_, functions_, locations_;  // [id]; -1 until used
};

// The OTLP Profiles of one tally profile, one per sample type, appended to `out` (the
// ScopeProfiles message being built).
void encode_profiles(Dictionary& dict, core::Profile& p, WireWriter& out) {
  p.merge_identical_samples();  // a sample's identity is its stack and attributes
  ProfileIndices ix(dict, p);
  // Each sample's stack and attributes, once for all sample types.
  std::vector<int32_t> stacks(p.sample_count());
  std::vector<std::vector<int32_t>> attributes(p.sample_count());
  std::vector<int32_t> indices;
  std::string entry;
  for (size_t i = 0; i < p.sample_count(); ++i) {
    indices.clear();
    for (core::LocationId l : p.stack(i)) indices.push_back(ix.location(l));
    entry.clear();
    WireWriter w(entry);
    packed_indices(w, stack::kLocations, indices);
    stacks[i] = dict.add(dictionary::kStacks, entry);
    std::vector<std::string_view> keys;  // a sample's attribute keys must be unique
    for (const core::Label& label : p.labels(i)) {
      const std::string_view key = p.str(label.key);
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      keys.push_back(key);
      const std::string text(p.str(label.str));
      attributes[i].push_back(attribute_entry(dict, key, label.str != 0 ? &text : nullptr,
                                              label.num, p.str(label.num_unit)));
    }
  }
  const std::array<uint8_t, 16> id_base = random_id_bytes();
  std::string message, samples_part;
  for (size_t t = 0; t < p.sample_types.size(); ++t) {
    message.clear();
    WireWriter w(message);
    w.bytes(profile::kSampleType, value_type(dict, p, p.sample_types[t]));
    for (size_t i = 0; i < p.sample_count(); ++i) {
      const int64_t value = p.values(i)[t];
      if (value == 0) continue;
      samples_part.clear();
      WireWriter s(samples_part);
      s.scalar(sample::kStack, uint64_t(stacks[i]));
      packed_indices(s, sample::kAttributes, attributes[i]);
      s.packed(sample::kValues, std::span<const int64_t>(&value, 1));
      w.bytes(profile::kSamples, samples_part);
    }
    if (p.time_nanos != 0) {
      w.tag(profile::kTimeUnixNano, 1);  // fixed64, little-endian
      for (int b = 0; b < 8; ++b) message.push_back(static_cast<char>(uint64_t(p.time_nanos) >> (8 * b)));
    }
    w.scalar(profile::kDurationNano, p.duration_nanos);
    if (p.period_type.type != 0 || p.period_type.unit != 0)
      w.bytes(profile::kPeriodType, value_type(dict, p, p.period_type));
    w.scalar(profile::kPeriod, p.period);
    // One id per Profile: the last byte tells the sample types of one profile apart.
    std::array<uint8_t, 16> id = id_base;
    id[15] = static_cast<uint8_t>(id[15] + t);
    if (std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; })) id[0] = 1;
    w.bytes(profile::kProfileId, std::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
    out.bytes(scope_profiles::kProfiles, message);
  }
}

std::string key_value(std::string_view key, std::string_view text) {
  std::string value, out;
  WireWriter v(value);
  v.bytes(any_value::kString, text);
  WireWriter w(out);
  w.bytes(key_value_field::kKey, key);
  w.bytes(key_value_field::kValue, value);
  return out;
}

}  // namespace

std::vector<Label> otlp_resource(const std::string& service, const std::string& host,
                                 const std::vector<Label>& extra) {
  std::vector<Label> attributes = {{"service.name", service}, {"host.name", host}};
  for (const Label& label : extra) {
    auto same = std::find_if(attributes.begin(), attributes.end(),
                             [&](const Label& a) { return a.first == label.first; });
    if (same != attributes.end()) same->second = label.second;
    else attributes.push_back(label);
  }
  return attributes;
}

std::string encode_otlp_request(std::vector<OtlpProfile> profiles) {
  Dictionary dict;
  // Profiles of equal resources go into one ResourceProfiles, in order of first appearance.
  std::vector<std::vector<Label>> resources;
  std::vector<std::string> scope_parts;  // each resource's ScopeProfiles.profiles
  std::map<std::vector<Label>, size_t> resource_index;
  for (OtlpProfile& item : profiles) {
    auto [it, added] = resource_index.try_emplace(item.resource, resources.size());
    if (added) {
      resources.push_back(item.resource);
      scope_parts.emplace_back();
    }
    WireWriter w(scope_parts[it->second]);
    encode_profiles(dict, item.profile, w);
  }
  std::string out, part, scope;
  WireWriter request(out);
  for (size_t r = 0; r < resources.size(); ++r) {
    std::string resource_message;
    WireWriter rw(resource_message);
    for (const Label& a : resources[r]) rw.bytes(resource::kAttributes, key_value(a.first, a.second));
    scope.clear();
    WireWriter sw(scope);
    sw.bytes(scope::kName, "tally");
    sw.bytes(scope::kVersion, "0.1.0");  // tally --version
    std::string scope_profiles_message;
    WireWriter spw(scope_profiles_message);
    spw.bytes(scope_profiles::kScope, scope);
    scope_profiles_message += scope_parts[r];
    part.clear();
    WireWriter pw(part);
    pw.bytes(resource_profiles::kResource, resource_message);
    pw.bytes(resource_profiles::kScopeProfiles, scope_profiles_message);
    request.bytes(request::kResourceProfiles, part);
  }
  request.bytes(request::kDictionary, dict.encode());
  return out;
}

}  // namespace tally::daemon
