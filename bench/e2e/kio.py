"""bench/e2e's side of Kafka: the broker (given, or started with scripts/kafka.sh on ports of its
own), fresh topics per worker run (created by `codeq topics`, as the integration tests do), the
jobs' producer, and a results reader that sees only committed records (read_committed) and
notes when each arrived.

The reader is assigned every partition from the beginning instead of joining a group: no
rebalance stands between a result and the clock. It fetches with a 10 ms wait so that its own
polling adds almost nothing to a measured latency."""
import json
import os
import shutil
import socket
import subprocess
import time
import uuid

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OwnBroker:
    """A broker of the bench's own: a work directory of its own and two free ports, so that no
    other broker on the machine is touched (scripts/kafka.sh start stops whatever broker uses
    its work directory)."""

    def __init__(self):
        self.work = f"/tmp/codeq-bench-e2e-kafka-{os.getpid()}"
        # Its stop-the-world GC pauses, one line each, to line up with the slowest jobs.
        self.gc_log = os.path.join(self.work, "gc.log")
        jvm = f"{os.environ.get('KAFKA_JVM_OPTS', '')} -Xlog:gc:file={self.gc_log}:time".strip()
        self.env = {**os.environ, "KAFKA_WORK": self.work, "KAFKA_PORT": str(free_port()),
                    "KAFKA_CONTROLLER_PORT": str(free_port()), "KAFKA_JVM_OPTS": jvm}
        self.script = os.path.join(REPO, "scripts", "kafka.sh")

    def start(self):
        p = subprocess.run(["bash", self.script, "start"], env=self.env, capture_output=True,
                           text=True, timeout=900)
        if p.returncode != 0:
            raise RuntimeError(f"scripts/kafka.sh start failed: {p.stderr[-1500:]}")
        return p.stdout.strip().splitlines()[-1]

    def stop(self):
        p = subprocess.run(["bash", self.script, "stop"], env=self.env, capture_output=True,
                           text=True, timeout=120)
        if p.returncode == 0:
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            print(f"e2e: scripts/kafka.sh stop failed (left {self.work}): {p.stderr[-800:]}",
                  flush=True)


class Topics:
    """jobs/results/audit/dlq topics named PREFIX-<random>.*, and the group of one worker run."""

    def __init__(self, brokers, codeq, prefix, partitions):
        sfx = uuid.uuid4().hex[:8]
        self.brokers, self.codeq, self.partitions = brokers, codeq, partitions
        self.group = f"{prefix}-{sfx}"
        self.names = {k: f"{prefix}-{sfx}.{k}" for k in ("jobs", "results", "audit", "dlq")}
        self.codeq_args = ["--jobs-topic", self.names["jobs"], "--results-topic", self.names["results"],
                           "--audit-topic", self.names["audit"], "--dlq-topic", self.names["dlq"]]

    def create(self):
        p = subprocess.run([self.codeq, "topics", "-b", self.brokers, "--partitions",
                            str(self.partitions), *self.codeq_args],
                           capture_output=True, text=True, timeout=90)
        if p.returncode != 0:
            raise RuntimeError(f"codeq topics: {p.stderr.strip()}")

    def delete(self):
        """Best effort, bounded: the shared broker should not collect every run's topics."""
        try:
            # kept in a variable: destroyed before the broker answers, it blocks ~30 s
            admin = AdminClient({"bootstrap.servers": self.brokers, "log_level": 4})
            futs = admin.delete_topics(list(self.names.values()), operation_timeout=30)
            for f in futs.values():
                f.result(timeout=40)
        except Exception as e:  # a leftover topic is no reason to lose the run's numbers
            print(f"e2e: deleting topics {self.group}.*: {e}", flush=True)


def producer(brokers):
    return Producer({"bootstrap.servers": brokers, "linger.ms": 0, "acks": "all"})


def produce(prod, topic, jobs, timeout=60):
    for j in jobs:
        while True:
            try:
                prod.produce(topic, key=j["id"], value=json.dumps(j))
                break
            except BufferError:
                prod.poll(0.1)
    left = prod.flush(timeout)
    if left:
        raise RuntimeError(f"{left} jobs not delivered to {topic} in {timeout} s")


class Reader:
    """Committed results as they arrive: arrivals[id] = (monotonic, wall clock, result)."""

    def __init__(self, brokers, topic, partitions):
        group = f"bench-e2e-reader-{uuid.uuid4().hex[:8]}"
        self.c = Consumer({"bootstrap.servers": brokers, "group.id": group,
                           "isolation.level": "read_committed", "enable.auto.commit": False,
                           "fetch.wait.max.ms": 10, "auto.offset.reset": "earliest"})
        self.c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        self.arrivals = {}
        self.duplicates = 0
        self.bad = []

    def _messages(self, timeout, most=1000):
        """Up to `most` messages: waits up to timeout for the first only. consume(n, timeout)
        waits the whole timeout unless n messages came, which put a 20 ms step (the callers'
        timeout) under every latency this bench measured, both workers alike."""
        m = self.c.poll(timeout)
        while m is not None and most > 0:
            yield m
            most -= 1
            m = self.c.poll(0) if most else None

    def poll(self, timeout=0.05):
        """Reads what is there; returns how many new ids arrived."""
        new = 0
        for m in self._messages(timeout):
            if m.error():
                self.bad.append(str(m.error()))
                continue
            now, wall = time.monotonic(), time.time()
            try:
                r = json.loads(m.value())
                rid = r["id"]
            except (ValueError, KeyError, TypeError) as e:
                self.bad.append(f"unreadable result: {e}")
                continue
            if rid in self.arrivals:
                self.duplicates += 1
            else:
                self.arrivals[rid] = (now, wall, r)
                new += 1
        return new

    def close(self):
        self.c.close()
