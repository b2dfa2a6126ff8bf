"""Concurrency isolation: 20 jobs at once (20 parallel `codeq run` processes of
tests/abuse/_concurrent.py; 10 in the emulated cgroup v2 guest) cannot see each other's files, processes or sockets.

Each job's stdin carries its index, the suite token and a port; the job reports what it found
(see _concurrent.py). Checked per job: status ok and schema-valid; it found its own secret in
its working directory and /tmp (the search works) and no other job's; /proc lists at most 4
small pids (its own namespace); no connection to job 0's TCP or abstract-socket listener;
the flocks job 0 holds on files every job has (interpreter, stdlib, /dev/null, /dev/urandom,
/etc/passwd) are not visible to the others (a covert channel, reported as its own check); the concurrent jobs ran under as many distinct uids (RLIMIT_NPROC is per uid
host-wide: a shared uid is a shared process budget). On the host: no secret file and no job process remains, and jobs overlapped
in time (otherwise the test proves nothing and fails).
Then a pair: a "hog" job holding as many processes as its limit allows and a "victim" job that
needs 8 processes meanwhile (tests/abuse/_budget.py): the victim must get them.
Summary: `abuse_concurrency: N passed, M failed` (one check per job plus the suite checks)."""
import concurrent.futures
import json
import os
import pathlib
import re
import secrets
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import abuse_host as host  # noqa: E402
from abuse import POLICY, PROLOGUE, Run, pid_namespace_in_place  # noqa: E402
from codeq_test import (BIN, ISOLATION, ISOLATION_ARGS, RESULT, SRC, TIME_SCALE, Failures, free_port,  # noqa: E402
                        scaled_ms, schema_errors)

# In the emulated guest (CODEQ_TEST_TIME_SCALE > 1) 10: its 2 vCPUs are two host threads, and
# under ctest -j2 a host test beside it (the fuzz harnesses' clang build) slowed 20 jobs to
# 13-62 s each, past the 60 s maximum a job may have; alone they took 10-18 s. What one job
# may see of another does not depend on whether 10 or 20 run beside it.
JOBS = 20 if TIME_SCALE == 1 else 10
# Scaled where processes run slower (CODEQ_TEST_TIME_SCALE, the emulated cgroup v2 guest), within
# the 60 s maximum: all jobs on 2 CPUs must get to report. CPU time as much as wall time: the
# guest's kernel counts the time its vCPU thread waited on the host as the job's CPU time.
WALL_MS = scaled_ms(20000)
CPU_MS = scaled_ms(5000)
BUDGET_WALL_MS = scaled_ms(10000)
# In zygote mode each `codeq run` first starts its own zygote (numpy preloaded), allowed
# --zygote-start-ms (10 s, scaled). In the emulated guest 20 of them starting at once took
# more than the 60 s of slack this bound had, and the runner killed 19 healthy runs.
START_S = 10 * TIME_SCALE if ISOLATION == "zygote" else 0
# What these runs share or not does not depend on what a zygote preloads, and 20 zygotes each
# importing numpy at once in the emulated guest took more than that allowance too (10 of 20
# runs: "zygote: no ready message"). The suite's heavy preload (abuse.py) stays for the
# single-job cases; here each run's zygote imports only json (the last --zygote-preload wins).
RUN_POLICY = POLICY + (["--zygote-preload", "?json"] if ISOLATION == "zygote" else [])
# What a run may take beyond its job's wall: codeq's own start and teardown, 20 of them at once
# on 2 CPUs, which in the emulated guest took 35 s of the runs' 55 s (and twice that on a
# busier CI machine, past a flat 60 s slack).
SLACK_S = 60 * min(TIME_SCALE, 4)
PROGRAM = PROLOGUE + (SRC / "tests" / "abuse" / "_concurrent.py").read_text()
F = Failures()




def one(i, suite, port, td):
    token = "cqab" + secrets.token_hex(4)
    stdin = pathlib.Path(td) / f"stdin-{i}.json"
    stdin.write_text(json.dumps({"token": token, "index": i, "suite": suite, "port": port,
                                 "runner_pid": os.getpid()}))
    prog = pathlib.Path(td) / "concurrent.py"
    argv = [BIN, "run", *ISOLATION_ARGS, "--json", "--id", f"abuse-conc-{i}-{token}", *RUN_POLICY, "--wall-ms",
            str(WALL_MS), "--cpu-ms", str(CPU_MS), "--stdin", str(stdin), str(prog)]
    t0 = time.monotonic()
    run = Run(argv, dict(os.environ), hard_s=WALL_MS / 1000 + START_S + SLACK_S)
    progress(f"job {i}", run)
    return i, token, run, t0, time.monotonic()


def progress(what, run):
    """One line as each run ends, so that a suite stopped from outside (the guest's time
    limit) shows which runs had ended and which had not."""
    try:
        status = json.loads(run.stdout)["status"]
    except (ValueError, KeyError, TypeError):
        status = "no result"
    # One write per line: the runs' threads end together and print's separate newline interleaves.
    sys.stdout.write(f"abuse_concurrency: {what} ended after {run.elapsed_ms / 1000:.1f} s: exit {run.rc}, "
                     f"{status}" + (", killed at the runner's bound" if run.killed else "") + "\n")
    sys.stdout.flush()


def check_job(i, token, run, tokens):
    problems = []
    if run.killed:
        return [f"no result: the runner killed `codeq run` at its bound, after {run.elapsed_ms / 1000:.0f} s "
                f"(stderr {run.stderr[-200:]!r})"], "", None
    try:
        r = json.loads(run.stdout)
    except json.JSONDecodeError:
        return [f"stdout is not JSON: {run.stdout[:200]!r} {run.stderr[:200]!r}"], "", None
    errs = schema_errors(RESULT, r)
    if errs:
        problems.append(f"result not schema-valid: {errs[:2]}")
    if r["status"] != "ok":
        problems.append(f"status {r['status']} ({r['message']}): {r['stderr'][-300:]!r}")
    out = r["stdout"]
    own = re.search(r"OWN:(\d+)", out)
    if not own or int(own.group(1)) < 2:
        problems.append(f"did not find its own secrets (search broken): {out[:200]!r}")
    saw = re.findall(r"SAW:(\S+)", out)
    if saw:
        others = [t for t in saw if t in tokens]
        problems.append(f"saw {len(saw)} other jobs' secret files ({len(others)} of this run)")
    m = re.search(r"PIDS:\[([^\]]*)\]", out)
    pids = [int(x) for x in m.group(1).split(",") if x.strip()] if m else None
    if pids is None or len(pids) > 4 or max(pids or [0]) > 100:
        problems.append(f"/proc shows other processes: {pids[:12] if pids else pids}")
    esc = re.findall(r"ESCAPED:\S+", out + r["stderr"])
    if esc:
        problems.append("escaped: " + " ".join(sorted(set(esc))))
    left = host.alive_of(run.procs) + host.with_comm(token)
    if left:
        problems.append(f"job processes remain: {left[:5]}")
        host.kill_tree(left)
    found = host.markers(token)
    if found:
        problems.append(f"secret files on the host: {found[:4]}")
        for f in found:
            host.remove(f)
    flock = " ".join(sorted(set(re.findall(r"FLOCK:held-by-another-job (\S+)", out))))
    uid = re.search(r"UID:(\d+)", out)
    return problems, flock, int(uid.group(1)) if uid else None


def report_times(runs):
    """How close the runs came to their bounds: the runner's and the jobs' own wall limit."""
    took = sorted(run.elapsed_ms / 1000 for _, _, run, _, _ in runs)
    walls = []
    for *_, run, _, _ in runs:
        try:
            walls.append(json.loads(run.stdout)["usage"]["wall_ms"] / 1000)
        except (ValueError, KeyError, TypeError):
            pass
    walls.sort()
    print(f"abuse_concurrency: {JOBS} runs took {took[0]:.1f}-{took[-1]:.1f} s, median {took[JOBS // 2]:.1f} s "
          f"(runner bound {WALL_MS / 1000 + START_S + SLACK_S:.0f} s); jobs' usage.wall_ms "
          + (f"{walls[0]:.1f}-{walls[-1]:.1f} s" if walls else "none") + f" of {WALL_MS / 1000:.0f} s", flush=True)


def budget():
    """A job using its whole process budget must not starve a concurrent job of its own."""
    with tempfile.TemporaryDirectory(prefix="codeq-abuse-budget-") as td:
        prog = pathlib.Path(td) / "budget.py"
        prog.write_text(PROLOGUE + (SRC / "tests" / "abuse" / "_budget.py").read_text())

        def go(role):
            token = "cqab" + secrets.token_hex(4)
            stdin = pathlib.Path(td) / f"{role}.json"
            stdin.write_text(json.dumps({"token": token, "role": role}))
            # Memory to spare, so that the process budget is what runs out: in zygote mode with
            # numpy preloaded each forked process costs ~0.6 MB more (docs/zygote.md).
            argv = [BIN, "run", *ISOLATION_ARGS, "--json", "--id", f"abuse-budget-{role}-{token}", *RUN_POLICY,
                    "--wall-ms", str(BUDGET_WALL_MS), "--cpu-ms", str(CPU_MS), "--memory-mb", "128", "--stdin", str(stdin), str(prog)]
            run = Run(argv, dict(os.environ), hard_s=BUDGET_WALL_MS / 1000 + START_S + SLACK_S)
            progress(f"budget {role}", run)
            return role, token, run

        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            runs = list(pool.map(go, ("hog", "victim")))
    out = {}
    for role, token, run in runs:
        try:
            out[role] = json.loads(run.stdout)
        except json.JSONDecodeError:
            out[role] = {"status": "no-json", "stdout": run.stdout[:200].decode(errors="replace")}
        left = host.alive_of(run.procs) + host.with_comm(token)
        F.check(not left, f"budget {role}: job processes remain: {left[:5]}")
        host.kill_tree(left)
    hog, victim = out["hog"], out["victim"]
    F.check(hog.get("status") == "ok" and "HOG-DONE" in hog.get("stdout", ""),
            f"budget hog: {hog.get('status')} {hog.get('message')!r} "
            f"{hog.get('stdout', '')[-200:]!r} {hog.get('stderr', '')[-300:]!r}")
    F.check(victim.get("status") == "ok" and "FORKED:8" in victim.get("stdout", ""),
            f"a job holding its whole process budget starved a concurrent job: victim "
            f"{victim.get('status')} {victim.get('stdout', '')[-200:]!r}")


def main():
    ok, seen = pid_namespace_in_place()
    if not F.check(ok, f"safety probe: a job's own pid is {seen!r}; nothing else was run"):
        F.finish("abuse_concurrency")
    suite = secrets.token_hex(4)
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="codeq-abuse-conc-") as td:
        (pathlib.Path(td) / "concurrent.py").write_text(PROGRAM)
        with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
            # Job 0 (listener, lock holder) first, so the others find it in place.
            first = pool.submit(one, 0, suite, port, td)
            time.sleep(1.5)
            rest = list(pool.map(lambda i: one(i, suite, port, td), range(1, JOBS)))
            runs = [first.result()] + rest
    report_times(runs)
    tokens = {t for _, t, _, _, _ in runs}
    overlap = min(end for *_, end in runs) > max(start for *_, start, _ in runs)
    F.check(overlap, f"the {JOBS} jobs did not all run at the same time")
    channels, uids = [], []
    for i, token, run, _, _ in runs:
        problems, flock, uid = check_job(i, token, run, tokens)
        uids.append(uid)
        F.check(not problems, f"job {i}: " + "; ".join(problems))
        if flock:
            channels.append(f"job {i}: {flock}")
    F.check(not channels, f"flock on files every job has is a channel between jobs (job 0 "
                          f"holds the locks): {channels[:5]}")
    # RLIMIT_NPROC counts per uid on the whole host: jobs sharing a uid share one process
    # budget, so one job's threads can make another's fork() fail (and without pid
    # namespaces they could signal each other).
    F.check(None not in uids and len(set(uids)) == JOBS,
            f"concurrent jobs shared uids: {len(set(uids))} distinct among {JOBS}: {sorted(set(map(str, uids)))[:5]}")
    left = host.markers(suite)
    F.check(not left, f"secret files left on the host: {left[:5]}")
    for f in left:
        host.remove(f)
    budget()
    F.finish("abuse_concurrency")


if __name__ == "__main__":
    main()
