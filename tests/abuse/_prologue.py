# _prologue.py: the attacker's toolkit, prepended by tests/integration/abuse.py to every case.
#
# The validator is only a filter in front of the sandbox, and the abuse suite tests the
# sandbox, so every case must reach it: the helpers below reach open(), __import__ and ctypes
# the way real evasive code does (getattr on builtins), which the AST policy does not see.
# A case never prints "ESCAPED:" unless the forbidden thing worked; the runner fails the case
# when that marker appears anywhere in the output. The job's stdin carries the runner's context
# (token, sentinel pid, listener ports) as one JSON object.
import builtins as _bi
import errno as _errno
import json as _json
import os
import sys

_ga = getattr
open_ = _ga(_bi, "op" + "en")


def imp(name):
    return _ga(_bi, "__imp" + "ort__")(name, fromlist=["_"])


CTX = _json.loads(sys.stdin.read() or "{}")
TOKEN = CTX.get("token", "cqab-none")
MARK = "codeq-abuse-marker-" + TOKEN


def escaped(what):
    print("ESCAPED:" + what, flush=True)


def blocked(what, detail=""):
    print("BLOCKED:" + what, detail, flush=True)


def ename(e):
    return _errno.errorcode.get(e, str(e))


_libc = None


def libc():
    global _libc
    if _libc is None:
        ct = imp("ctypes")
        _libc = ct.CDLL(None, use_errno=True)
    return _libc


def sc(nr, *args):
    """Raw syscall: (return value, errno name or None)."""
    ct = imp("ctypes")
    f = libc().syscall
    f.restype = ct.c_long
    r = f(ct.c_long(nr), *[ct.c_long(a) if isinstance(a, int) else a for a in args])
    return r, (ename(ct.get_errno()) if r == -1 else None)


def try_create(path):
    """Creates a new file (never touches an existing one): None on success, else errno name."""
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError as e:
        return ename(e.errno)
    os.write(fd, b"codeq abuse marker\n")
    os.close(fd)
    return None


def advise(m, advices):
    """madvise(name, number) each on mapping m: "answered" when it returns, BLOCKED when not."""
    for name, advice in advices:
        try:
            m.madvise(advice)
            print("answered: madvise", name, flush=True)
        except OSError as e:
            blocked("madvise-" + name, ename(e.errno))


# Tag the job's processes (inherited by forks) so the host can find leftovers by name.
try:
    with open_("/proc/self/comm", "w") as _f:
        _f.write(TOKEN)
except OSError:
    try:
        libc().prctl(15, imp("ctypes").c_char_p(TOKEN.encode()), 0, 0, 0)  # PR_SET_NAME
    except Exception:
        pass
# ---- case ----
