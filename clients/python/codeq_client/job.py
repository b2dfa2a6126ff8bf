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

LIMITS = frozenset({"wall_ms", "cpu_ms", "memory_mb", "pids", "output_bytes", "file_mb",
                    "open_files", "tmpfs_mb", "artifact_files", "artifact_bytes", "io_read_bps",
                    "io_write_bps", "io_read_iops", "io_write_iops"})
MAX_FILES = 64
MAX_METADATA = 16384
MAX_METADATA_DEPTH = 64  # lists and dicts, as the worker counts them
RESERVED = frozenset({"main.py", "_codeq_prelude.py"})  # the job's program and the guard's

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
    job: dict = {"id": new_id() if job_id is None else job_id, "code": code}
    if not isinstance(job["id"], str) or not 1 <= len(job["id"]) <= 256 or \
            any(ord(c) < 32 or ord(c) == 127 for c in job["id"]):
        raise ValueError(f"job id {job['id']!r}: 1-256 characters, no control characters")
    if stdin is not None:
        job["stdin"] = stdin.decode() if isinstance(stdin, bytes) else stdin
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


def _files(files: Files) -> list:
    items = files.items() if isinstance(files, Mapping) else files
    out = []
    for path, content in items:
        parts = path.split("/")
        if "\0" in path or path.startswith("/") or any(p in ("", ".", "..") for p in parts) \
                or parts[0] in RESERVED:
            raise ValueError(f"file {path!r}: a relative path without '.', '..', empty parts or NUL "
                             "characters, not main.py or _codeq_prelude.py")
        for other in out:  # one file cannot also be a directory of another
            a, b = sorted((path, other["path"]), key=len)
            if b == a or b.startswith(a + "/"):
                raise ValueError(f"files {other['path']!r} and {path!r}: the same path, or one "
                                 "inside the other (which would have to be a directory)")
        if isinstance(content, bytes):
            out.append({"path": path, "content_base64": base64.b64encode(content).decode()})
        else:
            out.append({"path": path, "content": content})
    if len(out) > MAX_FILES:
        raise ValueError(f"{len(out)} files: at most {MAX_FILES}")
    return out


def _check_metadata(v: Any, depth: int) -> None:
    """What the worker cannot take in metadata: integers past 64 bits (the job is invalid),
    lists and dicts nested more than MAX_METADATA_DEPTH deep (invalid: it echoes metadata to
    readers that may give up earlier), a NUL character in a key (its JSON parser cannot read
    the job at all: dead-lettered)."""
    if isinstance(v, int) and not isinstance(v, bool) and not -2 ** 63 <= v < 2 ** 63:
        raise ValueError(f"metadata: {v} does not fit in 64 bits (send it as a string)")
    if not isinstance(v, (Mapping, list, tuple)):
        return
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"metadata is nested deeper than {MAX_METADATA_DEPTH} levels")
    if isinstance(v, Mapping) and any(isinstance(k, str) and "\0" in k for k in v):
        raise ValueError("metadata: a key with a NUL character (the worker cannot read it)")
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
