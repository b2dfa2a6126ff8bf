"""Validator corpora end to end: every bypass is stopped, every benign program runs unchanged.

tests/validator/bypass/NN_name.py print `BYPASS-OK:NN_name` only when a forbidden operation
succeeded; they run under the shipped strict profile, or under the profile named in
NN_name.policy (e.g. `data`, for tricks that need its open()). Each must be rejected statically
(`codeq validate` exits 1 with findings, and `codeq run` says "rejected") or, if it runs, the
marker must be absent from its output; the layer that stopped it is shown in the summary:
static, guard (the runtime guard's error is in stderr), or sandbox (the operation failed for
another reason, e.g. the file or syscall is not there).
tests/validator/benign/NN_name.py are ordinary agent programs: zero findings, status ok, and stdout
byte-identical to plain `/usr/bin/python3 -I -B` (safe to run unconfined: we wrote them).

Layer matrix (reported, not asserted: the assertion is on the shipped strict profile): every
bypass is also run under two policies derived from its profile with every static rule it tripped
disabled — "guard alone" (runtime guard on) and "sandbox alone" (guard off too) — to show which
layers would stop it by themselves, and that each trick really works when nothing stops it.

Bypass programs only ever run through `codeq run` (the sandbox). At most two jobs run at a time;
every subprocess has a timeout, so the whole file is bounded (about a minute on 2 busy cores)."""
import base64
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading

import jsonschema

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import RESULT, SRC, Failures, run, schema_errors, validator  # noqa: E402

CORPUS = SRC / "tests" / "validator"
BYPASS = sorted((CORPUS / "bypass").glob("*.py"))
BENIGN = sorted((CORPUS / "benign").glob("*.py"))
MIN_BYPASS, MIN_BENIGN = 45, 65
FINDING = jsonschema.Draft202012Validator(RESULT.schema["$defs"]["finding"])
# How the runtime guard announces itself is the guard's business; any of these in the last
# exception line of stderr counts as "stopped by the guard" (the label only, not the verdict).
GUARD_WORDS = re.compile(r"codeq|guard|not allowed|denied|forbidden|blocked|restricted|policy", re.I)


class ThreadSafeFailures(Failures):
    """Checks come from two worker threads; one lock keeps counts and FAIL lines whole."""

    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def check(self, cond, what):
        with self.lock:
            return super().check(cond, what)


F = ThreadSafeFailures()
LISTING = []  # codeq validate's findings for the statically rejected bypasses, printed at the end
RULES = set()  # every rule id the bypasses tripped (disabled in the derived policies)
POLICY = validator("policy")


def stdin_of(prog):
    s = prog.with_suffix(".stdin")
    return s if s.exists() else None


def codeq(prog, args, timeout):
    """build/codeq with a bound; a hang or a missing binary is a failure of this program, not a crash."""
    try:
        return run(args, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        F.check(False, f"{prog.name}: codeq {args[0]}: {type(e).__name__}: {e}")
        return None


def profile(prog):
    """The built-in profile a bypass program runs under: strict unless NN_name.policy says."""
    p = prog.with_suffix(".policy")
    return p.read_text().strip() if p.exists() else "strict"


def validate(prog):
    """codeq validate --json on one file: (exit code, findings list or None if unreadable)."""
    p = codeq(prog, ["validate", "--json", "--policy", profile(prog), str(prog)], 60)
    if p is None:
        return -1, None
    try:
        obj = json.loads(p.stdout)
    except json.JSONDecodeError:
        F.check(False, f"{prog.name}: validate --json printed no JSON object (rc {p.returncode}): "
                       f"{p.stdout[:200]!r} {p.stderr[:300]!r}")
        return p.returncode, None
    findings = obj.get("findings")
    for f in findings or []:
        errs = schema_errors(FINDING, f)
        F.check(not errs, f"{prog.name}: finding not schema-valid: {errs} {f}")
    return p.returncode, findings


def run_job(prog, *extra, policy=None):
    args = ["run", "--json", *extra]
    if policy:
        args += ["--policy", str(policy)]
    s = stdin_of(prog)
    if s:
        args += ["--stdin", str(s)]
    p = codeq(prog, [*args, str(prog)], 120)
    if p is None:
        return None
    try:
        r = json.loads(p.stdout)
    except json.JSONDecodeError:
        F.check(False, f"{prog.name}: run --json printed no JSON object (rc {p.returncode}): "
                       f"{p.stdout[:200]!r} {p.stderr[:300]!r}")
        return None
    errs = schema_errors(RESULT, r)
    F.check(not errs, f"{prog.name}: result not schema-valid: {errs}")
    return r


def out_bytes(r, stream):
    b64 = r.get(f"{stream}_base64")
    return base64.b64decode(b64) if b64 is not None else r[stream].encode()


def last_line(text):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:110] if lines else ""


BYPASS_LIMITS = ("--wall-ms", "3000", "--cpu-ms", "3000")


def alone(prog, policy):
    """One bypass under a derived policy: (outcome, rules still rejecting it)."""
    r = run_job(prog, *BYPASS_LIMITS, policy=policy)
    if r is None:
        return "broken", set()
    if r["status"] == "rejected":
        return "rejected", {f["rule"] for f in r["findings"]}
    text = r["stdout"] + r["stderr"]
    return ("ESCAPES" if "BYPASS-OK:" + prog.stem in text else "stops"), set()


def derived_policy(directory, name, disabled, guard, profile_name="strict"):
    base = json.loads((SRC / "policies" / f"{profile_name}.json").read_text())
    base.pop("$schema", None)
    base.update(name=name, runtime_guard=guard, disabled_rules=sorted(disabled - {"syntax"}))
    errs = schema_errors(POLICY, base)
    F.check(not errs, f"derived policy {name} not schema-valid: {errs}")
    path = pathlib.Path(directory) / f"{name}.json"
    path.write_text(json.dumps(base))
    return path


def matrix(pool, directory, disabled):
    """{name: (guard alone, sandbox alone)}; rules that still reject are disabled too (3 rounds)."""
    out = {}
    for guard in (True, False):
        todo, seen = list(BYPASS), set(disabled)
        for round_ in range(3):
            kind = f"{'guard' if guard else 'noguard'}-{round_}"
            pols = {b: derived_policy(directory, f"corpus-{b}-{kind}", seen, guard, b)
                    for b in {profile(prog) for prog in todo}}
            results = list(pool.map(lambda prog: (prog, alone(prog, pols[profile(prog)])), todo))
            todo = []
            for prog, (outcome, rules) in results:
                out.setdefault(prog.stem, {})[guard] = outcome
                if outcome == "rejected" and not rules <= seen:
                    seen |= rules
                    todo.append(prog)
            if not todo:
                break
    return {k: (v.get(True, "-"), v.get(False, "-")) for k, v in out.items()}


def check_bypass(prog):
    """Returns (name, layer, detail); layer is static/guard/sandbox, or ESCAPED/broken."""
    name = prog.stem
    rc, findings = validate(prog)
    r = run_job(prog, *BYPASS_LIMITS, policy=profile(prog))
    if r is None or findings is None:
        return name, "broken", "no parsable output"
    marker = "BYPASS-OK:" + name
    text = r["stdout"] + r["stderr"]
    escaped = marker in text or "BYPASS-OK" in text
    F.check(not escaped, f"{name}: marker printed (status {r['status']}): {last_line(r['stdout'])!r}")
    static = rc == 1 and len(findings) > 0
    F.check(rc in (0, 1), f"{name}: validate exit {rc}")
    F.check(static == (r["status"] == "rejected"),
            f"{name}: validate and run disagree (validate rc {rc}, {len(findings)} findings; run {r['status']})")
    RULES.update(f["rule"] for f in findings)
    if static:
        LISTING.extend(f"  {prog.name}:{f['line']}:{f['col']}: {f['rule']} {f['message']}" for f in findings)
        return name, "static", f"{len(findings)} finding(s): " + ", ".join(sorted({f['rule'] for f in findings}))
    if escaped:
        return name, "ESCAPED", f"status {r['status']}"
    # A library may wrap the guard's error in its own (numpy.load: "Failed to interpret file
    # ... as a pickle"); the guard's line is then earlier in the chain.
    guard_line = next((ln[:110] for ln in r["stderr"].splitlines()
                       if re.match(r"[\w.]+: codeq guard:", ln)), None)
    why = guard_line or last_line(r["stderr"]) or r["message"] or f"status {r['status']}, no output"
    layer = "guard" if guard_line or GUARD_WORDS.search(last_line(r["stderr"])) else "sandbox"
    return name, layer, f"{r['status']}: {why}"


def reference(prog):
    """Plain CPython output of a benign program (ours, safe), in a scratch directory."""
    s = stdin_of(prog)
    data = s.read_bytes() if s else b""
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(["/usr/bin/python3", "-I", "-B", str(prog)], input=data,
                           capture_output=True, cwd=d, timeout=60)
    return p.returncode, p.stdout


def check_benign(prog):
    name = prog.stem
    rc, findings = validate(prog)
    ok_static = F.check(rc == 0 and findings == [], f"{name}: validate rc {rc}, findings "
                        + "; ".join(f"{f['line']}:{f['col']} {f['rule']} {f['message']}" for f in findings or []))
    ref_rc, ref_out = reference(prog)
    F.check(ref_rc == 0, f"{name}: the reference run itself failed (rc {ref_rc}); fix the program")
    r = run_job(prog)
    if r is None:
        return name, "broken", "no parsable output"
    ok_status = F.check(r["status"] == "ok", f"{name}: status {r['status']} ({r['message']}) "
                        f"stderr {last_line(r['stderr'])!r}")
    got = out_bytes(r, "stdout")
    ok_out = F.check(got == ref_out, f"{name}: stdout differs from plain python: {got[:120]!r} vs {ref_out[:120]!r}")
    verdict = "ok" if ok_static and ok_status and ok_out else "FAIL"
    detail = "" if ok_static else f"{len(findings or [])} finding(s)"
    if not ok_status:
        detail += f" status {r['status']}"
    elif not ok_out:
        detail += " stdout differs"
    return name, verdict, detail.strip()


def table(title, rows, extra=None):
    print(f"\n{title}")
    width = max((len(r[0]) for r in rows), default=10)
    for name, layer, detail in rows:
        more = "  ".join(f"{x:<9}" for x in extra[name]) + "  " if extra and name in extra else ""
        print(f"  {name:<{width}}  {layer:<8}  {more}{detail}")
    counts = {}
    for _, layer, _ in rows:
        counts[layer] = counts.get(layer, 0) + 1
    print("  " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


F.check(len(BYPASS) >= MIN_BYPASS, f"bypass corpus has {len(BYPASS)} programs, want >= {MIN_BYPASS}")
F.check(len(BENIGN) >= MIN_BENIGN, f"benign corpus has {len(BENIGN)} programs, want >= {MIN_BENIGN}")
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool, tempfile.TemporaryDirectory() as tmp:
    bypass_rows = list(pool.map(check_bypass, BYPASS))
    benign_rows = list(pool.map(check_benign, BENIGN))
    # The matrix is reported, never asserted; under a sanitizer (scripts/asan.sh) it would
    # triple the time for no check, so it runs only in the normal build, and says so.
    SAN = os.environ.get("CODEQ_TEST_SANITIZER")
    layers = {} if SAN else matrix(pool, tmp, RULES)
if SAN:
    print(f"validator_corpus: layer matrix NOT RUN under {SAN} (reported only; the normal build runs it)")
table("bypass corpus: strict verdict (asserted) | guard alone | sandbox alone (both reported only)",
      bypass_rows, layers)
for i, which in enumerate(("guard alone", "sandbox alone")):
    counts = {}
    for v in layers.values():
        counts[v[i]] = counts.get(v[i], 0) + 1
    print(f"  {which}: " + ", ".join(f"{k}: {n}" for k, n in sorted(counts.items())))
table("benign corpus", benign_rows)
print("\nfindings of statically rejected bypass programs (codeq validate):")
print("\n".join(sorted(LISTING)) or "  (none)")
F.finish("validator_corpus")
