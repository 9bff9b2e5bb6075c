#!/bin/bash
# The push path's cost (issue 22): tally daemon at its defaults (99 Hz, push every 15 s) for
# 60 s without and then with --push to tests/push/receiver.py, while two busy loops keep both
# CPUs busy. Prints the daemon's stopping lines (its CPU seconds), peak RSS (GNU time), and
# each request's series count and gzipped body size. Run as root from a release build.
# TALLY=path/to/tally compares another build (e.g. main's); MODES="push" skips the run
# without --push.
set -u
cd "$(dirname "$0")/.."
O=${OUT:-/tmp/tally-push-bench}
T=${TALLY:-build/release/src/cli/tally}
MODES=${MODES:-nopush push}
rm -rf "$O" && mkdir -p "$O"
/usr/bin/python3 tests/push/receiver.py --proto-root proto/pyroscope --out "$O/out" \
  --port-file "$O/port" & receiver=$!
sleep 2
busy=()
for i in 1 2; do ( while :; do :; done ) & busy+=($!); done
for mode in $MODES; do
  args=(--db "$O/db-$mode" --log "$O/log-$mode")
  [ $mode = push ] && args+=(--push "http://127.0.0.1:$(cat "$O/port")")
  /usr/bin/time -f "%M KB maxrss" -o "$O/time-$mode" $T daemon "${args[@]}" & timer=$!
  sleep 60
  kill -TERM "$(pgrep -P $timer)"; wait $timer
done
kill "${busy[@]}" $receiver
for mode in $MODES; do echo "$mode: $(grep stopping "$O/log-$mode")"; cat "$O/time-$mode"; done
/usr/bin/python3 -c "
import json
for l in open('$O/out/requests.jsonl'):
    r = json.loads(l); print(len(r['series']), 'series,', r['headers']['Content-Length'], 'bytes gzipped')
"
