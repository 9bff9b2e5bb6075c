# tally_module(NAME SOURCES... DEPS ...): one static library per module of the design.
# Headers are included as "core/profile.h", "formats/gperf/gperf_file.h", ... from src/.
function(tally_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()
