"""A codeq result as Python objects, and the exceptions the clients raise.

The worker publishes a JSON record (schemas/result.schema.json); `Result.from_json` turns it
into typed fields and decodes what travels as base64 (non-UTF-8 output, binary artifacts),
so callers never touch the encoding. The raw dict stays in `Result.raw`."""
from __future__ import annotations

import base64
import os
from dataclasses import dataclass, field
from typing import Any, Optional

# Statuses where the program ran (or was started) and the result says what it did. The client
# returns these; the other statuses mean the program never ran and raise (see `check_ran`).
RAN = frozenset({"ok", "error", "timeout", "memory_limit", "output_limit", "signal",
                 "seccomp_violation"})


@dataclass(frozen=True)
class Usage:
    wall_ms: int
    cpu_ms: int
    max_rss_kb: int


@dataclass(frozen=True)
class Finding:
    """One validator finding: why a program was rejected (or a warning)."""
    rule: str
    severity: str
    message: str
    line: int
    col: int
    end_line: int
    end_col: int

    def __str__(self) -> str:
        return f"{self.line}:{self.col}: {self.rule} {self.message}"


@dataclass(frozen=True)
class Result:
    id: str
    status: str
    message: str
    exit_code: Optional[int]
    signal: Optional[str]
    stdout: str
    stderr: str
    stdout_raw: bytes          # the exact bytes (stdout_base64 when not UTF-8, else stdout)
    stderr_raw: bytes
    stdout_truncated: bool
    stderr_truncated: bool
    usage: Optional[Usage]
    findings: list = field(default_factory=list)   # list[Finding]
    findings_total: int = 0
    artifacts: dict = field(default_factory=dict)  # path -> bytes
    artifacts_truncated: bool = False
    metadata: Any = None
    worker: str = ""
    raw: dict = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def error_text(self) -> str:
        """What went wrong, for a person or an LLM: the message, the findings, the stderr tail."""
        parts = [f"status: {self.status}"]
        if self.message:
            parts.append(self.message)
        parts += [str(f) for f in self.findings]
        if self.stderr:
            parts.append(self.stderr[-4000:])
        return "\n".join(parts)

    def raise_for_status(self) -> "Result":
        """Raise JobFailed unless the status is ok (like requests' raise_for_status)."""
        if not self.ok:
            raise JobFailed(self)
        return self

    @classmethod
    def from_json(cls, d: dict) -> "Result":
        """The Result of a record as the worker publishes it. ValueError for anything else (a
        job record, another producer's message): no string id or status, or a field of another
        shape than the result schema's."""
        if not isinstance(d, dict):
            raise ValueError(f"not a codeq result: a JSON {type(d).__name__}, not an object")
        for k in ("id", "status"):
            if not isinstance(d.get(k), str):
                raise ValueError(f"not a codeq result: no string {k!r}"
                                 + (" (it looks like a job)" if "code" in d else ""))
        try:
            return cls._from_json(d)
        except (KeyError, TypeError, AttributeError, ValueError) as e:  # binascii.Error too
            raise ValueError(f"not a codeq result: {type(e).__name__} {e}") from None

    @classmethod
    def _from_json(cls, d: dict) -> "Result":
        u = d.get("usage")
        findings = [Finding(**{k: f[k] for k in Finding.__dataclass_fields__}) for f in d.get("findings") or []]
        return cls(
            id=d["id"], status=d["status"], message=d.get("message") or "",
            exit_code=d.get("exit_code"), signal=d.get("signal"),
            stdout=d.get("stdout") or "", stderr=d.get("stderr") or "",
            stdout_raw=_exact(d, "stdout"), stderr_raw=_exact(d, "stderr"),
            stdout_truncated=bool(d.get("stdout_truncated")),
            stderr_truncated=bool(d.get("stderr_truncated")),
            usage=Usage(u["wall_ms"], u["cpu_ms"], u["max_rss_kb"]) if u else None,
            findings=findings, findings_total=d.get("findings_total", len(findings)),
            artifacts=dict(_artifact(a) for a in d.get("artifacts") or []),
            artifacts_truncated=bool(d.get("artifacts_truncated")),
            metadata=d.get("metadata"), worker=d.get("worker") or "", raw=d)


def _exact(d: dict, stream: str) -> bytes:
    b64 = d.get(stream + "_base64")
    return base64.b64decode(b64) if b64 is not None else (d.get(stream) or "").encode()


def _artifact(a: dict):
    # A name that is not UTF-8 comes as path_base64: keep its bytes through surrogateescape,
    # as os.listdir would.
    path = os.fsdecode(base64.b64decode(a["path_base64"])) if "path_base64" in a else a["path"]
    data = base64.b64decode(a["content_base64"]) if "content_base64" in a else a["content"].encode()
    return path, data


class CodeqError(Exception):
    """Base of every error the codeq clients raise."""


class JobTimeout(CodeqError, TimeoutError):
    """No result within the client's wait. The job may still run: result(job_id) later gets it.
    (A program that ran past its own wall/CPU limit is not this: it is a Result with status
    'timeout'.)"""

    def __init__(self, job_id: str, waited: float, note: str = ""):
        super().__init__(f"codeq: no result for job {job_id!r} within {waited:g} s "
                         "(it may still come: call result() again)" + (f"; {note}" if note else ""))
        self.job_id = job_id
        self.waited = waited


class ConfigError(CodeqError, ValueError):
    """A librdkafka setting (a keyword argument of the client) that librdkafka refuses: an
    unknown property or a value it cannot take. Also a ValueError: the call's arguments are
    wrong, nothing was sent."""


class JobStatusError(CodeqError):
    """A result whose status the client raises on; the result is in `.result`."""

    def __init__(self, result: Result):
        super().__init__(f"codeq: job {result.id!r}: {result.status}"
                         + (f": {result.message}" if result.message else ""))
        self.result = result
        self.job_id = result.id
        self.status = result.status


class JobInvalid(JobStatusError):
    """The job message was refused (bad field, limit above the operator's maximum, ...)."""


class JobRejected(JobStatusError):
    """The validator refused the program; it did not run. The reasons are in `.findings`."""

    @property
    def findings(self):
        return self.result.findings

    def __str__(self) -> str:
        return super().__str__() + "".join(f"\n  {f}" for f in self.result.findings)


class JobExpired(JobStatusError):
    """The job's deadline passed before a worker could start it; it did not run."""


class JobInternalError(JobStatusError):
    """codeq failed on this job (it may not have run)."""


class JobFailed(JobStatusError):
    """Raised only by Result.raise_for_status(): the program ran and did not end ok."""


_RAISES = {"invalid": JobInvalid, "rejected": JobRejected, "expired": JobExpired,
           "internal_error": JobInternalError}


def check_ran(r: Result) -> Result:
    """Return r if the program ran (whatever its exit), else raise the status's exception."""
    exc = _RAISES.get(r.status)
    if exc:
        raise exc(r)
    if r.status not in RAN:
        raise JobStatusError(r)  # a status newer than this client: the result is on it
    return r
