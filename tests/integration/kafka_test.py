"""Helpers for the tests that need the real broker (CODEQ_TEST_BROKERS): fresh topics per
test, workers as child processes, kcat for independent reads (read_committed) and writes.
Every wait is bounded; workers are always stopped by the caller's finally."""
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
import uuid

from codeq_test import BIN, SRC, WORKER_ISOLATION_ARGS, run

BROKERS = os.environ.get("CODEQ_TEST_BROKERS")


def require_broker(name):
    if not BROKERS:
        print(f"{name}: CODEQ_TEST_BROKERS is not set: start a broker with scripts/kafka.sh start "
              "(scripts/test.sh does); this test is never skipped")
        print(f"{name}: 0 passed, 1 failed")
        sys.exit(1)


def dump_threads(pid, why):
    """Every thread's stack of a process that did not end, so a failed run says where it waited."""
    print(f"{why}; its threads:", flush=True)
    try:
        p = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt"],
                           capture_output=True, text=True, timeout=60)
        print("\n".join(l for l in p.stdout.splitlines() if l.startswith(("Thread", "#"))), flush=True)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"(gdb: {e})", flush=True)


class Setup:
    """Unique topics and group for one test run."""

    def __init__(self, name, partitions, brokers=None, config=()):
        """config: NAME=VALUE topic settings for the four topics (codeq topics -c)."""
        sfx = uuid.uuid4().hex[:8]
        self.name = name
        self.brokers = brokers or BROKERS
        self.topics = {k: f"{name}-{sfx}.{k}" for k in ("jobs", "results", "audit", "dlq")}
        self.topic_args = ["--jobs-topic", self.topics["jobs"], "--results-topic", self.topics["results"],
                           "--audit-topic", self.topics["audit"], "--dlq-topic", self.topics["dlq"]]
        self.group = f"{name}-{sfx}"
        self.logdir = pathlib.Path(os.environ.get("CODEQ_TEST_LOGDIR", "/tmp")) / f"codeq-{name}-{sfx}"
        self.logdir.mkdir(parents=True, exist_ok=True)
        self.workers = {}
        cfg = [a for c in config for a in ("-c", c)]
        p = run(["topics", "-b", self.brokers, "--partitions", str(partitions), *self.topic_args, *cfg],
                timeout=90)
        if p.returncode != 0:
            raise RuntimeError(f"codeq topics: {p.stderr}")
        print(f"{name}: broker {self.brokers}, topics {name}-{sfx}.* ({partitions} partitions), "
              f"logs in {self.logdir}", flush=True)

    def start(self, wid, *extra, instance=None):
        """A worker named wid (its log, its worker id); instance: its --instance-id, wid's own
        unless given (two live workers with one instance id share a transactional.id)."""
        log = open(self.logdir / f"{wid}.log", "a")
        self.workers[wid] = subprocess.Popen(
            [BIN, "worker", "-b", self.brokers, "-g", self.group, "--instance-id", instance or wid,
             "--worker-id", wid,
             "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=1000",
             *WORKER_ISOLATION_ARGS, *self.topic_args, *extra], stdout=log, stderr=subprocess.STDOUT)
        return self.workers[wid]

    def kill9(self, wid):
        w = self.workers[wid]
        w.send_signal(signal.SIGKILL)
        w.wait(timeout=30)

    def stop(self, wid, grace=60):
        """SIGTERM and wait; returns the exit code (None if it had to be killed)."""
        w = self.workers[wid]
        if w.poll() is not None:
            return w.returncode
        w.send_signal(signal.SIGTERM)
        try:
            return w.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            dump_threads(w.pid, f"{self.name}: {wid} still running {grace:.0f} s after SIGTERM")
            w.kill()
            w.wait()
            return None

    def stop_all(self):
        return {wid: self.stop(wid) for wid in list(self.workers)}

    def kill_all(self):
        for w in self.workers.values():
            if w.poll() is None:
                w.kill()
                w.wait()

    def produce_jobs(self, jobs, partition=None):
        """jobs: list of dicts; keyed by id; one kcat call."""
        lines = "".join(f"{j['id']}\t{json.dumps(j)}\n" for j in jobs)
        args = ["kcat", "-b", self.brokers, "-P", "-t", self.topics["jobs"], "-K", "\t"]
        if partition is not None:
            args += ["-p", str(partition)]
        p = subprocess.run(args, input=lines, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"kcat produce: {p.stderr}")

    def wait_results(self, ids, limit, every=0.5):
        """The committed results of ids (duplicates included, for the caller to count), once
        every id has one or after limit seconds."""
        ids, t0, got = set(ids), time.monotonic(), []
        while time.monotonic() - t0 < limit:
            got = [r for r in self.read("results") if r["id"] in ids]
            if {r["id"] for r in got} >= ids:
                break
            time.sleep(every)
        return got

    def read(self, kind, timeout=120):
        """Every committed record of a topic, as parsed JSON."""
        p = subprocess.run(["kcat", "-b", self.brokers, "-C", "-t", self.topics[kind], "-e", "-o", "beginning",
                            "-q", "-f", "%s\n", "-X", "isolation.level=read_committed"],
                           capture_output=True, text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"kcat read {kind}: {p.stderr}")
        return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]

    def read_unless_held(self, kind, timeout=15):
        """read(), or [] if it did not end in timeout s: a transaction that a wedged worker keeps
        aborting can hold a read_committed read at the end of the topic."""
        try:
            return self.read(kind, timeout)
        except subprocess.TimeoutExpired:
            return []


def iso_seconds(ts):
    """Seconds since the epoch of a codeq timestamp (2026-11-30T05:45:29.123Z)."""
    import datetime
    return datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def restart_broker():
    t0 = time.monotonic()
    p = subprocess.run(["bash", str(SRC / "scripts" / "kafka.sh"), "restart"], capture_output=True,
                       text=True, timeout=180)
    if p.returncode != 0:
        raise RuntimeError(f"broker restart failed: {p.stderr[-800:]}")
    return time.monotonic() - t0


def stop_broker():
    """The broker goes away (SIGTERM, SIGKILL after scripts/kafka.sh's timeout); its data stays."""
    p = subprocess.run(["bash", str(SRC / "scripts" / "kafka.sh"), "stop"], capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0:
        raise RuntimeError(f"broker stop failed: {p.stderr[-800:]}")


def freeze_broker(frozen=True):
    """SIGSTOP (a hung broker: connections accepted, nothing answered) or SIGCONT."""
    p = subprocess.run(["bash", str(SRC / "scripts" / "kafka.sh"), "freeze" if frozen else "thaw"],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError(f"broker {'freeze' if frozen else 'thaw'} failed: {p.stderr[-800:]}")


def exactly_once(results, audit, ids):
    """Counts of lost and duplicated results, and of jobs whose audit trail is not exactly once."""
    from collections import Counter
    c = Counter(r["id"] for r in results)
    lost = [i for i in ids if c[i] == 0]
    dup = {i: n for i, n in c.items() if n > 1}
    ev = Counter((e["job_id"], e["event"]) for e in audit)
    bad_audit = [i for i in ids if ev[(i, "received")] != 1 or
                 ev[(i, "finished")] + ev[(i, "rejected")] + ev[(i, "invalid")] != 1]
    return lost, dup, bad_audit
