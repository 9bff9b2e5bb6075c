#!/usr/bin/env bash
# test.sh: set up on a fresh Debian 12 machine (build dependencies and the peer tools the
# compatibility tests run), build, and run the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/install-peers.sh
cmake --preset release -DTALLY_TESTS=ON -DTALLY_BENCH=ON >/dev/null
cmake --build --preset release
ctest --preset release -j2 "$@"
