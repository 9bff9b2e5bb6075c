#include "synthetic_pprof.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "profile.pb.h"
#include "synthetic_program.h"

namespace tally::bench {

namespace {

using Profile = perftools::profiles::Profile;

constexpr int64_t kPeriodNs = 10'000'000;  // 100 Hz

class Strings {
 public:
  explicit Strings(Profile& p) : p_(p) { index(""); }
  int64_t index(const std::string& s) {
    auto [it, inserted] = ids_.try_emplace(s, static_cast<int64_t>(ids_.size()));
    if (inserted) p_.add_string_table(s);
    return it->second;
  }

 private:
  Profile& p_;
  std::unordered_map<std::string, int64_t> ids_;
};

std::string gzip(const std::string& data, int level) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2 failed");
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  // zlib counts in 32-bit units: feed and drain in 1 GiB steps.
  size_t in_left = data.size(), out_left = out.size();
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    z.avail_in = static_cast<uInt>(std::min<size_t>(in_left, 1u << 30));
    z.avail_out = static_cast<uInt>(std::min<size_t>(out_left, 1u << 30));
    const uInt in_before = z.avail_in, out_before = z.avail_out;
    rc = deflate(&z, z.avail_in == in_left ? Z_FINISH : Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) throw std::runtime_error("deflate failed");
    in_left -= in_before - z.avail_in;
    out_left -= out_before - z.avail_out;
  }
  out.resize(out.size() - out_left);
  deflateEnd(&z);
  return out;
}

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

std::string hex_id(Rng& rng) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%016llx%016llx%08llx", static_cast<unsigned long long>(rng.next()),
                static_cast<unsigned long long>(rng.next()),
                static_cast<unsigned long long>(rng.next() & 0xffffffffu));
  return buf;
}

class Builder {
 public:
  Builder(const SyntheticPprofOptions& options, Profile& p)
      : options_(options), program_(options.seed, options.functions), p_(p), strings_(p) {
    const auto& fns = program_.functions();
    for (uint32_t i = 0; i < fns.size(); ++i) by_start_.push_back({fns[i].start, i});
    std::sort(by_start_.begin(), by_start_.end());
    function_ids_.assign(fns.size(), 0);
  }

  void build() {
    auto* t = p_.add_sample_type();
    t->set_type(strings_.index("samples"));
    t->set_unit(strings_.index("count"));
    t = p_.add_sample_type();
    t->set_type(strings_.index("cpu"));
    t->set_unit(strings_.index("nanoseconds"));
    p_.mutable_period_type()->set_type(strings_.index("cpu"));
    p_.mutable_period_type()->set_unit(strings_.index("nanoseconds"));
    p_.set_period(kPeriodNs);
    p_.set_time_nanos(1'700'000'000'000'000'000);

    Rng key_rng(options_.seed ^ 0xb1d);
    for (const auto& module : program_.modules()) {
      for (const auto& seg : module.segments) {
        if (seg.perms != "r-xp") continue;
        auto* m = p_.add_mapping();
        m->set_id(static_cast<uint64_t>(p_.mapping_size()));
        m->set_memory_start(seg.start);
        m->set_memory_limit(seg.limit);
        m->set_file_offset(seg.offset);
        m->set_filename(strings_.index(module.path));
        m->set_build_id(strings_.index(hex_id(key_rng)));
        m->set_has_functions(true);
        m->set_has_filenames(true);
        m->set_has_line_numbers(true);
        m->set_has_inline_frames(true);
      }
    }

    Rng rng(options_.seed);
    std::vector<uint64_t> pcs;
    std::unordered_map<uint64_t, int> sample_of;  // hash of (stack, labels) -> sample index
    const int64_t thread_key = strings_.index("thread"), bytes_key = strings_.index("request_bytes"),
                  bytes_unit = strings_.index("bytes");
    for (uint64_t draw = 0; draw < options_.draws; ++draw) {
      unsigned depth = options_.min_depth +
                       unsigned(rng.below(options_.max_depth - options_.min_depth + 1));
      program_.sample_stack(rng, depth, pcs);
      int64_t count = rng.chance(1, 4) ? 1 + int64_t(rng.below(20)) : 1;
      int64_t thread = rng.chance(1, 5) ? 1 + int64_t(rng.below(16)) : 0;
      int64_t request = rng.chance(1, 10) ? int64_t(1) << rng.below(20) : 0;
      uint64_t h = mix(mix(0, uint64_t(thread)), uint64_t(request));
      for (uint64_t pc : pcs) h = mix(h, pc);
      auto [it, inserted] = sample_of.try_emplace(h, p_.sample_size());
      if (!inserted) {
        auto* s = p_.mutable_sample(it->second);
        s->set_value(0, s->value(0) + count);
        s->set_value(1, s->value(1) + count * kPeriodNs);
        total_count_ += uint64_t(count);
        continue;
      }
      auto* s = p_.add_sample();
      for (uint64_t pc : pcs) s->add_location_id(location_id(pc));
      s->add_value(count);
      s->add_value(count * kPeriodNs);
      total_count_ += uint64_t(count);
      if (thread) {
        auto* l = s->add_label();
        l->set_key(thread_key);
        l->set_str(strings_.index("worker-" + std::to_string(thread)));
      }
      if (request) {
        auto* l = s->add_label();
        l->set_key(bytes_key);
        l->set_num(request);
        l->set_num_unit(bytes_unit);
      }
    }
    p_.set_duration_nanos(int64_t(total_count_) * kPeriodNs / 8);  // 8 busy threads
  }

  uint64_t total_count() const { return total_count_; }

 private:
  uint32_t function_index(uint64_t pc) const {
    auto it = std::upper_bound(by_start_.begin(), by_start_.end(), std::make_pair(pc, UINT32_MAX));
    return std::prev(it)->second;
  }

  uint64_t mapping_id(uint64_t pc) const {
    for (const auto& m : p_.mapping())
      if (pc >= m.memory_start() && pc < m.memory_limit()) return m.id();
    return 0;
  }

  uint64_t function_id(uint32_t index) {
    if (function_ids_[index]) return function_ids_[index];
    const auto& f = program_.functions()[index];
    static const char* const kFixed[] = {"_start", "__libc_start_main", "__libc_start_call_main", "main"};
    std::string name, system_name, file;
    if (index < 4) {
      name = system_name = kFixed[index];
      file = index == 3 ? "/srv/synthetic/src/main.cc" : "./csu/libc-start.c";
    } else {
      std::string cls = "Class" + std::to_string(index / 16);
      std::string method = "method_" + std::to_string(index);
      std::string ns = "m" + std::to_string(f.module);
      name = "synthetic::" + ns + "::" + cls + "::" + method + "(std::string const&, int)";
      system_name = "_ZN9synthetic" + std::to_string(ns.size()) + ns + std::to_string(cls.size()) +
                    cls + std::to_string(method.size()) + method + "ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEi";
      file = "/srv/synthetic/src/" + ns + "/" + cls + ".cc";
    }
    auto* fn = p_.add_function();
    fn->set_id(static_cast<uint64_t>(p_.function_size()));
    fn->set_name(strings_.index(name));
    fn->set_system_name(strings_.index(system_name));
    fn->set_filename(strings_.index(file));
    fn->set_start_line(10 + int64_t(index * 37 % 2000));
    return function_ids_[index] = fn->id();
  }

  uint64_t location_id(uint64_t pc) {
    auto [it, inserted] = location_ids_.try_emplace(pc, 0);
    if (!inserted) return it->second;
    const uint32_t index = function_index(pc);
    const auto& f = program_.functions()[index];
    const int64_t start_line = 10 + int64_t(index * 37 % 2000);
    auto* l = p_.add_location();
    l->set_id(static_cast<uint64_t>(p_.location_size()));
    l->set_mapping_id(mapping_id(pc));
    l->set_address(pc);
    if (mix(pc, 1) % 8 == 0) {  // a callee inlined here: innermost line first
      const uint32_t inlined = 4 + uint32_t((index * 7 + 3) % (program_.functions().size() - 4));
      auto* line = l->add_line();
      line->set_function_id(function_id(inlined));
      line->set_line(10 + int64_t(inlined * 37 % 2000) + int64_t(pc % 5));
    }
    auto* line = l->add_line();
    line->set_function_id(function_id(index));
    line->set_line(start_line + int64_t((pc - f.start) / 8));
    return it->second = l->id();
  }

  const SyntheticPprofOptions& options_;
  SyntheticProgram program_;
  Profile& p_;
  Strings strings_;
  std::vector<std::pair<uint64_t, uint32_t>> by_start_;
  std::vector<uint64_t> function_ids_;
  std::unordered_map<uint64_t, uint64_t> location_ids_;
  uint64_t total_count_ = 0;
};

}  // namespace

std::string synthetic_pprof_profile(const SyntheticPprofOptions& options, SyntheticPprofStats* stats) {
  if (options.min_depth < 1 || options.max_depth < options.min_depth)
    throw std::invalid_argument("synthetic_pprof_profile: bad depth range");
  Profile p;
  Builder builder(options, p);
  builder.build();
  std::string raw;
  if (!p.SerializeToString(&raw)) throw std::runtime_error("cannot serialize the profile");
  std::string gz = gzip(raw, options.gzip_level);
  if (stats) {
    stats->samples = static_cast<uint64_t>(p.sample_size());
    stats->total_count = builder.total_count();
    stats->locations = static_cast<uint64_t>(p.location_size());
    stats->functions = static_cast<uint64_t>(p.function_size());
    stats->mappings = static_cast<uint64_t>(p.mapping_size());
    stats->raw_bytes = raw.size();
    stats->bytes = gz.size();
  }
  return gz;
}

}  // namespace tally::bench
