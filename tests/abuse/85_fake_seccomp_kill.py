# Result tampering: a SIGSYS death is reported as seccomp_violation, so no process of the job
# may send SIGSYS or arrange for one; only the filter's own kill may end a job that way. Each
# way is tried in a child of its own (a child the job reaps does not count in the verdict):
# the kill family (also with high bits set in the signal number), the parent-death signal,
# F_SETSIG, clone's exit signal, a POSIX timer and a message-queue notification, and the two
# ways to have the kernel itself send SIGSYS for a system call: a seccomp filter of the job's
# own through prctl(PR_SET_SECCOMP) (the seccomp call itself is refused anyway) and syscall user
# dispatch (prctl(PR_SET_SYSCALL_USER_DISPATCH) with the selector set to block). Then the main
# process sends SIGSYS to itself.
# expect: status=ok
# expect: stdout-contains=BLOCKED:self-kill
import ctypes as ct
import signal
import struct

SIGSYS = int(signal.SIGSYS)


def siginfo():
    b = ct.create_string_buffer(128)  # si_signo, si_errno, si_code = SI_QUEUE
    struct.pack_into("iii", b, 0, SIGSYS, 0, -1)
    return b


def sigevent():
    b = ct.create_string_buffer(64)  # sigev_value, sigev_signo, sigev_notify = SIGEV_SIGNAL
    struct.pack_into("qii", b, 0, 0, SIGSYS, 0)
    return b


def one_call(name, nr, *args):
    r, e = sc(nr, *args)
    if r == -1:
        blocked(name, e)
        return 0
    return 2  # the call worked; the parent reports it (a child of its own said nothing)


def clone_exit_signal():
    r, e = sc(56, SIGSYS, 0, 0, 0, 0)  # clone(flags = exit signal SIGSYS), fork-like
    if r == 0:
        os._exit(0)
    if r == -1:
        blocked("clone-exit-signal", e)
        return 0
    import time
    time.sleep(0.5)  # the child's end would deliver SIGSYS here
    return 2


def mq():
    r, e = sc(240, ct.c_char_p(TOKEN.encode()), os.O_CREAT | os.O_RDWR, 0o600, 0)  # mq_open
    if r == -1:
        blocked("mq_open", e)
        return 0
    return one_call("mq_notify", 244, r, sigevent())


def own_filter():
    # one instruction: SECCOMP_RET_KILL_PROCESS; the first call after the prctl would die of it
    insn = ct.create_string_buffer(struct.pack("HBBI", 0x06, 0, 0, 0x80000000))
    prog = ct.create_string_buffer(struct.pack("HxxxxxxQ", 1, ct.addressof(insn)))
    return one_call("prctl-seccomp", 157, 22, 2, prog)  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER


def user_dispatch():
    selector = ct.create_string_buffer(b"\x01")  # SYSCALL_DISPATCH_FILTER_BLOCK
    # PR_SET_SYSCALL_USER_DISPATCH, PR_SYS_DISPATCH_ON, no region exempt, the selector
    return one_call("syscall-user-dispatch", 157, 59, 1, 0, 0, selector)


tid = lambda: libc().syscall(186)  # noqa: E731  gettid
ways = {
    "kill": lambda: one_call("kill", 62, os.getpid(), SIGSYS),
    "kill-high-bits": lambda: one_call("kill-high-bits", 62, os.getpid(), (1 << 32) | SIGSYS),
    "raise": lambda: (signal.raise_signal(SIGSYS), 2)[1],
    "tkill": lambda: one_call("tkill", 200, tid(), SIGSYS),
    "tgkill": lambda: one_call("tgkill", 234, os.getpid(), tid(), SIGSYS),
    "rt_sigqueueinfo": lambda: one_call("rt_sigqueueinfo", 129, os.getpid(), SIGSYS, siginfo()),
    "rt_tgsigqueueinfo": lambda: one_call("rt_tgsigqueueinfo", 297, os.getpid(), tid(), SIGSYS,
                                          siginfo()),
    "pidfd_send_signal": lambda: one_call("pidfd_send_signal", 424, os.pidfd_open(os.getpid()),
                                          SIGSYS, 0, 0),
    "pdeathsig": lambda: one_call("pdeathsig", 157, 1, SIGSYS, 0, 0, 0),
    "f_setsig": lambda: one_call("f_setsig", 72, 0, 10, SIGSYS),
    "clone-exit-signal": clone_exit_signal,
    "timer_create": lambda: one_call("timer_create", 222, 1, sigevent(),
                                     ct.create_string_buffer(8)),
    "mq_notify": mq,
    "prctl-seccomp": own_filter,
    "syscall-user-dispatch": user_dispatch,
}
for name, way in ways.items():
    pid = os.fork()
    if pid == 0:
        try:
            code = way()
        except OSError as e:
            blocked(name, ename(e.errno))
            code = 0
        os._exit(code)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        escaped(f"{name}-killed-by-{signal.Signals(os.WTERMSIG(st)).name}")
    elif os.WEXITSTATUS(st) != 0:
        escaped(f"{name}-worked")
try:
    os.kill(os.getpid(), signal.SIGSYS)
    escaped("self-kill-survived")
except OSError as e:
    blocked("self-kill", ename(e.errno))
