"""A full work root is the host's fault, not the job's (issue 13).

Exec isolation stages every job in --work-root; here that is a 2 MB tmpfs of the test's own.
  1. space comes back: one worker; once it serves, the tmpfs is filled to the last byte and
     20 jobs are sent. None may be answered (no internal_error for a reason that is not the
     job's), /healthz must say why, the worker must stay up; then the fill is removed and every
     job must be answered ok, exactly once, by the same process.
  2. the host stays broken: two workers, one with a full work root and --host-fault-ms 4000.
     It must stop by itself with exit 4 and the other worker must answer every job, ok,
     exactly once.
Bounded: every wait has a limit; the tmpfs mounts are removed in finally."""
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import Failures, free_port, http_get  # noqa: E402
import kafka_test as kt  # noqa: E402

NAME = "hostfault"
F = Failures()
kt.require_broker(NAME)
mounts = []


def small_tmpfs():
    d = tempfile.mkdtemp(prefix="codeq-hostfault-")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", d],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"mount tmpfs {d}: {p.stderr} (the test runs as root, like CI)")
    mounts.append(d)
    return pathlib.Path(d)


def fill(d):
    """Writes until the file system refuses: the next staging directory cannot be made."""
    with open(d / "fill", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    k = 0
    while True:  # tmpfs also counts inodes in blocks: take the last ones with empty dirs
        try:
            os.mkdir(d / f"fill-{k}")
            k += 1
        except OSError:
            break
        if k > 100000:
            break


def unfill(d):
    (d / "fill").unlink()
    for p in d.glob("fill-*"):
        p.rmdir()




def http(port, path):
    try:
        return http_get(f"http://127.0.0.1:{port}{path}")
    except OSError as e:
        return None, str(e)


def wait_serving(s, wid, limit=60):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if "assigned partitions [" in (s.logdir / f"{wid}.log").read_text(errors="replace"):
            return True
        time.sleep(0.3)
    return False


def space_comes_back():
    s = kt.Setup(NAME + "-back", 2)
    root = small_tmpfs()
    port = free_port()
    try:
        w = s.start("w1", "--isolation", "exec", "--slots", "2", "--work-root", str(root / "w"),
                    "--http", f"127.0.0.1:{port}", "--host-fault-ms", "120000")
        F.check(wait_serving(s, "w1"), "w1 never got partitions")
        fill(root)
        ids = [f"back-{i}" for i in range(20)]
        s.produce_jobs([{"id": i, "code": f"print('{i}')"} for i in ids])
        time.sleep(8)
        early = [r for r in s.read("results") if r["id"] in ids]
        F.check(not early, f"{len(early)} jobs answered while the work root was full: "
                           f"{[(r['id'], r['status'], r.get('message')) for r in early[:3]]}")
        code, body = http(port, "/healthz")
        F.check(code == 503 and "sandbox cannot run" in body, f"/healthz while full: {code} {body!r}")
        code, body = http(port, "/readyz")
        F.check(code == 503, f"/readyz while full: {code} {body!r}")
        log = (s.logdir / "w1.log").read_text(errors="replace")
        F.check('"event":"host_fault"' in log and "No space left on device" in log,
                "no host_fault log naming the cause")
        F.check(w.poll() is None, f"w1 exited while the work root was full ({w.returncode})")
        t0 = time.monotonic()
        unfill(root)
        got = s.wait_results(ids, 90, every=1)
        took = time.monotonic() - t0
        print(f"{NAME}: space back: {len({r['id'] for r in got})} of {len(ids)} answered "
              f"{took:.1f} s after space came back; statuses {sorted({r['status'] for r in got})}",
              flush=True)
        F.check({r["status"] for r in got} == {"ok"} and len(got) == len(ids),
                f"after space came back: {[(r['id'], r['status']) for r in got if r['status'] != 'ok'][:5]}, "
                f"{len(got)} results for {len(ids)} jobs")
        lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), ids)
        F.check(not lost and not dup and not bad, f"lost {lost} dup {dup} audit {bad}")
        F.check(w.poll() is None, f"w1 is not the process that answered ({w.returncode})")
        log = (s.logdir / "w1.log").read_text(errors="replace")
        F.check('"event":"host_recovered"' in log, "no host_recovered log")
        code, body = http(port, "/healthz")
        F.check(code == 200, f"/healthz after recovery: {code} {body!r}")
        left = sorted(p.name for p in (root / "w").glob("job-*"))
        F.check(not left, f"staging directories left in the work root: {left[:5]}")
        F.check(s.stop("w1") == 0, "w1 did not stop cleanly")
    finally:
        s.kill_all()


def host_stays_broken():
    s = kt.Setup(NAME + "-gone", 4)
    root = small_tmpfs()
    try:
        sick = s.start("sick", "--isolation", "exec", "--slots", "2", "--work-root", str(root / "w"),
                       "--host-fault-ms", "4000")
        well = s.start("well", "--isolation", "exec", "--slots", "2")
        F.check(wait_serving(s, "sick") and wait_serving(s, "well"), "the workers never got partitions")
        fill(root)
        ids = [f"gone-{i}" for i in range(40)]
        s.produce_jobs([{"id": i, "code": f"print('{i}')"} for i in ids])
        try:
            rc = sick.wait(timeout=90)
        except subprocess.TimeoutExpired:
            rc = None
        F.check(rc == 4, f"the worker with a full work root ended with {rc}, want 4 (gave up)")
        got = s.wait_results(ids, 90, every=1)
        by = {}
        for r in got:
            by[r["worker"]] = by.get(r["worker"], 0) + 1
        print(f"{NAME}: host stays broken: sick exit {rc}; {len(got)} results for {len(ids)} jobs, "
              f"by worker {by}; statuses {sorted({r['status'] for r in got})}", flush=True)
        F.check({r["status"] for r in got} == {"ok"} and len(got) == len(ids),
                f"{[(r['id'], r['status'], r.get('message')) for r in got if r['status'] != 'ok'][:3]}")
        F.check(set(by) == {"well"}, f"answered by {by}: the sick worker answered jobs")
        lost, dup, bad = kt.exactly_once(s.read("results"), s.read("audit"), ids)
        F.check(not lost and not dup and not bad, f"lost {lost} dup {dup} audit {bad}")
        log = (s.logdir / "sick.log").read_text(errors="replace")
        F.check('"event":"host_fault_gave_up"' in log, "no host_fault_gave_up log")
        F.check(s.stop("well") == 0, "well did not stop cleanly")
    finally:
        s.kill_all()


try:
    space_comes_back()
    host_stays_broken()
finally:
    for d in mounts:
        subprocess.run(["umount", "-l", d], capture_output=True)
        try:
            os.rmdir(d)
        except OSError:
            pass
F.finish(NAME)
