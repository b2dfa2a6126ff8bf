#!/bin/sh
# In the cgroup v2 guest: `codeq worker` end to end on the development broker (`codeq broker`,
# librdkafka's mock cluster: this is about the sandbox on v2, not about Kafka, which the host's
# suites test on a real broker), once per isolation mode. The exec-mode worker runs in the
# root cgroup; the zygote-mode worker alone in a service cgroup, as systemd's Delegate=yes
# leaves it. Each answers examples/*.py and a memory bomb with the right status, its jobs'
# cgroups are gone after, and SIGTERM ends it within its grace period.
set -u
B=${CODEQ_BIN:?} S=${CODEQ_SOURCE_DIR:?}
M=/sys/fs/cgroup
passed=0 failed=0
pass() { echo "PASS: $*"; passed=$((passed + 1)); }
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
T=$(mktemp -d /tmp/codeq-v2-worker.XXXXXX)
cp "$S"/examples/*.py "$T/"
printf 'x = bytearray(200 * 2**20)\nprint(len(x))\n' > "$T/oom.py"
for iso in exec zygote; do
  # a broker of its own with this mode's topics made: the mock makes none asked for by a
  # listing (codeq submit looks for its topics that way, so that a misspelt one is refused)
  "$B" broker --jobs-topic jobs-$iso --results-topic results-$iso --audit-topic audit-$iso \
    --dlq-topic dlq-$iso > "$T/broker-$iso.out" 2> "$T/broker-$iso.log" & broker=$!
  for _ in $(seq 300); do [ -s "$T/broker-$iso.out" ] && break; sleep 0.2; done
  bs=$(head -n 1 "$T/broker-$iso.out")
  [ -n "$bs" ] || { echo "FAIL: the development broker did not start"; cat "$T/broker-$iso.log"; exit 1; }
  if [ $iso = exec ]; then cg=""; else cg=system.slice/codeq-worker-$iso.service; fi
  if [ -n "$cg" ]; then
    mkdir -p $M/$cg && echo "+memory +pids +cpu" > $M/system.slice/cgroup.subtree_control
  fi
  log=$T/worker-$iso.log
  sh -c '[ -z "$1" ] || echo $$ > "'$M'/$1/cgroup.procs"; shift; exec "$@"' sh "$cg" \
    "$B" worker -b "$bs" --isolation $iso --instance-id v2-$iso --slots 2 --limit-default wall_ms=20000 \
    --limit-default cpu_ms=$(( 5000 * ${CODEQ_TEST_TIME_SCALE:-1} > 60000 ? 60000 : 5000 * ${CODEQ_TEST_TIME_SCALE:-1} )) \
    --zygote-start-ms $((10000 * ${CODEQ_TEST_TIME_SCALE:-1})) \
    --jobs-topic jobs-$iso --results-topic results-$iso --audit-topic audit-$iso --dlq-topic dlq-$iso \
    > "$log" 2>&1 &
  w=$!
  "$B" submit -b "$bs" --timeout 600 --jobs-topic jobs-$iso --results-topic results-$iso \
    --audit-topic audit-$iso --dlq-topic dlq-$iso \
    "$T/hello.py" "$T/error.py" "$T/primes.py" "$T/rejected.py" "$T/timeout.py" "$T/oom.py" > "$T/results-$iso.jsonl"
  rc=$?
  [ $rc = 0 ] && pass "$iso: every result arrived" || fail "$iso: submit exit $rc"
  /usr/bin/python3 - "$T/results-$iso.jsonl" "$iso" <<'PY' || failed=$((failed + 1))
import json, sys
want = {"hello.py": "ok", "error.py": "error", "primes.py": "ok", "rejected.py": "rejected",
        "timeout.py": "timeout", "oom.py": "memory_limit"}
got = {}  # codeq submit names a job <file>-<random>
for line in open(sys.argv[1]):
    r = json.loads(line)
    got[r["id"].rsplit("-", 1)[0]] = r
bad = 0
for name, status in want.items():
    r = got.get(name)
    ok = r is not None and r["status"] == status and r.get("sandbox_profile", "full") == "full"
    print(("PASS" if ok else "FAIL") + f": {sys.argv[2]}: {name} -> {r and r['status']} (want {status})"
          + ("" if ok else f" {r and r.get('message')}"))
    bad += not ok
sys.exit(1 if bad else 0)
PY
  [ -n "$cg" ] && { [ -d $M/$cg/codeq-worker ] && [ -d $M/$cg/codeq ] &&
    pass "$iso: worker moved into $cg/codeq-worker, jobs under $cg/codeq" ||
    fail "$iso: no codeq-worker leaf or codeq parent in $cg"; }
  t0=$(date +%s); kill -TERM $w; wait $w; wrc=$?; dt=$(( $(date +%s) - t0 ))
  [ $wrc = 0 ] && [ $dt -le 60 ] && pass "$iso: SIGTERM -> exit 0 in ${dt}s" || fail "$iso: SIGTERM -> exit $wrc in ${dt}s"
  left=$(find $M -name 'job-*' -type d | wc -l)
  [ "$left" = 0 ] && pass "$iso: no job cgroup left" || fail "$iso: $left job cgroups left"
  grep -q internal_error "$T/results-$iso.jsonl" && fail "$iso: an internal_error result"
  grep -q "cgroup v2, each job's init cloned into its cgroup" "$log" &&
    pass "$iso: the start-up log says jobs are born in their cgroups" ||
    fail "$iso: no start-up line saying jobs are cloned into their cgroups"
  echo "--- worker log ($iso)"; tail -n 15 "$log"
  kill $broker; wait $broker 2>/dev/null
done
echo "worker: $passed passed (plus the per-job lines), $failed failed"
[ $failed = 0 ]
