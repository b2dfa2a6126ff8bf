"""Every stop has a bound, whatever it waits on (the CI of 3476476: a worker SIGTERMed with the
broker down had not ended after 65 s). On the real broker, workers on their own topics and groups:

  wedged     started with the test hook CODEQ_TEST_STOP_WEDGE naming one step of the stop, which
             then never ends, as a librdkafka call that never returns would: the final commit,
             the consumer's close, the producer's close. Each answers its jobs, gets SIGTERM and
             must end with exit 3 within --grace-ms + 25 s, its log naming the step it waited
             on, its heartbeat file removed.
  clean      the same without the hook: exit 0, well within the bound.
  drain      a worker with --drain-ms 60000 and 4 slots, a 40 s, a 15 s and a quick job on
             each of its two partitions; a second worker joins, the first drains the
             partition it gives up: the 15 s jobs are answered inside the drain, the kept
             partition's quick job runs in the slot its 15 s job freed, /healthz stays 200.
             It is SIGTERMed then: the drain ends with the grace period, exit 0 within grace
             + 10 s.
  drain-stop a worker with 2 slots, a 25 s job and a quick one on each of its two partitions;
             a second worker joins and the first is SIGTERMed while it drains the partition it
             gives up. The slot the kept partition's 25 s job frees must take nothing: the
             quick jobs are answered by the second worker. (A drain entered from the loop's
             poll returned to the loop's fill, which started the kept partition's quick job
             after the stop had been asked for.)
  start-up   a worker whose broker address has no broker, SIGTERMed while it retries
             init_transactions: it must end within 10 s, exit 0, saying it stopped.
  group      a worker in a process group of its own, a 1 s and a 6 s job running, SIGTERM to the
             whole group (a shell's kill -- -PGID, timeout(1)): the jobs must finish ok and the
             worker exit 0; the short job's answer is committed (and counted) while the long
             one still runs, and /healthz and the heartbeat file say the worker is alive. The zygotes were in the worker's group and died at once: both jobs were
             answered internal_error ("zygote died during the job") and the worker exited."""
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import (AUDIT, BIN, WORKER_ISOLATION_ARGS, Failures, free_port, http_get,  # noqa: E402
                        schema_errors)
import kafka_test as kt  # noqa: E402

NAME = "stop"
GRACE_MS = 2000
BOUND_S = GRACE_MS / 1000 + 25
SLACK_S = 5  # the test's own polling and a loaded machine's scheduling
STEPS = {"final-commit": "the final commit", "consumer-close": "the consumer's close",
         "producer-close": "the producer's close", "clean": None}
F = Failures()
kt.require_broker(NAME)


def wait_exit(p, seconds):  # (exit code or None, seconds waited)
    t0 = time.monotonic()
    while p.poll() is None and time.monotonic() - t0 < seconds:
        time.sleep(0.1)
    return p.poll(), time.monotonic() - t0


def start_up_case():
    """SIGTERM while init_transactions retries against a port where nothing listens."""
    logdir = pathlib.Path(os.environ.get("CODEQ_TEST_LOGDIR", "/tmp"))
    log_path = logdir / f"codeq-{NAME}-startup-{os.getpid()}.log"
    with open(log_path, "w") as log:
        p = subprocess.Popen([BIN, "worker", "-b", f"127.0.0.1:{free_port()}", "-g", f"{NAME}-startup",
                              "--instance-id", "w1", "--grace-ms", str(GRACE_MS), *WORKER_ISOLATION_ARGS],
                             stdout=log, stderr=subprocess.STDOUT)
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 90 and p.poll() is None and \
                "init_transactions_retry" not in log_path.read_text(errors="replace"):
            time.sleep(0.2)
        seen = time.monotonic() - t0
        retrying = "init_transactions_retry" in log_path.read_text(errors="replace")
        F.check(retrying, f"start-up: the worker never said it retries init_transactions ({log_path})")
        p.send_signal(15)
        rc, took = wait_exit(p, 40)
        text = log_path.read_text(errors="replace")
        print(f"{NAME}: start-up: retrying after {seen:.1f} s; "
              f"SIGTERM: exit {rc} after {took:.1f} s", flush=True)
        F.check(rc == 0 and took <= 10, f"start-up: SIGTERM ended the worker after {took:.1f} s "
                f"with exit {rc}; bound 10 s, exit 0 ({log_path})")
        F.check("stopped during start-up" in text, "start-up: the log does not say it stopped")
    finally:
        if p.poll() is None:
            kt.dump_threads(p.pid, f"{NAME}: start-up worker still running")
            p.kill()
            p.wait()


def group_case():
    """SIGTERM to the worker's process group: only the worker acts on it."""
    s = setups["group"] = kt.Setup(f"{NAME}-group", 2)
    port, beat = free_port(), s.logdir / "heartbeat"
    metrics = f"http://127.0.0.1:{port}/metrics"
    with open(s.logdir / "w1.log", "w") as log:
        w = subprocess.Popen([BIN, "worker", "-b", s.brokers, "-g", s.group, "--instance-id", "w1",
                              "--worker-id", "w1", "--slots", "2", "--grace-ms", "20000",
                              "--http", f"127.0.0.1:{port}", "--health-stall-ms", "1000",
                              "--heartbeat-file", str(beat),
                              *WORKER_ISOLATION_ARGS, *s.topic_args],
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        ids = ["group-0", "group-1"]
        s.produce_jobs([{"id": i, "code": f"import time\ntime.sleep({secs})\nprint('done')",
                         "limits": {"wall_ms": 10000}} for i, secs in zip(ids, (1, 6))])
        t0 = time.monotonic()
        while time.monotonic() - t0 < 60 and running(metrics) < 2 and w.poll() is None:
            time.sleep(0.1)
        F.check(running(metrics) == 2, "group: the two jobs never ran at once")
        os.killpg(w.pid, signal.SIGTERM)
        # The 1 s job's answer is committed while the 6 s one still runs, not at the final
        # commit (before: readable only after the last job ended, and never counted in the
        # metrics a scraper could see).
        t1, early, counted = time.monotonic(), [], -1
        while time.monotonic() - t1 < 5 and w.poll() is None and not early:
            early = [r for r in s.read("results") if r["id"] == ids[0]]
            time.sleep(0.2)
        if early and w.poll() is None:
            counted = jobs_total(metrics)
            time.sleep(max(0.0, 3.5 - (time.monotonic() - t1)))  # 2 s heartbeats, 1 s stall limit
            health = scrape(f"http://127.0.0.1:{port}/healthz")
            # before, the loop's turns stopped with the signal: /healthz failed a stop's grace
            # period longer than --health-stall-ms (here 1 s), the heartbeat file went stale
            F.check(health[0] == 200, f"group: /healthz while jobs finish after SIGTERM: {health}")
            F.check(time.time() - beat.stat().st_mtime < 2.5,
                    f"group: the heartbeat file is {time.time() - beat.stat().st_mtime:.1f} s old")
        F.check(early and running(metrics) == 1,
                f"group: the short job's answer was not committed while the long one ran: "
                f"{early}, {running(metrics)} running, worker exit {w.poll()}")
        F.check(counted == 1, f"group: codeq_jobs_total while the long job runs: {counted}")
        rc, took = wait_exit(w, 40)
        got = {r["id"]: r for r in s.read("results")}
        print(f"{NAME}: group: SIGTERM to the worker's process group: exit {rc} after "
              f"{took:.1f} s; {[(i, got.get(i, {}).get('status')) for i in ids]}", flush=True)
        F.check(rc == 0, f"group: exit {rc} after {took:.1f} s")
        F.check(all(got.get(i, {}).get("status") == "ok" and got[i].get("stdout") == "done\n"
                    for i in ids), f"group: the running jobs did not finish ok: "
                f"{[(i, got.get(i, {}).get('status'), got.get(i, {}).get('message')) for i in ids]}")
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()


def scrape(url):
    """(status, body), or (0, why) when the worker no longer listens (it has ended)."""
    try:
        return http_get(url)
    except OSError as e:  # urllib's URLError included
        return 0, str(e)


def jobs_total(metrics):
    status, text = scrape(metrics)
    return sum(int(v) for v in re.findall(r"^codeq_jobs_total\{[^}]*\} (\d+)", text, re.M)) \
        if status == 200 else -1


def running(metrics):
    status, text = scrape(metrics)
    m = re.search(r"^codeq_jobs_running (\d+)", text, re.M) if status == 200 else None
    return int(m.group(1)) if m else -1


def w1_alive(s):
    return s.workers["w1"].poll() is None


def second_joins(s, since, limit, every):
    """A second worker joins; whether the first gave a partition up within limit s of since."""
    s.start("w2", "--slots", "2", "--grace-ms", str(GRACE_MS))
    log, revoked = s.logdir / "w1.log", None
    while time.monotonic() - since < limit and not revoked:
        revoked = re.search(r"revoked partitions \[\d", log.read_text(errors="replace"))
        time.sleep(every)
    return revoked


def drain_case():
    """SIGTERM while a revoke drains: the drain must not outlast the stop's grace period."""
    s = setups["drain"] = kt.Setup(f"{NAME}-drain", 2)
    metrics = f"http://127.0.0.1:{free_port()}/metrics"
    s.start("w1", "--slots", "4", "--grace-ms", str(GRACE_MS), "--drain-ms", "60000",
            "--http", metrics[len("http://"):-len("/metrics")], "--health-stall-ms", "1000")
    s.produce_jobs([{"id": "drain-ready", "code": "print(1)"}])
    ok = len(s.wait_results(["drain-ready"], 90)) > 0
    F.check(ok, "drain: the first worker never answered")
    if not ok:
        return
    short = [f"drain-short-{part}" for part in (0, 1)]
    nxt = [f"drain-next-{part}" for part in (0, 1)]
    # The premise, checked: the 40 s and 15 s jobs fill the 4 slots (so each partition's drain
    # has one to wait for, and the quick jobs wait for a slot) when the partition goes.
    t0 = time.monotonic()
    for jobs, want in [(lambda part: {"id": f"drain-long-{part}", "code": "import time\n"
                                      "time.sleep(40)", "limits": {"wall_ms": 50000}}, 2),
                       (lambda part: {"id": short[part], "code": "import time\ntime.sleep(15)",
                                      "limits": {"wall_ms": 50000}}, 4)]:
        for part in (0, 1):
            s.produce_jobs([jobs(part)], partition=part)
        while time.monotonic() - t0 < 30 and running(metrics) < want:
            time.sleep(0.2)
    for part in (0, 1):
        s.produce_jobs([{"id": nxt[part], "code": "print('next')"}], partition=part)
    both = time.monotonic()
    F.check(running(metrics) == 4, "drain: the four jobs never ran at once")
    log = s.logdir / "w1.log"
    revoked = second_joins(s, both, 30, 0.2)
    F.check(revoked, "drain: the first worker gave no partition up within 30 s of the jobs' start")
    if not revoked:
        return
    # The 15 s jobs end inside the drain, the kept partition's and the one given up's: each is
    # answered then (before, at the drain's end: here the stop's), and /healthz stays 200 (the
    # drain used to stop the loop's turns: 503 past --health-stall-ms, here 1 s).
    F.check(not [r for r in s.read("results") if r["id"] in short + nxt],
            "drain: the premise: the 15 s jobs were answered before the partition went")
    got = s.wait_results(short, 25)
    health = scrape(metrics.replace("/metrics", "/healthz"))
    F.check({r["id"] for r in got} == set(short) and w1_alive(s),
            f"drain: the jobs that finished inside the drain were not answered in it: "
            f"{sorted(r['id'] for r in got)}, worker alive {w1_alive(s)}")
    F.check(health[0] == 200, f"drain: /healthz inside the drain: {health}")
    # The slot the kept partition's 15 s job freed takes that partition's next job inside the
    # drain (before, no job started until the drain ended: here, with the stop).
    got = s.wait_results(nxt, 5)
    F.check(len({r["id"] for r in got}) == 1 and w1_alive(s),
            f"drain: the kept partition's next job did not run inside the drain: "
            f"{sorted(r['id'] for r in got)}, worker alive {w1_alive(s)}")
    t0 = time.monotonic()
    w1 = s.workers["w1"]
    w1.send_signal(signal.SIGTERM)
    # /readyz says the worker is leaving from the signal on, not once its jobs are done (the
    # 40 s jobs keep it running far past this loop; the loop only waits for the signal's handler)
    ready = (0, "")
    while time.monotonic() - t0 < 2 and not (ready[0] == 503 and "leaving" in ready[1]):
        ready = http_get(metrics.replace("/metrics", "/readyz"))
        time.sleep(0.05)
    F.check(ready[0] == 503 and "leaving" in ready[1], f"drain: /readyz after SIGTERM: {ready}")
    try:
        rc = w1.wait(timeout=BOUND_S + SLACK_S)
    except subprocess.TimeoutExpired:
        w1.kill()
        w1.wait()
        rc = None
    took = time.monotonic() - t0
    said = '"event":"stop_timeout"' in log.read_text(errors="replace")
    print(f"{NAME}: drain: SIGTERM during a revoke's drain: exit {rc} after {took:.1f} s", flush=True)
    F.check(rc == 0 and took <= GRACE_MS / 1000 + 10 and not said,
            f"drain: exit {rc} after {took:.1f} s{' (stop_timeout)' if said else ''}; wanted 0 "
            f"within {GRACE_MS / 1000 + 10:.0f} s")
    # the 40 s jobs the stop cut short are named, to run again elsewhere (nothing said so)
    cut = [ln for ln in log.read_text(errors="replace").splitlines()
           if '"event":"job_abandoned"' in ln and "drain-long-" in ln]
    F.check(len(cut) == 2, f"drain: the two 40 s jobs stopped unfinished, logged: {cut}")
    # ... and on the audit trail, by the worker that stopped them: the runs were in no event
    # (their received and started events go with an answer, and these had none)
    ab = [e for e in s.read("audit") if e["event"] == "abandoned"]
    F.check(sorted(e["job_id"] for e in ab) == ["drain-long-0", "drain-long-1"]
            and all(e["worker"] == "w1" and e.get("started_at") and e.get("code_sha256")
                    and "runs again" in e.get("reason", "") for e in ab),
            f"drain: abandoned audit events of the two 40 s jobs: {ab}")
    F.check(all(not schema_errors(AUDIT, e) for e in ab),
            f"drain: abandoned events against the schema: {[schema_errors(AUDIT, e) for e in ab]}")


def drain_stop_case():
    """SIGTERM in a drain: no job starts after it, in the drain or in the loop it returns to."""
    s = setups["drain-stop"] = kt.Setup(f"{NAME}-drain-stop", 2)
    metrics = f"http://127.0.0.1:{free_port()}/metrics"
    s.start("w1", "--slots", "2", "--grace-ms", "30000", "--drain-ms", "60000",
            "--http", metrics[len("http://"):-len("/metrics")])
    s.produce_jobs([{"id": "stop-ready", "code": "print(1)"}])
    ok = len(s.wait_results(["stop-ready"], 90)) > 0
    F.check(ok, "drain-stop: the first worker never answered")
    if not ok:
        return
    quick = [f"stop-quick-{part}" for part in (0, 1)]
    for part in (0, 1):
        s.produce_jobs([{"id": f"stop-long-{part}", "code": "import time\ntime.sleep(25)",
                         "limits": {"wall_ms": 40000}}], partition=part)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 30 and running(metrics) < 2:
        time.sleep(0.2)
    # The premise: both slots busy, each partition's quick job taken in and waiting for one.
    F.check(running(metrics) == 2, "drain-stop: the two 25 s jobs never ran at once")
    for part in (0, 1):
        s.produce_jobs([{"id": quick[part], "code": "print('quick')"}], partition=part)
    time.sleep(1)
    revoked = second_joins(s, t0, 22, 0.1)
    F.check(revoked, "drain-stop: the first worker gave no partition up while its jobs ran")
    if not revoked:
        return
    w1 = s.workers["w1"]
    w1.send_signal(signal.SIGTERM)
    try:
        rc = w1.wait(timeout=30 + BOUND_S)
    except subprocess.TimeoutExpired:
        w1.kill()
        w1.wait()
        rc = None
    got = {r["id"]: r for r in s.wait_results(quick + ["stop-long-0", "stop-long-1"], 60)}
    by = {i: got[i].get("worker") if i in got else None for i in sorted(got)}
    print(f"{NAME}: drain-stop: exit {rc}; answered by {by}", flush=True)
    F.check(rc == 0, f"drain-stop: exit {rc}; wanted 0")
    F.check(by.get("stop-long-0") == by.get("stop-long-1") == "w1",
            f"drain-stop: the 25 s jobs were not both answered by the first worker: {by}")
    F.check(by.get(quick[0]) == by.get(quick[1]) == "w2",
            f"drain-stop: a quick job started in the first worker after its SIGTERM, or was "
            f"never answered: {by}")


setups, workers, beats = {}, {}, {}
try:
    for case, step in STEPS.items():
        s = setups[case] = kt.Setup(f"{NAME}-{case}", 2)
        beats[case] = s.logdir / "heartbeat"
        if step:
            os.environ["CODEQ_TEST_STOP_WEDGE"] = step
        workers[case] = s.start("w1", "--slots", "2", "--grace-ms", str(GRACE_MS),
                                "--heartbeat-file", str(beats[case]))
        os.environ.pop("CODEQ_TEST_STOP_WEDGE", None)
        s.produce_jobs([{"id": f"{case}-{i}", "code": f"print({i})"} for i in range(3)])
    t0 = time.monotonic()
    ready = set()
    while time.monotonic() - t0 < 120 and len(ready) < len(STEPS):
        time.sleep(0.5)
        for case, s in setups.items():
            if case not in ready and len({r["id"] for r in s.read("results")}) >= 3:
                ready.add(case)
    F.check(len(ready) == len(STEPS), f"jobs answered before the stop only in {sorted(ready)}")
    for case in sorted(ready):
        F.check(beats[case].exists(), f"{case}: no heartbeat file while running")
    t0 = time.monotonic()
    for case in ready:
        workers[case].send_signal(15)
    ended = {}  # each worker's exit time, all watched at once
    while time.monotonic() - t0 < BOUND_S + SLACK_S + 1 and len(ended) < len(ready):
        for case in ready:
            if case not in ended and workers[case].poll() is not None:
                ended[case] = time.monotonic() - t0
        time.sleep(0.1)
    for case in sorted(ready):
        w, step = workers[case], STEPS[case]
        rc, took = w.poll(), ended.get(case, time.monotonic() - t0)
        log = (setups[case].logdir / "w1.log").read_text(errors="replace")
        said = [line for line in log.splitlines() if '"event":"stop_timeout"' in line]
        print(f"{NAME}: {case}: exit {rc} after {took:.1f} s; "
              f"{said[0][said[0].find('the stop'):][:120] if said else 'no stop_timeout'}", flush=True)
        if rc is None:
            kt.dump_threads(w.pid, f"{NAME}: {case}: still running {took:.0f} s after SIGTERM")
        if step:
            F.check(rc == 3 and took <= BOUND_S + SLACK_S,
                    f"{case}: exit {rc} after {took:.1f} s; wanted 3 within {BOUND_S:.0f} s")
            F.check(len(said) == 1 and f"waiting on {step}" in said[0],
                    f"{case}: the log does not name the step it waited on: {said}")
        else:
            F.check(rc == 0 and took <= 10 and not said,
                    f"{case}: a stop with nothing wedged: exit {rc} after {took:.1f} s, {said}")
        F.check(not beats[case].exists(), f"{case}: the heartbeat file outlived the worker")
    drain_case()
    drain_stop_case()
    group_case()
    start_up_case()
finally:
    for s in setups.values():
        s.kill_all()
F.finish(NAME)
