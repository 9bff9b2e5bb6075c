// The shape of a profiler.h (struct layouts and function signatures), computed in two
// translation units: one that includes gperftools' header, one that includes tally's.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tally::test {

struct HeaderShape {
  std::vector<size_t> layout;            // sizes and offsets of ProfilerOptions, ProfilerState
  std::vector<std::string> signatures;   // typeid names of every function's type
};

HeaderShape tally_header_shape();
HeaderShape gperftools_header_shape();

}  // namespace tally::test

// Both translation units fill the shape the same way.
#define TALLY_HEADER_SHAPE(NAME)                                                         \
  ::tally::test::HeaderShape NAME() {                                                    \
    ::tally::test::HeaderShape shape;                                                    \
    shape.layout = {sizeof(ProfilerOptions),                                             \
                    offsetof(ProfilerOptions, filter_in_thread),                         \
                    offsetof(ProfilerOptions, filter_in_thread_arg),                     \
                    sizeof(ProfilerState),                                               \
                    offsetof(ProfilerState, enabled),                                    \
                    offsetof(ProfilerState, start_time),                                 \
                    offsetof(ProfilerState, profile_name),                               \
                    sizeof(ProfilerState::profile_name),                                 \
                    offsetof(ProfilerState, samples_gathered)};                          \
    shape.signatures = {typeid(&ProfilerStart).name(),                                   \
                        typeid(&ProfilerStartWithOptions).name(),                        \
                        typeid(&ProfilerStop).name(),                                    \
                        typeid(&ProfilerFlush).name(),                                   \
                        typeid(&ProfilerEnable).name(),                                  \
                        typeid(&ProfilerDisable).name(),                                 \
                        typeid(&ProfilingIsEnabledForAllThreads).name(),                 \
                        typeid(&ProfilerRegisterThread).name(),                          \
                        typeid(&ProfilerGetCurrentState).name(),                         \
                        typeid(&ProfilerGetStackTrace).name(),                           \
                        typeid(decltype(ProfilerOptions::filter_in_thread)).name()};     \
    return shape;                                                                        \
  }
