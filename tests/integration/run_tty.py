"""`codeq run` without --json on a terminal: the job's output must not reach the terminal as
control characters (issue 11). A job writes escape sequences (OSC window title with BEL, clear
screen, a C1 CSI, carriage return, DEL) to stdout and stderr; `codeq run` runs with its stdout
on a pseudo-terminal, and what the terminal receives must hold none of those bytes, only their
escaped forms (\\x1b, \\u009b), with newlines and tabs kept. Into a pipe the output stays
unchanged (a redirect gets the job's exact text). With --json on a terminal the JSON is
ASCII-only, so C1 controls and DEL arrive as \\u escapes. Runs one harmless job per check."""
import os
import pathlib
import pty
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import BIN, ISOLATION_ARGS, Failures  # noqa: E402

F = Failures()
JOB = r'''import sys
sys.stdout.write("A\x1b]0;pwned\x07B\x1b[2J\x9b31mC\rD\x7fE\tF\n")
sys.stderr.write("\x1b[31mERR\n")
'''
BAD = [b"\x1b", b"\x07", b"\xc2\x9b", b"\x7f", b"C\rD"]


def on_pty(argv):
    """Runs argv with stdout and stderr on a new pseudo-terminal; returns what it received."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    got = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        got += chunk
    p.wait(timeout=120)
    os.close(master)
    return got


with tempfile.TemporaryDirectory(prefix="codeq-tty-") as td:
    prog = pathlib.Path(td) / "esc.py"
    prog.write_text(JOB)
    argv = [BIN, "run", *ISOLATION_ARGS, str(prog)]
    seen = on_pty(argv)
    F.check(b"status: ok" in seen, f"tty: the job did not run: {seen[:400]!r}")
    found = [b for b in BAD if b in seen.replace(b"\r\n", b"\n")]
    F.check(not found, f"tty: control bytes {found} reached the terminal: {seen[:400]!r}")
    for want in (rb"A\x1b]0;pwned\x07B\x1b[2J\u009b31mC\x0dD\x7fE" + b"\tF\r\n", rb"\x1b[31mERR"):
        F.check(want in seen, f"tty: escaped text {want!r} not shown: {seen[:400]!r}")
    # --json on a terminal: JSON escapes C0 controls itself; C1 ones and DEL must not arrive
    # raw either.
    seen = on_pty(argv[:2] + ["--json"] + argv[2:])
    F.check(b'"status":"ok"' in seen and not [b for b in BAD if b in seen],
            f"tty --json: control bytes reached the terminal: {seen[:400]!r}")
    F.check(rb"\u009b31mc" in seen.lower() and rb"\u007fe" in seen.lower(),
            f"tty --json: C1 CSI and DEL not shown as \\u escapes: {seen[:400]!r}")
    piped = subprocess.run(argv, capture_output=True, timeout=120).stdout
    F.check(b"A\x1b]0;pwned\x07B\x1b[2J\xc2\x9b31mC\rD\x7fE\tF\n" in piped,
            f"pipe: the job's output is not passed through unchanged: {piped[:400]!r}")
F.finish("run_tty")
