"""One job must never wedge a worker (issue 11): on the real broker, jobs whose result would
not fit in one record, and a result the broker refuses for itself, are each answered once, and
the jobs queued after them are answered too. Before the fix each of these made the worker
abort its transaction and retry it forever, committing nothing more.

  findings   32,000 lines of eval(0): rejected, 100 findings carried, findings_total 32000
  output     limits.output_bytes=2000000 (inside the built-in 16 MiB maximum): invalid, above
             what a result record carries (the worker lowered its maximum at start)
  streams    900 kB on stdout and on stderr, each within its limit, too large together: ok,
             cut to fit, stdout_truncated / stderr_truncated
  artifact   (data policy) 1 MiB and 800 kB of binary (base64: 1.07 MB) artifacts and a small
             one: ok, the large ones left out (the first above artifact_bytes, which the worker
             lowered to the budget; the second by the fit), artifacts_truncated
  reply      reply_to a topic whose max.message.bytes is 20000, a 60 kB result: the broker
             refuses the record, the job is answered internal_error on the results topic
  prefix     reply_to another service's topic: invalid (--reply-topic-prefix)
  bombs      (a worker of their own) zstd-compressed jobs of 2 kB that expand to 60 MB and to 200 MB:
             beyond what the worker lets one record cost (receive.message.max.bytes, 33 MB;
             librdkafka's default of 100 MB let the 60 MB one cost 219 MB of RSS, and the 200 MB
             one failed to decompress forever, holding its partition): each dead-lettered with
             the consumer's error in codeq.error, the job behind them answered, that
             worker's peak RSS under 120 MB; then two 20 MB jobs in one zstd record batch: the
             error came at the batch's first offset, the fetch went past it and got the same
             batch again, forever, and nothing behind it was answered; now each of the two is
             dead-lettered (the second with codeq.source.offset one past the first); then a
             gzip job that expands to 36 MB, which librdkafka does not bound (only zstd): it is
             dead-lettered unparsed ("expands to"), as a zstd one is; then 2,000 jobs of 20 kB
             in one zstd batch (40 MB expanded): dead-lettered one per fetch, each fetch after
             librdkafka's error back-off, they held the partition for minutes; now the fetch
             probes ahead through the batch, and every one of them is dead-lettered in seconds
  handover   (a worker of its own) the batch of 2,000 again, the worker killed -9 while it steps
             through it and started again with its instance id: the new one goes on inside the
             batch from what was committed, and each record has exactly one committed dead letter
  after      20 quick jobs behind them: all ok
  small      (a worker of its own, all four topics of max.message.bytes 8192, which the worker
             supports) 200 lines of eval(0) between quick jobs: its 100 findings are 13 kB. It
             was replaced by an internal_error still carrying them, its rejected event was never
             measured, and the broker refused both: every transaction aborted forever, and the
             jobs behind it were never answered. Now it is rejected with the findings that fit,
             findings_total 200, in its result and its audit event, every job is answered, and
             no transaction aborts
Every result is at most the record budget the worker logged, schema-valid, exactly once, and
the worker's log shows no endless aborts. A worker started with --limit-max output_bytes
above the budget refuses to start. Bounded to about 3 minutes."""
import collections
import json
import os
import pathlib
import re
import subprocess
import sys
import time
import uuid

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import AUDIT, BIN, RESULT, Failures, run, schema_errors  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "wedge"
F = Failures()
kt.require_broker(NAME)
s = kt.Setup(NAME, 2)
sd = kt.Setup(NAME + "-data", 1)  # a worker of the data policy, for the artifact job
sb = kt.Setup(NAME + "-bombs", 1)  # a worker of its own, whose peak RSS is the bombs' cost
sf = kt.Setup(NAME + "-small", 1, config=["max.message.bytes=8192"])  # the many findings
sh = kt.Setup(NAME + "-handover", 1)  # a worker killed inside a batch that fails to decode
sfx = uuid.uuid4().hex[:8]
small = f"codeq.reply.small-{sfx}"
p = run(["topics", "-b", kt.BROKERS, "--partitions", "1", "--config", "max.message.bytes=20000",
         "--jobs-topic", small, "--results-topic", f"{small}.r", "--audit-topic", f"{small}.a",
         "--dlq-topic", f"{small}.d"], timeout=90)
F.check(p.returncode == 0, f"codeq topics for the small reply topic: {p.stderr}")

jobs = [
    {"id": "findings", "code": "eval(0)\n" * 32000},
    {"id": "output", "code": "print('x' * 1500000)", "limits": {"output_bytes": 2000000}},
    {"id": "streams", "code": "import sys\nsys.stdout.write('o' * 900000)\nsys.stderr.write('e' * 900000)",
     "limits": {"output_bytes": 950000}},
    {"id": "reply", "code": "print('r' * 60000)", "reply_to": small},
    {"id": "prefix", "code": "print(1)", "reply_to": "billing.events"},
]
art = {"id": "artifact", "code": "b = bytes(range(256))\nopen('big.bin', 'wb').write(b * 4096)\n"
       "open('mid.bin', 'wb').write((b * 3200)[:800000])\nopen('small.txt', 'w').write('kept')\n"
       "print('done')"}
after = [{"id": f"after-{i}", "code": f"print({i})"} for i in range(20)]
small_jobs = ([{"id": f"small-before-{i}", "code": f"print({i})"} for i in range(3)] +
              [{"id": "small-findings", "code": "eval(0)\n" * 200}] +
              [{"id": f"small-after-{i}", "code": f"print({i})"} for i in range(5)])


def check_small():
    ids = [j["id"] for j in small_jobs]
    got, results, t1 = {}, [], time.monotonic()
    while time.monotonic() - t1 < 60:
        results = sf.read_unless_held("results")
        got = {r["id"]: r for r in results}
        if set(ids) <= set(got):
            break
        time.sleep(1)
    F.check(set(ids) <= set(got), f"small: never answered: {sorted(set(ids) - set(got))}")
    F.check(all((got.get(i) or {}).get("status") == "ok" for i in ids if i != "small-findings"),
            f"small: the jobs around it: {sorted((i, (got.get(i) or {}).get('status')) for i in ids)}")
    r = got.get("small-findings") or {}
    F.check(r.get("status") == "rejected" and 0 < len(r.get("findings", [])) < 100 and
            r.get("findings_total") == 200 and not schema_errors(RESULT, r),
            f"small: findings: {r.get('status')} {len(r.get('findings', []))} of "
            f"{r.get('findings_total')}: {r.get('message')} {schema_errors(RESULT, r)[:2]}")
    audit = sf.read_unless_held("audit")
    ev = [e for e in audit if e.get("job_id") == "small-findings" and e.get("event") == "rejected"]
    F.check(len(ev) == 1 and 0 < len(ev[0].get("findings", [])) < 100 and
            ev[0].get("findings_total") == 200 and not schema_errors(AUDIT, ev[0]),
            f"small: rejected events {[(len(e.get('findings', [])), e.get('findings_total')) for e in ev]}")
    lost, dup, bad = kt.exactly_once(results, audit, ids)
    F.check(not lost and not dup and not bad, f"small: lost {lost} dup {dup} audit {bad}")
    aborts = (sf.logdir / "w4.log").read_text().count("(aborting)")
    F.check(aborts == 0, f"small: {aborts} aborted transactions in w4's log")
    print(f"{NAME}: small: {len(got)} answered, {len(r.get('findings', []))} of "
          f"{r.get('findings_total')} findings carried, {aborts} aborts", flush=True)


MANY = 2000  # x 20 kB: 40 MB expanded, beyond the worker's 33 MB
TXN_MANY = 2000  # x 20 kB, in a transaction


def produce_pair_batch(topic):
    """Two valid 20 MB jobs in one zstd record batch (a few kB compressed, 40 MB expanded)."""
    from confluent_kafka import Producer
    pp = Producer({"bootstrap.servers": kt.BROKERS, "compression.type": "zstd", "linger.ms": 1000,
                   "batch.size": 100000000, "message.max.bytes": 250000000})
    for i in range(2):
        pp.produce(topic, value=json.dumps({"id": f"pair-{i}", "code": "print(1)"}) + " " * 20000000,
                   key=f"pair-{i}", partition=0)
    F.check(pp.flush(60) == 0, "the pair batch was not delivered")
    gz = Producer({"bootstrap.servers": kt.BROKERS, "compression.type": "gzip",
                   "message.max.bytes": 250000000})
    gz.produce(topic, value=json.dumps({"id": "gzip-36", "code": "print(1)"}) + " " * 36000000,
               key="gzip-36", partition=0)
    F.check(gz.flush(60) == 0, "the gzip record was not delivered")
    produce_many(topic)


def produce_many(topic, n=MANY, transactional=False):
    """Many small jobs in one zstd batch that expands past the bound: librdkafka names only the
    batch's first offset, each failed fetch waits fetch.error.backoff.ms, and one record per
    fetch held the partition for minutes (MANY x ~0.11 s), past this test's bound.
    transactional: in one transaction of a submitter's, whose commit marker follows the batch."""
    from confluent_kafka import Producer
    # One batch, however slowly the records are handed over: linger far past the loop (flush
    # and commit send it; below message.timeout.ms, which a transactional producer caps at its
    # transaction timeout, 60 s). With 1 s, a loaded CI machine split the batch and its last 27
    # records, a batch of their own that decodes, ran as jobs.
    conf = {"bootstrap.servers": kt.BROKERS, "compression.type": "zstd", "linger.ms": 20000,
            "batch.size": 100000000, "message.max.bytes": 250000000}
    if transactional:
        conf["transactional.id"] = f"wedge-submitter-{uuid.uuid4().hex[:8]}"
    pp = Producer(conf)
    if transactional:
        pp.init_transactions(30)
        pp.begin_transaction()
    for i in range(n):
        pp.produce(topic, value=json.dumps({"id": f"many-{i}", "code": "print(1)"}) + " " * 20000,
                   key=f"many-{i}", partition=0)
    if transactional:
        pp.commit_transaction(60)
    F.check(pp.flush(60) == 0, "the batch of many was not delivered")


def dead_letter_offsets(setup):
    """codeq.source.offset of every committed dead letter."""
    out = subprocess.run(["kcat", "-b", kt.BROKERS, "-C", "-t", setup.topics["dlq"], "-e", "-o",
                          "beginning", "-q", "-f", "%h\n", "-X", "isolation.level=read_committed"],
                         capture_output=True, text=True, timeout=60).stdout
    return [int(x) for x in re.findall(r"codeq\.source\.offset=(\d+)", out)]


def check_handover():
    """A worker killed while it steps through the batch of many, and started again: its
    successor goes on from what was committed, inside the batch, and each record has exactly
    one dead letter."""
    produce_many(sh.topics["jobs"])
    sh.produce_jobs([{"id": "after-many", "code": "print('past the many')"}])
    sh.start("h1", "--slots", "1")
    log, t1, seen = sh.logdir / "h1.log", time.monotonic(), 0
    while time.monotonic() - t1 < 60 and seen < 300:
        time.sleep(0.05)
        ends = re.findall(r"offsets \d+-(\d+) \(in the record batch", log.read_text())
        seen = max(map(int, ends), default=0)
    sh.kill9("h1")
    F.check(0 < seen < MANY - 1, f"handover: h1 was killed at offset {seen}, not inside the batch")
    sh.start("h2", "--slots", "1", instance="h1")  # fences h1's transaction and aborts it
    got = sh.wait_results(["after-many"], 60)
    F.check([r.get("status") for r in got] == ["ok"], f"handover: after the many: {got}")
    offsets = dead_letter_offsets(sh)
    dups = sorted(o for o, n in collections.Counter(offsets).items() if n > 1)
    F.check(sorted(set(offsets)) == list(range(MANY)) and not dups,
            f"handover: {len(offsets)} dead letters for {MANY} records, duplicated {dups[:5]}, "
            f"missing {sorted(set(range(MANY)) - set(offsets))[:5]}")
    first = re.search(r"\[0\] offsets? (\d+)", (sh.logdir / "h2.log").read_text())
    F.check(first and int(first.group(1)) > 0,
            f"handover: h2 did not go on inside the batch (its first dead letter at "
            f"{first.group(1) if first else None})")
    # Such a batch in a submitter's transaction, the last thing on the partition: behind it is
    # only the commit marker, which a fetch answers with nothing at all. The probe there waited
    # for good, and the stall watchdog gained one record every ~35 s.
    t2 = time.monotonic()
    produce_many(sh.topics["jobs"], TXN_MANY, transactional=True)
    want = set(range(MANY)) | set(range(MANY + 1, MANY + 1 + TXN_MANY))
    while time.monotonic() - t2 < 45 and set(offsets) != want:
        time.sleep(1)
        offsets = dead_letter_offsets(sh)
    F.check(set(offsets) == want and len(offsets) == len(want),
            f"handover: the transactional batch: {len(offsets)} dead letters, "
            f"{len(want - set(offsets))} missing (the first {sorted(want - set(offsets))[:3]}), "
            f"after {time.monotonic() - t2:.0f} s")
    dead = [e for e in sh.read("audit") if e.get("event") == "dead_lettered"]
    F.check(len(dead) == len(want) and all(e.get("code_sha256") is None for e in dead),
            f"handover: {len(dead)} dead_lettered events for {len(want)} records, hashes "
            f"{sorted({e.get('code_sha256') for e in dead}, key=str)[:3]} (none is known)")
    F.check(sh.stop("h2") == 0, "handover: h2 did not stop cleanly")
    print(f"{NAME}: handover: h1 killed past offset {seen}, h2 went on from "
          f"{first.group(1) if first else None}, {len(offsets)} dead letters", flush=True)


try:
    # The refusal first: a worker that cannot carry its maximum output says so at start.
    p = run(["worker", "-b", kt.BROKERS, "--limit-max", "output_bytes=4000000", *s.topic_args],
            timeout=60)
    F.check(p.returncode == 2 and "output_bytes=4000000" in p.stderr and "carries at most" in p.stderr,
            f"--limit-max above the record budget: exit {p.returncode}: {p.stderr[-300:]}")
    # and a --limit-default above it too: it used to be lowered to the budget without a word
    p = run(["worker", "-b", kt.BROKERS, "--limit-default", "output_bytes=4000000", *s.topic_args],
            timeout=60)
    F.check(p.returncode == 2 and "--limit-default output_bytes=4000000" in p.stderr
            and "carries at most" in p.stderr,
            f"--limit-default above the record budget: exit {p.returncode}: {p.stderr[-300:]}")
    s.produce_jobs(jobs + after, partition=0)
    bombs = []
    # As a client that does not check a job's limits sends them (codeq submit refuses code
    # over 262144 bytes before sending): a job record of its own, zstd-compressed.
    from confluent_kafka import Producer
    bp = Producer({"bootstrap.servers": kt.BROKERS, "compression.type": "zstd",
                   "message.max.bytes": 250000000, "enable.idempotence": True})
    for mb in (60, 200):
        bid = f"bomb{mb}.py-{uuid.uuid4().hex[:12]}"
        bp.produce(sb.topics["jobs"], key=bid,
                   value=json.dumps({"id": bid, "code": "#" + "a" * (mb * 1000 * 1000) + "\n"}))
        F.check(bp.flush(120) == 0, f"the {mb} MB job was not delivered")
    produce_pair_batch(sb.topics["jobs"])
    sb.produce_jobs([{"id": "after-bombs", "code": "print('past the bombs')"}])
    sb.start("w3", "--slots", "1")
    s.start("w1", "--slots", "2")
    sf.produce_jobs(small_jobs)
    sf.start("w4", "--slots", "2")
    sd.produce_jobs([art])
    sd.start("w2", "--slots", "1", "--policy", "data")
    ids = [j["id"] for j in jobs + after]
    results = {}
    t0 = time.monotonic()
    while time.monotonic() - t0 < 150:
        results = {r["id"]: r for r in s.read("results") + sd.read("results") + sb.read("results")}
        if set(ids + ["artifact", "after-bombs"]) <= set(results):
            break
        time.sleep(2)
    missing = sorted(set(ids + ["artifact", "after-bombs"]) - set(results))
    F.check(not missing, f"jobs never answered: {missing}")
    logs = (s.logdir / "w1.log").read_text() + (sd.logdir / "w2.log").read_text()
    m = re.search(r"results fit in (\d+) bytes", logs)
    budget = int(m.group(1)) if m else 0
    F.check(budget > 900000, f"the worker logged no record budget: {logs[-500:]}")
    raw = []
    for t in (s.topics["results"], sd.topics["results"]):
        raw += subprocess.run(["kcat", "-b", kt.BROKERS, "-C", "-t", t, "-e", "-o", "beginning", "-q",
                               "-f", "%S\n", "-X", "isolation.level=read_committed"],
                              capture_output=True, text=True, timeout=60).stdout.split()
    F.check(raw and max(map(int, raw)) <= budget, f"result sizes {sorted(map(int, raw))[-3:]} above {budget}")
    for r in results.values():
        e = schema_errors(RESULT, r)
        F.check(not e, f"{r['id']}: result not schema-valid: {e[:2]}")

    def res(i):
        return results.get(i) or {}
    r = res("findings")
    F.check(r.get("status") == "rejected" and len(r.get("findings", [])) == 100 and
            r.get("findings_total") == 32000, f"findings: {r.get('status')} {len(r.get('findings', []))} "
            f"{r.get('findings_total')}")
    r = res("output")
    F.check(r.get("status") == "invalid" and "output_bytes" in r.get("message", ""), f"output: {r.get('status')} {r.get('message')}")
    r = res("streams")
    F.check(r.get("status") == "ok" and r.get("stdout_truncated") and r.get("stderr_truncated") and
            r.get("stdout_bytes") == 900000 and 0 < len(r.get("stdout", "")) < 900000,
            f"streams: {r.get('status')} {r.get('stdout_truncated')} {r.get('stderr_truncated')} "
            f"{len(r.get('stdout', ''))}")
    r = res("artifact")
    F.check(r.get("status") == "ok" and r.get("artifacts_truncated") is True and
            [a["path"] for a in r.get("artifacts") or []] == ["small.txt"],
            f"artifact: {r.get('status')} {r.get('message')} truncated {r.get('artifacts_truncated')} "
            f"{[a['path'] for a in r.get('artifacts') or []]}")
    r = res("reply")
    F.check(r.get("status") == "internal_error" and "could not be published" in r.get("message", ""),
            f"reply: {r.get('status')} {r.get('message')}")
    r = res("prefix")
    F.check(r.get("status") == "invalid" and "not allowed" in r.get("message", ""), f"prefix: {r.get('status')} {r.get('message')}")
    F.check(all(res(f"after-{i}").get("status") == "ok" for i in range(20)),
            "the jobs behind them were not all answered ok")
    hwm = [int(line.split()[1]) for line in open(f"/proc/{sb.workers['w3'].pid}/status")
           if line.startswith("VmHWM")]
    if os.environ.get("CODEQ_TEST_SANITIZER"):
        # ASan's shadow memory and quarantine make RSS no measure of what a record costs.
        print(f"{NAME}: NOT CHECKED under {os.environ['CODEQ_TEST_SANITIZER']}: w3 peak RSS "
              f"{hwm} kB (< 120 MB is checked in the normal build)", flush=True)
    else:
        F.check(hwm and hwm[0] < 120 * 1024, f"w3 peak RSS {hwm} kB, want < 120 MB")
    F.check(res("after-bombs").get("status") == "ok", f"after the bombs: {res('after-bombs')}")
    dlq = subprocess.run(["kcat", "-b", kt.BROKERS, "-C", "-t", sb.topics["dlq"], "-e", "-o", "beginning",
                          "-q", "-f", "%h\n"], capture_output=True, text=True, timeout=60).stdout
    F.check(dlq.count("codeq.error=codeq: worker: the record could not be consumed: Decompression") == 4 + MANY,
            f"dead letters of the bombs, the pair and the many: {dlq[:600]!r}")
    F.check(dlq.count("codeq.key.unavailable=true") == 4 + MANY and "codeq.key.absent" not in dlq
            and dlq.count("expands beyond receive.message.max.bytes, 34603008 bytes") == 4 + MANY,
            f"the undecodable records' dead letters: key not said unknown, or the cause not "
            f"given: {dlq[:600]!r}")
    F.check(dlq.count("codeq.error=codeq: worker: the record expands to 36000") == 1,
            f"dead letter of the gzip record: {dlq[-600:]!r}")
    offsets = [int(x) for x in re.findall(r"codeq\.source\.offset=(\d+)", dlq)]
    F.check(sorted(offsets) == list(range(5 + MANY)),
            f"dead letters' source offsets {sorted(offsets)[:8]}...{sorted(offsets)[-3:]} "
            f"({len(offsets)}), want 0-{4 + MANY}")
    lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), ids)
    F.check(not lost and not dup and not bad, f"lost {lost} dup {dup} audit {bad}")
    aborts = logs.count("(aborting)")
    F.check(aborts <= 3, f"{aborts} aborted transactions in the workers' logs")
    print(f"{NAME}: {len(results)} answered in {time.monotonic() - t0:.1f} s, budget {budget}, "
          f"largest result {max(map(int, raw)) if raw else 0} bytes, {aborts} aborts", flush=True)
    check_small()
    check_handover()
    F.check(s.stop("w1") == 0 and sd.stop("w2") == 0 and sb.stop("w3") == 0 and sf.stop("w4") == 0,
            "workers did not stop cleanly")
finally:
    for x in (s, sd, sb, sf, sh):
        x.kill_all()
F.finish(NAME)
