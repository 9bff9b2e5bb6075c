# TallyBpf.cmake: the off-CPU BPF program (src/collect/bpf/off_cpu.bpf.c) compiled with
# clang -target bpf and embedded in the binary as a bpftool skeleton (issue 23).
# TALLY_BPF (default ON) builds it when clang, bpftool and libbpf (Debian: clang, bpftool,
# libbpf-dev) are found; without them tally builds without it and --off-cpu records with
# perf_event_open only. Sets TALLY_HAVE_BPF and, when on, the INTERFACE library
# tally_off_cpu_bpf_skel: the include directory of off_cpu.skel.h, libbpf, and the
# definition TALLY_HAVE_BPF=1. CO-RE: no vmlinux.h is generated from the build machine.
option(TALLY_BPF "Record off-CPU spans with BPF when clang, bpftool and libbpf are found" ON)
set(TALLY_HAVE_BPF OFF)
if(TALLY_BPF)
  find_program(TALLY_BPF_CLANG NAMES clang clang-14)
  find_program(TALLY_BPFTOOL bpftool PATHS /usr/sbin /sbin)
  pkg_check_modules(LIBBPF IMPORTED_TARGET libbpf)
  if(TALLY_BPF_CLANG AND TALLY_BPFTOOL AND LIBBPF_FOUND)
    set(TALLY_HAVE_BPF ON)
  else()
    message(STATUS "BPF off-CPU recorder not built: needs clang, bpftool and libbpf "
                   "(Debian: clang bpftool libbpf-dev; found clang='${TALLY_BPF_CLANG}' "
                   "bpftool='${TALLY_BPFTOOL}' libbpf=${LIBBPF_FOUND}); "
                   "tally record --off-cpu will use perf_event_open")
  endif()
endif()

if(TALLY_HAVE_BPF)
  set(bpf_dir ${PROJECT_BINARY_DIR}/bpf)
  set(bpf_source ${PROJECT_SOURCE_DIR}/src/collect/bpf/off_cpu.bpf.c)
  # asm/types.h, which linux/bpf.h includes, lives under the multiarch include directory.
  set(bpf_arch_include /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
  add_custom_command(
    OUTPUT ${bpf_dir}/off_cpu.bpf.o
    COMMAND ${CMAKE_COMMAND} -E make_directory ${bpf_dir}
    COMMAND ${TALLY_BPF_CLANG} -target bpf -g -O2 -Wall -Werror -I${bpf_arch_include}
            -c ${bpf_source} -o ${bpf_dir}/off_cpu.bpf.o
    DEPENDS ${bpf_source} ${PROJECT_SOURCE_DIR}/src/collect/bpf/off_cpu_span.h
    COMMENT "BPF object off_cpu.bpf.o"
    VERBATIM)
  add_custom_command(
    OUTPUT ${bpf_dir}/off_cpu.skel.h
    COMMAND ${TALLY_BPFTOOL} gen skeleton ${bpf_dir}/off_cpu.bpf.o name off_cpu_bpf
            > ${bpf_dir}/off_cpu.skel.h
    DEPENDS ${bpf_dir}/off_cpu.bpf.o
    COMMENT "BPF skeleton off_cpu.skel.h"
    VERBATIM)
  add_custom_target(tally_off_cpu_bpf_skel_gen DEPENDS ${bpf_dir}/off_cpu.skel.h)
  add_library(tally_off_cpu_bpf_skel INTERFACE)
  add_dependencies(tally_off_cpu_bpf_skel tally_off_cpu_bpf_skel_gen)
  # SYSTEM: the generated C header is not held to the project's warning flags.
  target_include_directories(tally_off_cpu_bpf_skel SYSTEM INTERFACE ${bpf_dir})
  target_link_libraries(tally_off_cpu_bpf_skel INTERFACE PkgConfig::LIBBPF)
  target_compile_definitions(tally_off_cpu_bpf_skel INTERFACE TALLY_HAVE_BPF=1)
endif()
