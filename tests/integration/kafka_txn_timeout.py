"""A transaction the coordinator times out, and a transactional.id taken by another instance:
the two ways a worker's producer is fenced, which must end differently.

  timed out  the worker is started with the test hook CODEQ_TEST_TXN_HOLD_MS, which holds its
             first transaction with results open after its records and before its offsets,
             longer than transaction.timeout.ms (the worker's 10 s) plus the broker's check for
             timed-out transactions (every 10 s): what a broker outage or a stopped worker does
             to an open transaction. The coordinator rolls it back and bumps the producer's
             epoch, and the send of offsets is fenced. That is not another instance, and no
             commit was asked for: the worker must get a new producer, stay up and answer every
             job exactly once (a 30 s broker outage ended the worker this way, exit 3, in CI on
             2026-12-05).
  zombie     a second worker with the same --instance-id (so the same transactional.id) starts
             while the first runs: its init_transactions fences the first, whose next
             transaction is young. The first must end (exit 3, "_FENCED") and the second answer
             every job, exactly once.
"""
import os
import pathlib
import re
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "txntimeout"
HOLD_MS = 32000  # > transaction.timeout.ms 10 s + the broker's 10 s check interval, with room
F = Failures()
kt.require_broker(NAME)


def log_of(s, wid):
    return (s.logdir / f"{wid}.log").read_text(errors="replace")


def jobs(prefix, n):
    return [{"id": f"{prefix}-{i:02d}", "code": f"print({i})"} for i in range(n)]


def wait_until(cond, seconds):
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        if cond():
            return True
        time.sleep(0.5)
    return cond()


def timed_out(s):
    os.environ["CODEQ_TEST_TXN_HOLD_MS"] = str(HOLD_MS)
    try:
        w = s.start("w1", "--slots", "2")
    finally:
        del os.environ["CODEQ_TEST_TXN_HOLD_MS"]
    first = jobs("held", 10)
    s.produce_jobs(first)
    ids = [j["id"] for j in first]
    t0 = time.monotonic()
    got = {r["id"] for r in s.wait_results(ids, HOLD_MS / 1000 + 90)}
    took = time.monotonic() - t0
    log = log_of(s, "w1")
    print(f"{NAME}: timed out: {len(got)} of {len(ids)} answered in {took:.0f} s; "
          f"worker {'alive' if w.poll() is None else f'exited {w.returncode}'}", flush=True)
    F.check("CODEQ_TEST_TXN_HOLD_MS: holding" in log, "timed out: the hook did not hold a transaction")
    F.check(len(got) == len(ids), f"timed out: {len(ids) - len(got)} jobs unanswered")
    F.check(w.poll() is None, f"timed out: the worker exited with {w.returncode}")
    F.check('"event":"transaction_timed_out"' in log and '"event":"producer_rebuilt"' in log,
            "timed out: no fence by the transaction's own timeout, and no new producer, in the log")
    # The new producer goes on committing.
    after = jobs("after", 6)
    s.produce_jobs(after)
    got = {r["id"] for r in s.wait_results([j["id"] for j in after], 60)}
    F.check(len(got) == len(after), "timed out: jobs after the new producer were not all answered")
    return ids + [j["id"] for j in after]


def zombie(s):
    w1 = s.workers["w1"]
    w2 = s.start("w1-successor", "--slots", "2", instance="w1")  # the same transactional.id
    # Its init_transactions (which fences the first) is done before it joins the group; jobs on
    # both partitions once it holds one, so that the first still has work for a transaction.
    joined = wait_until(lambda: re.search(r"assigned partitions \[\d", log_of(s, "w1-successor")), 90)
    F.check(joined, "zombie: the second worker never got a partition")
    more = jobs("zombie", 12)
    for p in (0, 1):
        s.produce_jobs(more[p::2], partition=p)
    ids = [j["id"] for j in more]
    ended = wait_until(lambda: w1.poll() is not None, 90)
    got = {r["id"] for r in s.wait_results(ids, 90)}
    log = log_of(s, "w1")
    print(f"{NAME}: zombie: first worker {'exited ' + str(w1.returncode) if ended else 'still running'}; "
          f"{len(got)} of {len(ids)} answered", flush=True)
    F.check(ended and w1.returncode == 3, f"zombie: the fenced worker did not exit 3 ({w1.returncode})")
    F.check("kafka fatal error _FENCED" in log or "kafka fatal error PRODUCER_FENCED" in log,
            "zombie: the fenced worker did not say it was fenced")
    # and says what the operator did: librdkafka's words name no setting
    F.check("another worker started with the same --instance-id" in log,
            "zombie: the fenced worker did not name --instance-id as the cause")
    F.check(len(got) == len(ids), f"zombie: {len(ids) - len(got)} jobs unanswered")
    F.check(w2.poll() is None, f"zombie: the successor exited with {w2.returncode}")
    return ids


s = kt.Setup(NAME, 2)
try:
    all_ids = timed_out(s)
    if s.workers["w1"].poll() is None:
        all_ids += zombie(s)
    lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), all_ids)
    F.check(not lost and not dup and not bad,
            f"exactly once: lost {len(lost)}, duplicated {dup}, audit not once {bad[:5]}")
finally:
    s.kill_all()
F.finish(NAME)
