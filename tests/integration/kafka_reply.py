"""A reply_to topic the worker cannot write costs that job only, never the worker (issue 11).
On real brokers, each such job is answered internal_error on the results topic, naming the
topic and the broker's reason, the jobs after it are answered, and the worker keeps running:

  unknown   reply_to a topic that does not exist, the worker's producer not allowed to create
            topics (its default; the shared broker auto-creates): the topic stays absent. Before the metadata check in wrk_publish.c librdkafka held the
            record 30 s (topic.metadata.propagation.max.ms) and every commit of the worker
            waited with it: the whole group below must be answered within 20 s.
  deleted   reply_to a topic that answered a first job, then is deleted while more jobs name it
            (KRaft drops a deleted topic from the metadata at once: "marked for deletion" is
            "unknown" to clients).
  auto      a worker whose producer may create topics (-X allow.auto.create.topics=true), reply_to
            a topic not yet there: the broker creates it and the result is on it (the check
            does not refuse a topic the producer would create).
  small     reply_to a topic whose max.message.bytes (1024) is below the job's result: the
            worker reads the topic's limit (DescribeConfigs) and answers internal_error on the
            results topic without producing the record, so no transaction aborts. Before, each
            such job aborted the transaction holding every other finished job's result: a
            submitter sending one every 150 ms kept every transaction aborting, no result was
            committed and /healthz failed ("transactions aborted in a row").
  batched   results that each fit their topic but not together: a reply topic of
            max.message.bytes=8192 and 4.4 KB results, the worker's own four topics of 16384
            and 5.9 KB results. The broker's limit is a record batch's, and librdkafka batched
            up to 1 MB, so a transaction's results to one partition were refused together,
            the transaction aborted and each of those jobs answered internal_error. Now every
            one is answered ok, where it asked, with no abort. codeq submit's producer, six 5 KB
            jobs at once to that jobs topic, had them refused together the same way.
  stamp     reply_to a topic with message.timestamp.before.max.ms=0: refused up front like
            small. Produced to, the record is refused (INVALID_TIMESTAMP) and so is the abort
            marker the coordinator then writes to that partition: Kafka 4.1.2 leaves the
            transaction in PrepareAbort, and the worker's transactional.id never commits again
            (not even after a restart of the worker) until the broker restarts.
  acl       a second broker of this test only (scripts/kafka.sh on free ports, its own work
            dir, StandardAuthorizer, allow.everyone.if.no.acl.found so the worker's other
            topics and groups stay usable): one reply topic with WRITE denied to the worker's
            principal (User:ANONYMOUS, PLAINTEXT), the record refused at delivery; one with
            ALL denied, refused already when its metadata is asked.
Bounded to about 2 minutes."""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import uuid

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import SRC, Failures, free_port, http_get, run  # noqa: E402
import kafka_admin as ka  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "reply"
F = Failures()
kt.require_broker(NAME)
sfx = uuid.uuid4().hex[:8]
NO_CREATE = []  # the worker's default: its producer never creates topics


def make_topic(brokers, t, *config):
    """One-partition topic t (codeq topics makes four: t and three companions of it); config:
    NAME=VALUE topic settings for all four."""
    cfg = [a for c in config for a in ("-c", c)]
    p = run(["topics", "-b", brokers, "--partitions", "1", "--jobs-topic", t, "--results-topic",
             t + "-r", "--audit-topic", t + "-a", "--dlq-topic", t + "-d", *cfg], timeout=90)
    if p.returncode != 0:
        raise RuntimeError(f"codeq topics {t}: {p.stderr}")


def read_topic(brokers, t):
    p = subprocess.run(["kcat", "-b", brokers, "-C", "-t", t, "-e", "-o", "beginning", "-q",
                        "-X", "isolation.level=read_committed"], capture_output=True, text=True,
                       timeout=60)
    return [line for line in p.stdout.splitlines() if line.strip()]


def topic_exists(brokers, t):
    """From the list of all topics: metadata asked for one topic by name would create it."""
    p = subprocess.run(["kcat", "-b", brokers, "-L"], capture_output=True, text=True, timeout=30)
    return f'topic "{t}" with' in p.stdout


def wait_results(s, ids, limit):
    """{id: result} of ids and the seconds it took."""
    t0 = time.monotonic()
    return {r["id"]: r for r in s.wait_results(ids, limit)}, time.monotonic() - t0


def check_refused(res, jid, topic, reason):
    r = res.get(jid) or {}
    msg = r.get("message", "")
    F.check(r.get("status") == "internal_error" and topic in msg and reason in msg,
            f"{jid}: want internal_error naming {topic} and '{reason}': {r.get('status')} {msg!r}")




s = kt.Setup(NAME, 1)
sa = kt.Setup(NAME + "-auto", 1)
ss = kt.Setup(NAME + "-small", 1)
sb = kt.Setup(NAME + "-batched", 1, config=["max.message.bytes=16384"])
absent, gone, auto, small, stamp, pair = (f"codeq.reply.{k}-{sfx}" for k in
                                          ("absent", "gone", "auto", "small", "stamp", "pair"))
acl_env = None
try:
    # unknown + deleted, on the shared broker.
    make_topic(kt.BROKERS, gone)
    s.produce_jobs([{"id": "before", "code": "print(0)"},
                    {"id": "gone-0", "code": "print('to gone')", "reply_to": gone}])
    w1 = s.start("w1", "--slots", "1", *NO_CREATE)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and not read_topic(kt.BROKERS, gone):
        time.sleep(0.5)
    F.check(any('"id":"gone-0"' in x and '"status":"ok"' in x for x in read_topic(kt.BROKERS, gone)),
            f"gone-0 was not answered on {gone} before its deletion")
    ka.delete_topics(kt.BROKERS, [gone])
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30 and topic_exists(kt.BROKERS, gone):
        time.sleep(0.5)
    F.check(not topic_exists(kt.BROKERS, gone), f"{gone} still listed 30 s after its deletion")
    group = [{"id": "unknown", "code": "print(1)", "reply_to": absent},
             *[{"id": f"gone-{i}", "code": f"print({i})", "reply_to": gone} for i in (1, 2, 3)],
             *[{"id": f"after-{i}", "code": f"print({i})"} for i in range(10)]]
    s.produce_jobs(group)
    ids = ["before"] + [j["id"] for j in group]
    res, took = wait_results(s, ids, 90)
    F.check(set(ids) <= set(res), f"never answered: {sorted(set(ids) - set(res))}")
    F.check(took < 20, f"the group took {took:.1f} s (a 30 s hold would show here)")
    check_refused(res, "unknown", absent, "Unknown topic")
    F.check(not topic_exists(kt.BROKERS, absent), f"{absent} was created")
    for i in (1, 2, 3):
        check_refused(res, f"gone-{i}", gone, "Unknown topic")
    F.check(all((res.get(i) or {}).get("status") == "ok" for i in ["before"] + [f"after-{k}" for k in range(10)]),
            "the jobs around them were not all answered ok")
    F.check(w1.poll() is None, f"w1 exited ({w1.returncode})")
    lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), [i for i in ids if i != "gone-0"])
    F.check(not lost and not dup and not bad, f"lost {lost} dup {dup} audit {bad}")
    print(f"{NAME}: unknown + deleted: {len(ids)} answered in {took:.1f} s", flush=True)

    # small: a reply topic too small for the result is refused before producing: no abort.
    make_topic(kt.BROKERS, small, "max.message.bytes=1024")
    make_topic(kt.BROKERS, stamp, "message.timestamp.before.max.ms=0")
    hport = free_port()
    w4 = ss.start("w4", "--slots", "1", "--http", f"127.0.0.1:{hport}")
    jobs = []
    for i in range(6):
        jobs += [{"id": f"small-{i}", "code": "print('x' * 3000)", "reply_to": small},
                 {"id": f"fits-{i}", "code": f"print({i})"}]
    jobs += [{"id": "stamp", "code": "print(1)", "reply_to": stamp}, {"id": "fits-6", "code": "print(6)"}]
    for k in range(0, len(jobs), 2):  # paced, so that the pairs land in different transactions
        ss.produce_jobs(jobs[k:k + 2])
        time.sleep(0.15)
    res, took = wait_results(ss, [j["id"] for j in jobs], 60)
    for i in range(6):
        check_refused(res, f"small-{i}", small, "max.message.bytes")
    check_refused(res, "stamp", stamp, "message.timestamp.before.max.ms")
    F.check(all((res.get(f"fits-{i}") or {}).get("status") == "ok" for i in range(7)),
            "small: the jobs beside them were not all answered ok")
    # counted as answered: each refused one internal_error (they were counted ok, the status
    # their program ended with, so an alert on internal_error never fired for them)
    want = {'codeq_jobs_total{status="ok"} 7', 'codeq_jobs_total{status="internal_error"} 7'}
    deadline = time.monotonic() + 10
    while True:
        _, metrics = http_get(f"http://127.0.0.1:{hport}/metrics")
        counted = {ln for ln in metrics.splitlines()  # the statuses not seen are at 0
                   if ln.startswith("codeq_jobs_total{") and not ln.endswith("} 0")}
        if counted == want or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    F.check(counted == want, f"small: codeq_jobs_total {sorted(counted)}, want {sorted(want)}")
    aborted = [ln for ln in metrics.splitlines() if ln.startswith("codeq_transactions_aborted_total")]
    F.check(aborted == ["codeq_transactions_aborted_total 0"], f"small: transactions aborted: {aborted}")
    F.check(not read_topic(kt.BROKERS, small) and not read_topic(kt.BROKERS, stamp),
            f"something reached {small} or {stamp}")
    lost, dup, bad = kt.exactly_once(ss.read("results"), ss.read("audit"), [j["id"] for j in jobs])
    F.check(not lost and not dup and not bad, f"small: lost {lost} dup {dup} audit {bad}")
    F.check(w4.poll() is None and ss.stop("w4") == 0, "small: w4 did not stop cleanly")
    print(f"{NAME}: small: {len(jobs)} answered in {took:.1f} s", flush=True)

    # batched: each result fits its topic, several together do not.
    make_topic(kt.BROKERS, pair, "max.message.bytes=8192")
    hport = free_port()
    w5 = sb.start("w5", "--slots", "2", "--http", f"127.0.0.1:{hport}")
    jobs = [{"id": f"pair-{i}", "code": "print('y' * 3500)", "reply_to": pair} for i in range(8)]
    jobs += [{"id": f"own-{i}", "code": "print('z' * 5000)"} for i in range(12)]
    sb.produce_jobs(jobs)  # at once: they finish close together, several to a transaction
    own = [j["id"] for j in jobs if j["id"].startswith("own")]
    res, took = wait_results(sb, own, 90)
    F.check(all((res.get(i) or {}).get("stdout") == "z" * 5000 + "\n" for i in own),
            f"batched: own topics: {sorted((i, (res.get(i) or {}).get('status')) for i in own)}")
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and len(read_topic(kt.BROKERS, pair)) < 8:
        time.sleep(0.5)
    got = [json.loads(x) for x in read_topic(kt.BROKERS, pair)]
    F.check(sorted(r["id"] for r in got if r.get("stdout") == "y" * 3500 + "\n") ==
            sorted(f"pair-{i}" for i in range(8)),
            f"batched: on {pair}: {sorted((r.get('id'), r.get('status')) for r in got)}; on the "
            f"results topic: {sorted((i, r.get('status')) for i, r in res.items() if i.startswith('pair'))}")
    _, metrics = http_get(f"http://127.0.0.1:{hport}/metrics")
    aborted = [ln for ln in metrics.splitlines() if ln.startswith("codeq_transactions_aborted_total")]
    F.check(aborted == ["codeq_transactions_aborted_total 0"], f"batched: transactions aborted: {aborted}")
    # codeq submit, to the same 16384-byte jobs topic: six 5 KB programs sent at once.
    progs = []
    for i in range(6):
        f = sb.logdir / f"submit{i}.py"
        f.write_text(f"# {'c' * 5000}\nprint({i})\n")
        progs.append(str(f))
    p = run(["submit", "-b", kt.BROKERS, "--timeout", "60", *sb.topic_args, *progs], timeout=90)
    outs = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    F.check(p.returncode == 0 and sorted(r.get("stdout") for r in outs) == [f"{i}\n" for i in range(6)],
            f"batched: codeq submit: rc {p.returncode}, {[r.get('status') for r in outs]}, "
            f"{p.stderr[-300:]!r}")
    F.check(w5.poll() is None and sb.stop("w5") == 0, "batched: w5 did not stop cleanly")
    print(f"{NAME}: batched: {len(jobs)} answered in {took:.1f} s", flush=True)

    # auto: the producer may create topics, so an absent one is created, not refused.
    sa.produce_jobs([{"id": "auto", "code": "print('created')", "reply_to": auto}])
    sa.start("w2", "--slots", "1", "-X", "allow.auto.create.topics=true")
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and not any('"id":"auto"' in x for x in read_topic(kt.BROKERS, auto)):
        time.sleep(0.5)
    got = [x for x in read_topic(kt.BROKERS, auto) if '"id":"auto"' in x]
    F.check(len(got) == 1 and '"status":"ok"' in got[0], f"auto: on {auto}: {got}")
    F.check(not sa.read("results"), f"auto: something on the results topic: {sa.read('results')}")

    # acl: a second broker with an authorizer, for this test only.
    port, cport = free_port(), free_port()
    work = pathlib.Path(f"/tmp/codeq-kafka-{NAME}-{sfx}")
    work.mkdir()
    (work / "acl.properties").write_text(
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
        "allow.everyone.if.no.acl.found=true\n")
    acl_env = dict(os.environ, KAFKA_PORT=str(port), KAFKA_CONTROLLER_PORT=str(cport),
                   KAFKA_WORK=str(work), KAFKA_HEAP_OPTS="-Xms128m -Xmx256m",
                   KAFKA_EXTRA_PROPERTIES=str(work / "acl.properties"))
    t0 = time.monotonic()
    p = subprocess.run(["bash", str(SRC / "scripts" / "kafka.sh"), "start"], env=acl_env,
                       capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        raise RuntimeError(f"second broker: {p.stderr[-800:]}")
    b2 = p.stdout.split()[-1]
    print(f"{NAME}: second broker (StandardAuthorizer) at {b2}, ready in {time.monotonic() - t0:.1f} s",
          flush=True)
    sc = kt.Setup(NAME + "-acl", 1, brokers=b2)
    nowrite, noall = f"codeq.reply.nowrite-{sfx}", f"codeq.reply.noall-{sfx}"
    make_topic(b2, nowrite)
    make_topic(b2, noall)
    ka.create_acl(b2, nowrite, "User:ANONYMOUS", ka.OP_WRITE, ka.DENY)
    ka.create_acl(b2, noall, "User:ANONYMOUS", 2, ka.DENY)  # 2: ALL
    jobs = [{"id": "nowrite", "code": "print(1)", "reply_to": nowrite},
            {"id": "noall", "code": "print(2)", "reply_to": noall},
            *[{"id": f"acl-after-{i}", "code": f"print({i})"} for i in range(5)]]
    sc.produce_jobs(jobs)
    w3 = sc.start("w3", "--slots", "1")
    res, took = wait_results(sc, [j["id"] for j in jobs], 60)
    F.check(set(j["id"] for j in jobs) <= set(res), f"acl: never answered: {sorted(set(j['id'] for j in jobs) - set(res))}")
    check_refused(res, "nowrite", nowrite, "Topic authorization failed")
    check_refused(res, "noall", noall, "Topic authorization failed")
    F.check(all((res.get(f"acl-after-{i}") or {}).get("status") == "ok" for i in range(5)),
            "acl: the jobs after them were not all answered ok")
    F.check(w3.poll() is None, f"w3 exited ({w3.returncode})")
    F.check(not read_topic(b2, nowrite), f"something reached {nowrite}")
    print(f"{NAME}: acl: {len(jobs)} answered in {took:.1f} s", flush=True)
    F.check(s.stop("w1") == 0 and sa.stop("w2") == 0 and sc.stop("w3") == 0,
            "workers did not stop cleanly")
finally:
    for x in (s, sa, ss, sb):
        x.kill_all()
    if acl_env:
        if "sc" in dir():
            sc.kill_all()
        subprocess.run(["bash", str(SRC / "scripts" / "kafka.sh"), "stop"], env=acl_env,
                       capture_output=True, timeout=60)
        shutil.rmtree(acl_env["KAFKA_WORK"], ignore_errors=True)
F.finish(NAME)
