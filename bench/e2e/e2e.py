"""bench/e2e: `codeq worker` against the seeds' way, end to end through a real Kafka broker.

In one run, on one broker, with the same jobs and the same number of slots, each phase runs
`build/codeq worker` (default options: zygote, exactly-once; `--policy data` for numpy) and
seed_worker.py (confluent-kafka, subprocess.run per job, at-least-once), each on topics of
its own, and reads their results with read_committed:

  trivial, numpy, cpu100   N jobs queued before the worker starts: throughput from the
                           worker's start to the last result, and from the first batch of
                           results read to the last; CPU per job; peak memory
  latency                  one job at a time, submit -> result read: p50/p90/p99; the
                           worker's memory idle; where the time goes (result timestamps);
                           after --latency-warm queued jobs per partition (see run_latency)

Before the measured runs, a warm-up (--warmup seconds, default 45) runs queued trivial jobs
through each worker in turn, unrecorded but listed in the JSON: a broker that has just started
spends its first minute compiling its hot paths (the first 1,000 codeq jobs cost it 4.75 s of
CPU, 1.2-1.7 s once warm; its JIT's compiler threads still took 0.2-1.2 s per 1,500 jobs
minutes later), which the first phase's numbers would otherwise carry. A broker users run is
warm.

Prints a markdown table (codeq, seeds' way, ratio) and writes JSON (default
bench/results/e2e.json). Every phase is bounded by --phase-timeout: a stuck worker is a
failed phase, not a hung bench. Exit status 1 if any phase failed or any result was wrong.

Run with Debian's /usr/bin/python3 (python3-confluent-kafka): bash bench/e2e/run.sh [...]"""
import argparse
import datetime
import hashlib
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kio  # noqa: E402
import procs  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PHASES = ("trivial", "numpy", "cpu100", "latency")
KINDS = ("codeq", "seed")
DEFAULT_N = {"trivial": 300, "numpy": 100, "cpu100": 60, "latency": 300}
WARMUP_JOBS = 500  # per warm-up run: a few seconds of either worker
QUICK_N = {"trivial": 30, "numpy": 12, "cpu100": 6, "latency": 15}
GC_PAUSE = re.compile(r"^\[(\S+)\].*\bPause\b.* (\d+(?:\.\d+)?)ms$")
CPU_JOB = ("import time\nt = time.process_time()\nn = 0\n"
           "while time.process_time() - t < 0.1:\n    n += 1\nprint(n > 0)")


class PhaseFailed(Exception):
    pass


def job(phase, k, prefix):
    """(job, expected stdout) number k of a phase."""
    if phase in ("trivial", "latency"):
        code, out = f"i = {k}\nprint(i + 1)", f"{k + 1}\n"
    elif phase == "numpy":
        code, out = "import numpy as np\nprint(np.arange(1000).sum())", "499500\n"
    else:
        code, out = CPU_JOB, "True\n"
    return {"id": f"{prefix}-{k:05d}", "code": code}, out


def pct(values, q):
    """Nearest-rank percentile."""
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def iso(ts):
    return datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


class Worker:
    """One worker process in a session of its own (so that what it leaves behind can be
    killed as a group), reaped with os.wait4 for its lifetime CPU including reaped children."""

    def __init__(self, kind, cfg, topics, phase, logdir):
        if kind == "codeq":
            args = [cfg.codeq, "worker", "-b", cfg.brokers, "-g", topics.group, "--instance-id",
                    topics.group, "--worker-id", topics.group, "--slots", str(cfg.slots),
                    *topics.codeq_args] + (["--policy", "data"] if phase == "numpy" else [])
        else:
            args = ["/usr/bin/python3", os.path.join(HERE, "seed_worker.py"), "-b", cfg.brokers,
                    "-g", topics.group, "--jobs-topic", topics.names["jobs"], "--results-topic",
                    topics.names["results"], "--slots", str(cfg.slots)]
        self.kind, self.logpath = kind, os.path.join(logdir, f"{phase}-{kind}.log")
        self.log = open(self.logpath, "w")
        self.t0 = time.monotonic()
        self.p = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
        self.pid = self.p.pid
        self.stopped = None

    def check(self):
        if self.stopped is None and not procs.alive(self.pid):
            raise PhaseFailed(f"{self.kind} worker exited early (log {self.logpath})")

    def stop(self, grace=30):
        """SIGTERM, then SIGKILL to the group after grace s: {exit, lifetime_cpu_s, killed}."""
        if self.stopped is not None:
            return self.stopped
        killed, r, t = False, (0, 0, None), time.monotonic()
        try:
            os.kill(self.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            r = os.wait4(self.pid, os.WNOHANG)
            if r[0] == self.pid:
                break
            time.sleep(0.05)
        else:
            killed = True
            os.killpg(self.pid, signal.SIGKILL)
            r = os.wait4(self.pid, 0)
        try:
            os.killpg(self.pid, signal.SIGKILL)   # anything of its session still there
        except (ProcessLookupError, PermissionError):
            pass
        self.p.returncode = os.waitstatus_to_exitcode(r[1])
        self.log.close()
        self.stopped = {"exit": self.p.returncode, "killed": killed,
                        "stop_s": round(time.monotonic() - t, 3),
                        "lifetime_cpu_s": round(r[2].ru_utime + r[2].ru_stime, 3)}
        return self.stopped


class Broker:
    """The broker JVM's own CPU, to show what exactly-once costs on the broker's side, and, for
    the bench's own broker, its GC pauses."""

    def __init__(self, brokers, gc_log=None):
        host, _, port = brokers.split(",")[0].rpartition(":")
        self.pid = procs.listener_pid(int(port)) if host in ("127.0.0.1", "localhost") else None
        self.gc_log = gc_log

    def gc_pauses(self, t0, t1):
        """[(start, end, ms)] of the stop-the-world pauses that overlap wall-clock [t0, t1]
        (-Xlog:gc stamps a pause's line when it ends); None without a GC log."""
        if not self.gc_log:
            return None
        out = []
        try:
            with open(self.gc_log) as f:
                for line in f:
                    m = GC_PAUSE.match(line)
                    if not m:
                        continue
                    end = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f%z")
                    end, ms = end.timestamp(), float(m.group(2))
                    if end - ms / 1000 <= t1 and end >= t0:
                        out.append((end - ms / 1000, end, ms))
        except OSError:
            return None
        return out

    def gc_summary(self, t0, t1):
        p = self.gc_pauses(t0, t1)
        if p is None:
            return None
        return {"pauses": len(p), "total_ms": round(sum(x[2] for x in p), 1),
                "max_ms": round(max((x[2] for x in p), default=0.0), 1)}

    def cpu(self):
        return procs.pid_cpu(self.pid) if self.pid else None

    def version(self):
        """From the classpath scripts/kafka.sh gives it: .../codeq-kafka/4.1.2/lib/*."""
        for a in procs.cmdline(self.pid) if self.pid else []:
            m = re.search(r"codeq-kafka/(\d+\.\d+\.\d+)(-tools)?/lib/", a)
            if m:
                return m.group(1)
        return None


def check_results(reader, expected):
    wrong = []
    for jid, want in expected.items():
        r = reader.arrivals.get(jid, (0, 0, None))[2]
        if r is not None and (r.get("status") != "ok" or r.get("stdout") != want):
            wrong.append({"id": jid, "status": r.get("status"), "stdout": (r.get("stdout") or "")[:80],
                          "stderr": (r.get("stderr") or "")[-300:]})
    return wrong


class Run:
    """One worker kind in one phase: topics, reader, worker, samples; always cleaned up."""

    def __init__(self, cfg, phase, kind, n):
        self.cfg, self.phase, self.kind, self.n = cfg, phase, kind, n
        self.prefix = f"bench-e2e-{phase}-{kind}"   # apart from kafka_e2e's e2e-*
        self.topics = kio.Topics(cfg.brokers, cfg.codeq, self.prefix, cfg.partitions)
        self.out = {"phase": phase, "kind": kind, "jobs": n, "group": self.topics.group}
        self.reader = self.worker = None
        self.mem_peak = {"rss_kb": 0, "pss_kb": 0, "procs": 0}
        self.next_mem = 0.0
        self.t_begin, self.wall_begin = time.monotonic(), time.time()

    def __enter__(self):
        self.topics.create()
        self.prod = kio.producer(self.cfg.brokers)
        self.reader = kio.Reader(self.cfg.brokers, self.topics.names["results"], self.cfg.partitions)
        self.out["load_before"] = procs.loadavg()
        self.busy0, self.broker0 = procs.machine_busy(), self.cfg.broker.cpu()
        return self

    def __exit__(self, et, ev, tb):
        if self.worker:
            self.out["stop"] = self.worker.stop()
        self.out["load_after"] = procs.loadavg()
        busy1, broker1 = procs.machine_busy(), self.cfg.broker.cpu()
        self.out["machine_busy_cpu_s"] = round(busy1[0] - self.busy0[0], 2)
        self.out["machine_total_cpu_s"] = round(busy1[1] - self.busy0[1], 2)
        if broker1 is not None and self.broker0 is not None:
            self.out["broker_cpu_s"] = round(broker1 - self.broker0, 3)
        gc = self.cfg.broker.gc_summary(self.wall_begin, time.time())
        if gc is not None:
            self.out["broker_gc"] = gc
        if self.reader:
            self.out["duplicates"] = self.reader.duplicates
            self.out["unreadable"] = self.reader.bad[:5]
            self.reader.close()
        self.topics.delete()
        self.out["run_s"] = round(time.monotonic() - self.t_begin, 2)
        if et is not None:
            self.out["error"] = f"{et.__name__}: {ev}"
            print(f"e2e: {self.phase}/{self.kind}: FAILED: {ev}", flush=True)
            return isinstance(ev, Exception)
        return False

    def start(self):
        self.worker = Worker(self.kind, self.cfg, self.topics, self.phase, self.cfg.logdir)
        self.deadline = self.worker.t0 + self.cfg.phase_timeout

    def sample_mem(self, force=False):
        now = time.monotonic()
        if force or now >= self.next_mem:
            m = procs.tree_mem(self.worker.pid)
            for k in m:
                self.mem_peak[k] = max(self.mem_peak[k], m[k])
            self.next_mem = now + 0.2
            return m
        return None

    def wait_for(self, ids, what, sample=True):
        """Polls until every id has a result; bounded by the phase's deadline. sample: read
        the worker tree's memory every 0.2 s meanwhile (its smaps_rollup walks take the
        bench's thread, and the mmap lock of each process read, for milliseconds)."""
        while not all(i in self.reader.arrivals for i in ids):
            if time.monotonic() > self.deadline:
                got = sum(i in self.reader.arrivals for i in ids)
                raise PhaseFailed(f"{what}: {got} of {len(ids)} results after "
                                  f"{self.cfg.phase_timeout:.0f} s (log {self.worker.logpath})")
            self.worker.check()
            self.reader.poll(0.02)
            if sample:
                self.sample_mem()


def run_queued(cfg, phase, kind, n):
    """N jobs queued, then the worker started: throughput, CPU per job, peak memory."""
    with Run(cfg, phase, kind, n) as r:
        jobs = [job(phase, k, r.prefix) for k in range(n)]
        kio.produce(r.prod, r.topics.names["jobs"], [j for j, _ in jobs])
        expected = {j["id"]: out for j, out in jobs}
        r.reader.poll(0.2)   # connected and fetching before the clock starts
        r.start()
        first = None
        while len(r.reader.arrivals) < n:
            if time.monotonic() > r.deadline:
                raise PhaseFailed(f"{len(r.reader.arrivals)} of {n} results after "
                                  f"{cfg.phase_timeout:.0f} s (log {r.worker.logpath})")
            r.worker.check()
            if r.reader.poll(0.02) and first is None:
                first = (time.monotonic(), len(r.reader.arrivals), procs.tree_cpu(r.worker.pid))
            r.sample_mem()
        t_last, cpu_last = time.monotonic(), procs.tree_cpu(r.worker.pid)
        r.sample_mem(force=True)
        t0 = r.worker.t0
        after_first = n - first[1]
        r.out.update({
            "start_to_last_s": round(t_last - t0, 3),
            "start_to_first_s": round(first[0] - t0, 3),
            "first_batch": first[1],
            "jobs_per_s_start_to_last": round(n / (t_last - t0), 2),
            "jobs_per_s_first_to_last": round(after_first / (t_last - first[0]), 2)
            if after_first and t_last > first[0] else None,
            "cpu_ms_per_job_first_to_last": round(1000 * (cpu_last - first[2]) / after_first, 2)
            if after_first else None,
            "cpu_s_start_to_last": round(cpu_last, 3),
            "mem_peak": dict(r.mem_peak),
        })
        r.out["wrong"] = check_results(r.reader, expected)
        r.out["stop"] = r.worker.stop()
        r.out["cpu_ms_per_job_lifetime"] = round(1000 * r.out["stop"]["lifetime_cpu_s"] / n, 2)
    return r.out


def run_latency(cfg, kind, n):
    """One job at a time on a warm worker: submit -> result read; idle memory."""
    with Run(cfg, "latency", kind, n) as r:
        r.start()
        # The run's topics are new: the append that writes a partition's first index entry
        # (the append after the one that takes its log past log.index.interval.bytes, 4 KiB)
        # stalled 40-80 ms here, which put the same jobs of every run (offset ~4 of each results
        # partition, ~25 of each jobs partition) above p99. A topic in service pays it once per
        # log segment, so queued jobs first take every partition of the jobs, results and audit
        # topics past it; produced in chunks, so the jobs topic sees many appends, not one.
        warm = [job("latency", k, r.prefix + "-warm") for k in range(cfg.latency_warm_jobs)]
        chunk = 10 * cfg.partitions
        for i in range(0, len(warm), chunk):
            kio.produce(r.prod, r.topics.names["jobs"], [j for j, _ in warm[i:i + chunk]])
        r.wait_for([j["id"] for j, _ in warm], "warm-up jobs")
        r.out["ready_s"] = round(min(r.reader.arrivals[j["id"]][0] for j, _ in warm)
                                 - r.worker.t0, 3)
        r.out["warm_jobs"] = len(warm)
        time.sleep(1.0)
        r.out["mem_idle"] = r.sample_mem(force=True)
        cpu0 = procs.tree_cpu(r.worker.pid)
        lat, parts = [], {"to_received": [], "received_to_started": [],
                          "started_to_finished": [], "finished_to_read": []}
        expected = {j["id"]: out for j, out in warm}  # checked too, not timed
        each = []  # (latency, job, its parts): where the slowest jobs' time went
        for k in range(n):
            j, out = job("latency", k, r.prefix)
            expected[j["id"]] = out
            t, wall = time.monotonic(), time.time()
            kio.produce(r.prod, r.topics.names["jobs"], [j])
            r.wait_for([j["id"]], f"job {k}", sample=False)  # memory: before and after
            t_read, wall_read, res = r.reader.arrivals[j["id"]]
            lat.append(1000 * (t_read - t))
            try:
                rec, fin = iso(res["received_at"]), iso(res["finished_at"])
                st = iso(res["started_at"]) if "started_at" in res else rec
                parts["to_received"].append(1000 * (rec - wall))
                parts["received_to_started"].append(1000 * (st - rec))
                parts["started_to_finished"].append(1000 * (fin - st))
                parts["finished_to_read"].append(1000 * (wall_read - fin))
                each.append((lat[-1], k, {q: round(v[-1], 2) for q, v in parts.items()}
                             | {"submitted_at": datetime.datetime.fromtimestamp(
                                 wall, datetime.timezone.utc).isoformat(timespec="milliseconds"),
                                "window": (wall, wall_read)}))
            except (KeyError, ValueError, TypeError):
                pass
        cpu1 = procs.tree_cpu(r.worker.pid)
        r.out.update({
            "latency_ms": {q: round(pct(lat, v), 2) for q, v in
                           (("p50", .5), ("p90", .9), ("p99", .99), ("max", 1))},
            "breakdown_ms_p50": {k: round(pct(v, .5), 2) for k, v in parts.items() if v},
            "slowest": [slow_job(cfg, k, ms, p)
                        for ms, k, p in sorted(each, key=lambda e: -e[0])[:5]],
            "cpu_ms_per_job_sequential": round(1000 * (cpu1 - cpu0) / n, 2),
            "mem_loaded_sequential": r.sample_mem(force=True),
        })
        r.out["wrong"] = check_results(r.reader, expected)
    return r.out


def slow_job(cfg, k, ms, parts):
    """One of the slowest jobs: its split, and the broker's GC pauses inside its submit -> read
    window (own broker only)."""
    window = parts.pop("window")
    out = dict(job=k, latency_ms=round(ms, 2), **parts)
    gc = cfg.broker.gc_pauses(*window)
    if gc is not None:
        out["broker_gc_ms"] = round(sum(x[2] for x in gc), 1)
    return out


def versions(cfg):
    import confluent_kafka

    def git(*a):
        p = subprocess.run(["git", "-C", kio.REPO, *a], capture_output=True, text=True, timeout=30)
        return p.stdout.strip()
    with open(cfg.codeq, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    mtime = datetime.datetime.utcfromtimestamp(os.path.getmtime(cfg.codeq)).isoformat() + "Z"
    return {"git_commit": git("rev-parse", "HEAD"),
            "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "codeq_binary": cfg.codeq, "codeq_sha256": sha, "codeq_mtime": mtime,
            "python": sys.version.split()[0], "confluent_kafka": confluent_kafka.version()[0],
            "librdkafka": confluent_kafka.libversion()[0], "kafka_broker": cfg.broker.version()}


def values(runs, phase, kind, *path):
    """{repeat: value} of one measure, for the repeats that have it."""
    out = {}
    for r in runs.get(phase, {}).get(kind, []):
        v = r
        for p in path:
            v = v.get(p) if isinstance(v, dict) else None
        if isinstance(v, (int, float)):
            out[r["repeat"]] = v
    return out


def summary(runs, n):
    """Rows (measure, codeq, seed, ratio codeq/seed, which way is better)."""
    rows = []

    def row(name, better, *path, phase, scale=1.0):
        """Medians over the repeats; the ratio of the medians, and the range of the ratios of
        each repeat's pair (run minutes apart at most, under the same neighbours)."""
        c, s = values(runs, phase, "codeq", *path), values(runs, phase, "seed", *path)
        cm = statistics.median(c.values()) * scale if c else None
        sm = statistics.median(s.values()) * scale if s else None
        pairs = [c[k] / s[k] for k in c if s.get(k)]
        rows.append({"measure": name, "codeq": cm, "seed": sm, "better": better,
                     "ratio": round(cm / sm, 3) if cm is not None and sm else None,
                     "ratio_range": [round(min(pairs), 3), round(max(pairs), 3)] if pairs else None})
    for ph, label in (("trivial", "trivial"), ("numpy", "numpy (codeq: --policy data)"),
                      ("cpu100", "100 ms CPU")):
        row(f"throughput, {n[ph]} queued {label}, worker start -> last result (jobs/s)", "higher",
            "jobs_per_s_start_to_last", phase=ph)
        row(f"throughput, {n[ph]} queued {label}, first result -> last (jobs/s)", "higher",
            "jobs_per_s_first_to_last", phase=ph)
    for q in ("p50", "p90", "p99"):
        row(f"latency submit -> result, one at a time, {q} (ms, {n['latency']} jobs)", "lower",
            "latency_ms", q, phase="latency")
    for part, label in (("to_received", "submit -> received_at"),
                        ("received_to_started", "received_at -> started_at"),
                        ("started_to_finished", "started_at -> finished_at"),
                        ("finished_to_read", "finished_at -> result read")):
        row(f"latency p50 by the result's timestamps: {label} (ms)", "lower", "breakdown_ms_p50", part,
            phase="latency")
    for ph in ("trivial", "numpy", "cpu100"):
        row(f"CPU per job, {ph}, first result -> last (ms)", "lower", "cpu_ms_per_job_first_to_last",
            phase=ph)
    row("CPU per job, one at a time, incl. idle between jobs (ms)", "lower",
        "cpu_ms_per_job_sequential", phase="latency")
    row("memory idle, VmRSS summed over the worker's processes (MB)", "lower", "mem_idle", "rss_kb",
        phase="latency", scale=1 / 1024)
    row("memory idle, Pss summed (MB)", "lower", "mem_idle", "pss_kb", phase="latency", scale=1 / 1024)
    for ph in ("trivial", "numpy"):
        row(f"memory loaded ({ph}), peak VmRSS sum (MB)", "lower", "mem_peak", "rss_kb", phase=ph,
            scale=1 / 1024)
        row(f"memory loaded ({ph}), peak Pss sum (MB)", "lower", "mem_peak", "pss_kb", phase=ph,
            scale=1 / 1024)
    return rows


def table(rows):
    def f(v):
        return "-" if v is None else (f"{v:.1f}" if abs(v) >= 10 else f"{v:.2f}")
    lines = ["| measure | codeq | seeds' way | codeq / seeds' (range over repeats) |",
             "|---|---:|---:|---:|"]
    for r in rows:
        if r["codeq"] is None and r["seed"] is None:
            continue   # a phase not run
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}×"
        lo, hi = (f"{x:.2f}" for x in r["ratio_range"] or (0, 0))
        if lo != hi:
            ratio += f" ({lo}–{hi})"
        if r["ratio"] is not None:
            ratio += f", {r['better']} is better"
        lines.append(f"| {r['measure']} | {f(r['codeq'])} | {f(r['seed'])} | {ratio} |")
    return "\n".join(lines)


def warm_up(cfg):
    """Queued trivial jobs through each worker in turn until cfg.warmup seconds have passed;
    what each run did, so the JSON shows the broker warming (throughput rising, its CPU
    falling). A failed warm-up run fails nothing: the measured runs say what is wrong."""
    runs, t0 = [], time.monotonic()
    while time.monotonic() - t0 < cfg.warmup:
        for kind in cfg.kinds:
            print(f"e2e: warm-up {time.monotonic() - t0:.0f}/{cfg.warmup:.0f} s: trivial/{kind}: "
                  f"{WARMUP_JOBS} jobs ...", flush=True)
            out = run_queued(cfg, "trivial", kind, WARMUP_JOBS)
            runs.append({k: out.get(k) for k in ("kind", "jobs", "jobs_per_s_start_to_last",
                                                 "broker_cpu_s", "error")})
    return {"s": round(time.monotonic() - t0, 1), "runs": runs}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="phases: " + ", ".join(PHASES))
    ap.add_argument("-b", "--brokers", default=os.environ.get("CODEQ_TEST_BROKERS"),
                    help="broker to use (default $CODEQ_TEST_BROKERS; if neither, the bench starts "
                         "its own with scripts/kafka.sh on free ports and stops it at the end)")
    ap.add_argument("--quick", action="store_true", help=f"small N for a smoke run: {QUICK_N}")
    ap.add_argument("--only", default=",".join(PHASES), help="comma-separated phases to run")
    ap.add_argument("--workers", default=",".join(KINDS), help="codeq,seed (default both)")
    ap.add_argument("-n", "--jobs", action="append", default=[], metavar="PHASE=N",
                    help=f"jobs per phase (default {DEFAULT_N})")
    ap.add_argument("--repeat", type=int, default=None,
                    help="runs of every phase and worker, order alternating; the table shows "
                         "medians (default 3, --quick 1)")
    ap.add_argument("--warmup", type=float, default=None,
                    help="seconds of unrecorded queued trivial jobs through each worker in turn "
                         "before the measured runs (default 45, --quick 0)")
    ap.add_argument("--latency-warm", type=int, default=None, metavar="N",
                    help="queued jobs per partition before the latency loop, each of its "
                         "fresh partitions past its first index entry (default 100, --quick 1; "
                         "0: a single job)")
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=4)
    ap.add_argument("--phase-timeout", type=float, default=None,
                    help="seconds per worker run of a phase (default 300, --quick 90)")
    ap.add_argument("--codeq", default=os.path.join(kio.REPO, "build", "codeq"))
    ap.add_argument("-o", "--output", default=None,
                    help="JSON output (default bench/results/e2e.json; --quick: e2e.json in the "
                         "log directory, so a smoke run never replaces the recorded one)")
    ap.add_argument("--logdir", default=None, help="worker logs (default /tmp/codeq-bench-e2e-<time>)")
    a = ap.parse_args(argv)
    a.phases = [p for p in a.only.split(",") if p]
    a.kinds = [k for k in a.workers.split(",") if k]
    bad = [p for p in a.phases if p not in PHASES] + [k for k in a.kinds if k not in KINDS]
    if bad:
        ap.error(f"unknown phase or worker {bad}")
    a.n = dict(QUICK_N if a.quick else DEFAULT_N)
    for s in a.jobs:
        k, _, v = s.partition("=")
        if k not in a.n or not v.isdigit() or int(v) < 2:
            ap.error(f"-n {s}: want PHASE=N with N >= 2")
        a.n[k] = int(v)
    a.repeat = a.repeat or (1 if a.quick else 3)
    if not 1 <= a.repeat <= 20:
        ap.error("--repeat: 1 to 20")
    a.phase_timeout = a.phase_timeout or (90.0 if a.quick else 300.0)
    a.warmup = (0.0 if a.quick else 45.0) if a.warmup is None else a.warmup
    a.latency_warm = (1 if a.quick else 100) if a.latency_warm is None else a.latency_warm
    if a.latency_warm < 0:
        ap.error("--latency-warm: 0 or more")
    a.latency_warm_jobs = max(1, a.latency_warm * a.partitions)
    a.logdir = a.logdir or f"/tmp/codeq-bench-e2e-{time.strftime('%Y%m%d-%H%M%S')}"
    a.output = a.output or (os.path.join(a.logdir, "e2e.json") if a.quick else
                            os.path.join(kio.REPO, "bench", "results", "e2e.json"))
    if not os.access(a.codeq, os.X_OK):
        ap.error(f"{a.codeq} is not an executable: build codeq first (scripts/build.sh)")
    return a


def main(argv):
    cfg = parse_args(argv)
    os.makedirs(cfg.logdir, exist_ok=True)
    own = None
    if not cfg.brokers:
        own = kio.OwnBroker()
        print(f"e2e: starting a broker of its own (scripts/kafka.sh, {own.work})", flush=True)
        cfg.brokers = own.start()
        print(f"e2e: broker ready at {cfg.brokers}", flush=True)
    try:
        cfg.broker = Broker(cfg.brokers, own.gc_log if own else None)
        started = datetime.datetime.utcnow().isoformat(timespec="seconds") + "Z"
        doc = {"bench": "e2e", "started_at": started,
               "command": " ".join(["bench/e2e/run.sh", *argv]), "brokers": cfg.brokers,
               "own_broker": own is not None, "machine": procs.machine(), "versions": versions(cfg),
               "config": {"slots": cfg.slots, "partitions": cfg.partitions, "jobs": cfg.n,
                          "phases": cfg.phases, "workers": cfg.kinds, "repeat": cfg.repeat,
                          "phase_timeout_s": cfg.phase_timeout, "quick": cfg.quick,
                          "warmup_s": cfg.warmup, "latency_warm_per_partition": cfg.latency_warm},
               "load_before": procs.loadavg(), "runs": {}}
        print(f"e2e: broker {cfg.brokers}, phases {cfg.phases}, jobs {cfg.n}, slots {cfg.slots}, "
              f"logs in {cfg.logdir}, load {doc['load_before']}", flush=True)
        doc["warmup"] = warm_up(cfg)
        t0 = time.monotonic()
        for rep in range(cfg.repeat):
            # Neighbours' load changes by the second: alternate which worker goes first.
            kinds = cfg.kinds if rep % 2 == 0 else cfg.kinds[::-1]
            for ph in cfg.phases:
                for kind in kinds:
                    print(f"e2e: [{rep + 1}/{cfg.repeat}] {ph}/{kind}: {cfg.n[ph]} jobs ...", flush=True)
                    out = run_latency(cfg, kind, cfg.n[ph]) if ph == "latency" else \
                        run_queued(cfg, ph, kind, cfg.n[ph])
                    out["repeat"] = rep + 1
                    doc["runs"].setdefault(ph, {}).setdefault(kind, []).append(out)
                    keys = ("jobs_per_s_start_to_last", "jobs_per_s_first_to_last",
                            "cpu_ms_per_job_first_to_last", "latency_ms", "error")
                    brief = {k: out[k] for k in keys if out.get(k) is not None}
                    print(f"e2e: [{rep + 1}/{cfg.repeat}] {ph}/{kind}: {brief}", flush=True)
        doc["elapsed_s"] = round(time.monotonic() - t0, 1)
        doc["load_after"] = procs.loadavg()
    finally:
        if own:
            own.stop()
    doc["summary"] = summary(doc["runs"], cfg.n)
    every = [(f"{ph}/{k}#{r['repeat']}", k, r) for ph, d in doc["runs"].items()
             for k, rs in d.items() for r in rs]
    failures = [f"{name}: {r['error']}" for name, _, r in every if r.get("error")]
    failures += [f"{name}: {len(r['wrong'])} wrong results, e.g. {r['wrong'][0]}"
                 for name, _, r in every if r.get("wrong")]
    failures += [f"{name}: {r['duplicates']} duplicate results" for name, k, r in every
                 if r.get("duplicates") and k == "codeq"]
    doc["failures"] = failures
    os.makedirs(os.path.dirname(os.path.abspath(cfg.output)), exist_ok=True)
    with open(cfg.output, "w") as f:
        json.dump(doc, f, indent=1)
    m = doc["machine"]
    print(f"\n{m['cpu_model']}, {m['cpus_online']} CPUs; load {doc['load_before']} before, "
          f"{doc['load_after']} after; {doc['versions']['git_commit'][:10]}; {doc['elapsed_s']} s\n")
    print(f"medians of {cfg.repeat} run(s) of each phase and worker\n")
    print(table(doc["summary"]))
    print(f"\nJSON: {cfg.output}; worker logs: {cfg.logdir}")
    for f_ in failures:
        print(f"FAIL: {f_}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
