#!/bin/bash
# The push path of two builds side by side: two daemons at their defaults (99 Hz, push every
# 15 s) at the same time, each with --push to one receiver.py, for 60 s (SECONDS_RUN=) while
# two busy loops keep both CPUs busy. Both see the same processes come and go, which on a
# shared machine varies more from one minute to the next than the builds differ. Prints each
# daemon's samples, CPU seconds, symbol cache counters and peak RSS (GNU time). Run as root.
#   A=main/build/release/src/cli/tally B=build/release/src/cli/tally bench/push_overhead_ab.sh
set -u
cd "$(dirname "$0")/.."
O=${OUT:-/tmp/tally-push-ab}
A=${A:?A=path of one tally}
B=${B:-build/release/src/cli/tally}
rm -rf "$O" && mkdir -p "$O"
/usr/bin/python3 tests/push/receiver.py --proto-root proto/pyroscope --out "$O/out" \
  --port-file "$O/port" & receiver=$!
sleep 2
busy=()
for i in 1 2; do ( while :; do :; done ) & busy+=($!); done
timers=()
for side in A B; do
  /usr/bin/time -f "%M KB maxrss" -o "$O/time-$side" "${!side}" daemon --db "$O/db-$side" \
    --log "$O/log-$side" --push "http://127.0.0.1:$(cat "$O/port")" & timers+=($!)
done
sleep "${SECONDS_RUN:-60}"
for t in "${timers[@]}"; do kill -TERM "$(pgrep -P "$t")"; done
wait "${timers[@]}"
kill "${busy[@]}" $receiver
for side in A B; do
  echo "$side (${!side}): $(grep stopping "$O/log-$side" |
    sed 's/.*samples \([0-9]*\) (.*cpu \([0-9.]*\) s in \([0-9.]*\) s.*symbol cache \(.*\)/samples \1, cpu \2 s in \3 s, symbol cache \4/')"
  cat "$O/time-$side"
done
