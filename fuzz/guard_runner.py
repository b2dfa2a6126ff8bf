# guard_runner.py: fuzz_guard's executor. A fork server in /usr/bin/python3 -I -B (the job's
# interpreter, started the way the sandbox starts it) that runs each program the validator
# accepted under the runtime guard, with an ORACLE audit hook installed before the guard:
# the oracle decides, independently of the guard's own checks, whether the program reached an
# operation the policy forbids, and if so reports it and aborts the process *in the hook*,
# i.e. before CPython performs the operation (audit hooks run first). fuzz_guard turns a
# report into a libFuzzer crash.
#
# Not a sandbox (the harness is: see fuzz/README.md). Damage is limited by the oracle
# stopping every forbidden operation before it happens and, in case one is missed, by the
# child: its own temporary working directory, uid/gid nobody, no new processes (RLIMIT_NPROC),
# 1 GiB of address space, 5 s of CPU and a wall deadline, files of at most 1 MiB, and no network
# (fuzz_guard moves itself into a new network namespace before it starts this).
#
# Protocol on stdin/stdout (all integers little-endian u32):
#   harness -> runner, once: the policy's guard (val_policy_guard) as len + bytes
#   harness -> runner, per program: mode (0 guard on, 1 guard off: main.py run directly,
#                                   2 guard on but the static rules were skipped: the
#                                   attribute reads only they can refuse are not judged),
#                                   len + bytes of main.py, len + bytes of its stdin
#   runner -> harness, per program: kind (0 ran, 1 oracle violation, 2 timed out,
#                                   3 killed by a signal), len + text: for a violation the
#                                   oracle's report, else one line per distinct audit event
#                                   seen ("E name"), "X status", and "L <last stderr line>";
#                                   then "F name" for each file left in its directory.
import os
import resource
import signal
import struct
import sys
import tempfile
import time

PRELUDE = "_codeq_prelude.py"  # SBX_PRELUDE_NAME
WALL_SECONDS = 4.0


def read_exact(n):
    buf = b""
    while len(buf) < n:
        chunk = os.read(0, n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def read_blob():
    (n,) = struct.unpack("<I", read_exact(4))
    return read_exact(n)


def reply(kind, text):
    data = text.encode("utf-8", "backslashreplace")
    os.write(1, struct.pack("<II", kind, len(data)) + data)


def policy_of(guard_src):
    """The policy literal on the guard's first line (`_CODEQ_POLICY = {...}`): the oracle's
    lists are the policy's own, not a copy maintained here."""
    ns = {}
    first = guard_src.split(b"\n_codeq_run", 1)[0]
    exec(compile(first.split(b"\nimport ", 1)[0], "<policy>", "exec"), ns)
    return ns["_CODEQ_POLICY"]


# Events that are forbidden whoever raises them: no allowed module performs them on a job's
# behalf, and each is damage (or a step no allowed program takes) in itself.
FORBIDDEN_EVENTS = frozenset({
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.kill", "os.killpg", "signal.pthread_kill", "subprocess.Popen", "pty.spawn",
    "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.chmod",
    "os.chown", "os.truncate", "os.utime", "os.chflags", "os.lchflags", "os.setxattr",
    "os.removexattr", "os.putenv", "os.unsetenv", "os.chdir", "os.startfile",
    "code.__new__", "sys.settrace", "sys.setprofile", "sys._current_frames",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "builtins.breakpoint",
    "cpython._PySys_ClearAuditHooks", "sys.addaudithook",
})
FORBIDDEN_PREFIXES = ("socket.", "ctypes.", "shutil.", "mmap.", "fcntl.", "resource.",
                      "syslog.", "sqlite3.", "http.client.", "urllib.", "ftplib.", "smtplib.",
                      "imaplib.", "poplib.", "nntplib.", "telnetlib.", "webbrowser.",
                      "_winapi.", "winreg.", "msvcrt.")
# Raised by main.py's own code, these mean it holds something the static rules refuse.
# Not "compile": compiling runs nothing, and CPython raises it from C on main.py's frame
# when it prints a traceback's carets (an exception ignored in __del__); running is "exec".
FORBIDDEN_FROM_JOB = frozenset({"exec", "function.__new__", "sys._getframe",
                                "marshal.loads", "marshal.load", "pickle.find_class"})
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def make_oracle(policy, workdir, report_fd, guard_on, static_checked):
    """The oracle hook. Everything it uses is bound here, before any job code exists: the job
    can neither reach nor change it (CPython offers no way to list or remove audit hooks)."""
    getframe, realpath, fsdecode = sys._getframe, os.path.realpath, os.fsdecode
    write, abort, sep, addhook = os.write, os.abort, os.sep, sys.addaudithook
    allowed = frozenset(policy["modules"])
    harmless = frozenset(policy["harmless_dunders"])
    introspection = frozenset(policy["introspection"])
    files_workdir = policy["files"] == "workdir"
    roots = tuple(r for r in (realpath(p) for p in sys.path if isinstance(p, str) and p)
                  if r != workdir and not r.startswith(workdir + sep))
    own = (workdir + sep + "main.py", workdir + sep + PRELUDE)
    seen = set()
    busy = [False]

    def under(path, root):
        return path == root or path.startswith(root + sep)

    def violation(what):
        write(report_fd, b"V " + what.encode("utf-8", "backslashreplace")[:4000] + b"\n")
        abort()

    # Nothing here may run the job's code (a __repr__, a __class__ property, a metaclass):
    # events it raised while the oracle is busy would go unseen. So types are tested with
    # type()/issubclass of exact types, and only exact builtin values are shown.
    def plain(path):
        """The path FileIO/listdir will use: an exact str or bytes copy, or None."""
        if issubclass(type(path), str):
            return str.__str__(path)
        if issubclass(type(path), bytes):
            return bytes.__bytes__(path) if type(path) is not bytes else path
        return None

    def shown(args):
        return "(" + ", ".join(repr(a)[:200] if type(a) in (str, bytes, int, float, bool)
                               or a is None else "<" + type.__repr__(type(a)) + ">"
                               for a in args[:4]) + ")"

    def read_ok(path):
        real = realpath(path)
        real = fsdecode(real) if isinstance(real, bytes) else real
        if files_workdir and under(real, workdir):
            return True
        return real in own or any(under(real, r) for r in roots)

    def open_ok(path, mode, flags):
        if type(path) is int:
            return 0 <= path <= 2  # the standard streams, which CPython reopens by number
        p = plain(path)
        if p is None:
            return False
        writing = (isinstance(flags, int) and flags & WRITE_FLAGS) or \
            any(ch in (mode if isinstance(mode, str) else "w") for ch in "wax+")
        real = realpath(p)
        real = fsdecode(real) if isinstance(real, bytes) else real
        if writing:
            return files_workdir and under(real, workdir)
        return read_ok(p)

    def job_frame(depth):
        """Whether the code that raised the event is main.py's own (importlib's and the
        guard's frames in between skipped)."""
        f = getframe(depth)
        for _ in range(200):
            if f is None:
                return False
            name = f.f_code.co_filename
            if name == "main.py" or name.endswith(sep + "main.py"):
                return True
            if not (name.startswith("<frozen importlib") or name.endswith(PRELUDE)):
                return False
            f = f.f_back
        return False

    def direct_job(depth):
        f = getframe(depth)
        name = f.f_code.co_filename if f is not None else ""
        return name == "main.py" or name.endswith(sep + "main.py")

    def denied_attr(name):
        if type(name) is not str:
            return True
        if name.startswith("__") and name.endswith("__") and len(name) > 4:
            return name not in harmless
        return name in introspection

    def hook(event, args, last=False):
        if busy[0] or (guard_on and not last and chained[0]):
            return
        busy[0] = True
        try:
            check(event, args, 4 if last else 3)  # frames: this, check, hook(, lambda)
            if guard_on and not chained[0] and started[0]:
                # Audit hooks run in the order they were added, and the first that raises
                # stops the operation: this hook, added before the guard's, would judge an
                # operation the guard is about to refuse. So as main.py starts (after the
                # guard added its hook), a second instance goes after the guard's: it sees
                # only what the guard let through, still before CPython performs it.
                chained[0] = True
                addhook(lambda e, a: hook(e, a, True))
        finally:
            busy[0] = False
        if event not in seen and len(seen) < 256:
            seen.add(event)
            write(report_fd, b"E " + event.encode("utf-8", "backslashreplace") + b"\n")

    def check(event, args, depth):
        if event in FORBIDDEN_EVENTS or event.startswith(FORBIDDEN_PREFIXES):
            if event == "sys.addaudithook" and guard_on and not chained[0]:
                return  # the guard's own hook (and ours after it) as main.py starts
            violation(f"{event} {shown(args)}")
        if event == "open" and not open_ok(*args[:3]):
            violation(f"open {shown(args)}")
        if event in ("os.listdir", "os.scandir") and args and args[0] is not None:
            p = plain(args[0])
            if p is None or not read_ok(p):
                violation(f"{event} {shown(args)}")
        if event == "pickle.find_class" and (type(args[0]) is not str or
                                             args[0].partition(".")[0] not in allowed):
            violation(f"{event} {shown(args)}")
        if event in FORBIDDEN_FROM_JOB and direct_job(depth):
            violation(f"{event} raised by main.py itself")
        if event in ("object.__getattr__", "object.__setattr__", "object.__delattr__") and \
                static_checked and denied_attr(args[1]) and direct_job(depth):
            violation(f"{event} {args[1]!r} read or written by main.py itself")
        if event == "import" and type(args[0]) is str and not args[0].startswith("_") and \
                args[0].partition(".")[0] not in allowed and job_frame(depth):
            violation(f"import of {args[0]!r} on behalf of main.py")
        if event == "exec" and guard_on and not started[0]:
            code = args[0]
            if getattr(code, "co_filename", None) == "main.py":
                started[0] = True

    started = [not guard_on]
    chained = [False]
    return hook


def child(mode, program, stdin, prelude_code, policy, report_w, workdir):
    os.setsid()
    os.chdir(workdir)
    with open("main.py", "wb") as f:
        f.write(program)
    null = os.open(os.devnull, os.O_RDWR)
    if stdin:  # through a file outside the working directory, unlinked before the job runs
        path = workdir + ".stdin"
        with open(path, "wb") as f:
            f.write(stdin)
        os.dup2(os.open(path, os.O_RDONLY), 0)
        os.unlink(path)
    else:
        os.dup2(null, 0)
    err = os.open("stderr.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 1)
    os.dup2(err, 2)
    os.closerange(3, report_w)
    os.closerange(report_w + 1, 1 << 16)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for lim, value in ((resource.RLIMIT_AS, 1 << 30), (resource.RLIMIT_CPU, 5),
                       (resource.RLIMIT_FSIZE, 1 << 20), (resource.RLIMIT_CORE, 0),
                       (resource.RLIMIT_NOFILE, 64)):
        resource.setrlimit(lim, (value, value))
    if os.geteuid() == 0:
        os.chown(workdir, 65534, 65534)
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    hook = make_oracle(policy, os.path.realpath(workdir), report_w, mode != 1, mode != 2)
    sys.addaudithook(hook)  # first: before anything of the guard or the job exists
    main = type(sys)("__main__")
    sys.modules["__main__"] = main
    if mode != 1:
        name, code = PRELUDE, prelude_code
    else:
        name, code = "main.py", compile(program, os.path.join(workdir, "main.py"), "exec",
                                        dont_inherit=True)
    sys.argv[:] = [name]
    main.__dict__.update(__file__=os.path.join(workdir, name), __builtins__=__builtins__)
    status = 0
    try:
        exec(code, main.__dict__)
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        sys.excepthook(*sys.exc_info())
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status & 0xFF)


def last_line(path):
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 512))
            lines = f.read().strip().splitlines()
        return lines[-1].decode("utf-8", "replace")[:120] if lines else ""
    except OSError:
        return ""


def run_one(mode, program, stdin, prelude_code, policy, base):
    workdir = tempfile.mkdtemp(dir=base)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            child(mode, program, stdin, prelude_code, policy, w, workdir)
        finally:
            os._exit(125)
    os.close(w)
    os.set_blocking(r, False)
    out, status, deadline = b"", None, time.monotonic() + WALL_SECONDS
    while status is None:
        try:
            while True:
                chunk = os.read(r, 65536)
                if not chunk:
                    break
                out += chunk[: max(0, 65536 - len(out))]
        except BlockingIOError:
            pass
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
        elif time.monotonic() > deadline:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = -1
        else:
            time.sleep(0.001)
    try:
        out += os.read(r, 65536)
    except BlockingIOError:
        pass
    os.close(r)
    text = out.decode("utf-8", "backslashreplace")
    lines = [x for x in text.splitlines() if x]
    tail = last_line(os.path.join(workdir, "stderr.txt"))
    names = sorted(os.listdir(workdir))
    files = "".join(f"\nF {n}" for n in names)  # what the program left: the self-test's proof
    for name in names:
        path = os.path.join(workdir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            os.rmdir(path)  # an empty directory at most: nobody, 1 MiB files, 5 s
        else:
            os.unlink(path)
    os.rmdir(workdir)
    violations = [x for x in lines if x.startswith("V ")]
    if violations:
        return 1, violations[0][2:] + "\n" + tail + files
    if status == -1:
        return 2, tail
    if os.WIFSIGNALED(status):
        return 3, f"signal {os.WTERMSIG(status)}\n{tail}"
    lines.append(f"X {os.waitstatus_to_exitcode(status)}")
    lines.append(f"L {tail}")
    return 0, "\n".join(lines) + files


def main():
    guard = read_blob()
    policy = policy_of(guard)
    prelude_code = compile(guard, PRELUDE, "exec", dont_inherit=True)
    base = tempfile.mkdtemp(prefix="codeq-fuzz-guard-")
    os.chmod(base, 0o755)
    try:
        while True:
            try:
                (mode,) = struct.unpack("<I", read_exact(4))
                program = read_blob()
                stdin = read_blob()
            except EOFError:
                return
            kind, text = run_one(mode, program, stdin, prelude_code, policy, base)
            reply(kind, text)
    finally:
        os.rmdir(base)


if __name__ == "__main__":
    main()
