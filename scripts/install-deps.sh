#!/usr/bin/env bash
# install-deps.sh: the Debian 12 packages tally builds and tests with (README lists why each
# is there). Installs only what is missing; uses sudo only when not root.
set -euo pipefail
pkgs=(
  build-essential cmake ninja-build pkg-config   # toolchain
  libfmt-dev libcli11-dev zlib1g-dev             # formatting, command line, gzip
  protobuf-compiler libprotobuf-dev              # profile.proto (the pprof codec's reference)
  libdw-dev libelf-dev                           # symbolization: ELF symbols, DWARF lines and inlines
  libdeflate-dev                                 # symbolization: fast inflating of compressed debug sections; gunzip of .gz inputs
  nlohmann-json3-dev                             # tally stat --json
  libcapstone-dev                                # tally disasm: the instructions (no objdump)
  libdebuginfod-dev                              # symbolization: debug files from $DEBUGINFOD_URLS (dlopen'd client)
  debuginfod                                     # elfutils' server: the debuginfod tests serve debug files with it
  binutils                                       # addr2line: the symbolizer tests' reference
  llvm                                           # llvm-symbolizer: their second reference
  gzip                                           # gzip(1): the tests read tally's gzip with it
  chromium                                       # the flame graph test opens the SVG headless
  chromium-driver python3-selenium               # tally serve's tests drive headless Chromium
  libcpp-httplib-dev                             # tally serve: the HTTP server
  libc6-dbg                                      # libc's separate debug file: symbolizer test of a stripped library
  liblzma-dev                                    # MiniDebugInfo: .gnu_debugdata is xz-compressed
  xz-utils sqlite3                               # real stripped programs the symbolizer tests record
  libgtest-dev libgmock-dev libbenchmark-dev     # tests and benchmarks
  libunwind-dev                                  # bench_runtime_unwind: libtally's walk against libunwind (gperftools')
  clang libclang-rt-14-dev                       # libFuzzer targets and sanitizer runtimes
  libbpf-dev bpftool                             # tally record --off-cpu in BPF: the program's skeleton (with clang)
  python3                                        # bench scripts
  libcurl4-openssl-dev                           # tally push / daemon --push: HTTP(S) to fleet stores
  python3-protobuf openssl                       # the push tests: a receiver decoding proto/pyroscope; a test CA
)
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all ${#pkgs[@]} packages present"
fi
