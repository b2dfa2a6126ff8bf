"""A dead letter always fits (issue 11): on the real broker, with a dead-letter topic whose
max.message.bytes (100,000) is far below the jobs topic's (3,000,000), records without a usable
id are dead-lettered, cut to fit where they must, and the jobs behind them are answered.
Before the cut, the broker refused such a dead letter, its transaction aborted, and the worker
retried it forever, committing nothing more.

  big      a 1.5 MB value, a key and two headers: the value cut (its prefix kept),
           codeq.value.truncated, codeq.value.size and codeq.value.sha256 of the original;
           key and headers kept
  bigkey   a 60 kB key and a 60 kB value, too large together: the key cut to a quarter of
           the room (codeq.key.size / codeq.key.sha256), the value kept whole
  bighdr   a 120 kB header and a small one: the large one dropped (codeq.headers.dropped
           "1 of 2"), the small one and the value kept
  plain    a small record: unchanged, nothing said cut
  after    5 quick jobs behind them: all ok
Every dead letter is at most the topic's limit, keeps codeq.error and its source, and the
worker's log shows no aborted transaction.

  keyless  (a worker of its own, whose dead-letter topic has cleanup.policy=compact) a record
           "garbage" without a key between quick jobs. The broker refuses a record without a
           key on a compacted topic (INVALID_RECORD), and the worker only cut the next try
           smaller: it aborted about 5 transactions a second forever, and no job behind it was
           answered. Now the dead letter is keyed by where the record is (topic/0/offset),
           with codeq.key.absent, every job is answered, and no transaction aborts.

  givenup  (a worker of its own, with --http) its dead-letter topic's max.message.bytes
           lowered to 256 after the worker started (above a transaction marker's ~80 bytes:
           Kafka 4.1.2 cannot finish a transaction whose marker a partition refuses, see
           docs/security-model.md): a record "junk" (padded to 300 bytes: the full dead
           letter is then above the limit whatever the parser's words for it; the minimal
           one, with its hashes, is anyway) is refused as a full, a small and a
           minimal dead letter, and given up: the audit event dead_letter_refused
           says where the record stays, nothing is on the dead-letter topic, the jobs after it
           are answered, and /metrics counts it in codeq_dead_letters_given_up_total.
Bounded to about three minutes."""
import hashlib
import pathlib
import re
import subprocess
import sys
import time
import uuid

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures, free_port, http_get, run  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "dlq"
F = Failures()
kt.require_broker(NAME)
DLQ_MAX = 100000
s = kt.Setup(NAME, 1)
# The Setup's topics have the broker's default limit (1 MB): a jobs topic of 3 MB and a dead-
# letter topic of 100 kB of their own instead.
sfx = uuid.uuid4().hex[:8]
jobs_t, dlq_t = f"{NAME}-{sfx}.bigjobs", f"{NAME}-{sfx}.smalldlq"
for t, mx in ((jobs_t, 3000000), (dlq_t, DLQ_MAX)):
    p = run(["topics", "-b", kt.BROKERS, "--partitions", "1", "--config", f"max.message.bytes={mx}",
             "--jobs-topic", t, "--results-topic", s.topics["results"], "--audit-topic",
             s.topics["audit"], "--dlq-topic", t + ".unused"], timeout=90)
    F.check(p.returncode == 0, f"codeq topics {t}: {p.stderr}")
s.topics["jobs"], s.topics["dlq"] = jobs_t, dlq_t
s.topic_args = ["--jobs-topic", jobs_t, "--results-topic", s.topics["results"], "--audit-topic",
                s.topics["audit"], "--dlq-topic", dlq_t]
# keyless: a Setup of its own, its dead-letter topic compacted
sk = kt.Setup(NAME + "-keyless", 1)
compact_t = f"{NAME}-{sfx}.compactdlq"
p = run(["topics", "-b", kt.BROKERS, "--partitions", "1", "--config", "cleanup.policy=compact",
         "--jobs-topic", compact_t + ".unused", "--results-topic", sk.topics["results"],
         "--audit-topic", sk.topics["audit"], "--dlq-topic", compact_t], timeout=90)
F.check(p.returncode == 0, f"codeq topics {compact_t}: {p.stderr}")
sk.topics["dlq"] = compact_t
sk.topic_args[sk.topic_args.index("--dlq-topic") + 1] = compact_t
# givenup: a Setup of its own, its dead-letter topic's limit lowered once its worker is up
sg = kt.Setup(NAME + "-givenup", 1)
given_ids = [f"given-{i}" for i in range(4)]


def lower_dlq_limit(topic, limit):
    """max.message.bytes of topic set to limit (Kafka's AdminClient; the topic has no other
    setting of its own, which a non-incremental alter would reset)."""
    from confluent_kafka.admin import AdminClient, ConfigResource
    admin = AdminClient({"bootstrap.servers": kt.BROKERS})
    res = ConfigResource("topic", topic, set_config={"max.message.bytes": str(limit)})
    for f in admin.alter_configs([res]).values():
        f.result(timeout=30)


def check_given_up(port):
    t1 = time.monotonic()
    sg.produce_jobs([{"id": i, "code": "print(1)"} for i in given_ids[:2]])
    res = {}
    while time.monotonic() - t1 < 45 and set(res) < set(given_ids[:2]):
        res = {r["id"]: r for r in sg.read_unless_held("results")}
        time.sleep(0.5)
    lower_dlq_limit(sg.topics["dlq"], 256)
    time.sleep(3)  # the broker's metadata carries the new limit to its partition's log
    p = subprocess.run(["kcat", "-b", kt.BROKERS, "-P", "-t", sg.topics["jobs"], "-k", "k-junk"],
                       input="junk" + " " * 300 + "\n", capture_output=True, text=True, timeout=60)
    F.check(p.returncode == 0, f"kcat produce junk: {p.stderr}")
    sg.produce_jobs([{"id": i, "code": "print(1)"} for i in given_ids[2:]])
    ev = []
    while time.monotonic() - t1 < 90:
        res = {r["id"]: r for r in sg.read_unless_held("results")}
        ev = [e for e in sg.read_unless_held("audit") if e.get("job_id") is None]
        if set(given_ids) <= set(res) and ev:
            break
        time.sleep(1)
    F.check(all((res.get(i) or {}).get("status") == "ok" for i in given_ids),
            f"givenup: the jobs around it: {[(i, (res.get(i) or {}).get('status')) for i in given_ids]}")
    F.check(len(ev) == 1 and ev[0]["event"] == "dead_letter_refused" and ev[0]["source"]["offset"] == 2
            and f"the record stays on {sg.topics['jobs']} [0] at offset 2" in ev[0]["reason"],
            f"givenup: audit events without a job id {ev}")
    out = subprocess.run(["kcat", "-b", kt.BROKERS, "-C", "-t", sg.topics["dlq"], "-e", "-o", "beginning",
                          "-q", "-X", "isolation.level=read_committed"],
                         capture_output=True, text=True, timeout=30).stdout
    F.check(out == "", f"givenup: the dead-letter topic holds {out[:200]!r}")
    status, body = http_get(f"http://127.0.0.1:{port}/metrics")
    F.check(status == 200 and "\ncodeq_dead_letters_given_up_total 1\n" in body
            and "\ncodeq_dead_letters_total 1\n" in body,
            f"givenup: /metrics {status}: {[ln for ln in body.splitlines() if 'dead_letters' in ln]}")
    print(f"{NAME}: givenup: {len(res)} jobs, 1 dead letter given up in {time.monotonic() - t1:.1f} s",
          flush=True)


def produce(key, value, headers):
    args = ["kcat", "-b", kt.BROKERS, "-P", "-t", jobs_t, "-k", key, "-X", "message.max.bytes=3100000"]
    for h in headers:
        args += ["-H", h]
    p = subprocess.run(args, input=value + "\n", capture_output=True, text=True, timeout=60)
    F.check(p.returncode == 0, f"kcat produce {key[:20]}: {p.stderr}")


big_v = "B" * 1500000
big_k = "K" * 60000
produce("k-big", big_v, ["h1=one", "h2=two"])
produce(big_k, "V" * 60000, ["hk=x"])
produce("k-bighdr", "W" * 1000, ["huge=" + "H" * 120000, "small=s"])
produce("k-plain", "not json", ["h=v"])
s.produce_jobs([{"id": f"after-{i}", "code": f"print({i})"} for i in range(5)])
keyless_ids = [f"keyless-{i}" for i in range(6)]
sk.produce_jobs([{"id": i, "code": "print(1)"} for i in keyless_ids[:3]])
p = subprocess.run(["kcat", "-b", kt.BROKERS, "-P", "-t", sk.topics["jobs"]], input="garbage\n",
                   capture_output=True, text=True, timeout=60)  # no -k: a record without a key
F.check(p.returncode == 0, f"kcat produce garbage: {p.stderr}")
sk.produce_jobs([{"id": i, "code": "print(1)"} for i in keyless_ids[3:]])


def check_keyless():
    t1, res = time.monotonic(), {}
    while time.monotonic() - t1 < 45:
        res = {r["id"]: r for r in sk.read_unless_held("results")}
        if set(keyless_ids) <= set(res):
            break
        time.sleep(1)
    F.check(all((res.get(i) or {}).get("status") == "ok" for i in keyless_ids),
            f"keyless: the jobs around it: {[(i, (res.get(i) or {}).get('status')) for i in keyless_ids]}")
    try:
        out = subprocess.run(["kcat", "-b", kt.BROKERS, "-C", "-t", compact_t, "-e", "-o", "beginning",
                              "-q", "-X", "isolation.level=read_committed", "-f", "%k\t%h\t%s\n"],
                             capture_output=True, text=True, timeout=15).stdout
    except subprocess.TimeoutExpired:
        out = ""
    dl = [line.split("\t") for line in out.splitlines() if line]
    want = f"{sk.topics['jobs']}/0/3"  # three jobs before it
    F.check(len(dl) == 1 and dl[0][0] == want and dl[0][2] == "garbage" and
            "codeq.key.absent=true" in dl[0][1] and "codeq.error=" in dl[0][1],
            f"keyless: dead letters {dl}, want one keyed {want}")
    ev = [e for e in sk.read_unless_held("audit") if e.get("event") == "dead_lettered"]
    F.check(len(ev) == 1 and ev[0]["source"]["offset"] == 3, f"keyless: dead_lettered events {ev}")
    log = (sk.logdir / "w2.log").read_text()
    F.check(log.count("(aborting)") == 0, f"keyless: {log.count('(aborting)')} aborted transactions")
    print(f"{NAME}: keyless: {len(res)} jobs and {len(dl)} dead letter in "
          f"{time.monotonic() - t1:.1f} s", flush=True)


try:
    w = s.start("w1", "--slots", "1")
    sk.start("w2", "--slots", "1")
    given_port = free_port()
    sg.start("w3", "--slots", "1", "--http", f"127.0.0.1:{given_port}")
    ids = [f"after-{i}" for i in range(5)]
    t0 = time.monotonic()
    res, dl = {}, []
    while time.monotonic() - t0 < 60:
        res = {r["id"]: r for r in s.read("results")}
        p = subprocess.run(["kcat", "-b", kt.BROKERS, "-C", "-t", dlq_t, "-e", "-o", "beginning", "-q",
                            "-X", "isolation.level=read_committed", "-f", "%k\t%h\t%s\n"],
                           capture_output=True, text=True, timeout=60)
        dl = [line.split("\t") for line in p.stdout.splitlines() if line]
        if set(ids) <= set(res) and len(dl) >= 4:
            break
        time.sleep(1)
    F.check(len(dl) == 4, f"{len(dl)} dead letters, want 4")
    F.check(all((res.get(i) or {}).get("status") == "ok" for i in ids),
            f"the jobs behind them: {[(i, (res.get(i) or {}).get('status')) for i in ids]}")
    by = {}
    for k, h, v in dl:
        hd = dict(x.split("=", 1) for x in re.split(r",(?=[\w.]+=)", h)) if h else {}  # kcat: a=1,b=2
        F.check(len(k) + len(v) + len(h) <= DLQ_MAX, f"dead letter of {len(k) + len(v) + len(h)} bytes")
        F.check("codeq.error" in hd and hd.get("codeq.source.topic") == jobs_t,
                f"dead letter without its error or source: {list(hd)}")
        by[k if not k.startswith("KKK") else "bigkey"] = (hd, v, k)
    hd, v, _ = by.get("k-big", ({}, "", ""))
    F.check(hd.get("codeq.value.truncated") == "true" and hd.get("codeq.value.size") == "1500000" and
            hd.get("codeq.value.sha256") == hashlib.sha256(big_v.encode()).hexdigest() and
            hd.get("h1") == "one" and hd.get("h2") == "two" and 50000 < len(v) < DLQ_MAX and
            big_v.startswith(v), f"big: {sorted(hd)} value {len(v)}")
    hd, v, k = by.get("bigkey", ({}, "", ""))
    F.check(hd.get("codeq.key.truncated") == "true" and hd.get("codeq.key.size") == "60000" and
            hd.get("codeq.key.sha256") == hashlib.sha256(big_k.encode()).hexdigest() and
            0 < len(k) < 30000 and v == "V" * 60000 and hd.get("hk") == "x" and
            "codeq.value.truncated" not in hd, f"bigkey: {sorted(hd)} key {len(k)} value {len(v)}")
    hd, v, _ = by.get("k-bighdr", ({}, "", ""))
    F.check("huge" not in hd and hd.get("small") == "s" and hd.get("codeq.headers.dropped") == "1 of 2" and
            v == "W" * 1000, f"bighdr: {sorted(hd)} value {len(v)}")
    hd, v, _ = by.get("k-plain", ({}, "", ""))
    F.check(v == "not json" and hd.get("h") == "v" and not any("truncated" in x or "dropped" in x for x in hd),
            f"plain: {sorted(hd)} {v!r}")
    log = (s.logdir / "w1.log").read_text()
    F.check(log.count("(aborting)") == 0, f"{log.count('(aborting)')} aborted transactions")
    F.check(w.poll() is None, f"the worker exited ({w.returncode})")
    print(f"{NAME}: {len(dl)} dead letters and {len(ids)} jobs in {time.monotonic() - t0:.1f} s", flush=True)
    check_keyless()
    check_given_up(given_port)
    F.check(s.stop("w1") == 0 and sk.stop("w2") == 0 and sg.stop("w3") == 0,
            "the workers did not stop cleanly")
finally:
    s.kill_all()
    sk.kill_all()
    sg.kill_all()
F.finish(NAME)
