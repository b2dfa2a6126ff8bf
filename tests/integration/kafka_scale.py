"""Scale on the real broker: a worker added mid-run receives partitions and completes jobs;
a worker removed (SIGTERM) hands its partitions over without loss. 600 jobs of ~0.2 s on 6
partitions (about 40 s of work for two workers); the third worker joins after ADD_AT seconds
and the first leaves after REMOVE_AT, both long before the work runs out. Exactly one result
per job at the end. Bounded to MAX_SECONDS."""
import collections
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME, JOBS, MAX_SECONDS, ADD_AT, REMOVE_AT = "scale", 600, 240, 5, 15
F = Failures()
kt.require_broker(NAME)
s = kt.Setup(NAME, 6)
ids = [f"{NAME}-{i:04d}" for i in range(JOBS)]


def count_done():
    return len({r["id"] for r in s.read("results")})


def wait_for(n, limit):
    t = time.monotonic()
    while time.monotonic() - t < limit:
        d = count_done()
        if d >= n:
            return d
        time.sleep(1)
    return count_done()


try:
    s.produce_jobs([{"id": i, "code": "import time\ntime.sleep(0.2)\nprint('x')"} for i in ids])
    s.start("w1")
    s.start("w2")
    t0 = time.monotonic()
    time.sleep(ADD_AT)
    s.start("w3")
    print(f"{NAME}: w3 added after {ADD_AT} s at {count_done()} results", flush=True)
    time.sleep(REMOVE_AT - ADD_AT)
    at_remove = count_done()
    rc = s.stop("w1")
    print(f"{NAME}: w1 removed at {at_remove} results (exit {rc})", flush=True)
    F.check(rc == 0, f"w1 exit code {rc} after SIGTERM")
    done = wait_for(JOBS, MAX_SECONDS - (time.monotonic() - t0))
    codes = s.stop_all()
    F.check(all(c == 0 for c in codes.values()), f"exit codes {codes}")
    results, audit = s.read("results"), s.read("audit")
    lost, dup, bad_audit = kt.exactly_once(results, audit, ids)
    by_worker = collections.Counter(r["worker"] for r in results)
    w3_log = (s.logdir / "w3.log").read_text()
    print(f"{NAME}: jobs {JOBS}, results {len(results)}, lost {len(lost)}, duplicates {len(dup)}, "
          f"by worker {dict(by_worker)}, {time.monotonic() - t0:.0f} s", flush=True)
    F.check("assigned partitions [" in w3_log and "assigned partitions []" != w3_log.strip(),
            "w3 never logged an assignment")
    F.check(by_worker["w3"] > 0, "the added worker completed no job")
    F.check(by_worker["w2"] > 0 and by_worker["w1"] > 0, f"by worker {dict(by_worker)}")
    F.check(not lost and not dup and not bad_audit,
            f"lost {lost[:5]} duplicates {list(dup)[:5]} audit {bad_audit[:5]}")
finally:
    s.kill_all()
F.finish(NAME)
