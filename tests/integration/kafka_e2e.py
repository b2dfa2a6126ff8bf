"""End to end on a real Kafka broker (CODEQ_TEST_BROKERS, started by scripts/kafka.sh).

Two workers in one group; 50 jobs submitted with `codeq submit`; plus one malformed record
(dead-lettered) and one job without code (answered `invalid`). Asserts: 50 results, one per
id, schema-valid, each with the expected status; both workers took part; every job's audit
trail is complete and schema-valid; SIGTERM stops workers cleanly; a worker started again in
the same group re-runs nothing (offsets were committed after the results were acknowledged).
Every wait is bounded; the test stops its workers itself."""
import base64
import collections
import json
import re
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import (AUDIT, BIN, RESULT, SRC, WORKER_ISOLATION_ARGS, Failures,  # noqa: E402
                        free_port, http_get, run, schema_errors)

F = Failures()
BROKERS = os.environ.get("CODEQ_TEST_BROKERS")
if not BROKERS:
    print("kafka_e2e: CODEQ_TEST_BROKERS is not set: start a broker with scripts/kafka.sh start "
          "(scripts/test.sh does); this test is never skipped")
    print("kafka_e2e: 0 passed, 1 failed")
    sys.exit(1)

sfx = uuid.uuid4().hex[:8]
T = {k: f"e2e-{sfx}.{k}" for k in ("jobs", "results", "audit", "dlq")}
TOPIC_ARGS = ["--jobs-topic", T["jobs"], "--results-topic", T["results"],
              "--audit-topic", T["audit"], "--dlq-topic", T["dlq"]]
GROUP = f"e2e-{sfx}"
LOGDIR = pathlib.Path(os.environ.get("CODEQ_TEST_LOGDIR", f"/tmp/codeq-e2e-{sfx}"))
LOGDIR.mkdir(parents=True, exist_ok=True)
print(f"kafka_e2e: broker {BROKERS}, topics e2e-{sfx}.*, logs in {LOGDIR}", flush=True)

CASES = SRC / "tests" / "cases"
MIX = {  # file -> expected status
    "ok_hello.py": "ok", "ok_mentions.py": "ok", "error_exception.py": "error",
    "rejected_subprocess.py": "rejected", "rejected_exec.py": "rejected",
    "signal_abort.py": "rejected",  # `import os` is outside the strict policy workers run by default
    "ok_utf8.py": "ok",  # its output holds a NUL character: submit must still read its result
}


def kcat(*args, inp=None, timeout=60):
    return subprocess.run(["kcat", "-b", BROKERS, *args], input=inp, capture_output=True,
                          timeout=timeout, text=True)


def read_topic(topic):
    p = kcat("-C", "-t", topic, "-e", "-o", "beginning", "-q", "-f", "%s\n",
             "-X", "isolation.level=read_committed")
    F.check(p.returncode == 0, f"kcat read {topic}: {p.stderr[-300:]}")
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


HEARTBEAT = LOGDIR / "w1.heartbeat"  # w1's --heartbeat-file (the Kubernetes liveness probe's)


def start_worker(name):
    log = open(LOGDIR / f"{name}.log", "a")
    beat = ["--heartbeat-file", str(HEARTBEAT)] if name == "w1" else []
    return subprocess.Popen([BIN, "worker", "-b", BROKERS, "-g", GROUP, "--worker-id", name,
                             "--instance-id", name, *WORKER_ISOLATION_ARGS, *TOPIC_ARGS, *beat],
                            stdout=log, stderr=subprocess.STDOUT)


def stop(proc, name, grace=30):
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
        F.check(False, f"{name} did not stop within {grace} s of SIGTERM")
    F.check(rc == 0, f"{name} exit code {rc} after SIGTERM")


p = run(["topics", "-b", BROKERS, "--partitions", "4", *TOPIC_ARGS], timeout=60)
if not F.check(p.returncode == 0, f"codeq topics: {p.stderr}"):
    F.finish("kafka_e2e")
# Run again, asking what the topics do not have: they are left as they are, and that is said
# (it used to exit 0 in silence); a setting the broker refuses is named in its words (it used
# to be "Broker: Configuration is invalid" alone), and the topic is not made.
p = run(["topics", "-b", BROKERS, "--partitions", "8", *TOPIC_ARGS], timeout=60)
F.check(p.returncode == 0 and p.stderr.count("exists with 4 partitions: left as it is; not "
                                              "changed to 8 partitions") == 4,
        f"codeq topics again with --partitions 8: rc {p.returncode} {p.stderr!r}")
p = run(["topics", "-b", BROKERS, *TOPIC_ARGS, "--jobs-topic", T["jobs"] + "-many",
         "--partitions", "200000"], timeout=60)  # librdkafka's own refusal (it crashed)
F.check(p.returncode == 1 and "num_partitions out of expected range" in p.stderr,
        f"codeq topics --partitions 200000: rc {p.returncode} {p.stderr[-300:]!r}")
bad_cfg = T["jobs"] + "-cfg"
p = run(["topics", "-b", BROKERS, *TOPIC_ARGS, "--jobs-topic", bad_cfg, "-c",
         "max.mesage.bytes=5"], timeout=60)
F.check(p.returncode == 1 and f"create {bad_cfg}" in p.stderr and "max.mesage.bytes" in p.stderr
        and "--config not applied" in p.stderr,
        f"codeq topics with a setting the broker refuses: rc {p.returncode} {p.stderr!r}")

workers = {n: start_worker(n) for n in ("w1", "w2")}


def holds_partitions(name):
    """Whether the worker's log shows a non-empty assignment (the group has settled on it)."""
    text = (LOGDIR / f"{name}.log").read_text(errors="replace")
    return re.search(r"assigned partitions \[\d", text) is not None


# Both workers must share the jobs: submit only once each holds partitions (a faster worker
# would otherwise finish all 50 before the second one joined).
t_join = time.monotonic()
while time.monotonic() - t_join < 60 and not all(holds_partitions(n) for n in workers):
    time.sleep(0.2)
F.check(all(holds_partitions(n) for n in workers), "both workers did not get partitions in 60 s")
try:
    # One timeout job (default 5 s wall) among 49 quick ones.
    files = [CASES / "timeout_sleep.py"] + [CASES / f for f in list(MIX) * 9][:49]
    want = collections.Counter(["timeout"] + [MIX[f.name] for f in files[1:]])
    # Malformed records go straight onto the jobs topic.
    bad_id = f"no-code-{sfx}"
    kcat("-P", "-t", T["jobs"], "-k", f"junk-{sfx}", "-H", f"trace-id=t-{sfx}",
         inp="this is not json\n")
    kcat("-P", "-t", T["jobs"], "-k", bad_id, inp=json.dumps({"id": bad_id, "limits": {}}) + "\n")
    # \u0000 is valid JSON: in stdin it is data and the job runs; in code it is answered invalid.
    nul_in_id, nul_code_id = f"nul-stdin-{sfx}", f"nul-code-{sfx}"
    kcat("-P", "-t", T["jobs"], "-k", nul_in_id, inp=json.dumps(
        {"id": nul_in_id, "code": "import sys\nprint(sys.stdin.read().count(chr(0)))",
         "stdin": "a\0b\0c"}) + "\n")
    kcat("-P", "-t", T["jobs"], "-k", nul_code_id,
         inp=json.dumps({"id": nul_code_id, "code": "print(1)\0import os"}) + "\n")
    late_id = f"late-{sfx}"
    kcat("-P", "-t", T["jobs"], "-k", late_id,
         inp=json.dumps({"id": late_id, "code": "print(1)", "deadline": "2020-01-01T00:00:00Z"}) + "\n")
    # A deadline with an offset (RFC 3339, as Python's isoformat() writes it); a file and a
    # file inside it, which staging cannot write both; files of 768 KiB that fill a 1 MiB tmpfs
    # once stored in whole pages beside main.py and the guard: invalid, not an internal error.
    late_offset_id, nested_id = f"late-offset-{sfx}", f"nested-files-{sfx}"
    full_id = f"full-tmpfs-{sfx}"
    # Limits written as numbers without a fraction (json.dumps(2.5 * 1000) is 2500.0) are
    # integers by the job schema: the job runs with them.
    real_id = f"real-limits-{sfx}"
    kcat("-P", "-t", T["jobs"], "-k", real_id, inp=json.dumps(
        {"id": real_id, "code": "print(1)", "limits": {"wall_ms": 2.5 * 1000, "cpu_ms": 1e3}}) + "\n")
    kcat("-P", "-t", T["jobs"], "-k", late_offset_id, inp=json.dumps(
        {"id": late_offset_id, "code": "print(1)", "deadline": "2020-01-01T05:30:00+05:30"}) + "\n")
    kcat("-P", "-t", T["jobs"], "-k", nested_id, inp=json.dumps(
        {"id": nested_id, "code": "print(1)", "files": [{"path": "d", "content": "1"},
                                                        {"path": "d/e", "content": "2"}]}) + "\n")
    kcat("-P", "-t", T["jobs"], "-k", full_id, inp=json.dumps(
        {"id": full_id, "code": "print(1)", "limits": {"tmpfs_mb": 1},
         "files": [{"path": f"f{i}", "content": "a" * (3 * 4096 + 1)} for i in range(64)]}) + "\n")
    # Valid JSON the worker's strict parser refuses (a key twice; values nested deeper than
    # 2,048 levels): read again for the id and answered invalid, where they were dead-lettered.
    twice_id, deep_id = f"key-twice-{sfx}", f"deep-{sfx}"
    kcat("-P", "-t", T["jobs"], "-k", twice_id,
         inp='{"id": "%s", "code": "print(1)", "metadata": {"k": 1, "k": 2}}\n' % twice_id)
    kcat("-P", "-t", T["jobs"], "-k", deep_id, inp='{"id": "%s", "code": "print(1)", "metadata": %s%s}\n'
         % (deep_id, "[" * 2100, "]" * 2100))
    t0 = time.monotonic()
    p = run(["submit", "-b", BROKERS, "--timeout", "180", *TOPIC_ARGS, *map(str, files)], timeout=240)
    elapsed = time.monotonic() - t0
    results = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    F.check(p.returncode == 0, f"codeq submit exit {p.returncode}: {p.stderr[-500:]}")
    F.check(len(results) == 50, f"submit printed {len(results)} results, want 50")
    ids = [r["id"] for r in results]
    F.check(len(set(ids)) == len(ids), "duplicate result ids from submit")
    for r in results:
        e = schema_errors(RESULT, r)
        F.check(not e, f"result {r.get('id')} not schema-valid: {e}")
    got = collections.Counter(r["status"] for r in results)
    F.check(got == want, f"statuses {dict(got)}, want {dict(want)}")
    by_worker = collections.Counter(r["worker"] for r in results)
    F.check(set(by_worker) == {"w1", "w2"}, f"results by worker {dict(by_worker)}: both must work")
    print(f"kafka_e2e: 50 jobs in {elapsed:.1f} s, statuses {dict(got)}, by worker {dict(by_worker)}",
          flush=True)

    # The results topic holds exactly one result per job, plus the `invalid` answer.
    all_results = read_topic(T["results"])
    counts = collections.Counter(r["id"] for r in all_results)
    dups = {i: n for i, n in counts.items() if n > 1}
    F.check(not dups, f"duplicate results on the topic: {dups}")
    F.check(set(ids) <= set(counts), "a submitted job's result is missing on the topic")
    inv = [r for r in all_results if r["id"] == bad_id]
    F.check(len(inv) == 1 and inv[0]["status"] == "invalid" and "code" in inv[0]["message"],
            f"job without code: {inv}")
    nul_in = [r for r in all_results if r["id"] == nul_in_id]
    F.check(len(nul_in) == 1 and nul_in[0]["status"] == "ok" and nul_in[0]["stdout"] == "2\n",
            f"job with NUL characters in its stdin: {nul_in}")
    nul_code = [r for r in all_results if r["id"] == nul_code_id]
    F.check(len(nul_code) == 1 and nul_code[0]["status"] == "invalid"
            and "NUL" in nul_code[0]["message"], f"job with a NUL character in its code: {nul_code}")
    late = [r for r in all_results if r["id"] == late_id]
    F.check(len(late) == 1 and late[0]["status"] == "expired" and late[0]["usage"] is None,
            f"job past its deadline: {late}")
    late_offset = [r for r in all_results if r["id"] == late_offset_id]
    F.check(len(late_offset) == 1 and late_offset[0]["status"] == "expired",
            f"job past a deadline given with an offset: {late_offset}")
    nested = [r for r in all_results if r["id"] == nested_id]
    F.check(len(nested) == 1 and nested[0]["status"] == "invalid"
            and "both a file and a directory" in nested[0]["message"],
            f"job with a file inside another file: {nested}")
    full = [r for r in all_results if r["id"] == full_id]
    F.check(len(full) == 1 and full[0]["status"] == "invalid"
            and "above limits.tmpfs_mb 1" in full[0]["message"],
            f"job whose files fill its tmpfs: {[(r['status'], r['message']) for r in full]}")
    real = [r for r in all_results if r["id"] == real_id]
    F.check(len(real) == 1 and real[0]["status"] == "ok" and real[0]["limits"]["wall_ms"] == 2500
            and real[0]["limits"]["cpu_ms"] == 1000,
            f"limits as 2500.0 and 1000.0: {[(r['status'], r['message'], r['limits']) for r in real]}")
    reread = {i: [(r["status"], r["message"]) for r in all_results if r["id"] == i]
              for i in (twice_id, deep_id)}
    F.check(len(reread[twice_id]) == 1 and reread[twice_id][0][0] == "invalid"
            and "has a key twice: '\"" in reread[twice_id][0][1]
            and "(line 1, column" in reread[twice_id][0][1]
            and len(reread[deep_id]) == 1 and reread[deep_id][0][0] == "invalid"
            and "deeper than 2048 levels" in reread[deep_id][0][1],
            f"valid JSON the strict parser refuses: {reread}")
    for r in inv + late + nul_in + nul_code + late_offset + nested + full + real:
        F.check(not schema_errors(RESULT, r), f"{r['id']} result not schema-valid")

    # The dead-letter topic holds the malformed record unchanged (value, key, its own header),
    # with the reason in a header of codeq's.
    p = kcat("-C", "-t", T["dlq"], "-e", "-o", "beginning", "-q", "-f", "%k|%s|%h\n")
    F.check(f"junk-{sfx}|this is not json|" in p.stdout and f"trace-id=t-{sfx}" in p.stdout
            and "codeq.error=job is not valid JSON" in p.stdout,
            f"dead-letter record (key|value|headers): {p.stdout!r}")

    # Every job has a complete, schema-valid audit trail.
    audit = read_topic(T["audit"])
    trail = collections.defaultdict(list)
    for ev in audit:
        e = schema_errors(AUDIT, ev)
        F.check(not e, f"audit event {ev.get('event')} for {ev.get('job_id')} not schema-valid: {e}")
        trail[ev["job_id"]].append(ev["event"])
    for r in results:
        want_ev = (["received", "rejected"] if r["status"] == "rejected"
                   else ["received", "started", "finished"])
        F.check(trail[r["id"]] == want_ev, f"audit trail of {r['id']}: {trail[r['id']]}, want {want_ev}")
        shas = {ev["code_sha256"] for ev in audit if ev["job_id"] == r["id"]}
        F.check(shas == {r["code_sha256"]}, f"audit sha256 of {r['id']} differs from the result's")
    F.check(trail[bad_id] == ["received", "invalid"], f"audit trail of {bad_id}: {trail[bad_id]}")
    F.check(trail[late_id] == ["received", "expired"], f"audit trail of {late_id}: {trail[late_id]}")
    F.check(trail[late_offset_id] == ["received", "expired"],
            f"audit trail of {late_offset_id}: {trail[late_offset_id]}")
    F.check(trail[nested_id] == ["received", "invalid"], f"audit trail of {nested_id}: {trail[nested_id]}")
    F.check(trail[full_id] == ["received", "invalid"], f"audit trail of {full_id}: {trail[full_id]}")
    for i in (twice_id, deep_id):
        F.check(trail[i] == ["received", "invalid"], f"audit trail of {i}: {trail[i]}")
    F.check(trail[real_id] == ["received", "started", "finished"],
            f"audit trail of {real_id}: {trail[real_id]}")
    F.check(trail[nul_in_id] == ["received", "started", "finished"],
            f"audit trail of {nul_in_id}: {trail[nul_in_id]}")
    F.check(trail[nul_code_id] == ["received", "invalid"],
            f"audit trail of {nul_code_id}: {trail[nul_code_id]}")
    F.check(trail[None] == ["dead_lettered"], f"dead-letter audit events: {trail[None]}")
    print(f"kafka_e2e: {len(audit)} audit events, {len(all_results)} results on the topic", flush=True)

    # codeq submit makes a job's id from its file's name: a name with a byte that is not UTF-8
    # and a newline still gives a valid id and an answer (it used to make no job at all).
    odd = pathlib.Path(os.fsdecode(os.path.join(os.fsencode(tempfile.mkdtemp()), b"odd\xff\nname.py")))
    odd.write_text("print('odd')\n")
    p = run(["submit", "-b", BROKERS, "--timeout", "60", *TOPIC_ARGS, str(odd)], timeout=90)
    got = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    F.check(p.returncode == 0 and len(got) == 1 and got[0]["status"] == "ok"
            and got[0]["id"].startswith("odd__name.py-") and got[0]["stdout"] == "odd\n",
            f"submit of a file whose name is not UTF-8: rc {p.returncode} {got} {p.stderr[-300:]!r}")
    shutil.rmtree(odd.parent, ignore_errors=True)

    # A misspelt jobs topic is refused before anything is sent: on this broker, which creates
    # topics on use, the first produce made the topic and the job waited for an answer that
    # could never come.
    typo = T["jobs"] + "-typo"
    p = run(["submit", "-b", BROKERS, "--timeout", "5", *TOPIC_ARGS, "--jobs-topic", typo,
             str(CASES / "ok_hello.py")], timeout=60)
    listed = subprocess.run(["kcat", "-b", BROKERS, "-L"], capture_output=True, text=True,
                            timeout=30).stdout
    created = f'topic "{typo}" with' in listed
    F.check(p.returncode != 0 and f"jobs topic {typo}" in p.stderr and "Unknown topic" in p.stderr
            and not created, f"submit to a misspelt jobs topic: rc {p.returncode} "
            f"{p.stderr[-300:]!r}, topic created: {created}")

    # Files that cannot all be sent send none. The checks before anything is sent: a program
    # over a job's 262144 bytes of code, a record over the jobs topic's max.message.bytes. A
    # record only the broker can judge (compressed) and refuses is named, and the jobs sent
    # before and after it are still sent and awaited. Before: the command stopped at the first
    # refusal (exit 1, naming no file), the job sent before it ran and its answer was never
    # read, and the producer was destroyed with what it had queued.
    tmpd = pathlib.Path(tempfile.mkdtemp())
    small, big, rnd = tmpd / "small.py", tmpd / "big.py", tmpd / "rnd.py"
    small.write_text("print('small')\n")
    big.write_text("#" + "a" * 300000 + "\nprint(1)\n")
    rnd.write_text("# " + base64.b64encode(os.urandom(70000)).decode() + "\nprint(1)\n")
    (tmpd / "in.txt").write_text("c" * 60000)
    tight = f"e2e-tight-{sfx}"
    p = run(["topics", "-b", BROKERS, *TOPIC_ARGS, "--jobs-topic", tight, "-c",
             "max.message.bytes=50000"], timeout=90)
    F.check(p.returncode == 0, f"codeq topics for a tight jobs topic: {p.stderr[-300:]!r}")
    tight_args = [*TOPIC_ARGS, "--jobs-topic", tight]

    def keys(topic):
        return kcat("-C", "-t", topic, "-e", "-o", "beginning", "-q", "-f", "%k\n").stdout.split()

    def sends_none(what, args, *want):
        """submit with args exits 2, says each of want, and sends nothing."""
        p = run(["submit", "-b", BROKERS, *args], timeout=60)
        F.check(p.returncode == 2 and all(w in p.stderr for w in want) and not keys(tight),
                f"{what}: rc {p.returncode} {p.stderr[-300:]!r}, sent {keys(tight)}")

    sends_none("submit with a program over a job's code limit",
               ["--timeout", "5", *tight_args, str(small), str(big)],
               "big.py: larger than 262144 bytes", "nothing was sent")
    sends_none("submit of a record over the jobs topic's limit",
               ["--timeout", "5", *tight_args, "--stdin", str(tmpd / "in.txt"), str(small)],
               f"the jobs topic {tight} takes records of up to 49872 (max.message.bytes 50000")
    # -t 1 leaves the limit's read no time of --timeout's: it has a budget of its own (it was
    # skipped, and the job that fitted was sent before the broker refused the other)
    sends_none("submit -t 1 of a record over the jobs topic's limit",
               ["--timeout", "1", *tight_args, str(small), str(rnd)],
               "rnd.py: its job is a record of", "nothing was sent")
    p = run(["submit", "-b", BROKERS, "--timeout", "3", *tight_args, "-X", "compression.type=gzip",
             str(small), str(rnd), str(small)], timeout=90)
    sent = keys(tight)
    F.check(p.returncode == 1 and re.search(r"rnd\.py \(job rnd\.py-\w+\): not sent: Broker: "
                                            r"Message size too large", p.stderr)
            and "2 jobs sent" in p.stderr and len(sent) == 2
            and all(k.startswith("small.py-") for k in sent)
            and p.stderr.count(": no result") == 2,
            f"submit of a compressed record the broker refuses: rc {p.returncode} "
            f"{p.stderr[-500:]!r}, sent {sent}")
    # Ctrl-C while submit waits lists the jobs sent without a result (it died at once, silent)
    sub = subprocess.Popen([BIN, "submit", "-b", BROKERS, "--timeout", "60", *tight_args,
                            str(small)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30 and len(keys(tight)) < 3:
        time.sleep(0.2)
    sub.send_signal(signal.SIGINT)
    out, err = sub.communicate(timeout=30)
    F.check(sub.returncode == 130 and re.search(r"small\.py-\w+: no result", err)
            and "interrupted; 1 job sent without a result" in err,
            f"submit interrupted: rc {sub.returncode} {err[-400:]!r}")
    # Ctrl-C during the set-up sends nothing: it was held until the set-up ended, then every
    # job was queued and the producer destroyed with them, "may have been sent"
    before = len(keys(tight))
    sub = subprocess.Popen([BIN, "submit", "-b", BROKERS, "--timeout", "60", *tight_args,
                            str(small), str(small)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "CODEQ_TEST_SUBMIT_HOLD_MS": "8000"})
    time.sleep(3)  # the set-up's reads are done well before; the hold keeps it open
    sub.send_signal(signal.SIGINT)
    out, err = sub.communicate(timeout=30)
    time.sleep(1)
    F.check(sub.returncode == 130 and "interrupted; nothing was sent" in err
            and "may have been sent" not in err and len(keys(tight)) == before,
            f"submit interrupted in its set-up: rc {sub.returncode} {err[-400:]!r}, "
            f"{len(keys(tight)) - before} jobs on the topic")
    # ... and a record the topic takes is sent, within 128 bytes of its limit (2048 bytes less
    # than the limit were kept for framing: jobs the topic takes were refused)
    near = tmpd / "near.txt"
    near.write_text("c" * 49600)
    before = len(keys(tight))
    p = run(["submit", "-b", BROKERS, "--timeout", "2", *tight_args, "--stdin", str(near),
             str(small)], timeout=60)
    F.check(p.returncode == 1 and "1 job sent" in p.stderr and len(keys(tight)) == before + 1,
            f"submit of a record near the topic's limit: rc {p.returncode} {p.stderr[-300:]!r}")
    shutil.rmtree(tmpd, ignore_errors=True)
    # A reply topic that is codeq's jobs topic is refused: the job itself was read back as its
    # "result" (printed with status (null), exit 0), and the worker's invalid was never seen.
    p = run(["submit", "-b", BROKERS, "--timeout", "5", *TOPIC_ARGS, "--reply-to", T["jobs"],
             str(CASES / "ok_hello.py")], timeout=60)
    F.check(p.returncode == 2 and "is codeq's jobs topic" in p.stderr and not p.stdout,
            f"submit --reply-to the jobs topic: rc {p.returncode} {p.stdout[-200:]!r} "
            f"{p.stderr[-300:]!r}")

    # --reply-to a topic the worker may not answer on: the worker answers invalid on the results
    # topic, and submit reads that too (it used to listen on the reply topic alone and wait out
    # its timeout). A reply topic that does not exist is refused before anything is sent, with
    # how to make one (it used to point at codeq topics, which makes codeq's own).
    t0 = time.monotonic()
    p = run(["submit", "-b", BROKERS, "--timeout", "60", *TOPIC_ARGS, "--reply-to", tight,
             str(CASES / "ok_hello.py")], timeout=90)
    took = time.monotonic() - t0
    got = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    F.check(p.returncode == 0 and len(got) == 1 and got[0]["status"] == "invalid"
            and "--reply-topic-prefix" in got[0]["message"] and took < 30,
            f"submit --reply-to a topic outside the reply prefix: rc {p.returncode} in "
            f"{took:.1f} s {got} {p.stderr[-300:]!r}")
    # codeq's own topics are refused before anything is sent (the jobs topic's above)
    p = run(["submit", "-b", BROKERS, "--timeout", "5", *TOPIC_ARGS, "--reply-to", T["dlq"],
             str(CASES / "ok_hello.py")], timeout=60)
    F.check(p.returncode == 2 and "is codeq's dead-letter topic" in p.stderr,
            f"submit --reply-to the dead-letter topic: rc {p.returncode} {p.stderr[-300:]!r}")
    # --reply-to the results topic itself: read once (a partition assigned twice is refused)
    p = run(["submit", "-b", BROKERS, "--timeout", "60", *TOPIC_ARGS, "--reply-to",
             T["results"], str(CASES / "ok_hello.py")], timeout=90)
    got = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    F.check(p.returncode == 0 and len(got) == 1 and got[0]["status"] == "ok",
            f"submit --reply-to the results topic: rc {p.returncode} {got} {p.stderr[-300:]!r}")
    p = run(["submit", "-b", BROKERS, "--timeout", "60", *TOPIC_ARGS, "--reply-to",
             f"codeq.reply.none-{sfx}", str(CASES / "ok_hello.py")], timeout=90)
    F.check(p.returncode == 1 and f"reply topic codeq.reply.none-{sfx}: Broker: Unknown topic"
            in p.stderr and "create it first" in p.stderr and "codeq topics" not in p.stderr,
            f"submit --reply-to a missing topic: rc {p.returncode} {p.stderr[-300:]!r}")

    # A worker whose results topic does not exist does not start (exit 1, naming it): it would
    # run jobs whose every commit aborts on the missing topic, every 200 ms, for good.
    p = run(["worker", "-b", BROKERS, "-g", f"e2e-nores-{sfx}", "--worker-id", "nores",
             *TOPIC_ARGS, "--results-topic", T["results"] + "-none"], timeout=120)
    F.check(p.returncode == 1 and f'topic {T["results"]}-none does not exist' in p.stderr + p.stdout,
            f"worker with a missing results topic: rc {p.returncode} {(p.stderr + p.stdout)[-300:]!r}")

    # A worker whose jobs topic does not exist starts and waits for partitions; /readyz says
    # why (it said only "waiting for the group's first assignment": the reason was in the log).
    port = free_port()
    nojobs = subprocess.Popen([BIN, "worker", "-b", BROKERS, "-g", f"e2e-nojobs-{sfx}",
                               "--worker-id", "nojobs", *WORKER_ISOLATION_ARGS, *TOPIC_ARGS,
                               "--jobs-topic", T["jobs"] + "-none", "--http", f"127.0.0.1:{port}"],
                              stdout=open(LOGDIR / "nojobs.log", "a"), stderr=subprocess.STDOUT)
    ready, t0 = (0, ""), time.monotonic()
    while time.monotonic() - t0 < 60 and nojobs.poll() is None and "does not exist" not in ready[1]:
        time.sleep(0.5)
        try:
            ready = http_get(f"http://127.0.0.1:{port}/readyz")
        except OSError as e:  # not listening yet
            ready = (0, str(e))
    F.check(ready[0] == 503 and f'the jobs topic {T["jobs"]}-none does not exist on the cluster'
            in ready[1], f"/readyz of a worker whose jobs topic does not exist: {ready}")
    # Its stop does not wait for an assignment that cannot come (it waited 15 s for one).
    t0 = time.monotonic()
    stop(nojobs, "nojobs")
    took = time.monotonic() - t0
    F.check(took < 8 and "no assignment (the jobs topic does not exist)"
            in (LOGDIR / "nojobs.log").read_text(),
            f"stop of a worker whose jobs topic does not exist took {took:.1f} s")

    # The heartbeat file is touched every 2 s while w1's loop turns, and removed when it stops.
    ages = []
    for _ in range(3):
        time.sleep(2.5)
        ages.append(time.time() - HEARTBEAT.stat().st_mtime if HEARTBEAT.exists() else None)
    F.check(all(a is not None and a < 4 for a in ages), f"heartbeat ages {ages}, want each < 4 s")
    for n, w in workers.items():
        stop(w, n)
    F.check(not HEARTBEAT.exists(), "heartbeat file left after the worker stopped")
    # Offsets were committed: a worker joining the same group finds nothing left to run.
    # all_results, the odd-named job's answer, the --reply-to outside the prefix's invalid and
    # the --reply-to results topic's answer
    before = len(read_topic(T["results"]))
    F.check(before == len(all_results) + 3, f"{before} results on the topic, want "
            f"{len(all_results) + 3}")
    w3 = start_worker("w3")
    time.sleep(8)
    stop(w3, "w3")
    after = len(read_topic(T["results"]))
    F.check(after == before, f"results grew from {before} to {after}: committed jobs ran again")
finally:
    for w in workers.values():
        if w.poll() is None:
            w.kill()
F.finish("kafka_e2e")
