#!/usr/bin/env bash
# make_clang_libprofiler_profile.sh
#
# Makes the deep-stack gperftools CPU profile that a user of libprofiler has: clang -cc1
# -O2 compiling tally's sources one after the other under gperftools' libprofiler
# (LD_PRELOAD, CPUPROFILE_FREQUENCY=4000), one profile per source, concatenated into one
# by merge_gperf_profiles.py. Its shape: 80k+ samples, 70k+ distinct stacks, depth up to
# 250, stacks through libLLVM-14 and libclang-cpp (.dynsym only without their debug
# packages). On a kernel with HZ=250 libprofiler's ITIMER_PROF gives at most 250 samples
# per CPU second whatever the frequency asked, while the header says 250 us a sample: the
# profile's times are a sixteenth of the CPU time spent (its shape is what matters here).
#
# Every compile runs under `setarch -R` (no address randomization), so that all of them
# have the same mappings and their addresses mean the same code; the merger refuses
# profiles whose executable mappings differ.
#
# Prints the made file's path. Builds nothing. Environment:
#   CLANG              the clang++ whose -cc1 is profiled (default: clang++ on PATH, else
#                      the newest /usr/lib/llvm-*/bin/clang++)
#   LIBPROFILER        gperftools' profiler library (default: libprofiler.so.0 of
#                      libgoogle-perftools4, found with ldconfig -p)
#   FREQ               CPUPROFILE_FREQUENCY (default 4000)
#   SOURCES            the files compiled (default: <repo>/src/*/*.cc, then tests/analyze/*.cc
#                      and tests/core/*.cc, each sorted: 166 files; here 86.7k samples,
#                      76k distinct stacks)
#   TALLY_BENCH_DATA   where the profile (clang-libprofiler.prof) and the per-source ones
#                      (clang-libprofiler.runs/) are kept (default ${TMPDIR:-/tmp}/tally-bench);
#                      a run left by an interrupted script is used again; delete them to
#                      make them again
set -euo pipefail
# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

clang=${CLANG:-$(command -v clang++ || ls -d /usr/lib/llvm-*/bin/clang++ 2>/dev/null | sort -V | tail -n 1 || true)}
libprofiler=${LIBPROFILER:-$(ldconfig -p | awk '/libprofiler\.so/ { print $NF; exit }')}
freq=${FREQ:-4000}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
output=$data_dir/clang-libprofiler.prof
runs_dir=$data_dir/clang-libprofiler.runs

[[ $# -eq 0 ]] || die "usage: $0 (no arguments; see the environment variables in the header)"
[[ -n $clang && -x $clang ]] || die "no clang++ (apt-get install clang), or set CLANG"
[[ -n $libprofiler && -f $libprofiler ]] ||
  die "no libprofiler (apt-get install libgoogle-perftools4), or set LIBPROFILER"
command -v setarch >/dev/null || die "no setarch (package util-linux)"
[[ $freq =~ ^[1-9][0-9]*$ ]] || die "FREQ must be a positive integer, got '$freq'"
if [[ -n ${SOURCES:-} ]]; then
  read -r -a given <<<"$SOURCES"
  # Absolute: the compiler runs in a scratch directory.
  mapfile -t sources < <(realpath -e -- "${given[@]}") || die "a file of SOURCES does not exist"
else
  mapfile -t sources < <(ls "$repo_root"/src/*/*.cc | sort; ls "$repo_root"/tests/analyze/*.cc | sort
    ls "$repo_root"/tests/core/*.cc | sort)
fi
((${#sources[@]} > 0)) || die "no sources to compile"

make_work
mkdir -p "$runs_dir" || die "cannot create $runs_dir"
echo "profiling $clang -cc1 -O2 on ${#sources[@]} sources under $libprofiler at $freq Hz ..." >&2
made=()
for ((i = 0; i < ${#sources[@]}; i++)); do
  run=$runs_dir/p$((i + 1)).prof
  if [[ ! -s $run ]]; then
    source_file=${sources[i]}
    # The driver's -cc1 command: the profiled process is then the compiler itself, not
    # the driver that forks it.
    "$clang" -### -O2 -std=c++20 -I "$repo_root/src" -I "$build/src" -c "$source_file" \
      -o "$work/out.o" 2>"$work/driver.txt" || die "$clang -### $source_file failed"
    grep -m 1 '"-cc1"' "$work/driver.txt" >"$work/cc1.cmd" ||
      die "no -cc1 line in the output of $clang -### for $source_file"
    # A source that does not compile still gives its samples.
    (cd "$work" && eval "setarch -R env LD_PRELOAD=\"$libprofiler\" CPUPROFILE=\"$run.tmp\" \
        CPUPROFILE_FREQUENCY=$freq $(cat "$work/cc1.cmd")" >/dev/null 2>&1) || true
    [[ -s $run.tmp ]] || die "libprofiler wrote no profile for $source_file"
    # A compile that stopped at once has no samples (the file is only its header,
    # trailer and maps); it is kept, so that it is not made again.
    mv "$run.tmp" "$run"
  fi
  made+=("$run")
done
python3 "$(dirname "${BASH_SOURCE[0]}")/merge_gperf_profiles.py" "$output" "${made[@]}"
echo "$output"
