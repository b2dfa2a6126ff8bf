"""Building a job message (schemas/job.schema.json) from Python values.

What can be checked here is checked here, with a ValueError before anything is sent: a job
the worker finds unusable is answered `invalid` on the shared results topic, which a client
reading only its own reply topic never sees (see the package README)."""
from __future__ import annotations

import base64
import datetime as dt
import json
import re
import uuid
from typing import Any, Mapping, Optional, Union

# Each limit's least value (schemas/job.schema.json, sandbox/sbx_limits.c): below it no job
# can run, and the worker answers invalid. The most is the operator's (--limit-max).
LIMITS = {"wall_ms": 1, "cpu_ms": 1, "memory_mb": 1, "pids": 2, "output_bytes": 1, "file_mb": 1,
          "open_files": 16, "tmpfs_mb": 1, "artifact_files": 1, "artifact_bytes": 1,
          "io_read_bps": 4194304, "io_write_bps": 4194304, "io_read_iops": 100,
          "io_write_iops": 100}
# The worker's limits (worker/worker.h, worker/wrk_files.c, sandbox/sbx_files.c), in UTF-8 bytes
MAX_CODE = 256 * 1024
MAX_STDIN = 1024 * 1024
MAX_FILES = 64
MAX_PATH = 255                # bytes of a file's path
MAX_PATH_DEPTH = 16           # its components
MAX_FILE_BASE64 = 16 * 1024 * 1024  # content_base64 of one file, as sent (12 MiB of bytes)
MAX_METADATA = 16384
MAX_METADATA_DEPTH = 64  # lists and dicts, as the worker counts them
RESERVED = frozenset({"main.py", "_codeq_prelude.py"})  # the job's program and the guard's
# What the worker never answers on (worker/wrk_decode.c, decode_reply_to): its own topics. The
# client knows the jobs topic it writes to; the audit and dead-letter topics by their defaults.
WORKER_TOPICS = ("codeq.audit", "codeq.jobs.dlq")
TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")  # a Kafka topic name, as the worker checks it

Files = Union[Mapping[str, Union[str, bytes]], list]
Deadline = Union[None, str, dt.datetime, dt.timedelta, float, int]


def new_id() -> str:
    return "cq-" + uuid.uuid4().hex


def build(code: str, job_id: Optional[str] = None, stdin: Union[None, str, bytes] = None,
          files: Optional[Files] = None, limits: Optional[Mapping[str, int]] = None,
          metadata: Any = None, deadline: Deadline = None,
          reply_to: Optional[str] = None) -> dict:
    if not isinstance(code, str):
        raise TypeError("code must be a str")
    if "\0" in code:
        raise ValueError("code contains a NUL character, which Python source cannot")
    if len(_utf8(code, "code")) > MAX_CODE:
        raise ValueError(f"code is larger than {MAX_CODE} bytes (UTF-8)")
    job: dict = {"id": new_id() if job_id is None else job_id, "code": code}
    if not isinstance(job["id"], str) or not 1 <= len(job["id"]) <= 256 or \
            any(ord(c) < 32 or ord(c) == 127 for c in job["id"]):
        raise ValueError(f"job id {job['id']!r}: 1-256 characters, no control characters")
    _utf8(job["id"], "job id")
    if stdin is not None:
        job["stdin"] = _stdin(stdin)
    if files:
        job["files"] = _files(files)
    if limits:
        job["limits"] = _limits(limits)
    if metadata is not None:
        _check_metadata(metadata, 1)
        try:  # NaN and the infinities are not JSON: the worker could not even read the job's id
            encoded = json.dumps(metadata, separators=(",", ":"), ensure_ascii=False,
                                 allow_nan=False).encode()
        except ValueError as e:
            raise ValueError(f"metadata: {e} (NaN and infinities are not JSON)") from None
        if len(encoded) > MAX_METADATA:  # counted as the worker does: UTF-8 bytes
            raise ValueError(f"metadata is larger than {MAX_METADATA} bytes once encoded")
        job["metadata"] = metadata
    if deadline is not None:
        job["deadline"] = _deadline(deadline)
    if reply_to:
        job["reply_to"] = reply_to
    return job


def check_reply_topic(name: str, prefix: str, jobs_topic: str, results_topic: str) -> None:
    """ValueError unless a worker with this reply prefix answers on topic `name`: the rule of
    worker/wrk_decode.c (decode_reply_to), in its order. A job with any other reply_to is
    answered `invalid` on the results topic, which a reply-topic client never reads."""
    what = f"reply_topic {name!r}"
    if not isinstance(name, str) or not TOPIC.fullmatch(name) or name in (".", ".."):
        raise ValueError(f"{what}: not a Kafka topic name (1-249 of A-Z a-z 0-9 . _ -)")
    if name == jobs_topic or name in WORKER_TOPICS:
        raise ValueError(f"{what}: names codeq's own topic (jobs, audit or dead letters); the "
                         "worker answers no job there")
    if name.startswith("__"):
        raise ValueError(f"{what}: names a Kafka internal topic; the worker answers no job there")
    if name != results_topic and not name.startswith(prefix):
        raise ValueError(f"{what} is outside reply_prefix {prefix!r}: the worker answers only on "
                         f"the results topic ({results_topic}) or on topics starting with its "
                         f"--reply-topic-prefix (default 'codeq.reply.'); its answer to such a "
                         "job goes to the results topic, which this client would not read. Name "
                         "one starting with the prefix, or pass reply_prefix= as the workers run")


def _utf8(s: str, what: str) -> bytes:
    """s as the job carries it (JSON in UTF-8): a lone surrogate cannot be."""
    try:
        return s.encode()
    except UnicodeEncodeError as e:
        raise ValueError(f"{what}: character {e.start} ({s[e.start]!r}) is a lone surrogate, "
                         "which UTF-8 (and so the job) cannot carry") from None


def _stdin(stdin: Union[str, bytes]) -> str:
    """The job carries stdin as JSON text: bytes must be UTF-8."""
    if isinstance(stdin, (bytes, bytearray, memoryview)):
        try:
            stdin = bytes(stdin).decode()
        except UnicodeDecodeError as e:
            raise ValueError(f"stdin: byte {e.start} ({bytes(stdin)[e.start:e.start + 1]!r}) is "
                             "not UTF-8; the job carries stdin as text (UTF-8 only)") from None
    elif not isinstance(stdin, str):
        raise TypeError(f"stdin must be str or bytes, not {type(stdin).__name__}")
    if len(_utf8(stdin, "stdin")) > MAX_STDIN:
        raise ValueError(f"stdin is larger than {MAX_STDIN} bytes (UTF-8)")
    return stdin


def _files(files: Files) -> list:
    items = list(files.items() if isinstance(files, Mapping) else files)
    # counted first: the pairwise checks below are quadratic in the count
    if len(items) > MAX_FILES:
        raise ValueError(f"files: {len(items)} files, at most {MAX_FILES}")
    out = []
    for item in items:
        # a {"path": ..., "content": ...} dict would unpack into its two keys
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError(f"files: {item!r}: a (path, content) pair (or pass a dict "
                            "{path: content})")
        path, content = item
        if not isinstance(path, str):
            raise TypeError(f"file path {path!r}: a str")
        if not isinstance(content, (str, bytes, bytearray, memoryview)):
            raise TypeError(f"file {path!r}: content must be str or bytes, not "
                            f"{type(content).__name__}")
        parts = path.split("/")
        if "\0" in path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) \
                or parts[0] in RESERVED:
            raise ValueError(f"file {path!r}: a relative path without '.', '..', empty parts or NUL "
                             "characters, not main.py or _codeq_prelude.py")
        if len(_utf8(path, f"file {path!r}")) > MAX_PATH or len(parts) > MAX_PATH_DEPTH:
            raise ValueError(f"file {path!r}: at most {MAX_PATH} bytes (UTF-8) and "
                             f"{MAX_PATH_DEPTH} components")
        for other in out:  # one file cannot also be a directory of another
            a, b = sorted((path, other["path"]), key=len)
            if b == a or b.startswith(a + "/"):
                raise ValueError(f"files {other['path']!r} and {path!r}: the same path, or one "
                                 "inside the other (which would have to be a directory)")
        if isinstance(content, str):
            _utf8(content, f"file {path!r}")
            out.append({"path": path, "content": content})
            continue
        content = bytes(content)
        if (len(content) + 2) // 3 * 4 > MAX_FILE_BASE64:
            raise ValueError(f"file {path!r}: {len(content)} bytes; at most "
                             f"{MAX_FILE_BASE64 // 4 * 3} as bytes ({MAX_FILE_BASE64} in base64)")
        out.append({"path": path, "content_base64": base64.b64encode(content).decode()})
    return out


def _check_metadata(v: Any, depth: int) -> None:
    """What the worker cannot take in metadata: integers past 64 bits (the job is invalid),
    lists and dicts nested more than MAX_METADATA_DEPTH deep (invalid: it echoes metadata to
    readers that may give up earlier), a NUL character in a key (its JSON parser cannot read
    the job at all: dead-lettered)."""
    if isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < 2 ** 63:
        raise ValueError(f"metadata: {v} does not fit in 64 bits (send it as a string)")
    if isinstance(v, str):
        _utf8(v, "metadata")
    if not isinstance(v, (Mapping, list, tuple)):
        return
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"metadata is nested deeper than {MAX_METADATA_DEPTH} levels")
    if isinstance(v, Mapping) and any(isinstance(k, str) and "\0" in k for k in v):
        raise ValueError("metadata: a key with a NUL character (the worker cannot read it)")
    for k in v if isinstance(v, Mapping) else ():
        if isinstance(k, str):
            _utf8(k, "metadata key")
    for x in v.values() if isinstance(v, Mapping) else v:
        _check_metadata(x, depth + 1)


def _limits(limits: Mapping[str, int]) -> dict:
    out = {}
    for k, v in limits.items():
        if k not in LIMITS:
            raise ValueError(f"unknown limit {k!r} (known: {', '.join(sorted(LIMITS))})")
        # A float without a fraction (timeout * 1000 gives 2500.0) is an integer, as the
        # job schema and the worker read it; it is sent as one.
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"limit {k} must be a positive integer, not {v!r}")
        if v < LIMITS[k]:
            raise ValueError(f"limit {k} is at least {LIMITS[k]}, not {v}")
        out[k] = v
    return out


# RFC 3339, as the worker reads it: a time with its offset (Z or +HH:MM), fixed-width fields.
RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def _deadline_string(d: str) -> str:
    """The string as given, once it is a time the worker reads (else it answers `invalid`)."""
    if RFC3339.fullmatch(d):
        # the calendar check; second 60 (a leap second) is one RFC 3339 allows
        iso = d[:17] + ("59" if d[17:19] == "60" else d[17:19]) + d[19:]
        try:
            dt.datetime.fromisoformat(iso.replace("t", "T").replace("z", "+00:00")
                                      .replace("Z", "+00:00"))
            return d
        except ValueError:
            pass
    raise ValueError(f"deadline {d!r} is not an RFC 3339 time with its offset, like "
                     "2026-11-30T05:45:29Z or 2026-11-30T06:45:29+01:00 (or pass a datetime)")


def _deadline(d: Deadline) -> str:
    """A UTC time: a datetime (naive means UTC), a timedelta or seconds from now, or an RFC 3339
    string (checked, sent as given)."""
    if isinstance(d, str):
        return _deadline_string(d)
    now = dt.datetime.now(dt.timezone.utc)
    try:  # inf, nan, 1e12 seconds or timedelta.max from now: past year 9999
        if isinstance(d, dt.timedelta):
            d = now + d
        elif isinstance(d, (int, float)) and not isinstance(d, bool):
            d = now + dt.timedelta(seconds=d)
    except (OverflowError, ValueError) as e:
        raise ValueError(f"deadline {d!r} from now: {e}") from e
    if not isinstance(d, dt.datetime):  # a date, True, anything else: said, not guessed
        raise ValueError(f"deadline {d!r}: a datetime, a timedelta, seconds from now or an "
                         f"RFC 3339 string")
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    try:
        d = d.astimezone(dt.timezone.utc)
    except OverflowError as e:  # datetime.max at +14:00
        raise ValueError(f"deadline {d!r}: {e}") from e
    return d.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
