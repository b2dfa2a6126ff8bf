#!/usr/bin/env bash
# The whole test suite from a fresh clone: install dependencies, build, start a real Kafka
# broker (scripts/kafka.sh), run every ctest case against it, stop the broker.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
brokers=$(bash scripts/kafka.sh start | tail -n 1)
trap 'bash scripts/kafka.sh stop' EXIT
echo "codeq: test: real Kafka broker at $brokers" >&2
# -j2: the cgroup v2 guest beside the host's tests, which take one at a time (tests/CMakeLists.txt).
CODEQ_TEST_BROKERS=$brokers ctest --test-dir build --output-on-failure --timeout 900 -j2
