"""The Kafka side shared by Client and AsyncClient: one idempotent producer for jobs, one
read_committed consumer for results, two background threads, results dispatched by job id.

One consumer per client, not per job: it reads the client's reply topic (or the shared results
topic) from where that topic ended when the client started, keeps the results of the ids this
client is waiting for, and hands each to whoever waits (a threading.Event or an asyncio future,
through a callback). The consumer is assigned its partitions by hand (no group rebalances) and
never commits: a client that restarts starts again from the end. The producer's delivery
reports are served by a second thread, so a submit learns within milliseconds that its job
is on the jobs topic."""
from __future__ import annotations

import concurrent.futures
import json
import logging
import threading
import time
import uuid
from typing import Callable, Optional

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from .result import CodeqError, ConfigError, Result

log = logging.getLogger("codeq_client")
_LEADER_SETTLING = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE,
                    KafkaError.UNKNOWN_TOPIC_OR_PART)
Waiter = Callable[[object], None]  # called with the Result or an exception
# Only asking about a topic never makes it: librdkafka's producer default is true, and the
# client's producer and admin handles are kept from it whatever the caller's settings say (a
# consumer's default is false). The mock cluster ignores it: see _check_jobs_topic.
NO_AUTO_CREATE = {"allow.auto.create.topics": False}
# confluent-kafka's own keys (Python callbacks), which keep their underscores
PYTHON_KEYS = frozenset({"error_cb", "throttle_cb", "stats_cb", "oauth_cb", "logger"})


def conf_key(k: str) -> str:
    return k if k in PYTHON_KEYS else k.replace("_", ".")


def kafka_conf(bootstrap: str, conf: dict) -> dict:
    """librdkafka settings; a keyword like security_protocol means security.protocol."""
    # librdkafka's own log (a broker that refuses connections: a line every few hundred ms)
    # goes to Python logging, as a library's should, not straight to the process's stderr
    out = {"bootstrap.servers": bootstrap, "logger": logging.getLogger("codeq_client.kafka")}
    out.update({conf_key(k): str(v).lower() if isinstance(v, bool) else v for k, v in conf.items()})
    return out


def new_handle(cls, conf: dict, given: set):
    """A Producer, Consumer or AdminClient; a setting librdkafka refuses (an unknown property,
    a value it cannot take) raises ConfigError (a CodeqError and a ValueError) naming it, not
    confluent_kafka's KafkaException. Values are not repeated: they may be credentials."""
    try:
        return cls(conf)
    except (KafkaException, TypeError, ValueError) as e:
        err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
        names = ", ".join(sorted(given)) or "none"
        raise ConfigError(f"codeq: librdkafka refused a setting: {err.str() if err else e} "
                          f"(the client's keyword settings: {names})") from None


class Core:
    def __init__(self, bootstrap: str, conf: dict, jobs_topic: str, results_topic: str,
                 reply_topic, reply_prefix: str, create_reply_topic: bool, start_timeout: float):
        base = kafka_conf(bootstrap, conf)
        given = {conf_key(k) for k in conf}
        self.jobs_topic = jobs_topic
        self.results_topic = results_topic
        self.owns_reply_topic = reply_topic is True
        self.reply_topic = (reply_prefix + uuid.uuid4().hex[:16]) if reply_topic is True else reply_topic
        self.listen_topic = self.reply_topic or results_topic
        self._base = base
        self._lock = threading.Lock()
        self._open = threading.Lock()    # held by a produce and by close: none runs after it
        self._watched: set = set()        # ids whose result this client keeps
        self._arrived: dict = {}          # id -> Result, not yet taken
        self._waiters: dict = {}          # id -> [Waiter]
        self._strays: dict = {}           # id -> what came with its key that was not a result
        self._stray_told = False
        self._failure: Optional[Exception] = None
        self._stop = threading.Event()
        deadline = time.monotonic() + start_timeout
        self._given = given
        # Idempotent: a retried write never makes a second job. No topic auto-creation: a
        # misspelt jobs topic is an error now, not jobs written where no worker reads.
        self.producer = new_handle(Producer, {"enable.idempotence": True, "linger.ms": 2, **base,
                                              **NO_AUTO_CREATE}, given)
        self.consumer = None
        # the reply topic this client makes (else it only looks for the topic it reads)
        self._makes_reply_topic = bool(self.reply_topic and create_reply_topic)
        try:
            self._check_jobs_topic(deadline)
            if self._makes_reply_topic:
                self._create_reply_topic(deadline)
            self.consumer = new_handle(Consumer, {
                "group.id": f"codeq-client-{uuid.uuid4().hex}", "enable.auto.commit": False,
                "isolation.level": "read_committed", "auto.offset.reset": "earliest",
                **base}, given)  # (a consumer's default; set, librdkafka warns on the mock)
            self.consumer.assign(self._ends(deadline))
        except KafkaException as e:  # a broker that does not answer, above all
            self._drop_handles()
            err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
            raise CodeqError(f"codeq: brokers {bootstrap}: {err.str() if err else e} "
                             f"(start_timeout {start_timeout:g} s)") from e
        except BaseException:
            self._drop_handles()
            raise
        self._threads = [threading.Thread(target=self._consume_loop, name="codeq-results", daemon=True),
                         threading.Thread(target=self._delivery_loop, name="codeq-deliveries", daemon=True)]
        for t in self._threads:
            t.start()

    # -- start-up ------------------------------------------------------------------------
    def _drop_handles(self) -> None:
        """A start that failed: its handles go now, not when the exception (whose traceback
        holds this half-made Core) is collected; they would go on connecting until then.
        librdkafka's log lines (why it could not connect) reach the logger only when a handle
        is polled: once now, before they are dropped."""
        for h in (self.producer, self.consumer):
            if h is not None:
                h.poll(0)
        if self.consumer is not None:
            self.consumer.close()
        self.consumer = self.producer = None

    def _create_reply_topic(self, deadline: float) -> None:
        """One partition, the results topic's max.message.bytes (every result the workers size
        for the results topic fits), kept a day: a client that dies leaves a bounded topic.
        Admin requests go to the controller: a cluster that names as controller none of its
        brokers (librdkafka's mock, `codeq broker`) would leave both to time out. That one makes
        a topic when it is first asked about, which _ends does."""
        if not self._controller_listed:
            log.info("codeq_client: reply topic %s not created here: the cluster's controller "
                     "is none of its brokers (the development broker makes it when asked)",
                     self.reply_topic)
            return
        admin = new_handle(AdminClient, {**self._base, **NO_AUTO_CREATE}, self._given)
        config = {"retention.ms": "86400000"}
        try:
            res = ConfigResource(ConfigResource.Type.TOPIC, self.results_topic)
            got = admin.describe_configs([res])[res].result(timeout=max(1.0, deadline - time.monotonic()))
            if "max.message.bytes" in got:
                config["max.message.bytes"] = got["max.message.bytes"].value
        except (KafkaException, concurrent.futures.TimeoutError) as e:
            # the results topic may be unreadable to us: the broker's default
            log.info("codeq_client: results topic %s config not read: %r", self.results_topic, e)
        fut = admin.create_topics([NewTopic(self.reply_topic, 1, -1, config=config)])[self.reply_topic]
        wait = max(1.0, deadline - time.monotonic())
        try:
            fut.result(timeout=wait)
        except concurrent.futures.TimeoutError as e:
            raise CodeqError(f"codeq: create reply topic {self.reply_topic}: no answer in "
                             f"{wait:.1f} s") from e
        except KafkaException as e:
            if e.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise CodeqError(f"codeq: create reply topic {self.reply_topic}: {e.args[0].str()}") from e

    def _check_jobs_topic(self, deadline: float) -> None:
        """The jobs topic exists. Asking also connects the producer, which then gets its
        producer id at once: without it the first job waited a second for librdkafka's timer.
        Every topic is listed, none named: a metadata request that names a topic makes it on
        librdkafka's mock cluster (`codeq broker`, Metadata v2 there: no allow-auto-create
        flag), whatever allow.auto.create.topics says, and a misspelt name would then be a
        topic no worker reads."""
        t = self.jobs_topic
        md = self.producer.list_topics(timeout=max(1.0, deadline - time.monotonic()))
        self._controller_listed = md.controller_id < 0 or md.controller_id in md.brokers
        tm = md.topics.get(t)
        if tm is None or tm.error is not None:
            raise CodeqError(f"codeq: jobs topic {t}: " + (tm.error.str() if tm is not None else
                             "Unknown topic: the brokers list none of that name (the client "
                             "never creates it)"))

    def _ends(self, deadline: float) -> list:
        """Each partition of the topic read, at its current end: results of jobs submitted from
        now on are all after it (a result is written after its job is consumed).
        The topic is named only when naming it is how it gets made (a reply topic of the
        client's on the mock cluster, see _create_reply_topic); else every topic is listed, as
        for the jobs topic, and one that this client did not just make must be there now."""
        t = self.listen_topic
        ask_by_name = self._makes_reply_topic and not self._controller_listed
        what = "reply topic" if self.reply_topic else "results topic"
        while True:
            md = self.consumer.list_topics(t if ask_by_name else None,
                                           timeout=max(1.0, deadline - time.monotonic()))
            tm = md.topics.get(t)
            if tm is not None and tm.error is None and tm.partitions:
                break
            if tm is None and not self._makes_reply_topic:
                raise CodeqError(f"codeq: {what} {t}: Unknown topic: the brokers list none of "
                                 "that name (the client never creates it)")
            if time.monotonic() > deadline:
                why = tm.error.str() if tm is not None and tm.error else "no partitions"
                raise CodeqError(f"codeq: {what} {t}: {why}")
            time.sleep(0.1)  # a topic just created reaches the metadata within moments
        return [TopicPartition(t, p, self._end(TopicPartition(t, p), deadline)) for p in sorted(tm.partitions)]

    def _end(self, tp: TopicPartition, deadline: float) -> int:
        """A topic just created may have no leader yet for a moment: retry until the deadline."""
        while True:
            try:
                return self.consumer.get_watermark_offsets(
                    tp, timeout=max(1.0, deadline - time.monotonic()), cached=False)[1]
            except KafkaException as e:
                settling = e.args[0].retriable() or e.args[0].code() in _LEADER_SETTLING
                if not settling or time.monotonic() > deadline:
                    raise CodeqError(f"codeq: end of {tp.topic}[{tp.partition}]: {e.args[0].str()}") from e
            time.sleep(0.1)

    # -- jobs ----------------------------------------------------------------------------
    def produce(self, job: dict, on_done: Callable[[Optional[KafkaError]], None]) -> None:
        """Queue a job; on_done(None or error) runs on the delivery thread. A job the producer
        refuses at once (larger than the broker takes, say) raises CodeqError, not watched."""
        value = json.dumps(job, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        with self._open:
            # its threads gone, no delivery report would come, and the job still go out
            if self._stop.is_set():
                raise CodeqError("codeq: client closed")
            self._produce(job, value, on_done)

    def _produce(self, job: dict, value: bytes, on_done) -> None:
        self._claim(job["id"])
        try:
            for _ in range(200):  # the local queue is full only under a burst: wait up to ~10 s
                try:
                    self.producer.produce(self.jobs_topic, key=job["id"].encode(), value=value,
                                          on_delivery=lambda err, _msg: on_done(err))
                    return
                except BufferError:
                    time.sleep(0.05)
            raise CodeqError("codeq: the producer's queue stayed full for 10 s")
        except KafkaException as e:
            self.forget(job["id"])
            err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
            raise CodeqError(f"codeq: job {job['id']!r} ({len(value)} bytes) was not sent: "
                             f"{err.str() if err else e}") from e
        except BaseException:
            self.forget(job["id"])
            raise

    def _delivery_loop(self) -> None:
        while not self._stop.is_set():
            self.producer.poll(0.05)

    # -- results -------------------------------------------------------------------------
    def _claim(self, job_id: str) -> None:
        """Watch a new job's id. An id this client still awaits or keeps a result for is
        refused: two jobs under one id answer under one key, and the first result would go to
        whichever call asked first (or the second overwrite the first)."""
        with self._lock:
            if job_id in self._watched or job_id in self._arrived:
                raise ValueError(f"job_id {job_id!r}: a job with this id is still awaited by "
                                 f"this client (or its result not yet taken); use a new id, or "
                                 f"forget({job_id!r}) first")
            self._watched.add(job_id)

    def forget(self, job_id: str) -> None:
        with self._lock:
            self._watched.discard(job_id)
            self._arrived.pop(job_id, None)
            self._strays.pop(job_id, None)

    def stray(self, job_id: str) -> str:
        """What came with this id's key that was not a result ("" if nothing): said when the
        wait for its result runs out."""
        with self._lock:
            return self._strays.get(job_id, "")

    def take_or_wait(self, job_id: str, waiter: Waiter) -> Optional[Result]:
        """The result if it is here (then it is no longer kept), else None and waiter is
        registered. Raises if the consumer failed for good."""
        with self._lock:
            if job_id in self._arrived:
                self._watched.discard(job_id)
                self._strays.pop(job_id, None)
                return self._arrived.pop(job_id)
            if self._failure:
                raise self._failure
            self._watched.add(job_id)
            self._waiters.setdefault(job_id, []).append(waiter)
            return None

    def unwait(self, job_id: str, waiter: Waiter) -> None:
        """Stop waiting; the id stays watched, so a result arriving later is kept for it."""
        with self._lock:
            ws = self._waiters.get(job_id, [])
            if waiter in ws:
                ws.remove(waiter)
            if not ws:
                self._waiters.pop(job_id, None)

    def put_back(self, job_id: str, result: Result) -> None:
        """A waiter that gave up just as its result came returns it here."""
        with self._lock:
            self._watched.add(job_id)
            self._arrived[job_id] = result

    def _deliver(self, job_id: str, result: Result) -> None:
        with self._lock:
            if job_id not in self._watched:
                return
            self._strays.pop(job_id, None)
            ws = self._waiters.pop(job_id, None)
            if not ws:
                self._arrived[job_id] = result
                return
            self._watched.discard(job_id)
        for w in ws:
            w(result)

    def _fail_all(self, exc: Exception) -> None:
        with self._lock:
            self._failure = self._failure or exc
            waiters, self._waiters = self._waiters, {}
        for ws in waiters.values():
            for w in ws:
                w(exc)

    def _consume_loop(self) -> None:
        while not self._stop.is_set():
            try:
                # poll returns with the first record; consume(n, t) would wait t for n of them
                first = self.consumer.poll(0.1)
                msgs = [first, *self.consumer.consume(499, 0)] if first is not None else []
            except RuntimeError:  # closed under us
                return
            except Exception as e:  # noqa: BLE001 - every waiter hears of it, none hangs
                self._fail_all(CodeqError(f"codeq: results consumer stopped: {e!r}"))
                raise
            for m in msgs:
                err = m.error()
                if err is not None:
                    if err.fatal():
                        self._fail_all(CodeqError(f"codeq: results consumer: {err.str()}"))
                        return
                    log.warning("codeq_client: results consumer: %s", err.str())
                    continue
                self._record(m)

    def _record(self, m) -> None:
        key = m.key()
        job_id = key.decode("utf-8", "replace") if key else None
        with self._lock:
            wanted = job_id in self._watched
        if not wanted:  # another client's result (shared topic): not even parsed
            return
        # A record with a waited-for key that is no result for it (the job itself on a topic
        # that carries jobs, another producer's message) is skipped and the wait goes on: the
        # result may still come after it, and whoever can write to the topic must not be able
        # to end (or crash) the wait with a record of their own. The wait's JobTimeout says
        # what came instead.
        try:
            d = json.loads(m.value())
        except (TypeError, ValueError, RecursionError) as e:
            self._stray(m, job_id, f"not JSON ({e})")
            return
        if isinstance(d, dict) and d.get("id") != job_id:
            self._stray(m, job_id, f"not its result (id {d.get('id')!r})")
            return
        try:
            result = Result.from_json(d)
        except ValueError as e:
            self._stray(m, job_id, str(e))
            return
        self._deliver(job_id, result)

    def _stray(self, m, job_id: str, why: str) -> None:
        where = f"{m.topic()}[{m.partition()}]@{m.offset()}"
        with self._lock:
            if job_id in self._watched:
                self._strays[job_id] = f"{where} had a record with its key that is {why}"[:500]
            told, self._stray_told = self._stray_told, True
        (log.debug if told else log.warning)(
            "codeq_client: %s: record keyed %r skipped, %s (the wait goes on; further ones "
            "logged at debug level)", where, job_id, why[:300])

    # -- end -----------------------------------------------------------------------------
    def close(self, timeout: float = 10.0) -> None:
        with self._open:  # after a produce under way, before any other
            if self._stop.is_set():
                return
            self._stop.set()
        for t in self._threads:
            t.join(timeout)
        left = self.producer.flush(timeout)
        if not any(t.is_alive() for t in self._threads):
            self.producer = None  # it goes now (it has no close), not when the client is collected
        self.consumer.close()
        self._fail_all(CodeqError("codeq: client closed"))
        if left:
            log.warning("codeq_client: %d jobs were not delivered before close", left)
        if self.owns_reply_topic and self._controller_listed:  # the mock's go with it
            admin = new_handle(AdminClient, {**self._base, **NO_AUTO_CREATE}, self._given)
            try:
                admin.delete_topics([self.reply_topic])[self.reply_topic].result(timeout=timeout)
            except (KafkaException, concurrent.futures.TimeoutError) as e:
                log.warning("codeq_client: delete reply topic %s: %r", self.reply_topic, e)
