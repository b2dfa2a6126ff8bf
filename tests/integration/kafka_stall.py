"""Forced stalls (issue 13), two at once on their own topics and groups, bounded to 150 s.
  stall    the worker is started with the test hook CODEQ_TEST_HIDDEN_PAUSE, which pauses every
           partition it is assigned behind its own back, as librdkafka's pause that outlived a
           lost assignment did after broker outages (assigned, jobs waiting, nothing fetched,
           for good). The stall watchdog must notice (an idle worker, records waiting, none
           fetched for 30 s), say so and restart the fetch.
  dropout  the worker is started with CODEQ_TEST_NO_SUBSCRIBE: a member that is not in its
           group (as one that silently dropped out), so nobody holds the partitions while jobs
           wait. The idle watch must notice (no partitions for 30 s, records waiting, the
           group's committed offsets still), say so and rejoin the group.
In both, every job must then be answered exactly once by that same worker process."""
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
CASES = {"stall": ("CODEQ_TEST_HIDDEN_PAUSE", "stalled:"),
         "dropout": ("CODEQ_TEST_NO_SUBSCRIBE", '"event":"group_stuck"')}
setups, workers, ids = {}, {}, {}
try:
    for case, (hook, _) in CASES.items():
        s = setups[case] = kt.Setup(f"{NAME}-{case}", 2)
        os.environ[hook] = "1"
        workers[case] = s.start("w1", "--slots", "2")
        del os.environ[hook]
        ids[case] = [f"{case}-{i}" for i in range(10)]
        s.produce_jobs([{"id": i, "code": f"print('{i}')"} for i in ids[case]])
    t0 = time.monotonic()
    got = {case: set() for case in CASES}
    while time.monotonic() - t0 < 120 and any(len(got[c]) < len(ids[c]) for c in CASES):
        time.sleep(1)
        for c in CASES:
            got[c] = {r["id"] for r in setups[c].read("results")} & set(ids[c])
    took = time.monotonic() - t0
    for case, (_, said) in CASES.items():
        s, w = setups[case], workers[case]
        log = (s.logdir / "w1.log").read_text(errors="replace")
        print(f"{NAME}: {case}: {len(got[case])} of {len(ids[case])} answered after {took:.0f} s; "
              f"{log.count(said)} reports of it", flush=True)
        F.check(said in log, f"{case}: the worker never reported it ({said})")
        F.check(len(got[case]) == len(ids[case]),
                f"{case}: {len(ids[case]) - len(got[case])} jobs unanswered after {took:.0f} s")
        lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), ids[case])
        F.check(not lost and not dup and not bad, f"{case}: lost {lost} dup {dup} audit {bad}")
        F.check(w.poll() is None, f"{case}: the worker exited ({w.returncode})")
        F.check(s.stop("w1") == 0, f"{case}: w1 did not stop cleanly")
finally:
    for s in setups.values():
        s.kill_all()
F.finish(NAME)
