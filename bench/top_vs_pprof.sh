#!/usr/bin/env bash
# top_vs_pprof.sh [PROFILE]
#
# Times `tally top --nodecount=20 PROFILE` against `pprof -top -nodecount=20 PROFILE` on a
# large pprof profile (default: the 100 MB synthetic one pprof_convert_vs_pprof.sh generates,
# ${TALLY_BENCH_DATA:-/tmp/tally-bench}/pprof-11700000-seed1.pb.gz). Prints wall and CPU
# time, peak RSS and the ratios, and checks both list the same rows (name, flat, cum).
#
# Environment: TALLY_BUILD (default <repo>/build/release), PPROF (default /opt/peers/pprof),
# TALLY_BENCH_DATA. pprof needs 13 to 18 GB of memory on the default input.
set -euo pipefail

# shellcheck source=measure.sh
source "$(dirname "${BASH_SOURCE[0]}")/measure.sh"

pprof=${PPROF:-/opt/peers/pprof}
data_dir=${TALLY_BENCH_DATA:-${TMPDIR:-/tmp}/tally-bench}
profile=${1:-$data_dir/pprof-11700000-seed1.pb.gz}

require_tally
[[ -x $pprof ]] || die "no pprof at $pprof (set PPROF)"
[[ -f $profile ]] || die "no profile $profile (run pprof_convert_vs_pprof.sh once to make it)"

make_work

measure "$work/tally.txt" "$tally" top --nodecount=20 "$profile"
tally_wall=$WALL_NS tally_cpu=$CPU_S tally_rss=$RSS_KB
measure "$work/pprof.txt" "$pprof" -top -nodecount=20 "$profile"
pprof_wall=$WALL_NS pprof_cpu=$CPU_S pprof_rss=$RSS_KB

# Same rows: flat, flat%, sum%, cum, cum% and name (tally's ± column removed).
rows() { sed -n '/flat  flat%/,$p' "$1" | tail -n +2; }
diff <(rows "$work/pprof.txt" | awk '{$1=$1; print}') \
     <(rows "$work/tally.txt" | awk '{s = ""; for (i = 1; i <= NF; i++) if (i != 6) s = s (s ? " " : "") $i; print s}') >/dev/null ||
  die "tally top and pprof -top list different rows"

python3 - "$tally_wall" "$tally_cpu" "$tally_rss" "$pprof_wall" "$pprof_cpu" "$pprof_rss" <<'PY'
import sys
tw, tc, tr, pw, pc, pr = map(float, sys.argv[1:])
print(f"tally top : {tw/1e9:8.2f} s wall {tc:8.2f} s cpu {tr/1024:9.1f} MB peak RSS")
print(f"pprof -top: {pw/1e9:8.2f} s wall {pc:8.2f} s cpu {pr/1024:9.1f} MB peak RSS")
print(f"ratios    : {pw/tw:8.1f}x faster       {pr/tr:8.1f}x less memory")
PY
