"""The abuse suite: hostile programs in tests/abuse/ run through `codeq run --json`, each checked
on the job's result AND on the host.

A case is tests/abuse/NN_name.py. tests/abuse/_prologue.py (the attacker's toolkit) is
prepended before it runs, under tests/abuse/_policy.json (every validator rule that can be
disabled is, no runtime guard: the suite tests the sandbox, not the filter in front of it).
The job's stdin is one JSON object: token, suite, runner_pid and, with the host resources
below, sentinel_pid, tcp_port, udp_port, unix_path, abstract.
Header comments declare what must happen, one per line:

  # expect: status=timeout            the result's status (also: status in ok,error,...)
  # expect: stdout-contains=TEXT      (also stdout-not-contains, stderr-contains, result-not-contains)
  # expect: signal=SIGSEGV            the result's signal
  # expect: message-contains=TEXT     the result's message
  # expect: truncated=stdout          stdout (or stderr, or any) truncated
  # expect: base64-present            stdout_base64 carried (non-UTF-8 output)
  # expect: artifacts-include=a,b     these paths are among the result's artifacts
  # expect: artifacts-exclude=a,b     these are not (symlinks, hard links, FIFOs, devices)
  # expect: artifacts-bytes-include=B64,...  these paths, given as base64 of their bytes, are
  #                                   among the artifacts (path_base64, or path when UTF-8)
  # expect: artifacts-count<=N        at most N artifacts
  # expect: wall-ms<=N                `codeq run` took at most N ms, measured by the runner (zygote
  #                                   mode: the job's usage.wall_ms, since `codeq run` first
  #                                   starts its zygote; see ZYGOTE_START_MS)
  # expect: cpu-ms<=N                 usage.cpu_ms of the whole job
  # expect: host-procs<=N             peak number of the job's processes seen from the host
  # expect: codeq-rss-mb<=N           peak RSS (VmHWM, sampled) of the `codeq run` process
  #                                   itself, the worker side, not the job's
  # expect-zygote: status=error       in zygote mode (CODEQ_TEST_ISOLATION=zygote) these lines
  #                                   replace every `expect:` line: for what the mode changes by
  #                                   design (its seccomp filter denies execve: no subprocess);
  #                                   `expect-exec:` likewise for exec mode
  # host: sentinel                    start `sleep 300` on the host; it must be alive afterwards
  # host: listener                    TCP+UDP listeners on 127.0.0.1, a unix socket in the host's
  #                                   /tmp and an abstract one; they must receive nothing
  # host: linger_ms=N                 wait N ms after the job before the host checks (orphans)
  # host: sysvipc                     no SysV IPC object keyed by the token is on the host
  # host: pagecache                   two host files under /usr (the job gets their paths as
  #                                   ctx["pagecache"]) fully cached before the job must still
  #                                   be cached after it (fincore): no job evicts the host's cache
  # host: coldcache                   two host files under /usr (ctx["coldcache"]) dropped from
  #                                   the host's page cache before the job must still be out of
  #                                   it after: a job's read-ahead advice queues no reads
  # host: blockdev                    ctx["blockdev"]: whether the host's /usr is on a block
  #                                   device the jobs' I/O limits throttle (not on 9p, tmpfs)
  # limits: wall_ms=2000 memory_mb=64 passed as --wall-ms 2000 --memory-mb 64
  # needs: numpy                      precondition on the host's /usr/bin/python3; when unmet the
  #                                   case is NOT counted and the summary says why
  # after: NN_name                    run only once that case has finished (second phase)
  # solo: why                         run alone, after the others: a case that uses its whole
  #                                   process budget must not decide the fate of the case
  #                                   beside it (abuse_concurrency tests that interference)

Checked for every case besides its header: the result is one schema-valid JSON object; it
reached the sandbox (not `rejected`); a case ending ok/error printed a refused attempt
("BLOCKED:") or its declared stdout-contains text (so a crash before the attack cannot pass);
"ESCAPED:" appears nowhere in stdout/stderr; the worker's canary environment value appears
nowhere in the result; sandbox_profile, when present, is "full"; no host file named after the
token exists (abuse_host.MARKER_DIRS); no process of the job remains (neither a recorded
descendant of `codeq run` nor a process with the token as comm); no codeq cgroup the job was
in remains (seen while it ran, or named job-<codeq run pid>-<n>, sandbox/sbx_cgroup*.c's
naming); `codeq run` ended within wall_ms + 3 s (+ ZYGOTE_START_MS in zygote mode) and the job's
own usage.wall_ms, as the sandbox measured it, is within wall_ms + 1 s.
Before any case, a probe job must see itself with a small pid (its own pid namespace): if not,
nothing hostile runs and the suite fails. Three suite-wide checks at the end: no host file named after the suite token and no process
of this run's jobs (comm = one of its tokens); no cgroup named after one of the suite's `codeq run`
processes (job-<pid>-<n>); MemAvailable back within 512 MB of where it started.
`abuse: N passed, M failed` counts one check per case plus the probe and those three.
Cases run two at a time; the whole suite takes about a minute. Arguments select cases by
substring; ABUSE_VERBOSE=1 prints each job's status and output; ABUSE_SANDBOX_PROFILE runs
against a weaker profile on purpose (then sandbox_profile must be that one)."""
import base64
import concurrent.futures
import json
import os
import pathlib
import re
import resource
import secrets
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import abuse_host as host  # noqa: E402
from codeq_test import (BIN, DEFAULT_TIME_MS, ISOLATION, ISOLATION_ARGS, MAX_TIME_MS, RESULT, SRC,  # noqa: E402
                        TIME_SCALE, Failures, scaled_ms, schema_errors)

ABUSE = SRC / "tests" / "abuse"
PROLOGUE = (ABUSE / "_prologue.py").read_text()
SUITE = secrets.token_hex(4)
CANARY = f"canary-{secrets.token_hex(8)}"
# CODEQ_TEST_TIME_SCALE=N (the cgroup v2 guest under software emulation, tests/cgroup2/): a
# process runs up to ~40x slower there, so every time in the suite is scaled by N: the jobs'
# wall and CPU limits (so that a memory bomb reaches its allocation before its deadline), the
# time expectations and the runner's own bounds. What is checked is unchanged.
SCALE = TIME_SCALE
# How often a run's process tree is sampled. One pass over /proc costs ~2 ms here and ~45 ms in
# the emulated guest, where two runs polling every 50 ms took most of a vCPU from their jobs;
# there it is sampled every 200 ms, still many times over a fork bomb's life.
POLL_S = 0.05 * min(SCALE, 4)
F = Failures()
OUR_PIDS = set()  # every `codeq run` this suite started: job cgroups are named job-<pid>-<n>
TOKENS = set()  # every case token of this run (another run of the suite may be going on)
HELP = subprocess.run([BIN, "run", "--help"], capture_output=True, text=True, timeout=30).stdout
# The validator is a filter in front of the sandbox; the suite tests the sandbox, so it runs
# with a test-only policy that disables every rule that can be disabled and the runtime guard.
POLICY = ["--policy", str(ABUSE / "_policy.json")] if "--policy" in HELP else []
# That policy allows every module (os, ctypes, subprocess, ...), and a zygote preloads what the
# policy allows by default: a zygote holding all of them is no deployment's. In zygote mode the
# suite's zygote preloads what the heaviest shipped profile's does instead (data: numpy).
# A `codeq run` in zygote mode first starts its zygote (interpreter, numpy and the other preloads,
# a warm-up job): 0.3 s alone, up to ~3 s on the 2-core CI machine under ctest -j2. That is once
# per worker, not per job, so the runner's bounds allow for it; the job's own wall time is held
# to wall_ms + 1 s in both modes by the usage.wall_ms check.
ZYGOTE_START_MS = 10000 if ISOLATION == "zygote" else 0
if ISOLATION == "zygote":
    _DATA = json.loads((SRC / "policies" / "data.json").read_text())
    POLICY = POLICY + ["--zygote-preload", ",".join("?" + m for m in _DATA["modules"])]
# ABUSE_SANDBOX_PROFILE=no-seccomp (or no-cgroup) runs the suite against a weaker profile on
# purpose, to see which cases each layer is responsible for; CI runs the default, full.
PROFILE = os.environ.get("ABUSE_SANDBOX_PROFILE", "full")
if PROFILE != "full":
    POLICY = POLICY + ["--sandbox-profile", PROFILE]

# A permissive host, as a service unit with LimitNICE=-20, LimitRTPRIO, LimitMEMLOCK=infinity
# gives the worker: every case runs under it, and what a job may do must not come from it
# (93_host_rlimits). `codeq run` and its zygote inherit the runner's limits. Raising a hard
# limit needs CAP_SYS_RESOURCE (the cgroup v2 guest's root has it; this VM's root does not),
# so without it each soft limit goes up to its hard one (here MEMLOCK 8 MB, SIGPENDING ~96k).
for _res, _value in ((resource.RLIMIT_NICE, 40), (resource.RLIMIT_RTPRIO, 99),
                     (resource.RLIMIT_MEMLOCK, resource.RLIM_INFINITY),
                     (resource.RLIMIT_MSGQUEUE, resource.RLIM_INFINITY),
                     (resource.RLIMIT_SIGPENDING, 1 << 20)):
    try:
        resource.setrlimit(_res, (_value, _value))
    except ValueError:
        resource.setrlimit(_res, (resource.getrlimit(_res)[1],) * 2)


def parse_header(text):
    h = {"expect": [], "host": [], "limits": {}, "needs": [], "after": [], "solo": [],
         "expect-exec": [], "expect-zygote": []}
    for line in text.splitlines():
        m = re.match(r"#\s*(expect-exec|expect-zygote|expect|host|limits|needs|after|solo):\s*(.*?)\s*$",
                     line)
        if not m:
            continue
        key, val = m.groups()
        if key == "limits":
            for kv in val.split():
                k, v = kv.split("=", 1)
                h["limits"][k] = int(v)
        else:
            h[key].append(val)
    if h[f"expect-{ISOLATION}"]:
        h["expect"] = h[f"expect-{ISOLATION}"]
    return h


def limit_args(limits):
    args, bad = [], []
    for k, v in limits.items():
        flag = "--" + k.replace("_", "-")
        if flag not in HELP:
            bad.append(f"codeq run has no {flag} (limit {k})")
        args += [flag, str(v)]
    return args, bad


class Run:
    """One `codeq run` of a case, watched from the host while it runs."""

    def __init__(self, argv, env, hard_s):
        self.procs, self.cgroups, self.peak, self.rss_mb = {}, set(), 0, 0
        for attempt in range(10):  # a concurrent rebuild replaces the binary for a moment
            try:
                p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
                break
            except OSError:
                if attempt == 9:
                    raise
                time.sleep(1)
        t0 = time.monotonic()
        self.pid = p.pid
        OUR_PIDS.add(p.pid)
        out, err = {}, {}
        readers = [threading.Thread(target=lambda: out.setdefault("b", p.stdout.read())),
                   threading.Thread(target=lambda: err.setdefault("b", p.stderr.read()))]
        for t in readers:
            t.start()
        self.killed = False
        while time.monotonic() - t0 < hard_s:
            pid, status, ru = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            self.watch(p.pid)
            time.sleep(POLL_S)
        else:
            self.killed = True
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        self.elapsed_ms = int((time.monotonic() - t0) * 1000)
        del ru  # wait4's rusage covers the job's processes too; the worker's own is VmHWM
        for t in readers:
            t.join(timeout=30)
        self.stdout, self.stderr, self.rc = out.get("b", b""), err.get("b", b""), p.returncode

    def watch(self, root):
        self.rss_mb = max(self.rss_mb, host.hwm_mb(root))
        d = host.descendants(root, max_age_s=POLL_S / 2)
        self.peak = max(self.peak, len(d))
        if len(self.procs) < 20000:
            self.procs.update(d)
        for pid in list(d)[:50]:
            self.cgroups.update(host.job_cgroups(pid))


def check_expect(e, r, run, problems):
    out, err = r.get("stdout", ""), r.get("stderr", "")
    m = re.match(r"status\s*(=|in)\s*(.*)", e)
    if m:
        want = [s.strip() for s in m.group(2).split(",")]
        if r["status"] not in want:
            problems.append(f"status {r['status']!r} ({r['message']!r}), want {'|'.join(want)}; "
                            f"stderr {err[-240:]!r}")
        return
    k, _, v = e.partition("=")
    k, v = k.strip(), v.strip()
    if "<=" in e:
        k, v = (s.strip() for s in e.split("<=", 1))
        ran = bool(r.get("usage"))  # invalid/rejected/expired answers never reached a sandbox
        got = {"wall-ms": r["usage"]["wall_ms"] if ISOLATION == "zygote" and ran
               else run.elapsed_ms, "cpu-ms": (r.get("usage") or {}).get("cpu_ms"),
               "artifacts-count": len(r.get("artifacts") or []),
               "host-procs": run.peak, "codeq-rss-mb": run.rss_mb}.get(k)
        if k in ("wall-ms", "cpu-ms"):
            v = int(v) * SCALE
        if got is None or got > int(v):
            problems.append(f"{k} {got}, want <= {v}")
    elif k == "stdout-contains" and v not in out:
        problems.append(f"stdout lacks {v!r}: {out[-300:]!r}")
    elif k == "stdout-not-contains" and v in out:
        problems.append(f"stdout has {v!r}")
    elif k == "stderr-contains" and v not in err:
        problems.append(f"stderr lacks {v!r}: {err[-300:]!r}")
    elif k == "result-not-contains" and v in json.dumps(r):
        problems.append(f"result contains {v!r}")
    elif k == "message-contains" and v not in r.get("message", ""):
        problems.append(f"message lacks {v!r}: {r.get('message')!r}")
    elif k == "signal" and r.get("signal") != v:
        problems.append(f"signal {r.get('signal')!r}, want {v}")
    elif k == "truncated":
        t = {"stdout": r["stdout_truncated"], "stderr": r["stderr_truncated"],
             "any": r["stdout_truncated"] or r["stderr_truncated"]}[v]
        if not t:
            problems.append(f"{v} not truncated")
    elif k == "base64-present" and "stdout_base64" not in r:
        problems.append("stdout_base64 missing")
    elif k in ("artifacts-include", "artifacts-exclude"):
        paths = [a["path"] for a in r.get("artifacts") or []]
        for name in v.split(","):
            if (name in paths) != (k == "artifacts-include"):
                problems.append(f"{k} {name}: artifacts are {paths[:10]}")
    elif k == "artifacts-bytes-include":
        raw = [a["path_base64"] if "path_base64" in a else
               base64.b64encode(a["path"].encode()).decode() for a in r.get("artifacts") or []]
        for name in v.split(","):
            if name not in raw:
                problems.append(f"artifacts-bytes-include {base64.b64decode(name)!r}: artifact "
                                f"paths are {[base64.b64decode(x) for x in raw][:10]}")
    elif k not in ("stdout-contains", "stdout-not-contains", "stderr-contains",
                   "result-not-contains", "message-contains", "signal", "truncated",
                   "base64-present",
                   "artifacts-include", "artifacts-exclude", "artifacts-bytes-include"):
        problems.append(f"unknown expectation {e!r}")


def scaled_limits(limits):
    """The case's limits with its times scaled by SCALE; one above the maximum (a case that
    tests the refusal) is left as it is."""
    if SCALE == 1:
        return dict(limits)
    out = dict(limits)
    for k in ("wall_ms", "cpu_ms"):
        v = limits.get(k, DEFAULT_TIME_MS)
        if v <= MAX_TIME_MS:
            out[k] = scaled_ms(v)
    return out


def run_case(path):
    """Runs one case: (name, problems, note explaining a not-counted case or None, whether the
    job's cgroup was seen while it ran)."""
    name = path.stem
    text = path.read_text()
    h = parse_header(text)
    for mod in h["needs"]:
        if subprocess.run(["/usr/bin/python3", "-c", f"import {mod}"], capture_output=True,
                          timeout=60).returncode != 0:
            return name, [], f"{mod} not installed", False
    token = "cqab" + secrets.token_hex(4)
    TOKENS.add(token)
    job_id = f"abuse-{name}-{token}"
    limits = scaled_limits(h["limits"])
    args, problems = limit_args(limits)
    wall = limits.get("wall_ms", DEFAULT_TIME_MS)
    ctx = {"token": token, "suite": SUITE, "runner_pid": os.getpid()}
    sentinel = host.Sentinel() if "sentinel" in h["host"] else None
    listener = host.Listener() if "listener" in h["host"] else None
    pagecache = host.PageCache() if "pagecache" in h["host"] else None
    if pagecache:
        ctx["pagecache"] = pagecache.paths
    coldcache = host.ColdCache() if "coldcache" in h["host"] else None
    if coldcache:
        ctx["coldcache"] = coldcache.paths
    if "blockdev" in h["host"]:
        ctx["blockdev"] = host.usr_blockdev()
    if sentinel:
        ctx["sentinel_pid"] = sentinel.pid
    if listener:
        ctx["tcp_port"], ctx["udp_port"] = listener.tcp_port, listener.udp_port
        ctx["unix_path"], ctx["abstract"] = listener.unix_path, listener.abstract
    linger = max([int(x.split("=")[1]) for x in h["host"] if x.startswith("linger_ms=")] or [0])
    env = dict(os.environ, CODEQ_ABUSE_CANARY=CANARY, KAFKA_SASL_PASSWORD=CANARY)
    with tempfile.TemporaryDirectory(prefix="codeq-abuse-") as td:
        prog = pathlib.Path(td) / f"{name}.py"
        prog.write_text(PROLOGUE + text)
        stdin = pathlib.Path(td) / "stdin.json"
        stdin.write_text(json.dumps(ctx))
        argv = [BIN, "run", *ISOLATION_ARGS, "--json", "--id", job_id, *POLICY, *args, "--stdin", str(stdin),
                str(prog)]
        run = Run(argv, env, hard_s=min(wall / 1000 + 30 * SCALE, 90 * SCALE))  # 83 asks for an hour
    if run.killed:
        problems.append("codeq run did not end within wall + 30 s or 90 s (killed by the runner)")
    if run.elapsed_ms > wall + (3000 + ZYGOTE_START_MS) * SCALE:
        problems.append(f"codeq run took {run.elapsed_ms} ms, wall limit {wall} ms")
    try:
        r = json.loads(run.stdout)
    except json.JSONDecodeError:
        r = None
        problems.append(f"stdout is not one JSON object: {run.stdout[:200]!r} {run.stderr[:300]!r}")
    if r is not None:
        errs = schema_errors(RESULT, r)
        if errs:
            problems.append(f"result not schema-valid: {errs[:3]}")
        if r.get("status") == "rejected":
            problems.append(f"rejected by the validator, never reached the sandbox: {r.get('findings')}")
        job_wall = (r.get("usage") or {}).get("wall_ms")
        if r.get("status") not in ("invalid", "rejected", "expired") and \
                (job_wall is None or job_wall > wall + 1000 * SCALE):
            problems.append(f"the job ran {job_wall} ms by its own usage, wall limit {wall} ms")
        raw = r.get("stdout", "") + r.get("stderr", "")
        for k in ("stdout_base64", "stderr_base64"):
            if k in r:
                raw += base64.b64decode(r[k]).decode("latin-1")
        hits = sorted(set(re.findall(r"ESCAPED:[^\s]*", raw)))
        if hits:
            problems.append(f"escaped: {' '.join(hits)[:600]}")
        if r.get("sandbox_profile", "full") != PROFILE:
            problems.append(f"ran under sandbox profile {r['sandbox_profile']!r}, not {PROFILE}")
        if CANARY in json.dumps(r):
            problems.append("the worker's canary environment value is in the result")
        for e in h["expect"]:
            if "status" in r:
                check_expect(e, r, run, problems)
        # A case that ran to its end must show it attacked: a refused attempt (BLOCKED:) or
        # its own declared output; otherwise a crash before the attack would pass silently.
        if r.get("status") in ("ok", "error") and "BLOCKED:" not in r.get("stdout", "") and \
                not any(e.startswith("stdout-contains=") for e in h["expect"]):
            problems.append(f"no refused attempt reported (did the attack run?): "
                            f"stdout {r.get('stdout', '')[-200:]!r} stderr {r.get('stderr', '')[-240:]!r}")
    if os.environ.get("ABUSE_VERBOSE") and r is not None:
        print(f"--- {name}: {r['status']} {r['message']!r}\n{r['stdout'][-1500:]}{r['stderr'][-500:]}",
              flush=True)
    if linger:
        time.sleep(linger / 1000)
    if pagecache:
        for path, before, after in pagecache.dropped():
            problems.append(f"host page cache of {path}: {before} bytes before the job, {after} after")
    if coldcache:
        for path, before, after, size in coldcache.filled():
            problems.append(f"read-ahead advice read {path}: {before} of {size} bytes cached "
                            f"before the job, {after} after")
    host_checks(name, token, run, sentinel, listener, problems, h["host"])
    return name, problems, None, bool(run.cgroups)


def host_checks(name, token, run, sentinel, listener, problems, h_host=()):
    if sentinel:
        if not sentinel.alive():
            problems.append(f"host sentinel pid {sentinel.pid} was killed")
        sentinel.stop()
    if "sysvipc" in h_host:
        key = int(token[4:], 16) & 0x7FFFFFFF
        left = host.sysvipc_with_key(key)
        if left:
            problems.append(f"SysV IPC objects of the job exist on the host: {left}")
    if listener:
        got = listener.received()
        if got:
            problems.append(f"host listener received: {got}")
        listener.close()
    left = sorted(set(host.alive_of(run.procs)) | set(host.with_comm(token)))
    if left:
        problems.append(f"{len(left)} job processes remain on the host: {left[:10]}")
        host.kill_tree(left)
    # Seen while it ran, or named after its `codeq run` (sandbox/sbx_cgroup*.c: job-<pid>-<n>).
    cg = [c for c in run.cgroups if os.path.exists(c)]
    cg += [d for d, _ in host.codeq_cgroups() if os.path.basename(d).startswith(f"job-{run.pid}-")]
    if cg:
        problems.append(f"job cgroups remain: {cg[:5]}")
    found = host.markers(token)
    if found:
        problems.append(f"host files created by the job: {found[:8]}")
        for f in found:
            host.remove(f)


def report(name, problems, note):
    if note:
        print(f"NOT COUNTED: {name}: {note}", flush=True)
        return
    F.check(not problems, f"{name}: " + "; ".join(problems))
    if not problems:
        print(f"ok: {name}", flush=True)


def pid_namespace_in_place():
    """Safety first: hostile cases (kill(-1, 9) among them) run only if a job sees itself with
    a small pid, i.e. inside its own pid namespace."""
    with tempfile.TemporaryDirectory(prefix="codeq-abuse-") as td:
        probe = pathlib.Path(td) / "probe.py"
        probe.write_text("import os\nprint(os.getpid())\n")
        p = subprocess.run([BIN, "run", *ISOLATION_ARGS, "--json", *POLICY, str(probe)], capture_output=True,
                           text=True, timeout=60)
    try:
        r = json.loads(p.stdout)
        return r["status"] == "ok" and int(r["stdout"]) < 10, r["stdout"].strip()
    except (json.JSONDecodeError, KeyError, ValueError):
        return False, (p.stdout + p.stderr)[:300]


def main():
    ok, seen = pid_namespace_in_place()
    if not F.check(ok, f"safety probe: a job's own pid is {seen!r}, not a small pid of its own "
                       f"namespace; no hostile case was run"):
        F.finish("abuse")
    only = sys.argv[1:]
    cases = sorted(p for p in ABUSE.glob("[0-9]*.py") if not only or any(o in p.stem for o in only))
    mem0 = host.mem_available_mb()
    notes, seen_cg = [], 0
    heads = {c: parse_header(c.read_text()) for c in cases}
    solo = [c for c in cases if heads[c]["solo"]]
    first = [c for c in cases if not heads[c]["after"] and c not in solo]
    second = [c for c in cases if heads[c]["after"] and c not in solo]
    for phase, width in ((first, 2), (second, 2), (solo, 1)):
        with concurrent.futures.ThreadPoolExecutor(max_workers=width) as pool:
            for name, problems, note, cg in pool.map(run_case, phase):
                report(name, problems, note)
                seen_cg += cg
                if note:
                    notes.append(f"{name} ({note})")
    found = host.markers(SUITE)  # files named after the whole run (35_persist_write)
    stray = host.with_comm("", also=TOKENS)
    F.check(not found and not stray, f"left by the suite's jobs: host files {found[:8]}, "
                                     f"processes {stray[:10]}")
    for f in found:
        host.remove(f)
    host.kill_tree(stray)
    left = [(d, busy) for d, busy in host.codeq_cgroups()
            if any(f"job-{pid}-" in os.path.basename(d) for pid in OUR_PIDS)]
    F.check(not left, f"cgroups of this suite's jobs remain (path, populated): {left[:5]}")
    time.sleep(1)
    mem1 = host.mem_available_mb()
    F.check(mem1 >= mem0 - 512, f"MemAvailable {mem0} MB before, {mem1} MB after the suite")
    print(f"abuse: the job's codeq cgroup was observed (and checked gone) in {seen_cg} cases",
          flush=True)
    print(f"abuse: {len(cases) - len(notes)} cases counted; not counted: "
          f"{', '.join(notes) or 'none'}", flush=True)
    F.finish("abuse")


if __name__ == "__main__":
    main()
