// Reading the profile database for reports (DCPI's dcpiprof): a selection of epochs,
// images and one event becomes one core::Profile that every report, converter and the
// symbolizer take. Images are laid out as image_profile.h says; each mapping carries the
// image's path and its real build id (none for images known by a hash), so symbolization
// finds the binary and checks it is the one profiled. Images without a stacks file (a
// daemon run with --call-graph none) contribute their DCPI histograms as one-frame stacks.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "core/profile.h"

namespace tally::store {

struct Selection {
  std::string db{};     // the database directory
  std::string epoch{};  // "" the latest; "all"; an epoch name or a prefix of names ("20250102")
  std::string since{};  // instead of epoch: the epochs overlapping [TIME, now] (epoch.h parse_time)
  // With epoch: a range, from the first epoch `epoch` names (a name or prefix) through the
  // last one `epoch_to` names, oldest first.
  std::string epoch_to{};
  std::string image{};  // a regex searched in each image's path and id; "" every image
  std::string event{};  // "" the only event, else cpu-clock, else the first by name
};

struct DbProfile {
  core::Profile profile;
  std::vector<std::string> epochs;  // the epochs read, oldest first
  std::string event;
  std::vector<std::string> events;  // every event the selected epochs hold
  std::vector<std::string> warnings;
};

// The epochs of `selection` (epoch / since), oldest first; an error when none match.
core::Expected<std::vector<std::string>> select_epochs(const std::vector<std::string>& epochs,
                                                       const Selection& selection, int64_t now);

core::Expected<DbProfile> read_db_profile(const Selection& selection);

}  // namespace tally::store
