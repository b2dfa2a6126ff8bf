#!/usr/bin/env bash
# The main job on the embedded development broker: install, build, start `codeq broker` and
# two workers, submit examples/*.py, print their results and audit trail, stop everything.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh
tmp=$(mktemp -d /tmp/codeq-demo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

build/codeq broker >"$tmp/broker.out" 2>"$tmp/broker.log" & pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/broker.out" ] && break; sleep 0.1; done
brokers=$(head -n 1 "$tmp/broker.out")
[ -n "$brokers" ] || { echo "codeq: demo: the broker did not start" >&2; cat "$tmp/broker.log" >&2; exit 1; }
echo "== development broker (librdkafka mock cluster) at $brokers"

for w in worker-1 worker-2; do
  build/codeq worker -b "$brokers" --worker-id "$w" --instance-id "$w" >"$tmp/$w.log" 2>&1 & pids+=($!)
done
# examples/agent_loop.py is a client program (it submits jobs itself), not a job.
jobs=()
for f in examples/*.py; do [ "$f" = examples/agent_loop.py ] || jobs+=("$f"); done
echo "== two workers started; submitting ${jobs[*]}"
rc=0
build/codeq submit -b "$brokers" --timeout 60 "${jobs[@]}" >"$tmp/results.jsonl" || rc=$?

echo "== results (one JSON object per job)"
cat "$tmp/results.jsonl"
echo "== audit trail (codeq.audit)"
kcat -b "$brokers" -C -t codeq.audit -e -o beginning -q -f '%s\n'
echo "== worker logs"
cat "$tmp"/worker-*.log
for s in ok rejected timeout; do
  grep -q "\"status\":\"$s\"" "$tmp/results.jsonl" || { echo "codeq: demo: no $s result" >&2; rc=1; }
done
exit "$rc"
