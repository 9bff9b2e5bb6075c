// One pprof message that sets every field of profile.proto, written by the tests' own
// encoder: sparse ids, fields out of the usual order, string_table last, packed and
// unpacked repeated fields, a negative value, a non-UTF-8 string; and the same profile
// written out by hand in profile_text()'s notation.
#pragma once

#include <string>

namespace tally::test {

extern const std::string kLatin1;  // "caf\xe9 \xff\xfe": not UTF-8

// The serialized (uncompressed) message.
std::string every_field_message();

// profile_text(every_field_message()), written by hand.
extern const std::string kEveryFieldText;

}  // namespace tally::test
