"""The worker's operator endpoint on a real broker (CODEQ_TEST_BROKERS): one worker with
--http on a free port; ok, rejected, invalid and dead-lettered jobs. Asserts: /metrics parses
with prometheus_client's text parser (the real one, python3-prometheus-client) and its
counters and histograms moved by what ran; /readyz is ready once assigned; /healthz is
healthy, turns unhealthy while the main loop is stalled on purpose (the documented test hook
CODEQ_TEST_STALL_FILE) and healthy again after, and while a commit is held in flight (the
test hook CODEQ_TEST_TXN_HOLD_MS, a second worker). Logs: every line of the worker's stderr is
a JSON object (time, level, event, message; job_id/topic/partition/offset on job lines);
--log-format text keeps the line for people; bad --log-format/--log-level values are refused.
A SIGTERM during start-up ends the worker with 0. Every wait is bounded."""
import json
import os
import pathlib
import re
import signal
import sys
import time
import urllib.error

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import kafka_test as kt  # noqa: E402
from codeq_test import Failures, free_port, http_get  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

NAME = "worker_ops"
F = Failures()
kt.require_broker(NAME)






def wait_for(what, cond, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if cond():
                return True
        except (urllib.error.URLError, ConnectionError):
            pass
        time.sleep(0.2)
    F.check(False, f"timed out ({timeout} s) waiting for {what}")
    return False


def scrape(base):
    """{sample name: {frozenset(labels): value}} from /metrics, through the real parser."""
    status, text = http_get(base + "/metrics")
    F.check(status == 200, f"/metrics answered {status}")
    samples = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            samples.setdefault(s.name, {})[frozenset(s.labels.items())] = s.value
    return samples


def value(m, name, **labels):
    return m.get(name, {}).get(frozenset(labels.items()), 0.0)


def catches_sigterm(pid):
    try:
        status = pathlib.Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    caught = int(re.search(r"^SigCgt:\s*([0-9a-f]+)", status, re.M).group(1), 16)
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def check_stop_during_startup(st):
    """A SIGTERM in the worker's start-up (zygotes, validator, self-check: about a second)
    is a stop like any other: exit 0, not a death by signal that an orchestrator reads as a
    crash. Sent as soon as the worker catches SIGTERM, which it does before that work."""
    w = st.start("w0")
    deadline = time.monotonic() + 10
    while not catches_sigterm(w.pid) and w.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    F.check(catches_sigterm(w.pid), "the worker catches SIGTERM at start")
    rc = st.stop("w0")
    F.check(rc == 0, f"worker SIGTERMed during start-up exits 0 (got {rc})")
    log = (st.logdir / "w0.log").read_text()
    F.check("stopped during start-up" in log and "worker_started" not in log,
            "the stop came during start-up and the worker said so")


def check_start_without_broker(st):
    """A worker whose brokers do not answer keeps starting (up to 5 min). Its probes answer from
    the start and say what it waits for: /readyz used to say "starting" alone, and its port
    opened only after the first 10 s of Kafka waits. A SIGTERM then ends it with 0."""
    port = free_port()
    log = open(st.logdir / "nobroker.log", "w")
    w = kt.subprocess.Popen([kt.BIN, "worker", "-b", "127.0.0.1:1", *st.topic_args, "--http",
                             f"127.0.0.1:{port}"], stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        first = None
        while first is None and time.monotonic() - t0 < 5:
            try:
                first = http_get(base + "/readyz")
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        F.check(first is not None and first[0] == 503 and "starting: reading the topics' "
                "configuration from 127.0.0.1:1" in first[1],
                f"no broker: /readyz in the first 5 s: {first}")
        seen = None
        while time.monotonic() - t0 < 45 and w.poll() is None:
            ready, health = http_get(base + "/readyz"), http_get(base + "/healthz")
            if "init transactions" in ready[1] and "brokers 127.0.0.1:1" in ready[1]:
                seen = (ready, health)
                break
            time.sleep(0.5)
        F.check(seen is not None and seen[0][0] == 503 and seen[1][0] == 200
                and seen[1][1].startswith("starting: codeq: worker: init transactions"),
                f"no broker: the probes never said what the start waits for: {seen}, "
                f"exit {w.poll()}")
        # the 5 min budget counts from the start: the topic reads' 10 s before the first
        # init_transactions were left out ("retried for 5 s" at 15 s)
        m = re.search(r"retried for (\d+) s of 300 s", seen[0][1]) if seen else None
        F.check(m is not None and int(m.group(1)) >= 10,
                f"no broker: the start's budget counted from its start: {seen and seen[0][1]!r}")
    finally:
        w.terminate()
        rc = w.wait(timeout=60)
    F.check(rc == 0, f"no broker: a SIGTERM while starting ends the worker with 0, got {rc}")


def check_http_port_in_use(st):
    """A --http port in use ends the start at once (exit 1: it cannot start, the setting is
    fine; it was 2, a bad setting's code) with the errno named; it used to be libmicrohttpd's
    "Failed to bind to port 0" first and a guess after."""
    import socket
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        so.listen(1)
        port = so.getsockname()[1]
        p = kt.subprocess.run([kt.BIN, "worker", "-b", "127.0.0.1:1", *st.topic_args, "--http",
                               f"127.0.0.1:{port}"], capture_output=True, text=True, timeout=60)
    F.check(p.returncode == 1 and f"codeq: worker: http: listen on 127.0.0.1:{port}: Address "
            "already in use" in p.stderr and "http_error" not in p.stderr,
            f"--http port in use: rc {p.returncode} {p.stderr[-400:]!r}")


def check_json_log(path):
    """Every line of the worker's stderr is one JSON object with the four fields; job lines name
    their job and record."""
    lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
    recs = []
    for ln in lines:
        try:
            recs.append(json.loads(ln))
        except ValueError:
            F.check(False, f"log line is not JSON: {ln[:200]}")
    F.check(len(recs) == len(lines) and len(recs) > 5, f"{len(recs)} JSON log lines")
    F.check(all({"time", "level", "event", "message"} <= r.keys() for r in recs),
            "every log line has time, level, event, message")
    done = [r for r in recs if r.get("event") == "job_finished"]
    F.check(len(done) == len(JOBS), f"{len(done)} job_finished lines for {len(JOBS)} jobs")
    F.check(all({"job_id", "topic", "partition", "offset"} <= r.keys() for r in done),
            "job_finished lines carry job_id, topic, partition, offset")
    F.check(any(r.get("job_id") == "ok-0" and r["message"] == "worker: job ok-0: ok" for r in done),
            "the message text is the text format's")
    dead = [r for r in recs if r.get("event") == "dead_lettered"]
    F.check(len(dead) == 1 and dead[0]["level"] == "warn" and "offset" in dead[0],
            f"one dead_lettered warn line with its offset: {dead}")
    F.check(any(r.get("event") == "rebalance" and "assigned partitions [" in r["message"]
                for r in recs), "assignment logged (substring greps still work)")
    # librdkafka's "no offset" (-1001) printed as an offset: "revoked partitions [0@-1001]"
    reb = [r["message"] for r in recs if r.get("event") == "rebalance"]
    F.check(any("revoked partitions [" in m for m in reb) and not [m for m in reb if "@-" in m],
            f"rebalance lines name no negative offset: {reb}")
    # libmicrohttpd warned on every start with --http when its logger was not its first option
    F.check(not [r for r in recs if r.get("event") == "http_error"],
            f"http_error lines: {[r['message'] for r in recs if r.get('event') == 'http_error']}")


def check_log_formats(st):
    """--log-format text keeps the line for people; a bad format or level is refused at start."""
    args = [kt.BIN, "worker", "-b", kt.BROKERS, *st.topic_args, "--limit-max",
            "output_bytes=4000000"]
    p = kt.subprocess.run(args + ["--log-format", "text"], capture_output=True, text=True,
                          timeout=60)
    line = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    F.check(p.returncode == 2 and re.match(r"^\d{4}-\d\d-\d\dT[\d:.]+Z codeq: --limit-max "
                                           r"output_bytes=4000000", line),
            f"text format: {p.returncode} {line!r}")
    p = kt.subprocess.run(args, capture_output=True, text=True, timeout=60)
    last = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "{}"
    rec = json.loads(last)
    F.check(p.returncode == 2 and rec.get("level") == "error" and
            rec.get("event") == "config_error" and "output_bytes=4000000" in rec.get("message", ""),
            f"json format, an error at start: {p.returncode} {last!r}")
    # librdkafka's own lines in the text format too, not in its raw %3|... form
    p = kt.subprocess.run([kt.BIN, "worker", "-b", "127.0.0.1:1", *st.topic_args, "--log-format",
                           "text", "--limit-max", "output_bytes=4000000"], capture_output=True,
                          text=True, timeout=60)
    lines = p.stderr.strip().splitlines()
    F.check(p.returncode == 2 and any(" codeq: kafka: " in ln for ln in lines)
            and not any(ln.startswith("%") for ln in lines),
            f"text format, librdkafka's lines: {p.returncode} {lines[:3]!r}")
    for flag, bad in (("--log-format", "xml"), ("--log-level", "loud")):
        p = kt.subprocess.run(args[:4] + [flag, bad], capture_output=True, text=True, timeout=60)
        F.check(p.returncode == 2 and f"{flag[2:]}={bad}" in p.stderr,
                f"{flag} {bad} refused naming it: {p.returncode} {p.stderr!r}")
    # CODEQ_KAFKA_DEBUG reaches librdkafka (passthrough), whose logs come out as JSON lines
    p = kt.subprocess.run(args + ["--log-level", "debug"], capture_output=True, text=True,
                          timeout=60, env=dict(os.environ, CODEQ_KAFKA_DEBUG="broker"))
    recs = [json.loads(ln) for ln in p.stderr.splitlines() if ln.strip()]
    F.check(any(r["event"] == "kafka_log" and r["level"] == "debug" and "BROKER" in r["message"]
                for r in recs),
            f"librdkafka debug logs from CODEQ_KAFKA_DEBUG: {p.stderr[-300:]!r}")
    p = kt.subprocess.run(args + ["--log-level", "error"], capture_output=True, text=True,
                          timeout=60)
    recs = [json.loads(ln) for ln in p.stderr.splitlines() if ln.strip()]
    F.check(p.returncode == 2 and recs and all(r["level"] == "error" for r in recs),
            f"--log-level error keeps only errors: {recs}")


JOBS = ([{"id": f"ok-{i}", "code": "print('hi')"} for i in range(4)] +
        [{"id": f"rej-{i}", "code": "import subprocess\nsubprocess.run(['id'])"}
         for i in range(3)] +
        [{"id": "inv-0"}])  # no code: invalid

st = kt.Setup(NAME, 2)
port = free_port()
base = f"http://127.0.0.1:{port}"
sh = kt.Setup(NAME + "-held", 1)


def check_commit_in_flight():
    """A commit the broker does not finish (its marker refused, say) leaves the loop turning and
    nothing aborted: /healthz fails once one has been in flight for --health-commit-ms. The
    test hook CODEQ_TEST_TXN_HOLD_MS holds the first transaction with results open for 6 s."""
    hport = free_port()
    hbase = f"http://127.0.0.1:{hport}"
    os.environ["CODEQ_TEST_TXN_HOLD_MS"] = "6000"
    try:
        sh.start("w2", "--http", f"127.0.0.1:{hport}", "--health-commit-ms", "1500")
    finally:
        del os.environ["CODEQ_TEST_TXN_HOLD_MS"]
    wait_for("/readyz 200 (held)", lambda: http_get(hbase + "/readyz")[0] == 200, 60)
    sh.produce_jobs([{"id": "held-0", "code": "print(1)"}])
    wait_for("/healthz 503 while a commit is held", lambda: http_get(hbase + "/healthz")[0] == 503, 30)
    code, body = http_get(hbase + "/healthz")
    F.check("a commit has been in flight for" in body, f"/healthz says why: {body.strip()}")
    F.check(value(scrape(hbase), "codeq_commit_in_flight_seconds") >= 1.5,
            "codeq_commit_in_flight_seconds shows the held commit")
    wait_for("/healthz 200 once the commit ends", lambda: http_get(hbase + "/healthz")[0] == 200, 30)
    F.check(value(scrape(hbase), "codeq_jobs_committed_total") == 1
            and value(scrape(hbase), "codeq_commit_in_flight_seconds") == 0,
            "the held job committed, no commit in flight")
    F.check(sh.stop("w2") == 0, "the held worker stops cleanly")


stall = st.logdir / "stall"
os.environ["CODEQ_TEST_STALL_FILE"] = str(stall)
try:
    check_stop_during_startup(st)
    check_start_without_broker(st)
    check_http_port_in_use(st)
    w = st.start("w1", "--http", f"127.0.0.1:{port}", "--health-stall-ms", "2000", "--slots", "2")
    wait_for("/readyz 200", lambda: http_get(base + "/readyz")[0] == 200, 60)
    F.check(http_get(base + "/healthz")[0] == 200, "/healthz healthy once running")
    F.check(http_get(base + "/nope")[0] == 404, "unknown path answers 404")
    before = scrape(base)
    F.check(value(before, "codeq_rebalances_total", kind="assign") >= 1,
            "an assignment was counted")

    st.produce_jobs(JOBS)
    kt.subprocess.run(["kcat", "-b", kt.BROKERS, "-P", "-t", st.topics["jobs"]],
                      input="this is not json\n", text=True, timeout=60, check=True)
    wait_for("every job committed",
             lambda: value(scrape(base), "codeq_jobs_committed_total") >= len(JOBS) + 1, 120)
    m = scrape(base)
    F.check(value(m, "codeq_jobs_total", status="ok") == 4, "4 ok jobs counted")
    F.check(value(m, "codeq_jobs_total", status="rejected") == 3, "3 rejected jobs counted")
    F.check(value(m, "codeq_jobs_total", status="invalid") == 1, "1 invalid job counted")
    F.check(value(m, "codeq_dead_letters_total") == 1, "1 dead letter counted")
    F.check(value(m, "codeq_validator_findings_total", rule="forbidden-import") >= 3 or
            sum(m.get("codeq_validator_findings_total", {}).values()) >= 3,
            f"validator findings counted: {m.get('codeq_validator_findings_total')}")
    F.check(value(m, "codeq_job_duration_seconds_count") == 8,
            f"duration histogram has the 8 jobs with a result: "
            f"{value(m, 'codeq_job_duration_seconds_count')}")
    F.check(value(m, "codeq_job_duration_seconds_bucket", le="+Inf") == 8,
            "duration +Inf bucket equals the count")
    F.check(value(m, "codeq_job_sandbox_overhead_seconds_count") == 4,
            "overhead histogram has the 4 jobs that ran a sandbox")
    F.check(value(m, "codeq_job_queue_wait_seconds_count") == 8, "queue-wait histogram moved")
    F.check(value(m, "codeq_transactions_committed_total") >
            value(before, "codeq_transactions_committed_total"), "commits counted")
    F.check(value(m, "codeq_slots_free") == 2 and value(m, "codeq_jobs_running") == 0,
            "idle: 2 slots free, nothing running")
    F.check(value(m, "codeq_zygote_starts_total") >= 1 or
            os.environ.get("CODEQ_TEST_ISOLATION") == "exec", "a zygote start was counted")
    # refreshed every second from the last fetch's high watermark: a worker that answered
    # everything within its first second has not refreshed it since its first fetch
    wait_for("lag of both partitions known",
             lambda: len(scrape(base).get("codeq_consumer_lag", {})) == 2, 15)
    wait_for("lag 0 on both partitions once all is committed",
             lambda: sorted(scrape(base).get("codeq_consumer_lag", {}).values()) == [0, 0], 15)
    for name in ("codeq_job_duration_seconds", "codeq_job_sandbox_overhead_seconds"):
        buckets = sorted(((float(dict(k)["le"]), v) for k, v in m[name + "_bucket"].items()))
        F.check(all(a[1] <= b[1] for a, b in zip(buckets, buckets[1:])),
                f"{name} buckets are cumulative")

    stall.touch()
    wait_for("/healthz 503 while the loop is stalled", lambda: http_get(base + "/healthz")[0] == 503,
             30)
    code, body = http_get(base + "/healthz")
    F.check("has not turned" in body, f"/healthz says why: {body.strip()}")
    stall.unlink()
    wait_for("/healthz 200 after the stall", lambda: http_get(base + "/healthz")[0] == 200, 30)

    F.check(st.stop("w1") == 0, "worker stops cleanly on SIGTERM")
    check_json_log(st.logdir / "w1.log")
    check_log_formats(st)
    check_commit_in_flight()
finally:
    if stall.exists():
        stall.unlink()
    st.kill_all()
    sh.kill_all()
F.finish(NAME)
