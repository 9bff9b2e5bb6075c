#include "every_field_message.h"

#include "pprof_schema.h"
#include "proto_wire.h"

namespace tally::test {

namespace S = schema;
using wire::Writer;

const std::string kLatin1 = "caf\xe9 \xff\xfe";

namespace {

// String indices of the message below.
enum : uint64_t {
  kSamples = 1, kCount, kCpu, kNanoseconds, kMain, kMainMangled, kSourceFile, kBinary, kBuildId,
  kInlinedHelper, kThread, kWorker, kBytes, kAllocSize, kDropRegex, kKeepRegex, kComment,
  kDocUrl, kLatin1Name, kLibc, kPid
};

Writer value_type(uint64_t type, uint64_t unit) {
  return Writer().varint(S::value_type::type, type).varint(S::value_type::unit, unit);
}

Writer line(uint64_t function, int64_t number, int64_t column) {
  return Writer()
      .varint(S::line::function_id, function)
      .varint(S::line::line, static_cast<uint64_t>(number))
      .varint(S::line::column, static_cast<uint64_t>(column));
}

}  // namespace

std::string every_field_message() {
  namespace P = S::profile;
  namespace M = S::mapping;
  namespace F = S::function;
  namespace L = S::location;
  namespace Smp = S::sample;
  namespace Lb = S::label;
  Writer w;
  w.varint(P::time_nanos, 1700000000123456789)
      .message(P::sample_type, value_type(kSamples, kCount))
      .message(P::sample_type, value_type(kCpu, kNanoseconds))
      // Sample 1: packed location ids and values, a string and a numeric label with unit.
      .message(P::sample, Writer()
                              .packed(Smp::location_id, {5, 7})
                              .packed(Smp::value, {5, 50000000})
                              .message(Smp::label, Writer().varint(Lb::key, kThread).varint(Lb::str, kWorker))
                              .message(Smp::label, Writer()
                                                       .varint(Lb::key, kAllocSize)
                                                       .varint(Lb::num, 4096)
                                                       .varint(Lb::num_unit, kBytes)))
      // Sample 2: unpacked, a numeric label without unit.
      .message(P::sample, Writer()
                              .varint(Smp::location_id, 6)
                              .varint(Smp::location_id, 5)
                              .varint(Smp::location_id, 7)
                              .varint(Smp::value, 2)
                              .varint(Smp::value, 20000000)
                              .message(Smp::label, Writer().varint(Lb::key, kPid).varint(Lb::num, 1234)))
      // Sample 3: negative values (a diff profile), 10-byte varints.
      .message(P::sample, Writer()
                              .packed(Smp::location_id, {7})
                              .packed(Smp::value, {uint64_t(-1), uint64_t(-10000000)}))
      .message(P::location, Writer()
                                .varint(L::id, 5)
                                .varint(L::mapping_id, 10)
                                .varint(L::address, 0x401234)
                                .message(L::line, line(200, 14, 7))  // inlined, innermost first
                                .message(L::line, line(100, 42, 3)))
      .message(P::location, Writer()
                                .varint(L::id, 6)
                                .varint(L::mapping_id, 20)
                                .varint(L::address, 0x7f0000000abc)
                                .message(L::line, line(300, 0, 0))
                                .varint(L::is_folded, 1))
      .message(P::location, Writer()
                                .varint(L::id, 7)
                                .varint(L::mapping_id, 10)
                                .varint(L::address, 0x401000)
                                .message(L::line, line(100, 41, 0)))
      .message(P::mapping, Writer()
                               .varint(M::id, 10)
                               .varint(M::memory_start, 0x400000)
                               .varint(M::memory_limit, 0x500000)
                               .varint(M::file_offset, 0x1000)
                               .varint(M::filename, kBinary)
                               .varint(M::build_id, kBuildId)
                               .varint(M::has_functions, 1)
                               .varint(M::has_filenames, 1)
                               .varint(M::has_inline_frames, 1))
      .message(P::mapping, Writer()
                               .varint(M::id, 20)
                               .varint(M::memory_start, 0x7f0000000000)
                               .varint(M::memory_limit, 0x7f0000100000)
                               .varint(M::filename, kLibc))
      .message(P::function, Writer()
                                .varint(F::id, 100)
                                .varint(F::name, kMain)
                                .varint(F::system_name, kMainMangled)
                                .varint(F::filename, kSourceFile)
                                .varint(F::start_line, 40))
      .message(P::function, Writer()
                                .varint(F::id, 200)
                                .varint(F::name, kInlinedHelper)
                                .varint(F::system_name, kInlinedHelper)
                                .varint(F::filename, kSourceFile)
                                .varint(F::start_line, 12))
      .message(P::function, Writer()
                                .varint(F::id, 300)
                                .varint(F::name, kLatin1Name)
                                .varint(F::system_name, kLatin1Name)
                                .varint(F::filename, kLibc))
      .varint(P::drop_frames, kDropRegex)
      .varint(P::keep_frames, kKeepRegex)
      .varint(P::duration_nanos, 2500000000)
      .message(P::period_type, value_type(kCpu, kNanoseconds))
      .varint(P::period, 10000000)
      .packed(P::comment, {kComment})
      .varint(P::comment, kLatin1Name)
      .varint(P::default_sample_type, kCpu)
      .varint(P::doc_url, kDocUrl);
  for (const std::string& s :
       {std::string(""), std::string("samples"), std::string("count"), std::string("cpu"),
        std::string("nanoseconds"), std::string("main"), std::string("_Z4mainv"),
        std::string("/src/app.cc"), std::string("/bin/app"), std::string("abcdef0123"),
        std::string("inlined_helper"), std::string("thread"), std::string("worker-1"),
        std::string("bytes"), std::string("alloc_size"), std::string("drop.*"),
        std::string("keep_me"), std::string("first comment"), std::string("https://example.com/doc"),
        kLatin1, std::string("/lib/libc.so.6"), std::string("pid")})
    w.bytes(P::string_table, s);
  return w.str();
}

namespace {
const std::string kMainFn = "main{_Z4mainv /src/app.cc:40}";
}  // namespace

const std::string kEveryFieldText =
    "sample_type samples/count\n"
    "sample_type cpu/nanoseconds\n"
    "default_sample_type cpu\n"
    "period_type cpu/nanoseconds\n"
    "period 10000000\n"
    "time_nanos 1700000000123456789\n"
    "duration_nanos 2500000000\n"
    "drop_frames drop.*\n"
    "keep_frames keep_me\n"
    "doc_url https://example.com/doc\n"
    "comment first comment\n"
    "comment " + kLatin1 + "\n"
    "mapping 0x400000-0x500000@0x1000 /bin/app build_id=abcdef0123 [FN][FL][IN]\n"
    "mapping 0x7f0000000000-0x7f0000100000@0x0 /lib/libc.so.6 build_id= \n"
    "sample -1 -10000000\n"
    "  0x401000 in /bin/app | " + kMainFn + ":41:0\n"
    "sample 2 20000000\n"
    "  label pid=num:1234 \n"
    "  0x7f0000000abc in /lib/libc.so.6 [folded] | " + kLatin1 + "{" + kLatin1 + " /lib/libc.so.6:0}:0:0\n"
    "  0x401234 in /bin/app | inlined_helper{inlined_helper /src/app.cc:12}:14:7 | " + kMainFn + ":42:3\n"
    "  0x401000 in /bin/app | " + kMainFn + ":41:0\n"
    "sample 5 50000000\n"
    "  label alloc_size=num:4096 bytes\n"
    "  label thread=str:worker-1\n"
    "  0x401234 in /bin/app | inlined_helper{inlined_helper /src/app.cc:12}:14:7 | " + kMainFn + ":42:3\n"
    "  0x401000 in /bin/app | " + kMainFn + ":41:0\n";

}  // namespace tally::test
