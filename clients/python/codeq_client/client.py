"""Client (blocking) and AsyncClient (asyncio): submit code, wait for its result by id.

Both wrap one Core (codeq_client/_core.py). What they return and raise is the same:
`result`/`run` return a Result for every status where the program ran, whether or not it
ended well (ok, error, timeout, memory_limit, output_limit, signal, seccomp_violation), as
Judge0 and E2B's run_code do: a failing program is an answer, and an agent reads its stderr.
They raise when there is nothing to read from a program: JobRejected (the validator refused
it; the findings are on the exception), JobInvalid, JobExpired, JobInternalError, and
JobTimeout when the client stopped waiting. `Result.raise_for_status()` turns a non-ok run
into JobFailed for callers who want exceptions there too."""
from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Optional

from . import job as jobmod
from ._core import Core
from .result import CodeqError, JobTimeout, Result, check_ran

DEFAULT_WAIT = 60.0


class _Options:
    """The constructor's options, shared by both clients."""

    def __init__(self, bootstrap: str, jobs_topic: str = "codeq.jobs",
                 results_topic: str = "codeq.results", reply_topic: Any = None,
                 reply_prefix: str = "codeq.reply.", create_reply_topic: bool = True,
                 start_timeout: float = 30.0, **kafka_conf):
        if reply_topic not in (None, False, True) and not isinstance(reply_topic, str):
            raise TypeError("reply_topic: None (shared results topic), True (a new topic of this "
                            "client's) or a topic name")
        # A reply topic the workers would refuse: each job answered invalid on the results
        # topic, which this client does not read; said now, before any topic is made.
        if isinstance(reply_topic, str) and reply_topic:
            jobmod.check_reply_topic(reply_topic, reply_prefix, jobs_topic, results_topic)
            # the results topic is where answers go anyway: it is read, never made (a
            # misspelt one was created as a reply topic)
            if reply_topic == results_topic:
                reply_topic = None
        elif reply_topic is True:
            try:
                jobmod.check_reply_topic(reply_prefix + "0" * 16, reply_prefix, jobs_topic,
                                         results_topic)
            except ValueError as e:
                raise ValueError(f"reply_prefix {reply_prefix!r}: the reply topics it makes would "
                                 f"be refused: {e}") from None
        self.core_args = (bootstrap, kafka_conf, jobs_topic, results_topic, reply_topic or None,
                          reply_prefix, create_reply_topic, start_timeout)

    def core(self) -> Core:
        return Core(*self.core_args)


def _job(core: Core, code, stdin, files, limits, metadata, deadline, job_id) -> dict:
    return jobmod.build(code, job_id=job_id, stdin=stdin, files=files, limits=limits,
                        metadata=metadata, deadline=deadline, reply_to=core.reply_topic)


def _delivery_error(job_id: str, err) -> CodeqError:
    return CodeqError(f"codeq: job {job_id!r} not written to the jobs topic: {err.str()}")


def _unacknowledged(job_id: str, timeout: float) -> CodeqError:
    return CodeqError(f"codeq: job {job_id!r} not acknowledged by the broker within {timeout:g} s")


class Client:
    """Blocking client; thread-safe. `with Client("127.0.0.1:9092") as c: c.run("print(1)")`.

    reply_topic: None reads the shared results topic and keeps only this client's results;
    True makes a topic of this client's (reply_prefix + random, created now, deleted on close);
    a name uses that topic (created if missing, kept). Other keywords are librdkafka settings
    (`**{"security.protocol": "SSL"}` or security_protocol="SSL")."""

    def __init__(self, bootstrap: str, **options):
        self._core = _Options(bootstrap, **options).core()

    @property
    def reply_topic(self) -> Optional[str]:
        return self._core.reply_topic

    def submit(self, code: str, stdin=None, files=None, limits=None, metadata=None, deadline=None,
               *, job_id: Optional[str] = None, timeout: float = 30.0) -> str:
        """Write the job to the jobs topic; returns its id once the broker has it."""
        job = _job(self._core, code, stdin, files, limits, metadata, deadline, job_id)
        done, box = threading.Event(), []
        self._core.produce(job, lambda err: (box.append(err), done.set()))
        if not done.wait(timeout):
            raise _unacknowledged(job["id"], timeout)
        if box[0] is not None:
            self._core.forget(job["id"])
            raise _delivery_error(job["id"], box[0])
        return job["id"]

    def result(self, job_id: str, timeout: float = DEFAULT_WAIT) -> Result:
        """Wait for the job's result. JobTimeout leaves it watched: a later call still gets it."""
        done, box = threading.Event(), []

        def waiter(x):
            box.append(x)
            done.set()

        got = self._core.take_or_wait(job_id, waiter)
        if got is None:
            try:
                arrived = done.wait(timeout)
            except BaseException:  # KeyboardInterrupt: a result after it is kept, not lost
                self._core.unwait(job_id, waiter)
                if box and isinstance(box[0], Result):
                    self._core.put_back(job_id, box[0])
                raise
            if not arrived:
                self._core.unwait(job_id, waiter)
                if not box:  # (it may have come between the wait and unwait)
                    raise JobTimeout(job_id, timeout, self._core.stray(job_id))
            got = box[0]
        if isinstance(got, BaseException):
            raise got
        return check_ran(got)

    def run(self, code: str, stdin=None, files=None, limits=None, metadata=None, deadline=None,
            *, job_id: Optional[str] = None, timeout: float = DEFAULT_WAIT) -> Result:
        """submit + result; timeout covers both."""
        t0 = time.monotonic()
        jid = self.submit(code, stdin, files, limits, metadata, deadline, job_id=job_id, timeout=timeout)
        return self.result(jid, max(0.0, timeout - (time.monotonic() - t0)))

    def forget(self, job_id: str) -> None:
        """Stop keeping a result nobody will ask for (after a JobTimeout, say)."""
        self._core.forget(job_id)

    def close(self) -> None:
        self._core.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class AsyncClient:
    """asyncio client: the same calls, awaited. Any number of jobs in flight share one
    consumer thread; each waiting call holds a future resolved by job id.

        async with AsyncClient("127.0.0.1:9092") as c:
            results = await asyncio.gather(*(c.run(f"print({i})") for i in range(100)))

    Start-up (topic checks, creating a reply topic) runs in a thread at the first call or at
    `await client.start()` / `async with`, never blocking the event loop."""

    def __init__(self, bootstrap: str, **options):
        self._options = _Options(bootstrap, **options)
        self._core: Optional[Core] = None
        self._starting: Optional[asyncio.Future] = None

    @property
    def reply_topic(self) -> Optional[str]:
        return self._core.reply_topic if self._core else None

    async def start(self) -> "AsyncClient":
        if self._core is None:
            if self._starting is None:
                self._starting = asyncio.get_running_loop().run_in_executor(None, self._options.core)
            core = await asyncio.shield(self._starting)
            self._core = self._core or core
        return self

    async def submit(self, code: str, stdin=None, files=None, limits=None, metadata=None,
                     deadline=None, *, job_id: Optional[str] = None, timeout: float = 30.0) -> str:
        await self.start()
        loop = asyncio.get_running_loop()
        job = _job(self._core, code, stdin, files, limits, metadata, deadline, job_id)
        fut = loop.create_future()

        def settle(err):
            if not fut.done():
                fut.set_result(err)

        self._core.produce(job, lambda err: loop.call_soon_threadsafe(settle, err))
        try:
            err = await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            raise _unacknowledged(job["id"], timeout) from None
        if err is not None:
            self._core.forget(job["id"])
            raise _delivery_error(job["id"], err)
        return job["id"]

    async def result(self, job_id: str, timeout: float = DEFAULT_WAIT) -> Result:
        await self.start()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        core = self._core

        def settle(x):  # on the loop; a result for a waiter that gave up goes back to the core
            if fut.done():
                if isinstance(x, Result):
                    core.put_back(job_id, x)
            else:
                fut.set_result(x)

        def waiter(x):
            loop.call_soon_threadsafe(settle, x)

        got = core.take_or_wait(job_id, waiter)
        if got is None:
            try:
                await asyncio.wait({fut}, timeout=timeout)
            except BaseException:  # cancelled (asyncio.wait_for around run()): a result that
                core.unwait(job_id, waiter)  # comes later is kept for result(), not lost
                if fut.done() and isinstance(fut.result(), Result):
                    core.put_back(job_id, fut.result())
                fut.cancel()
                raise
            if not fut.done():
                core.unwait(job_id, waiter)
                fut.cancel()
                raise JobTimeout(job_id, timeout, core.stray(job_id))
            got = fut.result()
        if isinstance(got, BaseException):
            raise got
        return check_ran(got)

    async def run(self, code: str, stdin=None, files=None, limits=None, metadata=None,
                  deadline=None, *, job_id: Optional[str] = None, timeout: float = DEFAULT_WAIT) -> Result:
        t0 = time.monotonic()
        jid = await self.submit(code, stdin, files, limits, metadata, deadline, job_id=job_id, timeout=timeout)
        return await self.result(jid, max(0.0, timeout - (time.monotonic() - t0)))

    def forget(self, job_id: str) -> None:
        if self._core:
            self._core.forget(job_id)

    async def close(self) -> None:
        if self._core is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._core.close)

    async def __aenter__(self) -> "AsyncClient":
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.close()
