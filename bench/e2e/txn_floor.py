"""The Kafka part of a job's latency, without any job: what exactly-once costs on this broker.

One request/reply round at a time, N rounds, on fresh topics of the broker given:
  alo  at-least-once, the seeds' way: a request is produced; a responder consumes it,
       produces the reply and commits its offset (commit after the reply is delivered); the
       requester reads the reply (read_uncommitted).
  eos  codeq's way: the responder answers in a transaction (begin, produce the reply and one
       audit record, send_offsets_to_transaction, commit) and the requester reads the reply
       with read_committed.
Prints p50/p90/p99 of request->reply and, for eos, of the responder's transaction alone. The
difference between the two is the floor exactly-once puts under codeq's latency, whatever the
sandbox costs. Run with Debian's /usr/bin/python3 (python3-confluent-kafka):
  /usr/bin/python3 bench/e2e/txn_floor.py -b 127.0.0.1:9092 [-n 200]"""
import argparse
import json
import statistics
import threading
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


EXTRA = {}  # -X name=value for the transactional producer


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def consumer(brokers, group, topic, committed):
    c = Consumer({"bootstrap.servers": brokers, "group.id": group, "enable.auto.commit": False,
                  "auto.offset.reset": "earliest", "fetch.wait.max.ms": 100,
                  "isolation.level": "read_committed" if committed else "read_uncommitted"})
    c.subscribe([topic])
    return c


def wait_assigned(c, limit=30):
    t0 = time.monotonic()
    while not c.assignment() and time.monotonic() - t0 < limit:
        c.poll(0.1)


def responder(brokers, t, mode, stop, txn_ms):
    c = consumer(brokers, t + "-resp", t + ".req", committed=False)
    conf = {"bootstrap.servers": brokers, "linger.ms": 1}
    if mode == "eos":
        conf["transactional.id"] = t + "-txn"
        conf.update(EXTRA)
    p = Producer(conf)
    if mode == "eos":
        p.init_transactions(30)
    wait_assigned(c)
    while not stop.is_set():
        m = c.poll(0.05)
        if m is None or m.error():
            continue
        if mode == "eos":
            t0 = time.monotonic()
            p.begin_transaction()
            p.produce(t + ".rep", m.value(), key=m.key())
            p.produce(t + ".audit", b'{"event":"finished"}', key=m.key())
            offs = [TopicPartition(m.topic(), m.partition(), m.offset() + 1)]
            p.send_offsets_to_transaction(offs, c.consumer_group_metadata(), 30)
            p.commit_transaction(30)
            txn_ms.append((time.monotonic() - t0) * 1000)
        else:
            p.produce(t + ".rep", m.value(), key=m.key())
            p.flush(30)
            c.commit(message=m, asynchronous=False)
    c.close()


def run(brokers, mode, n):
    t = f"txnfloor-{mode}-{uuid.uuid4().hex[:8]}"
    a = AdminClient({"bootstrap.servers": brokers})
    fs = a.create_topics([NewTopic(t + s, 1, 1) for s in (".req", ".rep", ".audit")])
    for f in fs.values():
        f.result(30)
    stop, txn_ms = threading.Event(), []
    th = threading.Thread(target=responder, args=(brokers, t, mode, stop, txn_ms))
    th.start()
    req = Producer({"bootstrap.servers": brokers, "linger.ms": 0})
    rep = consumer(brokers, t + "-req", t + ".rep", committed=(mode == "eos"))
    wait_assigned(rep)
    time.sleep(1)
    lat = []
    for i in range(n + 10):  # the first 10 warm up
        key = f"r{i}".encode()
        t0 = time.monotonic()
        req.produce(t + ".req", json.dumps({"i": i}).encode(), key=key)
        req.flush(10)
        while time.monotonic() - t0 < 10:
            m = rep.poll(0.05)
            if m is not None and not m.error() and m.key() == key:
                break
        if i >= 10:
            lat.append((time.monotonic() - t0) * 1000)
    stop.set()
    th.join()
    rep.close()
    a.delete_topics([t + s for s in (".req", ".rep", ".audit")])
    return lat, txn_ms[10:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-b", "--brokers", default="127.0.0.1:9092")
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("-X", action="append", default=[], help="name=value for the responder's "
                    "transactional producer, e.g. retry.backoff.ms=10")
    args = ap.parse_args()
    EXTRA.update(kv.split("=", 1) for kv in args.X)
    out = {}
    for mode in ("alo", "eos"):
        lat, txn = run(args.brokers, mode, args.n)
        out[mode] = {"request_reply_ms": {f"p{p}": round(pct(lat, p), 2) for p in (50, 90, 99)},
                     "mean_ms": round(statistics.mean(lat), 2)}
        if txn:
            out[mode]["transaction_ms"] = {f"p{p}": round(pct(txn, p), 2) for p in (50, 90, 99)}
        print(f"{mode}: request->reply p50 {pct(lat, 50):.1f} ms, p90 {pct(lat, 90):.1f}, "
              f"p99 {pct(lat, 99):.1f}" + (f"; the transaction alone p50 {pct(txn, 50):.1f} ms, "
                                          f"p99 {pct(txn, 99):.1f}" if txn else ""), flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
