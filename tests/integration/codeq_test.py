"""Helpers for codeq's end-to-end tests: locate the binary, validate messages against
schemas/ with a real JSON Schema validator (python3-jsonschema, draft 2020-12), report counts.

Run with Debian's /usr/bin/python3 (ctest does)."""
import faulthandler
import json
import os
import pathlib
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import jsonschema

SRC = pathlib.Path(os.environ.get("CODEQ_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
BIN = os.environ.get("CODEQ_BIN", str(SRC / "build" / "codeq"))


def _load_schemas():
    store = {}
    for p in (SRC / "schemas").glob("*.schema.json"):
        s = json.loads(p.read_text())
        store[s["$id"]] = s
    return store


_STORE = _load_schemas()

# CODEQ_TEST_DUMP_AFTER_S=N (set by tests/cgroup2/guest.sh shortly before the guest's time
# runs out): a suite still running then prints every thread's stack to stderr, so that a run
# killed at its bound says where it waited instead of ending without a word.
if os.environ.get("CODEQ_TEST_DUMP_AFTER_S"):
    faulthandler.dump_traceback_later(float(os.environ["CODEQ_TEST_DUMP_AFTER_S"]), exit=False)


def validator(name):
    schema = _STORE[f"https://codeq.dev/schemas/{name}.schema.json"]
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    resolver = jsonschema.RefResolver.from_schema(schema, store=_STORE)
    return cls(schema, resolver=resolver, format_checker=cls.FORMAT_CHECKER)


RESULT = validator("result")
AUDIT = validator("audit")
JOB = validator("job")


# A RefResolver keeps a stack of base URIs while it follows a $ref: two threads validating
# with one validator at once can pop each other's scope ("Unresolvable JSON pointer"), as
# the abuse suites' thread pools did in the slow cgroup v2 guest. One validation at a time.
_SCHEMA_LOCK = threading.Lock()


def schema_errors(v, msg):
    with _SCHEMA_LOCK:
        return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}"
                for e in v.iter_errors(msg)]


class Failures:
    """Collects failed checks so one run reports all of them, then exits non-zero."""

    def __init__(self):
        self.items = []
        self.checks = 0

    def check(self, cond, what):
        self.checks += 1
        if not cond:
            self.items.append(what)
            print(f"FAIL: {what}", flush=True)
        return cond

    def finish(self, name):
        passed = self.checks - len(self.items)
        print(f"{name}: {passed} passed, {len(self.items)} failed", flush=True)
        sys.exit(1 if self.items else 0)


# CODEQ_TEST_ISOLATION=zygote|exec: every `codeq run` (and `codeq worker`) of a suite runs in
# that mode, said explicitly. Unset: `codeq run` suites use exec, worker suites use the
# worker's default (zygote), so that what operators get by default is what the Kafka tests test.
ISOLATION = os.environ.get("CODEQ_TEST_ISOLATION", "exec")
ISOLATION_ARGS = [f"--isolation={ISOLATION}"]
# CODEQ_TEST_TIME_SCALE=N: processes run N times slower here than on the host (the cgroup v2
# guest under emulation, tests/cgroup2/): a zygote's start gets N times its default 10 s.
TIME_SCALE = max(1, min(60, int(os.environ.get("CODEQ_TEST_TIME_SCALE", "1"))))
if ISOLATION == "zygote" and TIME_SCALE > 1:
    ISOLATION_ARGS.append(f"--zygote-start-ms={10000 * TIME_SCALE}")
# A job's default wall and CPU time, and the most either may be (sandbox/sbx_limits.c).
DEFAULT_TIME_MS, MAX_TIME_MS = 5000, 60000


def scaled_ms(ms):
    """A job's time limit scaled by TIME_SCALE, within the maximum a job may be given."""
    return min(ms * TIME_SCALE, MAX_TIME_MS)


WORKER_ISOLATION_ARGS = ([f"--isolation={os.environ['CODEQ_TEST_ISOLATION']}"]
                         if os.environ.get("CODEQ_TEST_ISOLATION") else [])


def run(args, **kw):
    if args and args[0] == "run":
        args = ["run", *ISOLATION_ARGS, *args[1:]]
    return subprocess.run([BIN, *args], capture_output=True, text=True, **kw)


def free_port():
    """A TCP port on 127.0.0.1 free a moment ago (for a worker's --http or a second broker)."""
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


def http_get(url):
    """(status, body) of a GET; errors with a status are answers too."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
