#!/usr/bin/env bash
# install-peers.sh: the peer tools the compatibility tests run (google/pprof, gperftools,
# valgrind, perf), through ../shared/peers/setup.sh, which installs only what is missing.
#
# setup.sh ends with `ldconfig -p | awk '/libprofiler\.so /{print $NF; exit}'` under
# pipefail: when awk exits before ldconfig has written everything, ldconfig dies of
# SIGPIPE and setup.sh exits 141 with every tool already installed (seen on a clean-clone
# CI run; 7 of 30 runs here). A failure is retried, up to 5 runs in all: an installed tool
# is not installed again.
set -uo pipefail
setup="$(cd "$(dirname "$0")/.." && pwd)/../shared/peers/setup.sh"
if [ ! -f "$setup" ]; then
  echo "install-peers: no $setup; the compatibility tests will skip (and fail under" \
       "TALLY_REQUIRE_PEERS=1, as in CI)" >&2
  exit 0
fi
for attempt in 1 2 3 4 5; do
  bash "$setup" && exit 0
  status=$?
  echo "install-peers: setup.sh exited $status (attempt $attempt of 5)" >&2
done
exit "$status"
