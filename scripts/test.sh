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
# A cgroup v2 guest that stalls runs its suite again (scripts/cgroup2-vm.sh); its report is
# printed at the end whether the test then passed or not.
stalls=$PWD/build/cgroup2-vm-stalls.log
rm -f "$stalls"
rc=0
CODEQ_VM_STALL_LOG=$stalls CODEQ_TEST_BROKERS=$brokers \
  ctest --test-dir build --output-on-failure --timeout 900 -j2 || rc=$?
if [ -s "$stalls" ]; then
  echo "codeq: test: cgroup v2 guests stalled and ran their suite again ($(grep -c '^=== ' "$stalls")):" >&2
  cat "$stalls" >&2
fi
exit $rc
