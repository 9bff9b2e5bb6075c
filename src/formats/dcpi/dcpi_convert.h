// DCPI <-> core::Profile. One DCPI file is one image's histogram of instruction addresses
// for one event: each address with samples becomes a one-frame sample; tstart/tsize give
// the mapping; event and period give the value type and period. Header lines the model
// has no field for are kept as attributes "dcpi.<key>" in their order, so that
// DCPI -> profile -> DCPI gives the same bytes.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostics.h"
#include "core/error.h"
#include "core/profile.h"
#include "formats/dcpi/dcpi_file.h"

namespace tally::dcpi {

core::Expected<core::Profile> to_profile(const DcpiFile& file, const std::string& source,
                                         core::Diagnostics& diagnostics);

struct Image {
  std::string name;  // file-name friendly: basename of the image path + image id
  DcpiFile file;
};

// One DCPI file per image (mapping) with samples, leaf counts only; what is dropped (call
// stacks, labels, other sample types, samples outside any mapping) is reported.
core::Expected<std::vector<Image>> from_profile(const core::Profile& profile,
                                                core::Diagnostics& diagnostics);

}  // namespace tally::dcpi
