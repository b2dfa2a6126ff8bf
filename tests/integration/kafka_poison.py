"""Poison pill on the real broker: a job that takes its worker down every time it runs is
started at most --max-attempts times, then answered `internal_error`, and the jobs behind it
are not held up for good. The "crash" is the test killing the worker (SIGKILL) while that job
runs, which is exactly what the worker sees when a job brings it down. Bounded to 180 s."""
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import AUDIT, Failures, schema_errors  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "poison"
F = Failures()
kt.require_broker(NAME)
s = kt.Setup(NAME, 1)
try:
    s.produce_jobs([{"id": "poison-pill", "code": "import time\ntime.sleep(60)"}] +
                   [{"id": f"poison-after-{i}", "code": f"print({i})"} for i in range(5)], partition=0)
    kills = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 150:
        s.start("w1", "--max-attempts", "3", "--slots", "1")
        log = s.logdir / "w1.log"
        # wait until the pill is running (its start was committed), then take the worker down
        started = False
        for _ in range(200):
            time.sleep(0.1)
            if log.read_text().count("assigned partitions [0") > kills:
                started = True
                break
        if not started:
            break
        time.sleep(1.5)
        results = {r["id"]: r for r in s.read("results")}
        if "poison-pill" in results:
            break
        s.kill9("w1")
        kills += 1
    for _ in range(60):
        results = {r["id"]: r for r in s.read("results")}
        if len(results) >= 6:
            break
        time.sleep(1)
    F.check(s.stop("w1") == 0, "w1 did not stop cleanly")
    pill = results.get("poison-pill")
    print(f"{NAME}: {kills} worker kills; pill: {pill and pill['status']}: {pill and pill['message']}; "
          f"{sum(1 for i in results if i.startswith('poison-after'))} of 5 later jobs done", flush=True)
    F.check(kills == 3, f"the worker was killed {kills} times, want 3 (max-attempts)")
    F.check(pill is not None and pill["status"] == "internal_error" and "3 times" in pill["message"],
            f"pill result {pill}")
    F.check(all(f"poison-after-{i}" in results and results[f"poison-after-{i}"]["status"] == "ok"
                for i in range(5)), "the jobs behind the pill did not all complete")
    # each start after a crash is said (docs/operations.md lists job_rerun; none was logged)
    reruns = [ln for ln in (s.logdir / "w1.log").read_text().splitlines()
              if '"event":"job_rerun"' in ln and '"level":"warn"' in ln and '"offset":0' in ln]
    F.check(len(reruns) == 3 and "started 1 time before" in reruns[0]
            and "(start 3 of at most 3)" in reruns[1] and "not run again" in reruns[2],
            f"the pill's starts after a crash, logged: {[r[-160:] for r in reruns]}")
    # ... naming the job (the line said "the job  at ..." without its id: it is not decoded yet)
    F.check(all('"job_id":"poison-pill"' in r and "the job 'poison-pill' at" in r
                for r in reruns), f"job_rerun lines without the job's id: {[r[:300] for r in reruns]}")
    # ... and on the audit trail (the starts that crashed were in no event but the finish's count)
    audit = s.read("audit")
    reruns = [e for e in audit if e["event"] == "rerun" and e["job_id"] == "poison-pill"]
    F.check([e.get("starts_before") for e in reruns] == [1, 2, 3]
            and all(e.get("code_sha256") and e["source"]["offset"] == 0 for e in reruns)
            and "not run again" in reruns[-1]["reason"]
            and not [schema_errors(AUDIT, e) for e in reruns if schema_errors(AUDIT, e)],
            f"rerun audit events of the pill: {reruns}")
    lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"),
                                     ["poison-pill"] + [f"poison-after-{i}" for i in range(5)])
    F.check(not lost and not dup, f"lost {lost} dup {dup}")
finally:
    s.kill_all()
F.finish(NAME)
