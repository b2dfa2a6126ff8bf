/* sbx_spawn.c: the job's init, seen from the parent — clone, go, stop, kill, reap.
 *
 * One clone(2) creates the init directly inside every new namespace the layers ask for
 * (pid, mount, net, ipc, uts): there is no window in which a process of the job runs
 * unconfined, and if any namespace cannot be made, clone fails and nothing runs. We use the
 * glibc wrapper with a stack of our own rather than fork()+unshare(): unshare(CLONE_NEWPID)
 * only affects children, so it would cost a second fork.
 *
 * A control socketpair (not a pipe: send() with MSG_NOSIGNAL cannot SIGPIPE the worker)
 * carries two bytes. "go" releases the init once from_parent hooks are done (a cgroup must
 * be joined before the job starts). "stop" ends the job: the init kills every process of its
 * namespace, reaps them and exits. We ask rather than SIGKILL the init because a killed init
 * has the kernel auto-reap the rest of the namespace, and auto-reaped processes are missing
 * from the init's rusage: a timed-out job would report no CPU at all. A SIGKILL follows if
 * the init has not exited SBX_STOP_GRACE_MS after the stop. EOF on the socket (the worker
 * died) stops the job too.
 *
 * The init and the main process talk back over the report pipe (sbx_report, atomic writes):
 * a failed setup step, or the main process's wait status. Its EOF is also how a poll(2)
 * loop learns that the init is gone: only the init holds the write end (the main process
 * drops it at execve), and unlike a pidfd it works on any kernel and under valgrind. A
 * pidfd, where the kernel has one, makes the SIGKILL immune to pid reuse. (A main process
 * that is its own init closes it before the job's code runs; its supervisor waits on
 * SIGCHLD instead, below.)
 * On cgroup v2 the init is born in the job's cgroup: clone3(CLONE_INTO_CGROUP, kernel >= 5.7)
 * instead of the parent moving its pid there afterwards. Moving a pid makes the kernel take
 * cgroup_threadgroup_rwsem for writing, which waits for an RCU grace period (unless the
 * hierarchy is mounted with favordynmods, which Debian 12 does not do) on every job's path; a
 * process born in its cgroup takes that lock only for reading. clone3 has no glibc wrapper, so
 * that clone is fork-like (no stack of ours: the child goes on on its copy of this thread's
 * stack) in both modes; where clone3 is missing or filtered (ENOSYS: old kernels, some
 * container runtimes' seccomp profiles, valgrind) or lacks CLONE_INTO_CGROUP (E2BIG: 5.3-5.6)
 * the clone and attach below are the fallback.
 * A zygote's supervisor is the job's pid 1 itself (sbx_self_pid set): the process cloned here is
 * the main process, the supervisor reaps every process of the job as they die (a signalfd for
 * SIGCHLD in its poll set), kills them all with kill(-1) at the main's end, a deadline or a
 * stop, copies the artifacts out of the /work descriptor the main process sent it, and takes
 * the usage of what it reaped (getrusage of its children: it has no other).
 * Usage is wait4() on the init: it has reaped every process of the job by then, so its
 * rusage covers them all (an init that had to be SIGKILLed loses what it had not reaped).
 * Its max RSS is inflated by the worker's resident anonymous memory (the init is a
 * copy-on-write clone of the worker, and so is the main process until execve, whose
 * high-water mark the kernel keeps): the verdict prefers the memory cgroup's peak and CPU
 * figures when there is a cgroup (sbx_cgroup*.c).
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <poll.h>
#include <stdio.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* include/uapi/linux/sched.h, CLONE_ARGS_SIZE_VER2: glibc 2.36 does not declare it. */
typedef struct {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid,
        set_tid_size, cgroup;
} sbx_clone_args;

static void sbx_spawn_close(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int sbx_spawn_channels(sbx_proc *p)
{
    int ctl[2], rep[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0)
        return sbx_fail(p, errno, "socketpair(control)");
    p->ctl_rd = ctl[0];
    p->ctl_wr = ctl[1];
    if (pipe2(rep, O_CLOEXEC) < 0)
        return sbx_fail(p, errno, "pipe2(report)");
    p->report_rd = rep[0];
    p->report_wr = rep[1];
    if (fcntl(p->report_rd, F_SETFL, O_NONBLOCK) < 0)
        return sbx_fail(p, errno, "fcntl(report, O_NONBLOCK)");
    p->stack_len = 2 * SBX_STACK_SIZE;
    p->stack = mmap(NULL, p->stack_len, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (p->stack == MAP_FAILED) {
        p->stack = NULL;
        return sbx_fail(p, errno, "mmap(stack)");
    }
    return 0;
}

/* Zygote mode (sbx_zygote_serve.c): the init — or, with the supervisor as the job's pid 1,
 * the main process itself — is a fork-like clone that goes on on a copy of the supervisor's
 * stack, so that the job's main process, forked from it the same way, runs
 * the interpreter on a full-size stack. The supervisor is single-threaded and runs no Python:
 * the interpreter is still in the state the zygote's fork hygiene left it in, which the main
 * process's PyOS_AfterFork_Child expects. */
static pid_t sbx_spawn_fork_init(sbx_proc *p, int flags)
{
    pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)(flags | SIGCHLD), NULL, NULL, NULL, 0UL);
    if (pid == 0)
        _exit(p->self_init ? sbx_init_self_main(p) : sbx_init_main(p));
    return pid;
}

/* Fork-like, into the cgroup `cgfd` names; -1 with errno: ENOSYS where there is no clone3
 * (before 5.3, or a seccomp profile refusing it), E2BIG where clone3 predates the `cgroup`
 * field (5.3-5.6: the kernel refuses a larger struct whose extra bytes are not zero). */
static pid_t sbx_spawn_born_in_cgroup(sbx_proc *p, int flags, int cgfd)
{
    sbx_clone_args a = {.flags = (uint64_t)(unsigned)flags | CLONE_INTO_CGROUP,
                        .exit_signal = SIGCHLD, .cgroup = (uint64_t)cgfd};
    pid_t pid = (pid_t)syscall(SYS_clone3, &a, sizeof a);
    if (pid == 0)
        _exit(p->self_init ? sbx_init_self_main(p) : sbx_init_main(p));
    return pid;
}

/* `how` starts the call's name for an error message. */
static pid_t sbx_spawn_init(sbx_proc *p, int flags, const char **how)
{
    int cgfd = sbx_cgroup_clone_fd(p);
    if (cgfd >= 0) {
        *how = "clone3(CLONE_INTO_CGROUP|";
        pid_t pid = sbx_spawn_born_in_cgroup(p, flags, cgfd);
        if (pid >= 0)
            p->res.cgroup_born = true;
        if (pid >= 0 || (errno != ENOSYS && errno != E2BIG))
            return pid;
    }
    *how = "clone(";
    if (p->inproc)
        return sbx_spawn_fork_init(p, flags);
    p->init_on_stack = true;
    return clone(sbx_init_main, (char *)p->stack + SBX_STACK_SIZE, flags | SIGCHLD, p);
}

/* Self-init: SIGCHLD blocked and read from a signalfd, so that the supervisor's poll loop
 * wakes at every death in the job and reaps orphans at once (a zombie counts against the job's
 * pids.max until it is reaped). The main process unblocks it (sbx_init.c). */
static int sbx_spawn_sigchld(sbx_proc *p)
{
    const char *step;
    p->sigfd = sbx_init_sigchld_fd(&step);
    return p->sigfd < 0 ? sbx_fail(p, errno, "%s", step) : 0;
}

int sbx_spawn(sbx_proc *p)
{
    if (sbx_spawn_channels(p) < 0 || (p->self_init && sbx_spawn_sigchld(p) < 0))
        return -1;
    char names[160];
    int flags = sbx_layers_clone_flags(names, sizeof names);
    if (sbx_net_turns(p))
        flags &= ~CLONE_NEWNET; /* the init joins the zygote's (sbx_net_join) */
    if (p->self_init)
        flags &= ~CLONE_NEWPID; /* we are the job's pid 1 */
    p->t0_ms = sbx_now_ms();
    const char *how;
    pid_t pid = sbx_spawn_init(p, flags, &how);
    int err = errno;
    /* The child has its own copy of the stacks and of the ends it keeps. */
    munmap(p->stack, p->stack_len);
    p->stack = NULL;
    sbx_spawn_close(&p->ctl_rd);
    sbx_spawn_close(&p->report_wr);
    if (pid < 0)
        return sbx_fail(p, err, "%s%s)", how, names);
    p->pid = pid;
    p->self.pid = pid;
    p->pidfd = pidfd_open(pid, 0);
    if (p->pidfd < 0 && errno != ENOSYS) { /* ENOSYS: old kernel or valgrind, kill(2) it is */
        err = errno;
        kill(pid, SIGKILL); /* still our unreaped child: the pid cannot have been reused */
        return sbx_fail(p, err, "pidfd_open(init %d)", (int)pid);
    }
    return 0;
}

static int sbx_spawn_ctl(sbx_proc *p, char c)
{
    ssize_t n;
    do
        n = send(p->ctl_wr, &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    return n == 1 ? 0 : -1;
}

int sbx_spawn_go(sbx_proc *p)
{
    if (sbx_spawn_ctl(p, SBX_CTL_GO) < 0)
        return sbx_fail(p, errno, "send(control, go)");
    p->setting_up = false; /* the init may run the job from now on */
    return 0;
}

/* Asks the init to end the job; sbx_proc.c SIGKILLs it if it does not within the grace.
 * Self-init: the job is killed at once; its reaping is sbx_spawn_reap's. */
void sbx_spawn_stop(sbx_proc *p)
{
    if (p->pid <= 0 || p->reaped || p->stop_ms)
        return;
    p->stop_ms = sbx_now_ms();
    if (p->self_init) {
        sbx_spawn_kill(p);
        return;
    }
    /* EPIPE/ECONNRESET: the init is already gone, the reap will tell. */
    if (sbx_spawn_ctl(p, SBX_CTL_STOP) < 0 && errno != EPIPE && errno != ECONNRESET)
        sbx_spawn_kill(p);
}

/* Self-init: root's kill(-1) reaches the main process while it is still root (its setup) and,
 * with CAP_KILL, every process of the job. Without CAP_KILL (a container given only the
 * capabilities the sandbox needs, docs/containers.md) root may not signal the job's uid, and
 * kill(-1) says nothing of it (EPERM is not reported for -1). A process whose effective uid is
 * the job's may: a vfork()ed child takes it as its effective uid only, out of the job's reach
 * (sbx_user_euid_only). Its kill(-1) reaches every process of the job: not pid 1, not itself.
 * A change of effective uid resets the memory's dumpable flag, the supervisor's too: set
 * again after. */
static void sbx_spawn_kill_job(sbx_proc *p)
{
    if (getpid() != 1) /* never the host's processes */
        return;
    kill(-1, SIGKILL);
    if (p->uid == 0)
        return;
    pid_t k = vfork();
    if (k == 0) {
        if (sbx_user_euid_only(p->uid) == 0)
            kill(-1, SIGKILL);
        _exit(0);
    }
    while (k > 0 && waitpid(k, NULL, __WALL) < 0 && errno == EINTR)
        ;
    prctl(PR_SET_DUMPABLE, 0);
}

/* SIGKILL to pid 1 of the namespace takes every process of the job with it (uncounted).
 * Self-init: we are pid 1 (sbx_spawn_kill_job). */
void sbx_spawn_kill(sbx_proc *p)
{
    if (p->pid <= 0 || p->reaped)
        return;
    if (p->self_init) {
        sbx_spawn_kill_job(p);
        return;
    }
    int rc = p->pidfd >= 0 ? pidfd_send_signal(p->pidfd, SIGKILL, NULL, 0) : kill(p->pid, SIGKILL);
    if (rc < 0 && errno != ESRCH)
        sbx_fail(p, errno, "kill(init %d, SIGKILL)", (int)p->pid);
}

/* Self-init: what the main process sent on the control socket before the job's code ran
 * (sbx_init.c): its /work and mount namespace ('w'), then the seccomp listener ('n'). Nothing
 * sent by its end: the main process never finished its setup, and no job code ran. */
static void sbx_spawn_take_fds(sbx_proc *p)
{
    while (!p->ctl_eof && p->ctl_wr >= 0) {
        char tag;
        int fds[2] = {-1, -1}, n = 2;
        int rc = sbx_recv_fds(p->ctl_wr, &tag, fds, &n, MSG_DONTWAIT);
        if (rc < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        /* ECONNRESET: the main process died with a message of ours unread, as a job killed
         * at once (wall_ms 1) does; that is its end, as EOF is, not the sandbox's failure. */
        if (rc <= 0) {
            p->ctl_eof = true;
            if (rc < 0 && errno != ECONNRESET)
                sbx_fail(p, errno, "recvmsg(control: the main process's descriptors)");
            return;
        }
        if (tag == 'w' && n == 2 && p->work_fd < 0) {
            p->work_fd = fds[0];
            p->mntns_fd = fds[1];
        } else if (tag == 'n' && n == 1 && p->sc_listen < 0) {
            p->sc_listen = fds[0];
        } else {
            for (int i = 0; i < n; i++)
                close(fds[i]);
            sbx_fail(p, EPROTO, "control: unexpected message '%c' with %d descriptors", tag, n);
        }
    }
}

bool sbx_spawn_seccomp(sbx_proc *p)
{
    sbx_spawn_take_fds(p);
    return sbx_seccomp_listen(&p->sc_listen, &p->self);
}

/* Self-init: kills the rest of the job and reaps it, within SBX_STOP_GRACE_MS. A process that
 * outlives that (a kill that failed) must not outlive the answer: the zygote would hand the
 * next job the same network namespace. So the supervisor exits instead; the kernel ends the
 * namespace of its dead pid 1, and the zygote, which gets no answer, answers for it and makes
 * a new network namespace (sbx_zygote_serve.c). */
static void sbx_spawn_reap_all(sbx_proc *p)
{
    uint64_t end = sbx_now_ms() + SBX_STOP_GRACE_MS;
    /* Once: a fork racing the kill fails (its parent has SIGKILL pending). */
    sbx_spawn_kill_job(p);
    for (;;) {
        struct pollfd f = {.fd = p->sigfd, .events = POLLIN};
        poll(&f, 1, 10);
        if (sbx_init_reap_dead(&p->self, p->sigfd) < 0)
            return;
        if (sbx_now_ms() >= end) {
            fprintf(stderr, SBX_PREFIX "zygote job: processes of the job outlived kill(-1) for "
                            "%d ms: its supervisor exits, so that the kernel ends them\n",
                    SBX_STOP_GRACE_MS);
            _exit(1);
        }
    }
}

/* Self-init: reaps what has died; once the main process has, kills and reaps the rest of the
 * job (at once with `block`), copies the artifacts out (the layers' leave_init) and takes the
 * usage of everything it reaped: what the init would have reported. */
static int sbx_spawn_reap_self(sbx_proc *p, bool block)
{
    pid_t w = sbx_init_reap_dead(&p->self, p->sigfd);
    if (!p->self.exited && !block)
        return 0;
    sbx_spawn_seccomp(p); /* a refused call made as the main process ended */
    if (w == 0) /* a process of the job is left */
        sbx_spawn_reap_all(p);
    p->end_ms = sbx_now_ms();
    p->reaped = true;
    getrusage(RUSAGE_CHILDREN, &p->ru);
    p->have_exit = p->self.exited;
    p->main_wstatus = p->self.status;
    p->sigsys = p->self.sigsys;
    p->refused = p->self.refused;
    sbx_spawn_read_reports(p);
    sbx_spawn_take_fds(p);
    if (p->work_fd >= 0)
        sbx_layers_leave_init(p);
    return 1;
}

/* 1 once the init is reaped (or was never started), 0 while it runs. */
int sbx_spawn_reap(sbx_proc *p, bool block)
{
    if (p->reaped || p->pid <= 0) {
        p->reaped = true;
        if (!p->end_ms)
            p->end_ms = sbx_now_ms();
        return 1;
    }
    if (p->self_init)
        return sbx_spawn_reap_self(p, block);
    for (int tries = 0; tries < 100; tries++) {
        int st;
        pid_t w = wait4(p->pid, &st, block ? 0 : WNOHANG, &p->ru);
        if (w == 0)
            return 0;
        if (w < 0 && errno == EINTR)
            continue;
        p->end_ms = sbx_now_ms();
        p->reaped = true;
        if (w < 0) /* ECHILD: someone else reaped it, e.g. SIGCHLD set to SIG_IGN */
            sbx_fail(p, errno, "wait4(init %d)", (int)p->pid);
        else
            p->init_wstatus = st;
        return 1;
    }
    return 0;
}

/* Takes the messages that are there without waiting; closes the pipe at EOF. */
void sbx_spawn_read_reports(sbx_proc *p)
{
    /* The init sends at most one message, the main process at most two (code, fail). */
    for (int i = 0; p->report_rd >= 0 && i < 8; i++) {
        sbx_report r;
        ssize_t n = read(p->report_rd, &r, sizeof r);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n != (ssize_t)sizeof r) { /* EOF: the init is gone (writes are whole messages) */
            if (n < 0)
                sbx_fail(p, errno, "read(report)");
            sbx_spawn_close(&p->report_rd);
            return;
        }
        r.msg[sizeof r.msg - 1] = '\0';
        if (r.kind == SBX_REPORT_FAIL) {
            sbx_fail_reported(p, &r);
        } else if (r.kind == SBX_REPORT_CODE) {
            p->res.code_obj_used = true;
        } else if (r.kind == SBX_REPORT_EXIT) {
            p->have_exit = true;
            p->main_wstatus = r.wstatus;
            p->sigsys = r.sigsys;
            p->refused = r.refused;
            p->artifacts_skipped = r.skipped;
        }
    }
}

/* Self-init: lets the job's mount namespace go (its /work, its root), as the init's exit did:
 * after the answer, before the layers collect. */
void sbx_spawn_drop_ns(sbx_proc *p)
{
    sbx_spawn_close(&p->work_fd);
    sbx_spawn_close(&p->mntns_fd);
}

void sbx_spawn_release(sbx_proc *p)
{
    sbx_spawn_close(&p->sigfd);
    sbx_spawn_close(&p->sc_listen);
    sbx_spawn_drop_ns(p);
    sbx_spawn_close(&p->pidfd);
    sbx_spawn_close(&p->ctl_rd);
    sbx_spawn_close(&p->ctl_wr);
    sbx_spawn_close(&p->report_rd);
    sbx_spawn_close(&p->report_wr);
    if (p->stack)
        munmap(p->stack, p->stack_len);
    p->stack = NULL;
}
