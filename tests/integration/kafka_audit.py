"""The audit trail proves itself (issue 15): on the real broker a worker runs jobs (ok, one
rejected, one invalid, one without an id, dead-lettered), is stopped and started again under the
same --instance-id, and then:
(its first transaction with results is held open past transaction.timeout.ms by the test hook
CODEQ_TEST_TXN_HOLD_MS, so the coordinator aborts it and its audit events are numbered again in
the next one; a reply topic too small for a result no longer aborts one, see kafka_reply)

  clean     `codeq audit --verify` passes: two chains (one per epoch), every seq from 0, the
            second epoch's first event names the first epoch's last hash (prev, prev_epoch)
  json      `codeq audit --json`: every committed event, each valid against
            schemas/audit.schema.json with its chain fields; --job ID: only that job's events;
            the readable form: one line per event, naming job, event and seq
  tampered  the trail copied record by record (same partitions, same order, plain producer)
            into fresh topics, once unchanged and once each with one event altered, one
            dropped, one reordered (two events of one chain swapped in one partition), one
            replayed (appended again to its partition): the copy passes; each tampered copy
            fails (exit 1) with a line naming TOPIC/PARTITION@OFFSET and the seq that breaks;
            --follow --verify stops on the gap too
  kills     two workers, one SIGKILLed twice and restarted: every chain verifies, each of the
            killed worker's new epochs names the one before
  errors    a missing topic and an unreachable broker: exit 3 with a message naming them
Bounded to about 5 minutes (about 45 s when nothing is wrong)."""
import datetime
import json
import os
import pathlib
import subprocess
import sys
import time
import uuid

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import AUDIT, Failures, run, schema_errors  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "audit"
F = Failures()
kt.require_broker(NAME)
PARTS = 2
C1_ID = "ctl\u009b31m"
HOLD_MS = 32000  # > transaction.timeout.ms 10 s + the broker's 10 s check interval (kafka_txn_timeout)
s = kt.Setup(NAME, PARTS)
t_start = time.monotonic()


def wait_results(n, limit=60):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        res = {r["id"]: r for r in s.read("results")}
        if len(res) >= n:
            return res
        time.sleep(0.5)
    return {r["id"]: r for r in s.read("results")}


def audit(topic, *args):
    return run(["audit", "-b", kt.BROKERS, "--audit-topic", topic, *args], timeout=120)


def one_run(jobs, expect, extra=()):
    s.start("w1", "--log-format", "text", *extra)
    s.produce_jobs(jobs)
    res = wait_results(expect)
    F.check(len(res) >= expect, f"{len(res)} of {expect} results")
    F.check(s.stop("w1") == 0, "worker w1 stopped cleanly")


try:
    # the first transaction with results is rolled back by the coordinator (held open past its
    # timeout): its audit events' numbers are given again in the next one
    jobs = [{"id": f"a{i}", "code": f"print({i})"} for i in range(6)]
    jobs += [{"id": "rej", "code": "import os\nos.system('true')"}, {"id": "inv", "code": 5},
             {"id": C1_ID, "code": "print(1)", "x\u009b2J": 1}]  # invalid: unknown field
    os.environ["CODEQ_TEST_TXN_HOLD_MS"] = str(HOLD_MS)
    try:
        one_run(jobs, len(jobs))
    finally:
        del os.environ["CODEQ_TEST_TXN_HOLD_MS"]
    log = (s.logdir / "w1.log").read_text()
    F.check("CODEQ_TEST_TXN_HOLD_MS: holding" in log and "the coordinator rolled it back" in log,
            "the first transaction was held open and rolled back by the coordinator")
    t_mid = int(time.time() * 1000)
    # a record without an id: dead-lettered, its audit event in the chain too
    subprocess.run(["kcat", "-b", kt.BROKERS, "-P", "-t", s.topics["jobs"]], input="not json\n",
                   text=True, timeout=30, check=True)
    one_run([{"id": f"b{i}", "code": f"print({i})"} for i in range(3)], len(jobs) + 3,
            ["--audit-code", "full"])
    topic = s.topics["audit"]

    # clean
    p = audit(topic, "--verify")
    F.check(p.returncode == 0 and "intact, 0 problems" in p.stdout and "in 2 chains" in p.stdout,
            f"clean trail verifies: rc {p.returncode}: {p.stdout[-500:]} {p.stderr[-300:]}")

    # json
    p = audit(topic, "--json")
    evs = [json.loads(line) for line in p.stdout.splitlines()]
    committed = s.read("audit")
    F.check(p.returncode == 0 and len(evs) == len(committed) and len(evs) >= 3 * 10 + 2,
            f"--json prints every committed event: {len(evs)} of {len(committed)}")
    bad = [(e.get("job_id"), schema_errors(AUDIT, e)) for e in evs if schema_errors(AUDIT, e)]
    F.check(not bad, f"every event valid against audit.schema.json: {bad[:2]}")
    F.check(all("chain" in e for e in evs), "every event carries chain fields")
    epochs = {}
    for e in evs:
        epochs.setdefault(e["chain"]["epoch"], []).append(e)
    F.check(len(epochs) == 2, f"two epochs: {list(epochs)}")
    if len(epochs) == 2:
        first, second = (sorted(v, key=lambda e: e["chain"]["seq"]) for _, v in sorted(epochs.items()))
        F.check([e["chain"]["seq"] for e in first] == list(range(len(first))),
                "the first epoch's seqs run from 0 without a gap")
        F.check(second[0]["chain"]["prev"] == first[-1]["chain"]["hash"] and
                second[0]["chain"]["prev_epoch"] == first[0]["chain"]["epoch"],
                f"the second epoch names the first's last hash: {second[0]['chain']}")
        F.check(first[0]["chain"]["prev"] is None and first[0]["chain"]["prev_epoch"] is None,
                "the first epoch names no predecessor")
        F.check(len({e["chain"]["writer"] for e in evs}) == 1, "one writer (the instance)")
    rec = [e for e in evs if e.get("job_id") == "b0" and e["event"] == "received"]
    F.check(rec and rec[0].get("code") == "print(0)", "--audit-code full keeps the code text")
    rec = [e for e in evs if e.get("job_id") == "a0" and e["event"] == "received"]
    F.check(rec and "code" not in rec[0] and len(rec[0].get("code_sha256", "")) == 64,
            "--audit-code hash (default) keeps only code_sha256")
    F.check(any(e["event"] == "dead_lettered" for e in evs), "the dead letter's event is chained")
    p = audit(topic, "--job", "rej")
    lines = p.stdout.splitlines()
    F.check(p.returncode == 0 and len(lines) == 2 and all(" rej " in x for x in lines) and
            " rejected " in lines[-1] and "status=rejected" in lines[-1] and " seq=" in lines[-1],
            f"--job rej: its two events, readable: {lines}")
    p = audit(topic, "--since", str(t_mid), "--json")
    late = [json.loads(x) for x in p.stdout.splitlines()]
    F.check(p.returncode == 0 and len(late) == 10 and {e["job_id"] for e in late} == {"b0", "b1", "b2", None},
            f"--since: the second run's events only: {[e.get('job_id') for e in late]}")
    # the same moment as an RFC 3339 time with an offset reads the same events
    at = datetime.datetime.fromtimestamp(t_mid / 1000, datetime.timezone(datetime.timedelta(hours=-7)))
    p = audit(topic, "--since", at.isoformat(timespec="milliseconds"), "--json")
    # the partitions interleave differently from one read to the next: compare as sets
    got = sorted(json.dumps(json.loads(x), sort_keys=True) for x in p.stdout.splitlines())
    same = got == sorted(json.dumps(e, sort_keys=True) for e in late)
    F.check(p.returncode == 0 and same, f"--since {at.isoformat(timespec='milliseconds')}: not the "
            f"events of --since {t_mid}: {p.returncode} {p.stdout[-300:]!r} {p.stderr[-300:]!r}")
    # --since is by the events' own time: a job's received and started events, committed with
    # its answer (a record timestamp after --since), were shown though stamped before it
    fin = [e for e in evs if e.get("job_id") == "b1" and e["event"] == "finished"]
    if fin:
        p = audit(topic, "--since", fin[0]["time"], "--job", "b1", "--json")
        got = [json.loads(x)["event"] for x in p.stdout.splitlines()]
        F.check(p.returncode == 0 and got == ["finished"],
                f"--since the finish of b1: its events stamped since, want [finished]: {got}")
    # --verify right after codeq topics: the new partitions answer NOT_LEADER for a moment,
    # which exited 3 ("cannot be read") in 2 of 4 fresh topics of an operator's trial
    fresh = []
    for i in range(3):
        name = f"audit-fresh-{uuid.uuid4().hex[:8]}"
        made = run(["topics", "-b", kt.BROKERS, "--jobs-topic", f"{name}.jobs", "--results-topic",
                    f"{name}.results", "--audit-topic", f"{name}.audit", "--dlq-topic",
                    f"{name}.dlq"], timeout=90)
        p = audit(f"{name}.audit", "--verify")
        fresh.append((made.returncode, p.returncode, p.stderr[-200:]))
    F.check(all(m == 0 and rc == 0 for m, rc, _ in fresh),
            f"--verify of topics just made: (topics rc, audit rc, stderr) {fresh}")
    # Unix ms past 2^63 saturated to the largest value (nothing shown, exit 0); refused now
    p = audit(topic, "--since", "99999999999999999999")
    F.check(p.returncode == 2 and "--since 99999999999999999999: expected" in p.stderr,
            f"--since out of range: rc {p.returncode} {p.stderr[-200:]!r}")
    p = audit(topic, "--since", str(t_mid), "--verify")
    F.check(p.returncode == 0 and "10 events in 1 chain: intact" in p.stdout,
            f"--since --verify: a chain read from its start: {p.stdout[-300:]}")
    # C1 controls (U+009B is CSI) in a job id: shown as '?' on the readable form; in a reason
    # that quotes the job's field name, escaped where the reason is made (wrk_decode.c)
    p = audit(topic, "--job", C1_ID)
    lines = p.stdout.splitlines()
    F.check(p.returncode == 0 and len(lines) == 2 and " invalid " in lines[-1] and
            not any(0x80 <= ord(ch) <= 0x9f for ch in p.stdout) and " ctl?31m " in lines[-1] and
            "unknown field 'x\\u009b2J'" in lines[-1],
            f"--job {C1_ID!r}: C1 controls shown as '?': {lines}")
    p = audit(topic, "--job", "no-such-job")
    F.check(p.returncode == 1 and not p.stdout and
            f"codeq: audit: no event of job no-such-job on {topic}" in p.stderr,
            f"--job with no event says so, exit 1 (it printed nothing, exit 0): rc "
            f"{p.returncode} {p.stderr[-200:]!r}")
    p = audit(topic, "--job", "a1", "--json")
    F.check([json.loads(x)["event"] for x in p.stdout.splitlines()] == ["received", "started", "finished"],
            f"--job a1 --json: {p.stdout[:300]}")

    # tampered copies: records per partition in offset order, as read_committed sees them
    kc = subprocess.run(["kcat", "-b", kt.BROKERS, "-C", "-t", topic, "-e", "-o", "beginning", "-q",
                         "-X", "isolation.level=read_committed", "-f", "%p\t%k\t%s\n"],
                        capture_output=True, text=True, timeout=60, check=True)
    parts = {p: [] for p in range(PARTS)}
    for line in kc.stdout.splitlines():
        part, key, val = line.split("\t", 2)
        parts[int(part)].append((key, val))

    def copy(label, change):
        recs = {p: list(v) for p, v in parts.items()}
        change(recs)
        t = f"{NAME}-{uuid.uuid4().hex[:8]}.{label}"
        q = run(["topics", "-b", kt.BROKERS, "--partitions", str(PARTS), "--jobs-topic", t + ".j",
                 "--results-topic", t + ".r", "--audit-topic", t, "--dlq-topic", t + ".d"], timeout=90)
        F.check(q.returncode == 0, f"codeq topics {t}: {q.stderr}")
        for part, items in recs.items():
            lines = "".join(f"{k}\t{v}\n" for k, v in items)
            subprocess.run(["kcat", "-b", kt.BROKERS, "-P", "-t", t, "-p", str(part), "-K", "\t",
                            "-X", "enable.idempotence=true"], input=lines, text=True, timeout=60,
                           check=True)
        p = audit(t, "--verify")
        print(f"{NAME}: {label}: rc {p.returncode}: " + " | ".join(p.stdout.splitlines()[:3]), flush=True)
        return t, p

    def seq(val):
        return json.loads(val)["chain"]["seq"]

    t, p = copy("copy", lambda r: None)
    F.check(p.returncode == 0 and "intact" in p.stdout, f"an exact copy verifies: {p.stdout[-300:]}")

    # the part with more records, and in it two neighbours of one chain
    big = max(parts, key=lambda k: len(parts[k]))
    i = next(i for i in range(1, len(parts[big]) - 1)
             if json.loads(parts[big][i][1])["chain"]["epoch"] == json.loads(parts[big][i + 1][1])["chain"]["epoch"])
    sq = seq(parts[big][i][1])

    def alter(r):
        k, v = r[big][i]
        e = json.loads(v)
        e["time"] = "2020-01-01T00:00:00.000Z"
        r[big][i] = (k, json.dumps(e, separators=(",", ":")))
    t, p = copy("altered", alter)
    F.check(p.returncode == 1 and f"{t}/{big}@{i}: " in p.stdout and f"seq {sq}: altered" in p.stdout,
            f"altered event at {big}@{i} seq {sq} named: {p.stdout[-600:]}")

    def drop(r):
        del r[big][i]
    t, p = copy("dropped", drop)
    F.check(p.returncode == 1 and f"dropped: seq {sq}..{sq} missing" in p.stdout,
            f"dropped seq {sq} named: {p.stdout[-600:]}")

    # --follow --verify stops at the first break, once it is up to date
    try:
        q = run(["audit", "-b", kt.BROKERS, "--audit-topic", t, "--follow", "--verify"], timeout=30)
        F.check(q.returncode == 1 and f"dropped: seq {sq}..{sq} missing" in q.stdout,
                f"--follow --verify names the gap: {q.returncode} {q.stdout[-300:]}")
    except subprocess.TimeoutExpired:
        F.check(False, "--follow --verify did not stop at the gap within 30 s")

    def reorder(r):
        r[big][i], r[big][i + 1] = r[big][i + 1], r[big][i]
    t, p = copy("reordered", reorder)
    F.check(p.returncode == 1 and f"{t}/{big}@{i + 1}: " in p.stdout and f"seq {sq}: out of order" in p.stdout,
            f"reorder at {big}@{i + 1} seq {sq} named: {p.stdout[-600:]}")

    def replay(r):
        r[big].append(r[big][i])
    t, p = copy("replayed", replay)
    n = len(parts[big])
    F.check(p.returncode == 1 and f"{t}/{big}@{n}: " in p.stdout and f"seq {sq}: replayed" in p.stdout
            and f"already read at {t}/{big}@{i}" in p.stdout,
            f"replay at {big}@{n} of seq {sq} named: {p.stdout[-600:]}")

    # kills: two workers on a trail of their own, one SIGKILLed twice mid-run and started
    # again under its instance id (its open transactions aborted, the other worker's open
    # while it resumes); every chain still verifies, and each new epoch names the one before
    k = kt.Setup(NAME + "-kill", 4)
    try:
        code = "import time\ntime.sleep(0.05)\nprint(1)"
        produced = 0

        def more(n):
            global produced
            k.produce_jobs([{"id": f"k{i}", "code": code} for i in range(produced, produced + n)])
            produced += n

        for wid in ("k1", "k2"):
            k.start(wid, "--log-format", "text", "--slots", "2")
        more(200)
        t0 = time.monotonic()
        kills = done = 0
        k1 = {}
        # jobs keep coming until k1 was killed twice, each time once its epoch had committed
        # events, and its third epoch has committed some too
        while time.monotonic() - t0 < 150:
            done = len({r["id"] for r in k.read("results")})
            k1 = {}
            for e in k.read("audit"):
                if e["chain"]["writer"].endswith("-k1"):
                    k1[e["chain"]["epoch"]] = k1.get(e["chain"]["epoch"], 0) + 1
            if len(k1) == kills + 1 and k1[max(k1)] >= 6:
                if kills == 2:
                    break
                k.kill9("k1")
                k.start("k1", "--log-format", "text", "--slots", "2")
                kills += 1
            if produced - done < 100:
                more(100)
            time.sleep(0.3)
        while time.monotonic() - t0 < 210 and done < produced:
            time.sleep(0.5)
            done = len({r["id"] for r in k.read("results")})
        F.check(kills == 2 and len(k1) == 3 and done == produced,
                f"kills: {kills} kills, k1 epochs {k1}, {done} of {produced} results")
        F.check(all(c == 0 for c in k.stop_all().values()), "kills: workers stopped cleanly")
        p = audit(k.topics["audit"], "--verify")
        print(f"{NAME}: kills: {p.stdout.strip().splitlines()[-1:]}", flush=True)
        F.check(p.returncode == 0 and "intact" in p.stdout, f"kills: trail verifies: {p.stdout[-600:]}")
        firsts = [e["chain"] for e in k.read("audit") if e["chain"]["seq"] == 0 and "-k1" in e["chain"]["writer"]]
        F.check(len(firsts) == 3 and sum(c["prev_epoch"] is not None for c in firsts) == 2,
                f"kills: k1 has 3 epochs, the last two naming their predecessor: {firsts}")
    finally:
        k.kill_all()

    # errors
    p = audit(f"{NAME}-missing-{uuid.uuid4().hex[:8]}")
    F.check(p.returncode == 3 and "does not exist" in p.stderr, f"missing topic: {p.returncode} {p.stderr[-300:]}")
    p = run(["audit", "-b", "127.0.0.1:1", "--audit-topic", topic], timeout=60)
    F.check(p.returncode == 3 and "cannot reach the broker at 127.0.0.1:1" in p.stderr,
            f"no broker: {p.returncode} {p.stderr[-300:]}")
finally:
    s.kill_all()
print(f"{NAME}: {time.monotonic() - t_start:.1f} s", flush=True)
F.finish(NAME)
