"""Broker outages on the real broker (issue 13): one worker, jobs queued and running, the broker
stopped for 10, 30 and 75 s (CODEQ_TEST_OUTAGES overrides, e.g. "5") and started again on the
same data. Every job of every round must be answered exactly once by the same worker process:
no exit, no restart. Then SIGTERM while the broker is down, and (another worker) while it hangs
(SIGSTOP: connections accepted, nothing answered): each worker must end within its grace period
plus a bounded close, whatever librdkafka waits on. The broker is always running again when the
test ends."""
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "outage"
OUTAGES = [int(x) for x in os.environ.get("CODEQ_TEST_OUTAGES", "10,30,75").split(",")]
GRACE_MS = 5000
CLOSE_BOUND_S = 30  # what a close may take beyond the grace period, broker or not
F = Failures()
kt.require_broker(NAME)
s = kt.Setup(NAME, 4)


def answered(ids):
    return {r["id"] for r in s.read("results")} & set(ids)


def wait_for(ids, n, seconds):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        got = answered(ids)
        if len(got) >= n:
            return got
        time.sleep(0.5)
    return answered(ids)


all_ids = []
broker_down = broker_frozen = False
try:
    w = s.start("w1", "--slots", "2", "--grace-ms", str(GRACE_MS), *os.environ.get("CODEQ_TEST_WORKER_ARGS", "").split())
    for out in OUTAGES:
        # quick jobs and 1.5 s jobs: some are running, some queued when the broker goes
        jobs = [{"id": f"out{out}-{i:03d}",
                 "code": "import time\ntime.sleep(1.5)\nprint('slow')" if i % 4 == 0 else f"print({i})"}
                for i in range(40)]
        ids = [j["id"] for j in jobs]
        all_ids += ids
        s.produce_jobs(jobs)
        before = len(wait_for(ids, 8, 90))
        kt.stop_broker()
        broker_down = True
        time.sleep(out)
        took = kt.restart_broker()
        broker_down = False
        got = wait_for(ids, len(ids), 240)
        alive = w.poll() is None
        print(f"{NAME}: {out} s outage ({before} of {len(ids)} answered before it, broker back in "
              f"{took:.0f} s): {len(got)} of {len(ids)} answered after; worker "
              f"{'alive' if alive else f'exited {w.returncode}'}", flush=True)
        F.check(len(got) == len(ids), f"{out} s outage: {len(ids) - len(got)} jobs unanswered")
        F.check(alive, f"{out} s outage: the worker exited with {w.returncode}")
        if not alive:
            break
    lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), all_ids)
    F.check(not lost and not dup and not bad,
            f"exactly once: lost {len(lost)}, duplicated {dup}, audit not once {bad[:5]}")

    def term_while(wid, how, take_away):
        """SIGTERM with jobs running, right after the broker was taken away: the grace period,
        then a bounded close."""
        s.produce_jobs([{"id": f"term-{wid}-{i}", "code": "import time\ntime.sleep(2)"} for i in range(4)])
        time.sleep(3)
        take_away()
        t0 = time.monotonic()
        rc = s.stop(wid, grace=GRACE_MS / 1000 + CLOSE_BOUND_S + 30)
        took = time.monotonic() - t0
        print(f"{NAME}: SIGTERM with the broker {how}: exit {rc} after {took:.1f} s", flush=True)
        F.check(rc is not None and took <= GRACE_MS / 1000 + CLOSE_BOUND_S,
                f"SIGTERM with the broker {how} took {took:.1f} s (exit {rc}), bound "
                f"{GRACE_MS / 1000 + CLOSE_BOUND_S:.0f} s")

    def stop_broker():
        global broker_down
        kt.stop_broker()
        broker_down = True

    def freeze_broker():
        global broker_frozen
        broker_frozen = True
        kt.freeze_broker()

    if w.poll() is None:
        term_while("w1", "down", stop_broker)
    kt.restart_broker()
    broker_down = False
    w2 = s.start("w2", "--slots", "2", "--grace-ms", str(GRACE_MS), *os.environ.get("CODEQ_TEST_WORKER_ARGS", "").split())
    ready = [{"id": f"ready-{i}", "code": "print(1)"} for i in range(4)]
    s.produce_jobs(ready)
    got = wait_for([j["id"] for j in ready], len(ready), 120)
    F.check(len(got) == len(ready), f"a second worker after the broker came back: {len(got)} of {len(ready)} answered")
    if len(got) == len(ready):
        term_while("w2", "hung (SIGSTOP)", freeze_broker)
finally:
    s.kill_all()
    if broker_frozen:
        kt.freeze_broker(False)
    if broker_down:
        kt.restart_broker()
F.finish(NAME)
