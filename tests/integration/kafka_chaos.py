"""Chaos on the real broker: exactly one result per job while workers die.

usage: kafka_chaos.py kill|sigterm
  kill     3 workers, 2,000 jobs on 6 partitions; every 5-10 s a random worker is killed with
           SIGKILL and restarted with the same instance id; the broker is restarted once when
           half the results are in. A killed member holds its partitions until the session
           timeout (6 s) and a restarted one needs seconds to be assigned again: killed every
           1.5-3 s, no member lived long enough to run a job and the group stood still.
  sigterm  the same jobs, but every 1.5-3 s a worker is stopped with SIGTERM (rolling restart;
           it leaves the group at once) and must exit 0 each time.
Afterwards a read_committed read of the results and audit topics must find every job exactly
once: 0 lost, 0 duplicates, and exactly one received + one final audit event per job; and
`codeq audit --verify` finds every worker epoch's hash chain whole and linked to the one before.
The test plays the orchestrator's part too: a worker that exits on its own is restarted.
Workers run with --max-attempts 50: the test kills them far more often than any real crash
rate, and an innocent job in flight at three kills would otherwise be answered as a poison
pill (that logic has its own test, kafka_poison.py).
Every job sleeps 100 ms so that the run lasts long enough for the chaos to matter: since the
worker stopped waiting on a transaction before each job, 2,000 bare print jobs were all answered
in 13 s, between two SIGTERMs. Progress comes from a streaming reader of the results topic's
keys, not from re-reading the whole topic each time: under load that read took 5-13 s and
spaced the chaos events out to two in a whole run.
Bounded: at most MAX_SECONDS of chaos, then the test stops everything itself."""
import pathlib
import random
import subprocess
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures, run  # noqa: E402
import kafka_test as kt  # noqa: E402

MODE = sys.argv[1] if len(sys.argv) > 1 else "kill"
NAME = f"chaos-{MODE}"
JOBS, PARTITIONS, WORKERS, MAX_SECONDS = 2000, 6, 3, 420
EXTRA = ["--max-attempts", "50"]
PACE = (5, 10) if MODE == "kill" else (1.5, 3)
F = Failures()
kt.require_broker(NAME)
rng = random.Random(20261130)

s = kt.Setup(NAME, PARTITIONS)
ids = [f"{NAME}-{i:05d}" for i in range(JOBS)]
jobs = []
for i, jid in enumerate(ids):
    code = (f"import time\ntime.sleep(0.1)\nprint({i} * {i})" if i % 100
            else "import time\ntime.sleep(0.5)\nprint('slow')")
    jobs.append({"id": jid, "code": code})
kills = restarts = broker_restarts = 0
answered = set()


def follow_results():
    """Job ids of committed results as they arrive; a stream, so progress is cheap to read.
    kcat ends when the broker restarts: it is started again (from the beginning; a set)."""
    while not follower_stop:
        p = subprocess.Popen(["kcat", "-b", s.brokers, "-C", "-u", "-t", s.topics["results"], "-o",
                              "beginning", "-q", "-f", "%k\\n", "-X", "isolation.level=read_committed"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        follower[:] = [p]
        for line in p.stdout:
            answered.add(line.strip())
        p.wait()
        time.sleep(0.5)


follower, follower_stop = [], False
try:
    s.produce_jobs(jobs)
    threading.Thread(target=follow_results, daemon=True).start()
    for k in range(WORKERS):
        s.start(f"w{k + 1}", *EXTRA)
    t0 = time.monotonic()
    next_chaos = t0 + rng.uniform(*PACE)
    done = 0
    while time.monotonic() - t0 < MAX_SECONDS:
        time.sleep(0.2)
        for wid, w in list(s.workers.items()):  # the orchestrator: restart what exited
            if w.poll() is not None:
                print(f"{NAME}: {wid} exited with {w.returncode}; restarting", flush=True)
                if w.returncode not in (0, -9):
                    F.check(w.returncode == 3, f"{wid} exited with {w.returncode}")
                s.start(wid, *EXTRA)
                restarts += 1
        done = len(answered)
        if done >= JOBS:
            break
        if MODE == "kill" and broker_restarts == 0 and done >= JOBS // 2:
            took = kt.restart_broker()
            broker_restarts += 1
            print(f"{NAME}: broker restarted in {took:.1f} s at {done} results", flush=True)
        if time.monotonic() >= next_chaos:
            wid = rng.choice(sorted(s.workers))
            if MODE == "kill":
                s.kill9(wid)
            else:
                rc = s.stop(wid)
                F.check(rc == 0, f"{wid} exit code {rc} after SIGTERM (want 0)")
            s.start(wid, *EXTRA)
            kills += 1
            next_chaos = time.monotonic() + rng.uniform(*PACE)
    elapsed = time.monotonic() - t0
    codes = s.stop_all()
    F.check(all(c == 0 for c in codes.values()), f"final SIGTERM exit codes {codes}")
    results, audit = s.read("results"), s.read("audit")
    lost, dup, bad_audit = kt.exactly_once(results, audit, ids)
    print(f"{NAME}: jobs {JOBS}, results {len(results)}, lost {len(lost)}, duplicates {len(dup)}, "
          f"audit not exactly-once {len(bad_audit)}; {kills} worker {'kills' if MODE == 'kill' else 'SIGTERMs'}, "
          f"{restarts} orchestrator restarts, {broker_restarts} broker restart(s), {elapsed:.0f} s", flush=True)
    F.check(not lost, f"lost results: {len(lost)} e.g. {lost[:5]}")
    F.check(not dup, f"duplicate results: {len(dup)} e.g. {list(dup.items())[:5]}")
    F.check(not bad_audit, f"audit trail not exactly once for {len(bad_audit)} jobs e.g. {bad_audit[:5]}")
    F.check(kills >= 5, f"only {kills} chaos events happened")
    if MODE == "kill":
        F.check(broker_restarts == 1, "the broker was not restarted")
    statuses = {r["status"] for r in results}
    F.check(statuses <= {"ok"}, f"unexpected statuses {statuses}")
    # the audit trail's hash chains (one per worker epoch) hold across every kill and restart
    p = run(["audit", "-b", kt.BROKERS, "--audit-topic", s.topics["audit"], "--verify"], timeout=300)
    print(f"{NAME}: {p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr[-300:]}", flush=True)
    F.check(p.returncode == 0, f"codeq audit --verify: rc {p.returncode}: {p.stdout[-800:]} {p.stderr[-300:]}")
finally:
    follower_stop = True
    for p in follower:
        p.kill()
    s.kill_all()
F.finish(NAME)
