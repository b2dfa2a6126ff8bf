"""Forced stalls (issue 13), four at once on their own topics and groups, bounded to 180 s.
  stall    the worker is started with the test hook CODEQ_TEST_HIDDEN_PAUSE, which pauses every
           partition it is assigned behind its own back, as librdkafka's pause that outlived a
           lost assignment did after broker outages (assigned, jobs waiting, nothing fetched,
           for good). The stall watchdog must notice (an idle worker, records waiting, none
           fetched for 30 s), say so and restart the fetch.
  dropout  the worker is started with CODEQ_TEST_NO_SUBSCRIBE: a member that is not in its
           group (as one that silently dropped out), so nobody holds the partitions while jobs
           wait. The idle watch must notice (no partitions for 30 s, records waiting, the
           group's committed offsets still), say so and rejoin the group.
In both, every job must then be answered exactly once by that same worker process.
  marker   no hook: jobs submitted in a transaction of a submitter's, then an aborted one, so
           each partition ends in records that are no job (commit and abort markers, aborted
           records); one partition holds nothing else. Once the workers have answered the
           jobs and sat idle past both watches' 30 s, they must have reported neither, and the
           group's committed offsets must be the partitions' ends (a lag of 0, as KEDA reads
           it), not the offset of a marker. Three workers share its two partitions, so one
           holds none and the idle watch looks at the group's lag too.
  reset    as marker, with two workers started with CODEQ_TEST_NO_START_QUERY: the worker's
           query for a fresh partition's start fails, so librdkafka resets the fetch itself
           (auto.offset.reset). The partition holding only the aborted transaction must be
           committed at its end all the same (it was never committed: lag [0, 5]).
  late     no hook: a worker idle past the stall watchdog's 30 s whose fetches the broker holds
           up to 4 s (-X fetch.min.bytes, fetch.wait.max.ms), then jobs in four bursts 6 s
           apart. A check that lands between a burst and its fetch must not call it a stall
           (it did: "none fetched for 46 s", and restarted the fetch); every job answered."""
import json
import os
import pathlib
import sys
import time
import uuid

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "stall"
F = Failures()
kt.require_broker(NAME)
CASES = {"stall": ("CODEQ_TEST_HIDDEN_PAUSE", "stalled:"),
         "dropout": ("CODEQ_TEST_NO_SUBSCRIBE", '"event":"group_stuck"'),
         "marker": (None, None), "reset": ("CODEQ_TEST_NO_START_QUERY", None),
         "late": (None, None)}
LATE_BURSTS = (36, 42, 48, 54)  # s after the worker's start: past STALL_MS (30 s)
MARKERS = ("marker", "reset")
IDLE_S = 45  # past STALL_MS and IDLE_MS (30 s) and a check of each (5 s)


def produce_in_transactions(s, ids):
    """ids in one committed transaction on partition 0, then records of an aborted one on both:
    partition 1 holds nothing but the aborted transaction (no record, nothing committed)."""
    from confluent_kafka import Producer
    pp = Producer({"bootstrap.servers": kt.BROKERS,
                   "transactional.id": f"stall-submitter-{uuid.uuid4().hex[:8]}"})
    pp.init_transactions(30)
    for commit in (True, False):
        pp.begin_transaction()
        for n, i in enumerate(ids if commit else [f"aborted-{k}" for k in range(4)]):
            pp.produce(s.topics["jobs"], key=i, partition=0 if commit else n % 2,
                       value=json.dumps({"id": i, "code": f"print('{i}')"}))
        pp.flush(30)
        (pp.commit_transaction if commit else pp.abort_transaction)(30)


def lag(s):
    """Per partition: the end (read_committed) minus the group's committed offset."""
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({"bootstrap.servers": kt.BROKERS, "group.id": s.group,
                  "isolation.level": "read_committed", "enable.auto.commit": False})
    try:
        tps = [TopicPartition(s.topics["jobs"], i) for i in range(2)]
        return [c.get_watermark_offsets(tp, timeout=10)[1] - tp.offset
                for tp in c.committed(tps, timeout=10)]
    finally:
        c.close()


setups, workers, ids = {}, {}, {}
try:
    for case, (hook, _) in CASES.items():
        s = setups[case] = kt.Setup(f"{NAME}-{case}", 2)
        if hook:
            os.environ[hook] = "1"
        slow_fetch = ["-X", "fetch.min.bytes=10000000", "-X", "fetch.wait.max.ms=4000"]
        workers[case] = s.start("w1", "--slots", "2", *(slow_fetch if case == "late" else []))
        started = time.monotonic()
        if case in MARKERS:
            s.start("w2", "--slots", "1")
        if case == "marker":
            s.start("w3", "--slots", "1")
        if hook:
            del os.environ[hook]
        ids[case] = [f"{case}-{i}" for i in range(10)]
        if case in MARKERS:
            produce_in_transactions(s, ids[case])
        elif case == "late":
            ids[case] = [f"late-{i}" for i in range(2 * len(LATE_BURSTS))]
            late = {"s": s, "t0": started, "sent": 0}
        else:
            s.produce_jobs([{"id": i, "code": f"print('{i}')"} for i in ids[case]])
    t0 = time.monotonic()
    got = {case: set() for case in CASES}
    done = {}
    while time.monotonic() - t0 < 180 and (len(done) < len(CASES) or any(
            time.monotonic() - done[m] < IDLE_S for m in MARKERS)):
        time.sleep(1)
        burst = late["sent"] // 2
        if burst < len(LATE_BURSTS) and time.monotonic() - late["t0"] >= LATE_BURSTS[burst]:
            late["s"].produce_jobs([{"id": i, "code": f"print('{i}')"}
                                    for i in ids["late"][burst * 2:burst * 2 + 2]])
            late["sent"] += 2
        for c in CASES:
            if c in done:
                continue
            got[c] = {r["id"] for r in setups[c].read("results")} & set(ids[c])
            if len(got[c]) == len(ids[c]):
                done[c] = time.monotonic()
    took = time.monotonic() - t0
    for case, (_, said) in CASES.items():
        s, w = setups[case], workers[case]
        log = "".join((s.logdir / f"{x}.log").read_text(errors="replace") for x in s.workers)
        if said:
            print(f"{NAME}: {case}: {len(got[case])} of {len(ids[case])} answered after "
                  f"{took:.0f} s; {log.count(said)} reports of it", flush=True)
            F.check(said in log, f"{case}: the worker never reported it ({said})")
        elif case == "late":
            print(f"{NAME}: {case}: {len(got[case])} of {len(ids[case])} answered in "
                  f"{late['sent'] // 2} bursts", flush=True)
            F.check(late["sent"] == len(ids[case]) and "stalled:" not in log,
                    f"{case}: records fetched a few seconds after they came called a stall")
        else:
            false = ["stalled:", '"event":"group_stuck"']
            behind = lag(s)
            print(f"{NAME}: {case}: {len(got[case])} of {len(ids[case])} answered; idle "
                  f"{time.monotonic() - done.get(case, t0):.0f} s after; lag {behind}", flush=True)
            F.check(time.monotonic() - done.get(case, t0) >= IDLE_S,
                    f"{case}: idle for less than {IDLE_S} s: the watches were not given the time")
            F.check(not any(x in log for x in false), f"{case}: a watch fired on markers alone")
            F.check(behind == [0, 0], f"{case}: the group's lag is {behind}, not 0 at rest")
        F.check(len(got[case]) == len(ids[case]),
                f"{case}: {len(ids[case]) - len(got[case])} jobs unanswered after {took:.0f} s")
        lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), ids[case])
        F.check(not lost and not dup and not bad, f"{case}: lost {lost} dup {dup} audit {bad}")
        F.check(w.poll() is None, f"{case}: the worker exited ({w.returncode})")
        for x in s.workers:
            F.check(s.stop(x) == 0, f"{case}: {x} did not stop cleanly")
finally:
    for s in setups.values():
        s.kill_all()
F.finish(NAME)
