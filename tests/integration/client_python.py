"""The Python client (clients/python, codeq_client) against the real broker and a real worker
(issue 15). One worker (--policy data, so jobs may open files in /work), then:

  sync       Client.run round trip (stdin, usage), a failing program returned as a Result
             (status error, not raised), raise_for_status -> JobFailed
  files      input files in (text and bytes), artifacts out as bytes
  rejected   JobRejected carrying the validator's findings; invalid: JobInvalid naming the limit;
             a deadline passed: JobExpired; a misspelt jobs topic: CodeqError at start.
             What the worker would answer invalid is refused before sending (ValueError), by
             the worker's own limits (64 files and not 65, 255-byte paths of 16 components,
             stdin bytes that are not UTF-8), the worker refusing the same jobs sent raw; a
             librdkafka setting it does not know: ConfigError (CodeqError and ValueError)
  dev        the development broker (`codeq broker`, librdkafka's mock, which makes any topic
             a metadata request names): a misspelt jobs or results topic is CodeqError at once
             and not made; a reply topic of the client's own still is
  timeout    a job sleeping 3 s, waited 0.5 s: JobTimeout; the result is still had later
             (sync and async)
  async      AsyncClient round trip, then 100 jobs in flight at once: all answered, each with
             its own output, by one consumer; an await cancelled by asyncio.wait_for keeps
             its result for a later result(); an id still awaited is refused (ValueError)
  shared     two clients on the shared results topic at once, each gets its own results
  reply      reply_topic=True: a topic of the client's own, created, answered on, nothing on
             the results topic, deleted on close; a named reply topic, created when missing;
             one outside reply_prefix (or a worker's own topic) refused with ValueError before
             anything is made, as the worker refuses it; records on the reply topic keyed by a
             job's id that are not its result are skipped (the wait goes on, JobTimeout says
             what came), not a KeyError
  agent      examples/agent_loop.py against this worker: fails once, succeeds on the retry
Every result the client returns is also checked against schemas/result.schema.json."""
import asyncio
import datetime
import json
import os
import pathlib
import subprocess
import sys
import time
import uuid

HERE = pathlib.Path(__file__).parent
sys.path.insert(0, str(HERE))
from codeq_test import BIN, RESULT, SRC, Failures, schema_errors  # noqa: E402
import kafka_admin as ka  # noqa: E402
import kafka_test as kt  # noqa: E402

sys.path.insert(0, str(SRC / "clients" / "python"))
from codeq_client import (AsyncClient, Client, CodeqError, ConfigError, JobExpired,  # noqa: E402
                          JobFailed, JobInvalid, JobRejected, JobTimeout)

NAME = "client_python"
F = Failures()
kt.require_broker(NAME)
T0 = time.monotonic()
timings = {}


def step(name, t0):
    timings[name] = time.monotonic() - t0
    print(f"{NAME}: {name}: {timings[name]:.2f} s", flush=True)


def valid(r):
    e = schema_errors(RESULT, r.raw)
    F.check(not e, f"{r.id}: result not schema-valid: {e}")


def raises(exc, fn, *a, **kw):
    try:
        fn(*a, **kw)
    except exc as e:
        return e
    except Exception as e:  # noqa: BLE001 - reported as a failed check
        F.check(False, f"{fn.__name__}: want {exc.__name__}, got {type(e).__name__}: {e}")
        return None
    F.check(False, f"{fn.__name__}: want {exc.__name__}, nothing raised")
    return None


def topic_exists(t, brokers=None):
    p = subprocess.run(["kcat", "-b", brokers or kt.BROKERS, "-L"], capture_output=True, text=True,
                       timeout=30)
    return f'topic "{t}" with' in p.stdout


def produce_to(t, key, values):
    """Records keyed key on topic t (kcat), one per value."""
    lines = "".join(f"{key}\t{v}\n" for v in values)
    p = subprocess.run(["kcat", "-b", kt.BROKERS, "-P", "-t", t, "-K", "\t"], input=lines,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"kcat produce to {t}: {p.stderr}")


def start_and_run(brokers, **kw):
    with Client(brokers, start_timeout=10, **kw) as c:
        return c.run("print(1)", timeout=8)


def invalid_why(job):
    """The worker's answer to a job sent raw (past the client's checks): its message if invalid."""
    s.produce_jobs([job])
    got = s.wait_results([job["id"]], 60)
    return got[0].get("message", "") if got and got[0]["status"] == "invalid" else f"not invalid: {got}"


def read_ids(t):
    """Ids of the committed records on topic t (kcat, read_committed)."""
    p = subprocess.run(["kcat", "-b", kt.BROKERS, "-C", "-t", t, "-e", "-o", "beginning", "-q",
                        "-f", "%k\n", "-X", "isolation.level=read_committed"],
                       capture_output=True, text=True, timeout=60)
    return [line for line in p.stdout.splitlines() if line.strip()]


s = kt.Setup(NAME, 2)
TOPICS = {"jobs_topic": s.topics["jobs"], "results_topic": s.topics["results"]}
named_reply = f"codeq.reply.{NAME}-{uuid.uuid4().hex[:8]}"
outside = f"ut.{NAME}-{uuid.uuid4().hex[:8]}.other"  # outside the reply prefix: never made
s.start("w1", "--slots", "3", "--policy", "data")
try:
    t0 = time.monotonic()
    with Client(kt.BROKERS, **TOPICS) as c:
        # -- sync round trip; a failing program is a Result, not an exception
        r = c.run("print(input()[::-1])", stdin="olleh", metadata={"n": 1})
        valid(r)
        F.check(r.ok and r.stdout == "hello\n" and r.exit_code == 0 and r.usage is not None
                and r.metadata == {"n": 1} and r.worker == "w1", f"sync: {r}")
        r = c.run("data = {}\nprint(data['b'])")
        valid(r)
        F.check(r.status == "error" and r.exit_code == 1 and "KeyError" in r.stderr
                and "KeyError" in r.error_text(), f"error: {r}")
        e = raises(JobFailed, r.raise_for_status)
        F.check(e is not None and e.result is r, "raise_for_status did not carry the result")
        step("sync", t0)

        # -- a client-side timeout: the job outlives the wait, its result comes later
        t0 = time.monotonic()
        slow = c.submit("import time\ntime.sleep(3)\nprint('late')")
        e = raises(JobTimeout, c.result, slow, 0.5)
        F.check(e is not None and e.job_id == slow and isinstance(e, TimeoutError), f"timeout: {e!r}")
        F.check(time.monotonic() - t0 < 2.5, f"result(timeout=0.5) took {time.monotonic() - t0:.1f} s")

        # -- files in, artifacts out (while the slow job runs)
        t1 = time.monotonic()
        r = c.run("import json\n"
                  "text = open('in/words.txt').read()\n"
                  "blob = open('blob.bin', 'rb').read()\n"
                  "open('out.txt', 'w').write(text.upper())\n"
                  "open('out.bin', 'wb').write(blob[::-1] + bytes([0x80]))\n"
                  "json.dump({'n': len(text.split())}, open('count.json', 'w'))\n",
                  files={"in/words.txt": "alpha beta gamma", "blob.bin": b"\x00\xff\xfe"})
        valid(r)
        F.check(r.ok and r.artifacts == {"out.txt": b"ALPHA BETA GAMMA", "out.bin": b"\xfe\xff\x00\x80",
                                         "count.json": b'{"n": 3}'} and not r.artifacts_truncated,
                f"files: {r.status} {r.message} {r.stderr[-300:]} artifacts {r.artifacts}")
        step("files", t1)

        # -- rejected (findings on the exception) and invalid
        t1 = time.monotonic()
        e = raises(JobRejected, c.run, "import subprocess\nsubprocess.run(['id'])")
        F.check(e is not None and e.status == "rejected" and e.findings
                and any(f.rule == "import-denied" and f.line == 1 for f in e.findings)
                and "import-denied" in str(e), f"rejected: {e!r} {getattr(e, 'findings', None)}")
        if e is not None:
            valid(e.result)
        e = raises(JobInvalid, c.run, "print(1)", limits={"wall_ms": 10 ** 7})
        F.check(e is not None and "wall_ms" in e.result.message and e.result.usage is None,
                f"invalid: {e!r}")
        F.check(raises(ValueError, c.submit, "print(1)", limits={"wall_sec": 1}) is not None,
                "an unknown limit was not refused before sending")
        # a float without a fraction (timeout * 1000) is an integer, as the job schema says
        r = c.run("print(1)", limits={"wall_ms": 2.5 * 1000})
        F.check(r.status == "ok" and r.raw["limits"]["wall_ms"] == 2500,
                f"limit given as 2500.0: {r.status} {r.raw.get('limits')}")
        F.check(raises(ValueError, c.submit, "print(1)", limits={"wall_ms": 2500.5}) is not None,
                "a limit with a fraction was not refused before sending")
        # each limit's least value, as the job schema has it: below it, refused before sending
        # (pids=1 or open_files=5 were sent, and answered invalid)
        from codeq_client import job as cjob
        least = {k: v.get("minimum") for k, v in json.loads((SRC / "schemas" / "job.schema.json")
                 .read_text())["$defs"]["limits"]["properties"].items()}
        F.check(cjob.LIMITS == least, f"the client's least limits {cjob.LIMITS} != the schema's {least}")
        below = [k for k, m in least.items() if m > 1 and raises(ValueError, c.submit, "print(1)",
                                                                limits={k: m - 1}) is None]
        F.check(not below, f"limits below their least value sent: {below}")
        # what the worker would answer invalid: refused before sending
        F.check(raises(ValueError, c.submit, "print(1)\0") is not None,
                "code with a NUL character was not refused before sending")
        F.check(raises(ValueError, c.submit, "print(1)", metadata={"n": [1, 2 ** 64]}) is not None,
                "an integer beyond 64 bits in metadata was not refused before sending")
        F.check(raises(ValueError, c.submit, "print(1)", files={"a\0b": "x"}) is not None,
                "a file path with a NUL character was not refused before sending")
        F.check(raises(ValueError, c.submit, "print(1)", files={"d": "1", "d/e": "2"}) is not None,
                "a file inside another file was not refused before sending")
        F.check(raises(ValueError, c.submit, "print(1)", metadata={"x": float("nan")}) is not None,
                "NaN in metadata (not JSON: the job could not be read) was not refused before sending")
        F.check(raises(ValueError, c.submit, "print(1)", metadata={"k\0": 1}) is not None,
                "a NUL character in a metadata key (dead-lettered) was not refused before sending")
        deep = []
        for _ in range(64):
            deep = [deep]
        F.check(raises(ValueError, c.submit, "print(1)", metadata=deep) is not None,
                "metadata 65 levels deep was not refused before sending")
        F.check(raises(ValueError, c.submit, "print(1)", job_id="") is not None,
                "an empty job id was replaced, not refused")
        # stdin travels as JSON text: bytes that are not UTF-8 are the caller's ValueError
        # naming stdin (it was a bare UnicodeDecodeError from inside the client)
        e = raises(ValueError, c.submit, "print(1)", stdin=b"\xff\xfe")
        F.check(isinstance(e, ValueError) and not isinstance(e, UnicodeError) and "stdin" in str(e),
                f"stdin bytes that are not UTF-8: {e!r}")
        e = raises(ValueError, c.submit, "print(1)\n# \ud800")
        F.check(e is not None and "code" in str(e), f"code with a lone surrogate: {e!r}")
        # the worker's files limits (worker/wrk_files.c, sandbox/sbx_files.c): 64 files, paths
        # of at most 255 bytes and 16 components. The count is checked first: 10,000 files
        # were compared pairwise before it was (seconds of CPU, then the refusal).
        t2 = time.monotonic()
        e = raises(ValueError, c.submit, "print(1)", files={f"f{i}": "" for i in range(10000)})
        F.check(e is not None and "at most 64" in str(e) and time.monotonic() - t2 < 1,
                f"10,000 files: {e!r} after {time.monotonic() - t2:.2f} s")
        e = raises(ValueError, c.submit, "print(1)", files={f"f{i}": "" for i in range(65)})
        F.check(e is not None and "at most 64" in str(e), f"65 files: {e!r}")
        long_path, deep_path = "p" * 256, "/".join("d" * 17)
        for bad in (long_path, deep_path):
            F.check(raises(ValueError, c.submit, "print(1)", files={bad: "x"}) is not None,
                    f"file path {bad[:20]}... ({len(bad)} bytes) was not refused before sending")
        # a list of {"path", "content"} dicts unpacked into a file named "path" holding "content"
        F.check(raises(TypeError, c.submit, "print(1)", files=[{"path": "a", "content": "x"}])
                is not None, "a list of dicts as files was not refused")
        # ... and at the limits the worker runs it: 64 files, one at 255 bytes in 16 components
        edge = "/".join(["d"] * 15 + ["e" * 225])
        at_limits = {f"f{i}": str(i) for i in range(63)}
        at_limits[edge] = "deep"
        r = c.run("print(open('f0').read(), open('f62').read(), open(%r).read())" % edge,
                  files=at_limits)
        F.check(r.ok and r.stdout == "0 62 deep\n" and len(edge.encode()) == 255,
                f"64 files, a path of 255 bytes in 16 components: {r.status} {r.message} {r.stderr[-300:]}")
        # what the client refuses, the worker refuses too (sent raw, past the client)
        for what, files in (("65 files", [{"path": f"f{i}", "content": ""} for i in range(65)]),
                            ("256-byte path", [{"path": long_path, "content": "x"}]),
                            ("17 components", [{"path": deep_path, "content": "x"}])):
            why = invalid_why({"id": f"raw-{uuid.uuid4().hex}", "code": "print(1)", "files": files})
            F.check(why.startswith("files"), f"the worker on {what} sent raw: {why}")
        # a job larger than the producer may send: the client's own error, not confluent-kafka's
        e = raises(CodeqError, c.run, "print(1)", stdin="s" * (1 << 20))
        F.check(e is not None and "not sent" in str(e), f"a job too large to send: {e!r}")
        # metadata is bounded in UTF-8 bytes, as the worker counts: 12,000 bytes of Cyrillic go
        wide = {"t": "\u0436" * 6000}
        r = c.run("print(5)", metadata=wide)
        F.check(r.ok and r.metadata == wide, f"12 KB of non-ASCII metadata: {r.status} {r.message}")
        e = raises(JobExpired, c.run, "print(1)", deadline=datetime.datetime(2020, 1, 1))
        F.check(e is not None and e.result.usage is None, f"expired: {e!r}")
        # deadlines as strings: RFC 3339 with any offset, as Python's isoformat() writes them
        e = raises(JobExpired, c.run, "print(1)", deadline="2020-01-01T06:00:00.5+05:30")
        F.check(e is not None and e.result.usage is None, f"expired (offset string): {e!r}")
        soon = datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=-3)))
        r = c.run("print(3)", deadline=(soon + datetime.timedelta(seconds=60)).isoformat())
        F.check(r.ok and r.stdout == "3\n", f"a deadline from isoformat() did not run: {r}")
        F.check(raises(ValueError, c.submit, "print(1)", deadline="2020-01-01T00:00:00") is not None,
                "a deadline string without its offset was not refused before sending")
        F.check(raises(ValueError, c.submit, "print(1)", deadline="2026-02-30T00:00:00Z") is not None,
                "a deadline on 30 February was not refused before sending")
        # AttributeError, 1 s, OverflowError
        for bad in (object(), True, datetime.date(2030, 1, 1), float("inf"), 1e12,
                    datetime.timedelta.max):
            F.check(raises(ValueError, c.submit, "print(1)", deadline=bad) is not None,
                    f"a deadline of {bad!r} was not refused with ValueError")
        step("rejected+invalid", t1)

        # the id of a job still awaited is refused (the second result overwrote the first)
        e = raises(ValueError, c.submit, "print('again')", job_id=slow)
        F.check(e is not None and "still awaited" in str(e), f"an awaited id again: {e!r}")
        r = c.result(slow, 30)
        valid(r)
        F.check(r.ok and r.stdout == "late\n", f"the timed-out job's later result: {r}")
        step("client timeout, result later", t0)
        # once its result is taken, the id is free again
        r = c.run("print('again')", job_id=slow)
        F.check(r.ok and r.stdout == "again\n", f"an id used again after its result: {r}")

    # -- a closed client sends nothing: it sent the job, then waited out the timeout and said
    # the broker had not acknowledged it (a caller retrying on that ran the job twice)
    c = Client(kt.BROKERS, **TOPICS)
    c.close()
    t1 = time.monotonic()
    e = raises(CodeqError, c.run, "print('after close')", timeout=20)
    F.check(e is not None and "client closed" in str(e) and time.monotonic() - t1 < 5,
            f"run on a closed client: {e!r} after {time.monotonic() - t1:.1f} s")

    # -- no broker at the address: CodeqError, and librdkafka's lines go to Python logging
    # (they were written to the process's stderr, about 20 a second), shown once logging is set
    probe = ("import logging, sys\nsys.path.insert(0, sys.argv[1])\n"
             "from codeq_client import Client, CodeqError\n"
             "if sys.argv[2] == 'log': logging.basicConfig(format='LOG %(name)s %(message)s')\n"
             "try:\n    Client('127.0.0.1:1', start_timeout=3)\n"
             "except CodeqError as e:\n    print('CodeqError', e)\n")
    runs = {m: subprocess.run([sys.executable, "-c", probe, str(SRC / "clients" / "python"), m],
                              capture_output=True, text=True, timeout=60) for m in ("quiet", "log")}
    q, lg = runs["quiet"], runs["log"]
    F.check(q.stdout.startswith("CodeqError codeq: brokers 127.0.0.1:1") and not q.stderr
            and "LOG codeq_client.kafka" in lg.stderr and "%3|" not in lg.stderr,
            f"no broker: quiet {q.stdout!r} {q.stderr[-300:]!r}; with logging {lg.stderr[-300:]!r}")

    # -- a misspelt jobs topic fails at once (the client never creates it)
    e = raises(CodeqError, Client, kt.BROKERS, jobs_topic=s.topics["jobs"] + "-typo",
               results_topic=s.topics["results"], start_timeout=5)
    F.check(e is not None and "Unknown topic" in str(e) and not topic_exists(s.topics["jobs"] + "-typo"),
            f"misspelt jobs topic: {e!r}")
    # ... and a misspelt results topic too, at once (it waited out start_timeout)
    t1 = time.monotonic()
    e = raises(CodeqError, Client, kt.BROKERS, jobs_topic=s.topics["jobs"],
               results_topic=s.topics["results"] + "-typo", start_timeout=20)
    F.check(e is not None and "Unknown topic" in str(e) and time.monotonic() - t1 < 5
            and not topic_exists(s.topics["results"] + "-typo"),
            f"misspelt results topic: {e!r} after {time.monotonic() - t1:.1f} s")

    # -- a librdkafka setting it does not know: the client's error naming it (it was
    # confluent_kafka's KafkaException), a ValueError and a CodeqError
    e = raises(ValueError, Client, kt.BROKERS, no_such_setting=1, **TOPICS)
    F.check(isinstance(e, CodeqError) and isinstance(e, ConfigError) and "no.such.setting" in str(e),
            f"an unknown librdkafka setting: {e!r}")
    e = raises(ValueError, Client, kt.BROKERS, linger_ms="soon", **TOPICS)
    F.check(isinstance(e, ConfigError) and "linger.ms" in str(e) and "soon" not in str(e),
            f"a librdkafka setting with a value it cannot take: {e!r}")

    # -- the development broker: librdkafka's mock makes any topic a metadata request names
    # (its Metadata v2 has no allow-auto-create flag): the client asked for its jobs topic by
    # name, so a misspelt one was made there, the job sent to it, and the wait ended in
    # JobTimeout instead of CodeqError at start
    t1 = time.monotonic()
    dev = subprocess.Popen([BIN, "broker"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
    try:
        dev_bs = dev.stdout.readline().strip()
        F.check(dev_bs.startswith("127.0.0.1:"), f"codeq broker printed {dev_bs!r}")
        for kw in ({"jobs_topic": "codeq.jbos"}, {"results_topic": "codeq.reslts"},
                   {"reply_topic": "codeq.reply.not-made", "create_reply_topic": False}):
            t2 = time.monotonic()
            e = raises(CodeqError, start_and_run, dev_bs, **kw)
            took = time.monotonic() - t2
            name = next(v for v in kw.values() if isinstance(v, str))
            F.check(e is not None and not isinstance(e, JobTimeout) and "Unknown topic" in str(e)
                    and took < 5 and not topic_exists(name, dev_bs),
                    f"development broker, {kw}: {e!r} after {took:.1f} s; made: {topic_exists(name, dev_bs)}")
        # what it makes on purpose: a reply topic of the client's own, asked for by name
        with Client(dev_bs, reply_topic=True, start_timeout=10) as c:
            F.check(topic_exists(c.reply_topic, dev_bs), f"development broker: {c.reply_topic} not made")
    finally:
        dev.kill()
        dev.wait()
    step("development broker", t1)

    # -- async: round trip, 100 in flight, a timeout; two clients on the shared topic
    async def async_part():
        t0 = time.monotonic()
        async with AsyncClient(kt.BROKERS, **TOPICS) as a, AsyncClient(kt.BROKERS, **TOPICS) as b:
            r = await a.run("print(sum(range(10)))")
            valid(r)
            F.check(r.ok and r.stdout == "45\n", f"async: {r}")
            step("async round trip", t0)

            t1 = time.monotonic()
            slow = await a.submit("import time\ntime.sleep(2)\nprint('async late')")
            try:
                await a.result(slow, 0.3)
                F.check(False, "async: no JobTimeout")
            except JobTimeout:
                pass
            rs = await asyncio.gather(*(a.run(f"print({i} * {i})") for i in range(100)),
                                      *(b.run(f"print('b', {i})") for i in range(20)))
            took = time.monotonic() - t1
            bad = [(i, x.status, x.stdout) for i, x in enumerate(rs[:100]) if not x.ok or x.stdout != f"{i * i}\n"]
            F.check(not bad and len(rs) == 120, f"100 concurrent: {len(bad)} wrong, first {bad[:3]}")
            bad_b = [x.stdout for i, x in enumerate(rs[100:]) if x.stdout != f"b {i}\n"]
            F.check(not bad_b, f"second client on the shared topic: {bad_b[:3]}")
            F.check(len({x.id for x in rs}) == 120, "duplicate ids among 120 results")
            for x in rs[:5]:
                valid(x)
            print(f"{NAME}: 100 jobs in flight on one AsyncClient (+20 on a second): {took:.2f} s",
                  flush=True)
            r = await a.result(slow, 30)
            F.check(r.ok and r.stdout == "async late\n", f"async timed-out job later: {r}")
            step("async 100 concurrent + timeout", t1)

            # an await cancelled by asyncio.wait_for (the usual way to give up): the result was
            # taken by the orphaned waiter and lost; result() later timed out
            t1 = time.monotonic()
            jid = f"cancel-{uuid.uuid4().hex[:8]}"
            try:
                await asyncio.wait_for(a.run("import time\ntime.sleep(1.5)\nprint('kept')",
                                             job_id=jid), 0.5)
                F.check(False, "async: wait_for did not time out")
            except asyncio.TimeoutError:
                pass
            await asyncio.sleep(3)  # the result comes while nobody waits
            try:
                r = await a.result(jid, 20)
                F.check(r.ok and r.stdout == "kept\n", f"async, after a cancelled await: {r}")
            except JobTimeout as e:
                F.check(False, f"async, a cancelled await lost its result: {e!r}")
            # one id twice while the first is in flight: both calls got the first's output
            dup = f"dup-{uuid.uuid4().hex[:8]}"
            rs = await asyncio.gather(a.run("print('A')", job_id=dup),
                                      a.run("print('B')", job_id=dup), return_exceptions=True)
            F.check(sum(isinstance(x, ValueError) and "still awaited" in str(x) for x in rs) == 1
                    and sum(isinstance(x, Exception) is False and x.stdout in ("A\n", "B\n")
                            for x in rs) == 1, f"async, one id twice in flight: {rs}")
            step("async cancel + duplicate id", t1)

    asyncio.run(async_part())

    # -- reply topics: the client's own (created, deleted on close) and a named one
    t0 = time.monotonic()
    with Client(kt.BROKERS, reply_topic=True, **TOPICS) as c:
        own = c.reply_topic
        F.check(own.startswith("codeq.reply.") and topic_exists(own), f"reply topic {own} not created")
        r = c.run("print('via reply')")
        F.check(r.ok and r.stdout == "via reply\n", f"reply: {r}")
        # an invalid job is answered on the reply topic too, or this client would never hear of it
        e = raises(JobInvalid, c.run, "print(1)", limits={"wall_ms": 10 ** 7}, timeout=20)
        F.check(e is not None and "wall_ms" in e.result.message, f"invalid via reply topic: {e!r}")
        on_reply = read_ids(own)
        F.check(on_reply == [r.id] + ([e.result.id] if e else []), f"on {own}: {on_reply}")
        jid = r.id
    F.check(jid not in {x["id"] for x in s.read("results")}, "the reply job's result is on the results topic")
    gone_by = time.monotonic() + 15
    while time.monotonic() < gone_by and topic_exists(own):
        time.sleep(0.3)
    F.check(not topic_exists(own), f"{own} still there after close")
    with Client(kt.BROKERS, reply_topic=named_reply, **TOPICS) as c:
        r = c.run("print('named')")
        F.check(r.ok and r.stdout == "named\n", f"named reply: {r}")
        # records keyed by a job's id on its reply topic that are not its result (the job
        # itself, as on a topic that carries jobs; another producer's): skipped, and the wait
        # goes on (Result.from_json raised KeyError 'status' into the caller)
        slow = c.submit("import time\ntime.sleep(3)\nprint('after the strays')")
        produce_to(named_reply, slow, [json.dumps({"id": slow, "code": "print(1)"}), "not json",
                                       json.dumps({"id": slow, "status": "ok", "usage": [1]})])
        e = raises(JobTimeout, c.result, slow, 1.0)
        F.check(e is not None and "not a codeq result" in str(e) and named_reply in str(e),
                f"strays on the reply topic, waited 1 s: {e!r}")
        try:
            r = c.result(slow, 30)
            F.check(r.ok and r.stdout == "after the strays\n", f"the result after the strays: {r}")
        except CodeqError as e:
            F.check(False, f"the result after the strays: {e!r}")
    F.check(topic_exists(named_reply), f"{named_reply} (named) deleted on close")
    # a reply topic the worker would refuse (outside its prefix, its own topics, Kafka's): a
    # ValueError naming the prefix before anything is made. It was made, and each job's
    # invalid answer went to the results topic, which such a client does not read: JobTimeout.
    e = raises(ValueError, Client, kt.BROKERS, reply_topic=outside, start_timeout=10, **TOPICS)
    F.check(e is not None and "'codeq.reply.'" in str(e) and not topic_exists(outside),
            f"a reply topic outside the prefix: {e!r}")
    e = raises(ValueError, AsyncClient, kt.BROKERS, reply_topic=outside, **TOPICS)
    F.check(e is not None and "'codeq.reply.'" in str(e), f"AsyncClient, outside the prefix: {e!r}")
    # (create_reply_topic=False: a client that wrongly took one of these makes nothing)
    for bad, kw in ((s.topics["jobs"], {"reply_prefix": NAME}),
                    ("codeq.audit", {"reply_prefix": "codeq."}),
                    ("codeq.jobs.dlq", {"reply_prefix": "codeq."}),
                    ("__consumer_offsets", {"reply_prefix": "__"}),
                    ("codeq.reply.a b", {}), ("codeq.reply." + "x" * 238, {}),
                    (True, {"reply_prefix": "__r."})):
        F.check(raises(ValueError, Client, kt.BROKERS, reply_topic=bad, create_reply_topic=False,
                       start_timeout=3, **kw, **TOPICS) is not None,
                f"reply topic {str(bad)[:40]!r} ({kw}) was not refused")
    # the worker's rule, sent raw: outside the prefix refused, the results topic allowed
    why = invalid_why({"id": f"raw-{uuid.uuid4().hex}", "code": "print(1)", "reply_to": outside})
    F.check("not allowed" in why and "codeq.reply." in why,
            f"the worker on reply_to outside the prefix: {why}")
    with Client(kt.BROKERS, reply_topic=s.topics["results"], **TOPICS) as c:
        r = c.run("print('on results')")
        F.check(r.ok and r.stdout == "on results\n", f"reply_topic = the results topic: {r}")
    # ... and a misspelt results topic named as the reply topic too is not made (it was
    # created as a reply topic: one partition, a day's retention)
    typo = s.topics["results"] + "-typo2"
    F.check(raises(CodeqError, Client, kt.BROKERS, **{**TOPICS, "results_topic": typo},
                   reply_topic=typo, start_timeout=5) is not None and not topic_exists(typo),
            "reply_topic = a misspelt results topic: not refused, or made")
    step("reply topics", t0)

    # -- the agent loop example, against this worker
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, str(SRC / "examples" / "agent_loop.py"), "-b", kt.BROKERS,
                        "--jobs-topic", s.topics["jobs"], "--results-topic", s.topics["results"],
                        "--timeout", "30"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONPATH=""))
    F.check(p.returncode == 0 and "attempt 1: error" in p.stdout and "TypeError" in p.stdout
            and "attempt 2: ok" in p.stdout and "3.875" in p.stdout,
            f"agent_loop exit {p.returncode}:\n{p.stdout}\n{p.stderr[-800:]}")
    step("agent loop", t0)
    F.check(s.stop("w1") == 0, "the worker did not stop cleanly")
finally:
    s.kill_all()
    # (outside is made only by a client that took it: a failed check)
    for t in [named_reply] + ([outside] if topic_exists(outside) else []):
        try:
            ka.delete_topics(kt.BROKERS, [t])
        except Exception as e:  # noqa: BLE001 - a leftover topic is reported, not fatal
            print(f"{NAME}: delete {t}: {e}", flush=True)
print(f"{NAME}: total {time.monotonic() - T0:.1f} s", flush=True)
F.finish(NAME)
