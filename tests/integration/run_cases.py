"""`codeq run --json` end to end: each case's status, output and schema validity.

Every result (and, with --audit, every audit event) is validated against schemas/ with
python3-jsonschema. Cases are bounded by their own limits (scaled in the emulated guest); the
whole file runs in ~20 s."""
import json
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import (AUDIT, DEFAULT_TIME_MS, ISOLATION, RESULT, SRC, TIME_SCALE, Failures, run,  # noqa: E402
                        scaled_ms, schema_errors)

CASES = SRC / "tests" / "cases"
F = Failures()
# In the emulated cgroup v2 guest (CODEQ_TEST_TIME_SCALE > 1) a process runs up to ~40x slower:
# a case run with the default limits gets its wall and CPU time scaled, so that what it must do
# before its deadline (start an interpreter, touch 256 MB to reach the memory limit) fits there
# too. The host runs the defaults themselves. Cases that set their own wall time are unchanged.
SCALED = ([] if TIME_SCALE == 1 else
          ["--wall-ms", str(scaled_ms(DEFAULT_TIME_MS)), "--cpu-ms", str(scaled_ms(DEFAULT_TIME_MS))])


def run_json(case, *extra, stdin_file=None):
    args = ["run", "--json", "--audit", *([] if "--wall-ms" in extra else SCALED), *extra]
    if stdin_file:
        args += ["--stdin", str(stdin_file)]
    p = run([*args, str(CASES / case)], timeout=120)
    try:
        both = json.loads(p.stdout)
    except json.JSONDecodeError:
        F.check(False, f"{case}: stdout is not one JSON object: {p.stdout[:200]!r} {p.stderr[:300]!r}")
        return None, None, p.returncode
    r = both["result"]
    errs = schema_errors(RESULT, r)
    F.check(not errs, f"{case}: result not schema-valid: {errs}")
    for ev in both["audit"]:
        e = schema_errors(AUDIT, ev)
        F.check(not e, f"{case}: audit event {ev.get('event')} not schema-valid: {e}")
    return r, [ev["event"] for ev in both["audit"]], p.returncode


def expect(case, status, *extra, rc=None, **kw):
    r, events, code = run_json(case, *extra, **kw)
    if r is None:
        return None
    F.check(r["status"] == status, f"{case}: status {r['status']!r}, want {status!r} ({r['message']})")
    want_rc = 0 if status == "ok" else 1
    F.check(code == want_rc, f"{case}: exit code {code}, want {want_rc}")
    return r, events


r, ev = expect("ok_hello.py", "ok")
F.check(r["stdout"] == "hello from codeq\n", f"ok_hello: stdout {r['stdout']!r}")
F.check(r["exit_code"] == 0 and r["usage"]["wall_ms"] >= 0, "ok_hello: exit_code/usage")
F.check(ev == ["received", "started", "finished"], f"ok_hello: audit events {ev}")

r, ev = expect("error_exception.py", "error")
F.check(r["exit_code"] == 1, f"error: exit code {r['exit_code']}")
F.check("Traceback" in r["stderr"] and "ZeroDivisionError" in r["stderr"], f"error: stderr {r['stderr']!r}")
F.check(r["stdout"] == "before\n", f"error: stdout {r['stdout']!r}")

# Parse once (issue 12): in zygote mode the job runs the code object the validator compiled
# from the parse it checked (the finished event says so: the sandbox's word, sent before the
# job's code runs), in exec mode a compile of its source; the traceback is a direct run's in both.
p = run(["run", "--json", "--audit", str(CASES / "error_exception.py")], timeout=120)
both = json.loads(p.stdout)
fin = [e for e in both["audit"] if e["event"] == "finished"]
F.check(len(fin) == 1 and fin[0].get("code_obj") is (ISOLATION == "zygote"),
        f"error: finished event code_obj {fin}, isolation {ISOLATION}")
F.check(both["result"]["stderr"] == 'Traceback (most recent call last):\n'
        '  File "main.py", line 5, in <module>\n    divide(1, 0)\n'
        '  File "main.py", line 2, in divide\n    return a / b\n           ~~^~~\n'
        'ZeroDivisionError: division by zero\n', f"error: traceback {both['result']['stderr']!r}")

# --audit alone prints the same JSON (it used to be ignored without --json); a program on
# standard input is job local-stdin (it was "local--"); a job that never ran prints no usage
# (it printed "wall 0 ms, cpu 0 ms, max rss 0 kB", figures that look measured).
p = run(["run", "--audit", "-"], input="print(3)\n", timeout=120)
try:
    both = json.loads(p.stdout)
except ValueError:
    both = {}
F.check(p.returncode == 0 and both.get("result", {}).get("id") == "local-stdin"
        and [e["event"] for e in both.get("audit", [])][-1:] == ["finished"],
        f"run --audit -: rc {p.returncode} {p.stdout[:300]!r}")
# an unknown option is named with the command, then one line that points to --help (the
# whole usage after it buried the error)
for cmd in ("run", "validate", "submit", "worker", "topics", "audit", "broker"):
    p = run([cmd, "--no-such-option", "-"], timeout=60)
    F.check(p.returncode == 2 and p.stderr == f"codeq: {cmd}: unrecognized option "
            f"'--no-such-option'\ncodeq: {cmd}: see `codeq {cmd} --help` for the options\n",
            f"{cmd}: an unknown option: {p.stderr[:300]!r}")
p = run(["run", str(CASES / "rejected_subprocess.py")], timeout=120)
F.check(p.returncode == 1 and p.stdout.startswith("status: rejected\n") and "wall" not in p.stdout,
        f"run, human output of a rejected job: {p.stdout[:200]!r}")

r, ev = expect("timeout_sleep.py", "timeout", "--wall-ms", "1500")
F.check(1400 <= r["usage"]["wall_ms"] < 5000, f"timeout_sleep: wall_ms {r['usage']['wall_ms']}")
r, ev = expect("timeout_busy.py", "timeout", "--wall-ms", "1500")

r, ev = expect("rejected_subprocess.py", "rejected")
F.check(any(f["rule"] == "import-denied" and f["line"] == 2 for f in r["findings"]),
        f"rejected_subprocess: findings {r['findings']}")
F.check(all(f["line"] != 1 for f in r["findings"]), "rejected_subprocess: the comment on line 1 was flagged")
F.check(ev == ["received", "rejected"], f"rejected: audit events {ev}")
F.check(r["usage"] is None and r["started_at"] is None, "rejected: must not have run")

r, ev = expect("rejected_exec.py", "rejected")
F.check([(f["rule"], f["line"], f["col"]) for f in r["findings"]] == [("call-denied", 2, 1)],
        f"rejected_exec: findings {r['findings']}")

r, ev = expect("ok_mentions.py", "ok")
F.check(r["findings"] == [] and r["stdout"] == "7\n", f"ok_mentions: {r['findings']} {r['stdout']!r}")

r, ev = expect("memory_bomb.py", "memory_limit")
r, ev = expect("output_flood.py", "output_limit", "--output-bytes", "5000")
F.check(r["stdout_truncated"] and len(r["stdout"]) == 5000 and r["stdout_bytes"] > 5000,
        f"output_flood: len {len(r['stdout'])} bytes {r['stdout_bytes']}")

stdin_file = SRC / "tests" / "cases" / "ok_stdin.input"
r, ev = expect("ok_stdin.py", "ok", stdin_file=stdin_file)
F.check(r["stdout"] == stdin_file.read_text().upper(), f"ok_stdin: stdout {r['stdout']!r}")

r, ev = expect("ok_utf8.py", "ok")
import base64  # noqa: E402
raw = base64.b64decode(r.get("stdout_base64", ""))
F.check(raw == "naïve café ✓\n".encode() + b"raw:\xff\xfe\x00end\n", f"ok_utf8: raw bytes {raw!r}")
F.check("\ufffd" in r["stdout"] and "\x00end" in r["stdout"], f"ok_utf8: stdout {r['stdout']!r}")

# os is not in the shipped validator profiles; a test policy lets os.abort() reach the sandbox.
r, ev = expect("signal_abort.py", "signal", "--policy", str(CASES / "signal_abort.policy.json"))
F.check(r["signal"] == "SIGABRT" and r["exit_code"] is None, f"signal_abort: {r['signal']} {r['exit_code']}")

r, ev = expect("ok_hello.py", "invalid", "--memory-mb", "999999")
F.check("memory_mb" in r["message"], f"invalid limit: message {r['message']!r}")
F.check(ev == ["received", "invalid"], f"invalid: audit events {ev}")

# Input files go into /work; files the job leaves there come back as artifacts.
csv = str(SRC / "tests" / "cases" / "ok_files.csv")
r, ev = expect("ok_files.py", "ok", "--policy", "data", "--input", f"data.csv={csv}")
F.check(r["stdout"] == "12\n", f"ok_files: stdout {r['stdout']!r}")
F.check([(a["path"], a.get("content")) for a in r.get("artifacts", [])] == [("report.txt", "3 rows, total 12\n")],
        f"ok_files: artifacts {r.get('artifacts')}")
# ... and without --json they are named (they were not mentioned at all)
p = run(["run", "--policy", "data", "--input", f"data.csv={csv}",
         str(SRC / "tests" / "cases" / "ok_files.py")], timeout=60)
F.check(p.returncode == 0 and "--- artifacts (contents with --json) ---\nreport.txt (17 bytes)\n"
        in p.stdout, f"ok_files without --json: rc {p.returncode} {p.stdout[-300:]!r}")
# files the program left, none kept (over artifact_bytes): said so, not an empty list
big = pathlib.Path(f"/tmp/codeq-run-cases-{os.getpid()}-big_artifact.py")
big.write_text("open('big.bin', 'wb').write(b'x' * 2_000_000)\n")
p = run(["run", "--policy", "data", *SCALED, str(big)], timeout=60)
big.unlink()
F.check(p.returncode == 0 and p.stdout.endswith("--- artifacts: none kept, the files left are over "
        "limits.artifact_files or artifact_bytes ---\n"), f"an artifact over the limit, without "
        f"--json: rc {p.returncode} {p.stdout[-300:]!r}")
r, ev = expect("ok_hello.py", "invalid", "--input", f"../escape={csv}")
F.check("files[0].path" in r["message"], f"bad input path: message {r['message']!r}")

# Operator limits are checked when the worker starts, before it touches Kafka.
p = run(["worker", "-b", "127.0.0.1:1", "--limit-max", "memory_mb=99999"], timeout=30)
F.check(p.returncode == 2 and "ceiling 1024" in p.stderr, f"limit-max above ceiling: {p.returncode} {p.stderr!r}")
p = run(["worker", "-b", "127.0.0.1:1", "--limit-max", "wall_ms=1000"], timeout=30)
F.check(p.returncode == 2 and "wall_ms 5000 above maximum 1000" in p.stderr,
        f"default above max: {p.returncode} {p.stderr!r}")

# Human output and exit status without --json.
p = run(["run", *SCALED, str(CASES / "ok_hello.py")], timeout=60)
F.check(p.returncode == 0 and "status: ok" in p.stdout and "hello from codeq" in p.stdout,
        f"human run: rc {p.returncode} {p.stdout!r}")
p = run(["run", *SCALED, str(CASES / "rejected_exec.py")], timeout=60)
F.check(p.returncode == 1 and "call-denied" in p.stdout, f"human rejected: rc {p.returncode} {p.stdout!r}")

# A file's name is bytes; a job's id and paths are JSON text. A name with a byte that is not
# UTF-8 and a control character still makes a valid id (each such byte shown as '_'), codeq
# validate --json still prints the file (as text with U+FFFD and exactly as file_base64), and a
# flag that cannot become JSON text is refused with its name, not dropped (exit 2 and nothing
# said, before).
import base64  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
with tempfile.TemporaryDirectory() as tmp:
    raw = os.path.join(os.fsencode(tmp), b"odd\xff\x01name.py")
    with open(raw, "w") as f:
        f.write("print('odd')\n")
    odd = os.fsdecode(raw)
    p = run(["run", "--json", *SCALED, odd], timeout=60)
    r = json.loads(p.stdout) if p.stdout.strip() else {}
    F.check(p.returncode == 0 and r.get("status") == "ok" and r.get("id") == "local-odd__name.py"
            and r.get("stdout") == "odd\n", f"run of a file whose name is not UTF-8: rc {p.returncode} "
            f"{p.stdout[:300]!r} {p.stderr[-300:]!r}")
    p = run(["validate", "--json", odd], timeout=60)
    v = json.loads(p.stdout) if p.stdout.strip() else {}
    F.check(p.returncode == 0 and v.get("findings") == [] and "\ufffd" in v.get("file", "")
            and base64.b64decode(v.get("file_base64", "")) == raw,
            f"validate --json of such a file: rc {p.returncode} {p.stdout!r}")
    p = run(["run", "--id", os.fsdecode(b"id\xff"), str(CASES / "ok_hello.py")], timeout=60)
    F.check(p.returncode == 2 and "the job id is not valid UTF-8" in p.stderr,
            f"run --id not UTF-8: rc {p.returncode} {p.stderr!r}")
    # usage errors exit 2, as --help says: an empty id, an unknown profile, a missing interpreter
    for bad, want in ((["--id", ""], "job id must be a string of 1-256 characters"),
                      (["--sandbox-profile", "weak"], "--sandbox-profile: full, no-cgroup or"),
                      (["--python", "/nonexistent/python3"], "--python /nonexistent/python3: not")):
        p = run(["run", *bad, str(CASES / "ok_hello.py")], timeout=60)
        F.check(p.returncode == 2 and want in p.stderr, f"run {bad}: rc {p.returncode} {p.stderr!r}")
    p = run(["run", "--input", os.fsdecode(b"in\xff=") + odd, str(CASES / "ok_hello.py")], timeout=60)
    F.check(p.returncode == 2 and "--input NAME is not valid UTF-8" in p.stderr,
            f"run --input NAME not UTF-8: rc {p.returncode} {p.stderr!r}")
    with open(raw + b"-stdin", "wb") as f:
        f.write(b"\xff\xfe")
    # codeq topics against an address where nothing listens says so, in 10 s (it used to
    # report topics created without leaders, then a CreateTopics failure after 30 s).
    t0 = time.monotonic()
    p = run(["topics", "-b", "127.0.0.1:1"], timeout=60)
    took = time.monotonic() - t0
    F.check(p.returncode == 1 and "codeq: topics: the cluster at 127.0.0.1:1 did not answer"
            in p.stderr and "without leaders" not in p.stderr and took < 20, f"topics, no broker: rc {p.returncode} in {took:.1f} s "
            f"{p.stderr[-300:]!r}")
    # A command missing its program says so in one line (each printed its whole usage, with no
    # word on what was wrong).
    for args, want in [(["run"], "codeq: run: no program given"),
                       (["run", "a.py", "b.py"], "codeq: run: more than one program given"),
                       (["validate"], "codeq: validate: no program given"),
                       (["submit"], "codeq: submit: no program given"),
                       (["audit", "x"], "codeq: audit: unexpected argument 'x'"),
                       (["audit", "--verify", "--job", "j"],
                        "codeq: audit: --verify checks every chain and prints its findings: it "
                        "takes no --job")]:
        p = run(args, timeout=30)
        F.check(p.returncode == 2 and p.stderr.startswith(want) and "usage:" not in p.stderr,
                f"{' '.join(args)}: rc {p.returncode} {p.stderr[:200]!r}")
    # submit's --timeout bounds the whole command: with no broker it used to wait 10 s whatever
    # the timeout.
    t0 = time.monotonic()
    p = run(["submit", "-b", "127.0.0.1:1", "--timeout", "2", str(CASES / "ok_hello.py")],
            timeout=60)
    took = time.monotonic() - t0
    F.check(p.returncode == 1 and "codeq: submit: cannot reach the broker at 127.0.0.1:1:"
            in p.stderr and "results topic" in p.stderr and took < 5,
            f"submit -t 2, no broker: rc {p.returncode} in {took:.1f} s {p.stderr[-300:]!r}")
    # (the file is named: the message said "--stdin FILE", the placeholder; its name is not
    # UTF-8 either)
    p = run(["submit", "-b", "127.0.0.1:1", "--timeout", "1", "--stdin", odd + "-stdin", odd],
            timeout=60, errors="surrogateescape")
    F.check(p.returncode == 2 and f"codeq: submit: {odd}-stdin is not valid UTF-8" in p.stderr,
            f"submit --stdin not UTF-8: rc {p.returncode} {p.stderr!r}")
    # Every program is read before anything is sent: one bad file among good ones sends none
    # (before, the files ahead of it were sent and their results never awaited), and each bad
    # one is named with the command. The broker address is unreachable: a run that got as far
    # as Kafka would exit 1 with a broker error instead.
    latin1, missing = os.path.join(tmp, "latin1.py"), os.path.join(tmp, "missing.py")
    with open(latin1, "wb") as f:
        f.write(b"print('\xff')\n")
    p = run(["submit", "-b", "127.0.0.1:1", "--timeout", "1", str(CASES / "ok_hello.py"), missing,
             latin1, tmp], timeout=60)
    F.check(p.returncode == 2 and f"codeq: submit: {missing}: No such file or directory" in p.stderr
            and f"codeq: submit: {latin1} is not valid UTF-8" in p.stderr
            and f"codeq: submit: {tmp}: Is a directory" in p.stderr
            and "3 of 4 files could not be sent as jobs; nothing was sent" in p.stderr
            and "Broker" not in p.stderr and "metadata" not in p.stderr,
            f"submit with unreadable files among good ones: rc {p.returncode} {p.stderr!r}")
    p = run(["run", missing], timeout=60)
    F.check(p.returncode == 2 and f"codeq: run: {missing}: No such file or directory" in p.stderr,
            f"run of a missing file: rc {p.returncode} {p.stderr!r}")
    # Files are read up to what a job may carry, never further: /dev/zero is refused at once
    # (before, it was read until memory ran out).
    for args, what in ((["run", "--input", "x=/dev/zero", str(CASES / "ok_hello.py")], 33554432),
                       (["run", "--stdin", "/dev/zero", str(CASES / "ok_hello.py")], 1048576),
                       (["run", "/dev/zero"], 262144), (["validate", "/dev/zero"], 262144)):
        p = run(args, timeout=60)
        F.check(p.returncode == 2 and f"/dev/zero: larger than {what} bytes" in p.stderr,
                f"{' '.join(args[:2])} of /dev/zero: rc {p.returncode} {p.stderr[-200:]!r}")

# The job uid range (--uid-base/--uid-count, docs/security-model.md): a one-uid range puts the
# job on exactly that uid and gid; a range that cannot hold a job, or runs past the last uid,
# is refused before anything runs.
with tempfile.TemporaryDirectory() as tmp:
    prog = os.path.join(tmp, "uid.py")
    with open(prog, "w") as f:
        f.write("import os\nprint(os.getuid(), os.getgid(), os.getresuid(), os.getgroups())\n")
    pol = ["--policy", str(SRC / "tests" / "abuse" / "_policy.json")]
    if ISOLATION == "zygote":
        pol += ["--zygote-preload", "os"]
    for base in (62500, 61000 + 999):
        p = run(["run", "--json", *SCALED, *pol, "--uid-base", str(base), "--uid-count", "1", prog],
                timeout=120)
        try:
            out = json.loads(p.stdout)["stdout"]
        except (ValueError, KeyError):
            out = f"no result: {p.stdout[:200]!r} {p.stderr[-300:]!r}"
        F.check(out == f"{base} {base} ({base}, {base}, {base}) []\n",
                f"--uid-base {base} --uid-count 1: the job printed {out!r}")
    for args, words in ((["--uid-count", "0"], "expects a positive integer"),
                        (["--uid-count", "65537"], "is above 65536"),
                        (["--uid-base", "0"], "expects a positive integer"),
                        (["--uid-base", "4294967290", "--uid-count", "6"], "past the last uid")):
        p = run(["run", *args, str(CASES / "ok_hello.py")], timeout=60)
        F.check(p.returncode == 2 and words in p.stderr and not p.stdout,
                f"run {' '.join(args)}: rc {p.returncode} {p.stderr[-200:]!r}")

F.finish("run_cases")
