"""A forced stall (issue 13): the worker is started with the test hook CODEQ_TEST_HIDDEN_PAUSE,
which pauses every partition it is assigned behind its own back, as librdkafka's pause that
outlived a lost assignment did after broker outages (assigned, jobs waiting, nothing fetched, for
good). The stall watchdog must notice (an idle worker, records waiting, none fetched for 30 s),
say so, restart the fetch, and every job must be answered exactly once. Bounded to 150 s."""
import os
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "stall"
F = Failures()
kt.require_broker(NAME)
s = kt.Setup(NAME, 2)
try:
    os.environ["CODEQ_TEST_HIDDEN_PAUSE"] = "1"
    w = s.start("w1", "--slots", "2")
    del os.environ["CODEQ_TEST_HIDDEN_PAUSE"]
    ids = [f"stall-{i}" for i in range(10)]
    s.produce_jobs([{"id": i, "code": f"print('{i}')"} for i in ids])
    t0 = time.monotonic()
    got = set()
    while time.monotonic() - t0 < 120 and len(got) < len(ids):
        time.sleep(1)
        got = {r["id"] for r in s.read("results")} & set(ids)
    took = time.monotonic() - t0
    log = (s.logdir / "w1.log").read_text(errors="replace")
    print(f"{NAME}: {len(got)} of {len(ids)} answered after {took:.0f} s; "
          f"{log.count('stalled:')} stall reports", flush=True)
    F.check("stalled:" in log, "the watchdog never reported the stall")
    F.check(len(got) == len(ids), f"{len(ids) - len(got)} jobs unanswered after {took:.0f} s")
    lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), ids)
    F.check(not lost and not dup and not bad, f"lost {lost} dup {dup} audit {bad}")
    F.check(w.poll() is None, f"the worker exited ({w.returncode})")
    F.check(s.stop("w1") == 0, "w1 did not stop cleanly")
finally:
    s.kill_all()
F.finish(NAME)
