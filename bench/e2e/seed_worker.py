"""The seeds' way: the naive worker codeq replaces, the baseline of bench/e2e.

A confluent-kafka consumer, a pool of --slots threads, and per job
`subprocess.run(["/usr/bin/python3", "-c", code])` with no confinement at all. At-least-once:
a job's offset is committed only after its result is delivered, and only up to the lowest job
of its partition still running, so a crash re-runs jobs and never loses one. No validation, no
sandbox, no audit trail, no transactions: what codeq does on top costs time, and this worker
is the measure of how much.

Run with Debian's /usr/bin/python3 (python3-confluent-kafka). SIGTERM: stop taking jobs, let
the running ones finish, commit, leave the group."""
import argparse
import datetime
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def run_job(raw, python, timeout):
    """The result of one job's value (bytes), as the seeds did it."""
    received = now_iso()
    try:
        job = json.loads(raw)
        jid, code = str(job["id"]), str(job["code"])
    except (ValueError, KeyError, TypeError) as e:
        return {"id": None, "status": "invalid", "stdout": "", "stderr": f"bad job: {e}",
                "exit_code": None, "received_at": received, "finished_at": now_iso()}
    try:
        p = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout)
        status = "ok" if p.returncode == 0 else "error"
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        status, rc = "timeout", None
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
    return {"id": jid, "status": status, "stdout": out, "stderr": err, "exit_code": rc,
            "received_at": received, "finished_at": now_iso()}


class Offsets:
    """Per partition, the offsets taken and not yet finished: what may be committed is the
    lowest of them (or one past the highest finished when none is left)."""

    def __init__(self):
        self.pending = {}   # partition -> set of offsets running
        self.done = {}      # partition -> highest finished offset + 1

    def take(self, part, off):
        self.pending.setdefault(part, set()).add(off)

    def finish(self, part, off):
        self.pending[part].discard(off)
        self.done[part] = max(self.done.get(part, 0), off + 1)

    def committable(self, topic):
        return [TopicPartition(topic, part, min(self.pending[part]) if self.pending.get(part) else nxt)
                for part, nxt in self.done.items()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--brokers", default="127.0.0.1:9092")
    ap.add_argument("-g", "--group", required=True)
    ap.add_argument("--jobs-topic", required=True)
    ap.add_argument("--results-topic", required=True)
    ap.add_argument("--slots", type=int, default=2)
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--timeout", type=float, default=10.0, help="per job, seconds")
    a = ap.parse_args()

    worker = f"seed-{socket.gethostname()}-{os.getpid()}"
    consumer = Consumer({"bootstrap.servers": a.brokers, "group.id": a.group,
                         "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    producer = Producer({"bootstrap.servers": a.brokers})
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    consumer.subscribe([a.jobs_topic])
    finished = queue.Queue()
    offsets = Offsets()
    running = 0

    def work(msg):
        try:
            res = run_job(msg.value(), a.python, a.timeout)
            res["worker"] = worker
            key = res["id"] if res["id"] is not None else msg.key()
            producer.produce(a.results_topic, key=key, value=json.dumps(res))
            left = producer.flush(30)   # delivered before its offset may be committed
            error = f"{left} results not delivered in 30 s" if left else None
        except Exception as e:  # reported by the main loop, which stops the worker
            error = f"job at offset {msg.offset()}: {e!r}"
        finished.put((msg.partition(), msg.offset(), error))

    def settle(block):
        nonlocal running
        n = 0
        while True:
            try:
                part, off, error = finished.get(block and n == 0, 0.05)
            except queue.Empty:
                break
            if error:
                raise RuntimeError(f"seed worker: {error}")
            offsets.finish(part, off)
            running -= 1
            n += 1
        if n:
            consumer.commit(offsets=offsets.committable(a.jobs_topic), asynchronous=True)

    with ThreadPoolExecutor(max_workers=a.slots) as pool:
        while not stop:
            if running >= a.slots:
                settle(True)
                continue
            msg = consumer.poll(0.05)
            settle(False)
            if msg is None:
                continue
            if msg.error():
                print(f"seed worker: consume: {msg.error()}", file=sys.stderr, flush=True)
                continue
            offsets.take(msg.partition(), msg.offset())
            running += 1
            pool.submit(work, msg)
        deadline = time.monotonic() + 30
        while running and time.monotonic() < deadline:
            settle(True)
    try:
        if offsets.done:
            consumer.commit(offsets=offsets.committable(a.jobs_topic), asynchronous=False)
    except KafkaException as e:
        print(f"seed worker: final commit: {e}", file=sys.stderr, flush=True)
    consumer.close()
    return 0 if not running else 1


if __name__ == "__main__":
    sys.exit(main())
