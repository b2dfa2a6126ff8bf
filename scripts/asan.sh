#!/usr/bin/env bash
# The unit tests, the job cases (run_cases, both isolation modes), the abuse suites (exec
# mode), the validator suites (validator_corpus, validator_guard), the worker's settings
# (worker_config: every refusal path, where a leak makes the exit status wrong) and, when
# CODEQ_TEST_BROKERS names a broker, the worker suites kafka_e2e, kafka_wedge, kafka_reply and
# kafka_dlq, under AddressSanitizer and
# UndefinedBehaviorSanitizer, in a build directory of their own (build-asan/, gcc). Any
# sanitizer report stops the process that made it (halt_on_error), so the test fails; a
# worker that leaks exits non-zero at its stop.
# Without a broker the Kafka suites are not run, and the last lines say so.
# Sanitizer notes (why these options):
# - LeakSanitizer is on; leaks whose allocation passes through libpython3.11 or libcrypto
#   (embedded interpreter, OpenSSL state) are suppressed: scripts/lsan.supp.
# - The sandbox clones its init and main process onto stacks of its own; sbx_init.c tells
#   ASan their bounds (else ASan writes a warning into the job's stderr).
# - The zygote is spawned with the job's empty environment, so its ASan options are compiled
#   into codeq-zygote (sandbox/zygote/codeq_zygote.c): no leak check, no libc range checks on
#   the job's own memory accesses (ctypes).
# - The jobs' /usr/bin/python3 is Debian's, not instrumented: only codeq's code is checked.
# CODEQ_ASAN_PART=abuse runs only the abuse suites, =rest all but them (default all): ctest
# runs the abuse part alone (abuse.py checks the host's MemAvailable, and their bounds are
# timed) and the rest beside the cgroup v2 guest (tests/CMakeLists.txt).
# Usage: scripts/asan.sh [extra ctest arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
part=${CODEQ_ASAN_PART:-all}
case "$part" in
  all | abuse | rest) ;;
  *) echo "codeq: asan: CODEQ_ASAN_PART=$part: want all, abuse or rest" >&2; exit 2 ;;
esac
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -DCODEQ_WERROR=ON -DCMAKE_C_FLAGS="$san" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-asan -j"$(nproc)"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
rc=0
# The abuse suite (every hostile case) and its concurrency run, exec mode: the supervisor and
# init that read a hostile job's output, artifacts and cgroup figures are codeq's instrumented
# code. Not the *_zygote variants: there each job's processes are forks of the instrumented
# zygote, whose ASan heap and shadow count against the job's own limits (the fork flood meets
# its 128 MB memory limit, the fork bomb outlasts its wall limit), so those cases would test
# ASan, not the sandbox; they run in the normal build. One at a time: their bounds are timed.
if [ "$part" != rest ]; then
  t0=$(date +%s)
  CODEQ_TEST_SANITIZER=asan ctest --test-dir build-asan -R '^abuse(_concurrency)?$' \
    --output-on-failure "$@" || rc=$?
  echo "codeq: asan: abuse and abuse_concurrency (exec mode) under ASan + UBSan, $(( $(date +%s) - t0 )) s" >&2
  [ "$part" = all ] || exit "$rc"
fi
tb=$(date +%s)
ctest --test-dir build-asan -L unit --output-on-failure "$@" || rc=$?
# A test that cannot mean anything under ASan says so with cmocka's skip(): list every one
# here, so that a skip never passes unseen.
skipped=$( (grep -h '^\[  SKIPPED \] [a-z_]*$' build-asan/Testing/Temporary/LastTest.log || true) |
  sort -u | sed 's/.*\] //' | tr '\n' ' ')
ctest --test-dir build-asan -R '^run_cases(_zygote)?$' --output-on-failure "$@" || rc=$?
base=$(( $(date +%s) - tb ))
# Two at a time: the validator suites use the CPUs, the Kafka ones mostly wait on the broker
# (RESOURCE_LOCK kafka keeps those apart). CODEQ_TEST_SANITIZER tells a suite that its
# memory figures (kafka_wedge's peak RSS) mean nothing here; it says what it leaves out.
suites='validator_corpus|validator_guard|worker_config'
kafka="not run: CODEQ_TEST_BROKERS is not set (scripts/kafka.sh start)"
if [ -n "${CODEQ_TEST_BROKERS:-}" ]; then
  suites="$suites|kafka_e2e|kafka_wedge|kafka_reply|kafka_dlq"
  kafka="run against $CODEQ_TEST_BROKERS"
fi
t1=$(date +%s)
CODEQ_TEST_SANITIZER=asan ctest --test-dir build-asan -j2 -R "^($suites)\$" --output-on-failure "$@" ||
  rc=$?
more=$(( $(date +%s) - t1 ))
echo "codeq: asan: skipped under ASan (each runs in the normal build): ${skipped:-none}" >&2
echo "codeq: asan: unit tests and run_cases under ASan + UBSan, $base s" >&2
echo "codeq: asan: validator_corpus, validator_guard, worker_config under ASan + UBSan, with kafka_e2e, kafka_wedge, kafka_reply and kafka_dlq $kafka: $more s" >&2
[ -n "${CODEQ_TEST_BROKERS:-}" ] ||
  echo "codeq: asan: SKIPPED under ASan: kafka_e2e, kafka_wedge, kafka_reply, kafka_dlq (no broker)" >&2
exit "$rc"
