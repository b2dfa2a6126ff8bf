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
#                                   seen ("E name"), "X status", "L <last stderr line>" and
#                                   "O <last stdout line>";
#                                   then "F name" for each file left in its directory.
import inspect
import os
import resource
import shutil
import signal
import struct
import sys
import tempfile
import time

PRELUDE = "_codeq_prelude.py"  # SBX_PRELUDE_NAME
SEAL_FD = 5  # SBX_FD_SEAL: the guard's C module, from fuzz_guard (validator/val_guard.py)
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
    exec(compile(guard_src.split(b"\nimport ", 1)[0], "<policy>", "exec"), ns)
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
    """The oracle hook. Everything it uses is bound here, before any job code exists, and
    none of it is state a program could change: no module global, no builtin looked up at
    call time (a program that writes into a module's globals or the builtins, as
    enum.global_enum could, must not blind the oracle), no os.path (Python code reading its
    module's globals): paths are resolved here with lstat/readlink. The job can neither reach
    nor remove the hook (CPython offers no way to list or remove audit hooks)."""
    getframe, write, abort, addhook = sys._getframe, os.write, os.abort, sys.addaudithook
    # A frame's code read through inspect: f_code is an audited read, which the guard allows
    # library code only where its purpose is to read frames (val_guard_audit.py, frame_readers).
    getfile = inspect.getfile
    lstat, readlink = os.lstat, os.readlink
    _type, _issubclass, _repr, _len, _range = type, issubclass, repr, len, range
    _str, _bytes, _int, _float, _bool, _frozenset = str, bytes, int, float, bool, frozenset
    _tuple, _OSError, _set, _getattr, _id = tuple, OSError, set, getattr, id
    forbidden, prefixes, from_job = FORBIDDEN_EVENTS, FORBIDDEN_PREFIXES, FORBIDDEN_FROM_JOB
    write_flags, prelude = WRITE_FLAGS, PRELUDE
    allowed = _frozenset(policy["modules"])
    harmless = _frozenset(policy["harmless_dunders"])
    introspection = _frozenset(policy["introspection"])
    files_workdir = policy["files"] == "workdir"
    seen = _set()
    busy = [False]

    def resolve(path):
        """The absolute path with every symbolic link followed (like os.path.realpath, whose
        module globals a program could have replaced); parts that do not exist are kept as
        written. Relative paths are from the working directory (os.chdir is forbidden)."""
        if _type(path) is _bytes:
            path = _bytes.decode(path, "utf-8", "surrogateescape")
        todo = (path if _str.startswith(path, "/") else workdir + "/" + path).split("/")[::-1]
        out, hops = [], 0
        while todo:
            part = todo.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if out:
                    out.pop()
                continue
            here = "/" + "/".join(out + [part])
            try:
                link = (lstat(here).st_mode & 0o170000) == 0o120000
            except _OSError:
                link = False
            if not link:
                out.append(part)
                continue
            hops += 1
            if hops > 40:
                return "/<symlink loop>"
            target = readlink(here)
            if _str.startswith(target, "/"):
                out = []
            todo.extend(target.split("/")[::-1])
        return "/" + "/".join(out)

    roots = _tuple(r for r in (resolve(p) for p in sys.path if _type(p) is _str and p)
                   if r != workdir and not _str.startswith(r, workdir + "/"))
    own = (workdir + "/main.py", workdir + "/" + prelude)

    def under(path, root):
        return path == root or _str.startswith(path, root + "/")

    def violation(what):
        write(report_fd, b"V " + _str.encode(what, "utf-8", "backslashreplace")[:4000] + b"\n")
        abort()

    # Nothing here may run the job's code (a __repr__, a __class__ property, a metaclass):
    # events it raised while the oracle is busy would go unseen. So types are tested with
    # type()/issubclass of exact types, and only exact builtin values are shown.
    def plain(path):
        """The path FileIO/listdir will use: an exact str or bytes copy, or None."""
        if _issubclass(_type(path), _str):
            return _str.__str__(path)
        if _issubclass(_type(path), _bytes):
            return _bytes.__bytes__(path) if _type(path) is not _bytes else path
        return None

    def shown(args):
        return "(" + ", ".join(_repr(a)[:200] if _type(a) in (_str, _bytes, _int, _float, _bool)
                               or a is None else "<" + _type.__repr__(_type(a)) + ">"
                               for a in args[:4]) + ")"

    def read_ok(path):
        real = resolve(path)
        if files_workdir and under(real, workdir):
            return True
        if real in own:
            return True
        for r in roots:
            if under(real, r):
                return True
        return False

    def open_ok(path, mode, flags):
        if _type(path) is _int:
            return 0 <= path <= 2  # the standard streams, which CPython reopens by number
        p = plain(path)
        if p is None:
            return False
        writing = (_type(flags) is _int and flags & write_flags) or _type(mode) is not _str
        for ch in "wax+":
            writing = writing or (_type(mode) is _str and ch in mode)
        if writing:
            return files_workdir and under(resolve(p), workdir)
        return read_ok(p)

    def is_job(name):
        return name == "main.py" or _str.endswith(name, "/main.py")

    def job_import(depth):
        """Who asked for the module being imported, importlib's frames skipped: 2 when
        main.py called the real __import__ itself (no guard in between), 1 when it did
        through the guard's __import__, 0 when library code did."""
        f = getframe(depth)
        via_guard = False
        for _ in _range(200):
            if f is None:
                return 0
            name = getfile(f)
            if is_job(name):
                return 1 if via_guard else 2
            if _str.endswith(name, prelude):
                via_guard = True
            elif not _str.startswith(name, "<frozen importlib"):
                return 0
            f = f.f_back
        return 0

    def direct_job(depth):
        f = getframe(depth)
        return f is not None and is_job(getfile(f))

    def denied_attr(name):
        if _type(name) is not _str:
            return True
        if _str.startswith(name, "__") and _str.endswith(name, "__") and _len(name) > 4:
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
        if event not in seen and _len(seen) < 256:
            seen.add(event)
            write(report_fd, b"E " + _str.encode(event, "utf-8", "backslashreplace") + b"\n")

    def check(event, args, depth):
        if event in forbidden or _str.startswith(event, prefixes):
            if event == "sys.addaudithook" and guard_on and not chained[0]:
                return  # the guard's own hook (and ours after it) as main.py starts
            violation(f"{event} {shown(args)}")
        if event == "open" and not open_ok(*args[:3]):
            violation(f"open {shown(args)}")
        if event in ("os.listdir", "os.scandir") and args and args[0] is not None:
            p = plain(args[0])
            if p is None or not read_ok(p):
                violation(f"{event} {shown(args)}")
        if event == "pickle.find_class" and (_type(args[0]) is not _str or
                                             _str.partition(args[0], ".")[0] not in allowed):
            violation(f"{event} {shown(args)}")
        if event in from_job and direct_job(depth):
            violation(f"{event} raised by main.py itself")
        if event in ("object.__getattr__", "object.__setattr__", "object.__delattr__") and \
                static_checked and denied_attr(args[1]) and direct_job(depth):
            violation(f"{event} {args[1]!r} read or written by main.py itself")
        if event == "import" and _type(args[0]) is _str and \
                _str.partition(args[0], ".")[0] not in allowed:
            # Through the guard's __import__, private helpers are loaded for C code of allowed
            # modules and the job gets an empty stand-in; the real __import__ gives it all.
            who = job_import(depth)
            if who == 2 or (who == 1 and not _str.startswith(args[0], "_")):
                violation(f"import of {args[0]!r} by main.py"
                          f"{'' if who == 1 else ' with the real __import__'}")
        if event == "exec" and guard_on and not started[0]:
            if _getattr(args[0], "co_filename", None) == "main.py":
                started[0] = True

    started = [not guard_on]
    chained = [False]

    # What the program must never hold, by identity: escapes that need no audited operation
    # to be useful (another module's globals, the real __import__) are judged when it ends.
    modules, module_type = sys.modules, _type(sys)
    import builtins
    real = {id(v): n for n, v in vars(builtins).items()
            if n in ("__import__", "eval", "exec", "compile", "open", "breakpoint", "globals",
                     "locals", "vars", "getattr", "setattr", "delattr", "hasattr")}
    real[id(builtins.__dict__)] = "the builtins' dict"
    frame_types = (_type(getframe()), _type(hook.__code__))
    _list, _dict, _vars = list, dict, vars
    containers = (_list, _tuple, _dict, _set, _frozenset)

    def held_by(namespace):
        """After the program ran: the first forbidden object its module's globals hold
        (directly, or one container deep), or None."""
        loaded = [(n, m) for n, m in _list(_dict.items(modules))
                  if _type(m) is module_type and n != "__main__"]
        module_ids = {_id(m): n for n, m in loaded}
        globals_of = {_id(_vars(m)): n for n, m in loaded}
        values = _list(_dict.values(namespace))
        for v in _list(values):
            if _type(v) in containers:
                values.extend(_list(_dict.values(v) if _type(v) is _dict else v)[:1000])
        for v in values[:5000]:
            if _type(v) is module_type and _id(v) in module_ids:
                return f"the real module {module_ids[_id(v)]} (not the guard's proxy)"
            if _id(v) in globals_of and v is not namespace:
                return f"the globals of module {globals_of[_id(v)]}"
            if _id(v) in real:
                return f"the real {real[_id(v)]}"
            if static_checked and _type(v) in frame_types:
                return f"a {_type.__repr__(_type(v))}"
        return None

    def judge_end(module, prelude_module):
        """Once the program ended: what main.py's module (the guard's, if it got as far as
        running main.py) holds."""
        if module is prelude_module or not (guard_on and static_checked):
            return
        what = held_by(_vars(module))
        if what:
            violation(f"main.py ended holding {what}")

    return hook, judge_end


def child(mode, program, stdin, prelude_code, policy, report_w, workdir):
    exit_now = os._exit  # bound before the program could touch anything
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
    os.dup2(os.open("stdout.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
    os.dup2(err, 2)
    # All but the report pipe and, for the guard to load and close, its C module (SEAL_FD,
    # open in the runner since fuzz_guard started it, so never the pipe's number).
    low = 3
    for keep in sorted((report_w, SEAL_FD)):
        os.closerange(low, keep)
        low = keep + 1
    os.closerange(low, 1 << 16)
    if mode == 1:
        os.close(SEAL_FD)  # main.py alone: nothing loads it
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
    hook, judge_end = make_oracle(policy, os.path.realpath(workdir), report_w, mode != 1,
                                  mode != 2)
    sys.addaudithook(hook)  # first: before anything of the guard or the job exists
    modules = sys.modules  # the dict itself: the guard puts main.py's module in it
    main = type(sys)("__main__")
    modules["__main__"] = main
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
    judge_end(modules.get("__main__"), main)
    try:
        sys.stdout.flush()  # the program's own objects may answer: it stays hooked
        sys.stderr.flush()
    finally:
        exit_now(status & 0xFF)


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
    out_tail = last_line(os.path.join(workdir, "stdout.txt"))
    names = sorted(n for n in os.listdir(workdir) if n != "stdout.txt")
    files = "".join(f"\nF {n}" for n in names)  # what the program left: the self-test's proof
    shutil.rmtree(workdir)
    violations = [x for x in lines if x.startswith("V ")]
    if violations:
        return 1, violations[0][2:] + "\n" + tail + "\nO " + out_tail + files
    if status == -1:
        return 2, tail
    if os.WIFSIGNALED(status):
        return 3, f"signal {os.WTERMSIG(status)}\n{tail}"
    lines.append(f"X {os.waitstatus_to_exitcode(status)}")
    lines.append(f"L {tail}")
    lines.append(f"O {out_tail}")
    return 0, "\n".join(lines) + files


def main():
    guard = read_blob()
    policy = policy_of(guard)
    prelude_code = compile(guard, PRELUDE, "exec", dont_inherit=True)
    # As the worker's zygote (the default isolation) does: every module of the policy is
    # imported before any job, if installed (worker/wrk_config.c), so numpy's import-time
    # os.environ writes (data) happen here, not under the guard.
    for name in policy["modules"]:
        try:
            __import__(name)
        except ImportError:
            pass
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
