#include "synthetic_callgrind.h"

#include <algorithm>
#include <charconv>
#include <vector>

#include "synthetic_program.h"  // Rng

namespace tally::bench {

namespace {

struct Function {
  uint32_t object = 0, file = 0;
  uint32_t name = 0;  // index into the function name ids (compression)
  uint64_t start = 0;
  uint64_t line = 0;
  uint32_t positions = 0;  // instructions with costs when it runs
  std::string text;
};

// Appends numbers and compressed names the way valgrind's dump.c writes them.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  Writer& put(std::string_view s) {
    out_.append(s);
    return *this;
  }
  Writer& put(char c) {
    out_.push_back(c);
    return *this;
  }
  Writer& num(uint64_t v) {
    char buf[24];
    out_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));
    return *this;
  }
  Writer& hex(uint64_t v) {
    char buf[24];
    out_.append("0x");
    out_.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v, 16).ptr - buf));
    return *this;
  }
  // "+3", "-2", "*" relative to `base`.
  Writer& rel(uint64_t v, uint64_t base) {
    if (v == base) return put('*');
    if (v > base) return put('+').num(v - base);
    return put('-').num(base - v);
  }
  // "KEY=(id) name" the first time an id is written, then "KEY=(id)".
  Writer& name(std::string_view key, uint32_t id, std::string_view text, std::vector<bool>& seen) {
    put(key).put("=(").num(id + 1).put(')');
    if (!seen[id]) {
      seen[id] = true;
      put(' ').put(text);
    }
    return put('\n');
  }

 private:
  std::string& out_;
};

constexpr const char* kNamespaces[] = {"std", "boost::asio", "absl", "google::protobuf",
                                       "app::net", "app::storage", "app::query", "llvm",
                                       "folly", "v8::internal", "Eigen::internal", "grpc"};
constexpr const char* kClasses[] = {"Connection", "Parser", "BufferPool", "Scheduler",
                                    "HashTable<std::string, int>", "Allocator", "RequestHandler",
                                    "Tokenizer", "vector<unsigned long>", "Matrix<double, 4, 4>",
                                    "Session", "Compressor", "Index", "Channel", "Arena"};
constexpr const char* kMethods[] = {"run", "read", "write", "flush", "lookup", "insert",
                                    "resize", "parse", "operator()", "operator[]", "process",
                                    "dispatch", "visit", "emplace_back", "~Impl", "reset"};
constexpr const char* kArgs[] = {"()", "(int)", "(unsigned long, char const*)",
                                 "(std::string const&)", "(void*, unsigned long)",
                                 "(std::vector<int, std::allocator<int> >&)", "() const",
                                 "(double, double) const", "(Node*, bool)"};
constexpr const char* kLibraries[] = {"libc.so.6", "libstdc++.so.6.0.30", "libm.so.6",
                                      "libz.so.1.2.13", "libssl.so.3", "libprotobuf.so.32",
                                      "libgrpc++.so.1.51", "libabsl_hash.so.20220623",
                                      "libboost_system.so.1.74.0", "libsqlite3.so.0.8.6"};
constexpr const char* kHeaders[] = {"/usr/include/c++/12/bits/stl_vector.h",
                                    "/usr/include/c++/12/bits/basic_string.h",
                                    "/usr/include/c++/12/bits/stl_algo.h",
                                    "/usr/include/c++/12/bits/unique_ptr.h",
                                    "/usr/include/c++/12/bits/hashtable.h",
                                    "/usr/include/c++/12/bits/shared_ptr_base.h",
                                    "./string/../sysdeps/x86_64/multiarch/memmove-vec.S",
                                    "/usr/include/absl/container/internal/raw_hash_set.h"};

template <size_t N>
const char* pick(Rng& rng, const char* const (&words)[N]) {
  return words[rng.below(N)];
}

}  // namespace

std::string synthetic_callgrind(const SyntheticCallgrindOptions& o,
                                SyntheticCallgrindStats* stats) {
  Rng rng(o.seed);
  const uint32_t objects = std::max<uint32_t>(o.objects, 1);
  const uint32_t files = std::max(o.files, objects);
  constexpr uint32_t kHeaderCount = sizeof kHeaders / sizeof kHeaders[0];

  std::vector<std::string> object_names(objects);
  for (uint32_t i = 0; i < objects; ++i)
    object_names[i] = i == 0 ? "/opt/app/bin/server"
                             : "/usr/lib/x86_64-linux-gnu/" + std::to_string(i) + "/" +
                                   kLibraries[i % (sizeof kLibraries / sizeof kLibraries[0])];
  // Files: the headers first (ids 0..kHeaderCount-1), then the sources of each object.
  std::vector<std::string> file_names(kHeaders, kHeaders + kHeaderCount);
  std::vector<uint32_t> file_object;
  for (uint32_t i = 0; i < files; ++i) {
    file_object.push_back(i % objects);
    file_names.push_back("/build/app/src/module" + std::to_string(i % 97) + "/unit" +
                         std::to_string(i) + (i % 5 == 0 ? ".c" : ".cc"));
  }
  // Functions grouped by object and file, as valgrind's dump lists them; addresses grow
  // within an object.
  std::vector<Function> fns(o.functions);
  std::vector<uint64_t> next_address(objects);
  for (uint32_t i = 0; i < objects; ++i)
    next_address[i] = i == 0 ? 0x401000 : 0x4840000 + i * 0x400000ULL;
  for (uint32_t i = 0; i < o.functions; ++i) {
    Function& f = fns[i];
    const uint32_t source = static_cast<uint32_t>(uint64_t(i) * files / o.functions);
    f.file = kHeaderCount + source;
    f.object = file_object[source];
    f.name = i;
    f.positions = 2 + static_cast<uint32_t>(rng.below(rng.chance(1, 8) ? 120 : 24));
    f.start = next_address[f.object];
    next_address[f.object] += f.positions * 8 + rng.below(256);
    f.line = 1 + rng.below(3000);
    f.text = std::string(pick(rng, kNamespaces)) + "::" + pick(rng, kClasses) + "::" +
             pick(rng, kMethods) + "_" + std::to_string(i) + pick(rng, kArgs);
  }
  std::sort(fns.begin(), fns.end(), [](const Function& a, const Function& b) {
    return a.object != b.object ? a.object < b.object : a.start < b.start;
  });

  SyntheticCallgrindStats st;
  std::string out;
  out.reserve(size_t(o.parts) * o.functions * 220);
  Writer w(out);
  w.put("# callgrind format\nversion: 1\ncreator: callgrind-3.19.0\n");
  std::vector<bool> ob_seen(objects), fl_seen(file_names.size()), fn_seen(o.functions);
  std::string body;
  for (uint32_t part = 1; part <= o.parts; ++part) {
    // valgrind's dumps are files of their own, each defining its names again.
    std::fill(ob_seen.begin(), ob_seen.end(), false);
    std::fill(fl_seen.begin(), fl_seen.end(), false);
    std::fill(fn_seen.begin(), fn_seen.end(), false);
    body.clear();
    Writer b(body);
    int64_t totals[3] = {0, 0, 0};
    uint32_t cur_ob = UINT32_MAX, cur_fl = UINT32_MAX;
    for (uint32_t i = 0; i < o.functions; ++i) {
      const Function& f = fns[i];
      // A hot core runs in every dump, the long tail now and then.
      if (!rng.chance(f.name < o.functions / 5 ? 9 : 3, 10)) continue;
      if (f.object != cur_ob) b.name("ob", f.object, object_names[f.object], ob_seen);
      if (f.file != cur_fl || f.object != cur_ob)
        b.name("fl", f.file, file_names[f.file], fl_seen);
      cur_ob = f.object;
      cur_fl = f.file;
      b.name("fn", f.name, f.text, fn_seen);
      uint64_t addr = f.start, line = f.line;
      uint64_t base_addr = 0, base_line = 0;  // a new function starts absolute
      uint32_t inlined_left = 0;
      uint32_t file_now = f.file;  // fi=/fe= move it; a callee without cfi= is in it
      // The code is the same in every dump: its addresses, lines, inlined ranges, call
      // targets and jumps come from a generator of its own; only what ran (costs, counts)
      // changes from dump to dump.
      Rng code(o.seed * 0x9e3779b97f4a7c15ULL ^ (uint64_t(f.name) + 1) * 0xd1b54a32d192ed03ULL);
      for (uint32_t k = 0; k < f.positions; ++k) {
        if (inlined_left == 0 && k > 0 && code.chance(1, 24)) {
          const uint32_t h = static_cast<uint32_t>(code.below(kHeaderCount));
          b.name("fi", h, file_names[h], fl_seen);
          file_now = h;
          inlined_left = 1 + static_cast<uint32_t>(code.below(4));
          line = 100 + code.below(2000);
        } else if (inlined_left > 0 && --inlined_left == 0) {
          b.name("fe", f.file, file_names[f.file], fl_seen);
          file_now = f.file;
          line = f.line + k;
        }
        addr += 1 + code.below(12);
        const int64_t step = static_cast<int64_t>(code.below(6)) - 1 - (code.chance(1, 6) ? 3 : 0);
        line = static_cast<uint64_t>(std::max<int64_t>(1, static_cast<int64_t>(line) + step));
        if (base_addr == 0) b.hex(addr).put(' ').num(line);
        else b.rel(addr, base_addr).put(' ').rel(line, base_line);
        base_addr = addr;
        base_line = line;
        const uint64_t ir = rng.chance(1, 16) ? rng.below(5000000) + 1 : rng.below(2000) + 1;
        const uint64_t dr = rng.chance(1, 2) ? ir / (1 + rng.below(4)) : 0;
        const uint64_t dw = rng.chance(1, 3) ? ir / (2 + rng.below(6)) : 0;
        b.put(' ').num(ir);
        if (dr || dw) b.put(' ').num(dr);
        if (dw) b.put(' ').num(dw);
        b.put('\n');
        totals[0] += static_cast<int64_t>(ir);
        totals[1] += static_cast<int64_t>(dr);
        totals[2] += static_cast<int64_t>(dw);
        st.total_ir += static_cast<int64_t>(ir);
        ++st.cost_lines;
        const bool is_call = code.chance(1, 7), is_jump = !is_call && code.chance(1, 6);
        if (is_call) {  // a call from this instruction
          const Function& callee = fns[code.chance(1, 2) ? code.below(o.functions / 10 + 1)
                                                         : code.below(o.functions)];
          if (callee.object != f.object)
            b.name("cob", callee.object, object_names[callee.object], ob_seen);
          if (callee.file != file_now) b.name("cfi", callee.file, file_names[callee.file], fl_seen);
          b.name("cfn", callee.name, callee.text, fn_seen);
          b.put("calls=").num(1 + rng.below(rng.chance(1, 4) ? 100000 : 10)).put(' ')
              .hex(callee.start).put(' ').num(callee.line).put('\n');
          const uint64_t inclusive = ir * (10 + rng.below(10000));
          b.put("* * ").num(inclusive);
          if (dr) b.put(' ').num(inclusive / 3);
          b.put('\n');
          ++st.calls;
        } else if (is_jump) {  // a jump from this instruction
          const uint64_t executed = 1 + rng.below(ir + 1);
          const bool conditional = !code.chance(1, 3);
          const uint64_t target = addr + 2 + code.below(40), target_line = line + code.below(4);
          // jcnd=FOLLOWED/EXECUTED, as valgrind writes it
          if (conditional) b.put("jcnd=").num(rng.below(executed + 1)).put('/');
          else b.put("jump=");
          b.num(executed).put(' ').rel(target, addr).put(' ').rel(target_line, line).put('\n');
          b.put("* *\n");
          ++st.jumps;
        }
      }
      if (inlined_left > 0) b.name("fe", f.file, file_names[f.file], fl_seen);
      b.put('\n');
    }
    w.put("pid: 4242\ncmd:  /opt/app/bin/server --threads 8\npart: ").num(part).put("\n\n");
    w.put("desc: I1 cache: \ndesc: D1 cache: \ndesc: LL cache: \n\n");
    w.put("desc: Timerange: Basic block ").num(uint64_t(part - 1) * 5000000).put(" - ")
        .num(uint64_t(part) * 5000000).put("\ndesc: Trigger: --dump-every-bb=5000000\n\n");
    w.put("positions: instr line\nevents: Ir Dr Dw\nsummary: ");
    w.num(static_cast<uint64_t>(totals[0])).put(' ').num(static_cast<uint64_t>(totals[1]))
        .put(' ').num(static_cast<uint64_t>(totals[2])).put("\n\n\n");
    w.put(body);
    w.put("totals: ").num(static_cast<uint64_t>(totals[0])).put(' ')
        .num(static_cast<uint64_t>(totals[1])).put(' ').num(static_cast<uint64_t>(totals[2]))
        .put("\n\n");
  }
  st.bytes = out.size();
  if (stats) *stats = st;
  return out;
}

}  // namespace tally::bench
