#!/usr/bin/env bash
# Build the libFuzzer harnesses (fuzz/) into build-fuzz/ with clang (ASan + UBSan) and run each
# for CODEQ_FUZZ_SECONDS seconds (default 20) over its committed seeds, one after the other.
# Exit non-zero if any harness crashes; the input that did is left in
# build-fuzz/fuzz-work/<harness>-crash-* (replay: build-fuzz/<harness> FILE).
# fuzz_guard runs the programs the validator accepts (outside the sandbox, under the runtime
# guard and an oracle that aborts before any forbidden operation; it moves itself into a
# network namespace of its own and runs each program as nobody in a temporary directory:
# fuzz/README.md); its self-test (fuzz_guard_selftest: the oracle fires, the guard and the
# corpora hold) runs first.
# Usage: scripts/fuzz.sh [HARNESS...]
#        (default: all of fuzz_decode fuzz_result fuzz_validator fuzz_guard)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${CODEQ_FUZZ_SECONDS:-20}
harnesses=("$@")
[ "${#harnesses[@]}" -gt 0 ] || harnesses=(fuzz_decode fuzz_result fuzz_validator fuzz_guard)
start=$(date +%s)
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCODEQ_FUZZ=ON -DCODEQ_FUZZ_SECONDS="$secs" \
  >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${harnesses[@]}"
tests=("${harnesses[@]}")
for h in "${harnesses[@]}"; do [ "$h" != fuzz_guard ] || tests=(fuzz_guard_selftest "${tests[@]}"); done
regex="^($(IFS='|'; echo "${tests[*]}"))\$"
rc=0
ctest --test-dir build-fuzz -L fuzz -R "$regex" --output-on-failure || rc=$?
echo "codeq: fuzz: ${harnesses[*]}, ${secs} s each, $(( $(date +%s) - start )) s in all" >&2
exit "$rc"
