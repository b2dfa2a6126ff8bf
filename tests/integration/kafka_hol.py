"""Head-of-line on the real broker: one 3-second job followed by 100 quick jobs on the same
partition. A live read_committed reader must see quick results arrive before the slow one,
i.e. finished offsets above a running one are committed (through the commit metadata) without
waiting for it. The assertion does not depend on how fast this machine runs jobs: every quick
job that finished (its finished_at) at least MARGIN before the slow job finished must have
arrived before the slow result, and most of them must have. Bounded to 120 s."""
import json
import pathlib
import subprocess
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME, QUICK, MARGIN = "hol", 100, 0.5
F = Failures()
kt.require_broker(NAME)
s = kt.Setup(NAME, 1)
arrived = {}


def reader(proc):
    for line in proc.stdout:
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        arrived.setdefault(r["id"], time.monotonic())


live = subprocess.Popen(["kcat", "-b", kt.BROKERS, "-C", "-t", s.topics["results"], "-o", "beginning",
                         "-u", "-q", "-f", "%s\n", "-X", "isolation.level=read_committed"],
                        stdout=subprocess.PIPE, text=True)
threading.Thread(target=reader, args=(live,), daemon=True).start()
try:
    s.start("w1", "--slots", "6")
    slow = {"id": "hol-slow", "code": "import time\ntime.sleep(3)\nprint('slow')"}
    quick = [{"id": f"hol-quick-{i:03d}", "code": f"print({i})"} for i in range(QUICK)]
    t0 = time.monotonic()
    s.produce_jobs([slow] + quick, partition=0)
    while len(arrived) < QUICK + 1 and time.monotonic() - t0 < 120:
        time.sleep(0.2)
    F.check(s.stop("w1") == 0, "w1 did not stop cleanly")
    slow_at = arrived.get("hol-slow")
    before = sum(1 for q in quick if q["id"] in arrived and slow_at and arrived[q["id"]] < slow_at)
    results = {r["id"]: r for r in s.read("results")}
    epoch = kt.iso_seconds
    slow_end = epoch(results["hol-slow"]["finished_at"]) if "hol-slow" in results else 0
    early = [q["id"] for q in quick if q["id"] in results
             and epoch(results[q["id"]]["finished_at"]) < slow_end - MARGIN]
    held = [i for i in early if not (slow_at and arrived.get(i, 1e18) < slow_at)]
    print(f"{NAME}: slow result after {(slow_at or 0) - t0:.2f} s; {before} of {QUICK} quick results "
          f"arrived before it; last quick at "
          f"{max((arrived.get(q['id'], 0) for q in quick), default=0) - t0:.2f} s", flush=True)
    F.check(slow_at is not None, "the slow job's result never arrived")
    print(f"{NAME}: {len(early)} quick jobs finished over {MARGIN} s before the slow one; "
          f"{len(held)} of them were held back behind it", flush=True)
    F.check(not held, f"quick results held back behind the slow job: {held[:5]}")
    F.check(before >= QUICK // 2, f"only {before} of {QUICK} quick results arrived before the slow one")
    lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), [slow["id"]] + [q["id"] for q in quick])
    F.check(not lost and not dup and not bad, f"lost {lost[:3]} dup {list(dup)[:3]} audit {bad[:3]}")
finally:
    live.kill()
    s.kill_all()
F.finish(NAME)
