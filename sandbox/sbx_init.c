/* sbx_init.c: the job's init — pid 1 of its pid namespace, our C code, never Python.
 *
 * Being pid 1 is what makes the job's processes mortal: when the init exits the kernel
 * SIGKILLs everything else in the namespace (a setsid()'d daemon included), and pid 1 only
 * receives signals it installed handlers for, so the job cannot kill it.
 * The init first makes itself a clean process — default signal dispositions and an empty
 * mask (both survive execve otherwise), a new session without a controlling terminal (no
 * TIOCSTI into the operator's tty), death with the worker, and exactly the descriptors the
 * job needs at fixed numbers. It then waits for the parent's go, lets the layers confine it
 * (sbx_proc.c has the order) and clones the main process, which execs the interpreter.
 * It reaps orphans until the main process exits, the parent says stop or the seccomp calls
 * filter's listener, which the main process sends it on a socketpair of their own, reports a
 * refused call (sbx_seccomp.c), then kills and
 * reaps everything left itself — so its rusage, which the parent reads with wait4(), covers
 * every process of the job — lets the layers take what they need from the dead job
 * (artifacts: leave_init), and reports the main's wait status on the report pipe; its own
 * exit status repeats it (code, or 128 + signal). The kernel's kill-on-init-exit remains
 * the backstop.
 *
 * In a zygote, the supervisor is the job's pid 1 itself (sbx_self_pid set; docs/zygote.md, item
 * 10): there is no init. The main process takes the init's steps before it runs the job
 * (sbx_init_self_main), sends the supervisor its /work and mount namespace, and the supervisor
 * kills, reaps and copies out with the functions below (sbx_spawn.c).
 *
 * Cloned from a possibly multi-threaded worker, this code uses syscalls only: no malloc, no
 * stdio, and clone() rather than fork() for the main process, because fork() would take
 * glibc locks that another worker thread may have held at the time of our clone. In zygote
 * mode (single-threaded parent) the main process is a fork-like clone on a copy of this
 * stack, so that the interpreter it runs has a full-size stack (sbx_zygote_py.c).
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <poll.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SBX_INIT_FAILED = 125, SBX_MAIN_FAILED = 126, SBX_EXEC_FAILED = 127 };

/* AddressSanitizer builds only (scripts/asan.sh, fuzz/): a process cloned onto a stack of our
 * own must tell ASan, which still believes it runs on the cloning thread's stack and, before
 * each noreturn call (the init's final _exit), prints "ASan is ignoring requested
 * __asan_handle_no_return" — into the job's stderr, which changes its result. The fiber
 * interface records the new bounds; it only sets fields of ASan's thread (no malloc).
 * In normal builds this is nothing. */
#if defined(__SANITIZE_ADDRESS__)
#define SBX_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SBX_ASAN 1
#endif
#endif
#ifdef SBX_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
static void sbx_init_asan_stack(void *bottom, size_t size)
{
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, bottom, size);
    __sanitizer_finish_switch_fiber(fake, NULL, NULL);
}
#else
static void sbx_init_asan_stack(void *bottom, size_t size)
{
    (void)bottom;
    (void)size;
}
#endif

static int sbx_init_signals(sbx_proc *p)
{
    struct sigaction sa = {.sa_handler = SIG_DFL};
    sigemptyset(&sa.sa_mask);
    for (int s = 1; s < NSIG; s++) {
        if (s == SIGKILL || s == SIGSTOP)
            continue;
        /* glibc's reserved signals answer EINVAL: they have nothing to reset. */
        sigaction(s, &sa, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        return sbx_child_fail(p, errno, "sigprocmask", NULL);
    return 0;
}

/* PDEATHSIG follows the thread that cloned us: sbx_start() must run on a thread that
 * outlives its jobs (the worker's loop thread). */
static int sbx_init_session(sbx_proc *p)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
        return sbx_child_fail(p, errno, "prctl(PR_SET_PDEATHSIG)", NULL);
    if (setsid() < 0)
        return sbx_child_fail(p, errno, "setsid", NULL);
    return 0;
}

/* 0-2 the job's stdio, 3 the report pipe, 4 the control socket, 5 the guard's module when
 * it has one (sbx_seal.c); nothing else survives. */
static int sbx_init_fds(sbx_proc *p)
{
    int want[SBX_FD_FIRST_FREE] = {p->stdin_fd, p->out_wr,  p->err_wr,
                                   p->report_wr, p->ctl_rd, p->seal_fd};
    int high[SBX_FD_FIRST_FREE];
    int n = p->seal_fd >= 0 ? SBX_FD_FIRST_FREE : SBX_FD_SEAL;
    /* Lift every source above the targets first, so no dup2 overwrites one still needed. */
    for (int i = 0; i < n; i++)
        if ((high[i] = fcntl(want[i], F_DUPFD_CLOEXEC, SBX_FD_FIRST_FREE)) < 0)
            return sbx_child_fail(p, errno, "fcntl(F_DUPFD_CLOEXEC)", NULL);
    for (int i = 0; i < n; i++)
        if (dup2(high[i], i) < 0)
            return sbx_child_fail(p, errno, "dup2", NULL);
    p->report_wr = SBX_FD_REPORT;
    p->ctl_rd = SBX_FD_CTL;
    if (p->seal_fd >= 0)
        p->seal_fd = SBX_FD_SEAL;
    if (close_range((unsigned)n, ~0U, 0) < 0)
        return sbx_child_fail(p, errno, "close_range", NULL);
    return 0;
}

/* 0 on go; -1 when the worker is gone (EOF) or says stop before the job even started. */
static int sbx_init_wait_go(sbx_proc *p)
{
    char c = 0;
    ssize_t n;
    do
        n = read(SBX_FD_CTL, &c, 1);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return sbx_child_fail(p, errno, "read(control)", NULL);
    return n == 1 && c == SBX_CTL_GO ? 0 : -1;
}

/* The job's main process: last confinement steps, then the interpreter. */
static int sbx_init_job_main(void *arg)
{
    sbx_proc *p = arg;
    if (!p->inproc) /* exec mode: on the upper half of p->stack (sbx_init_main) */
        sbx_init_asan_stack((char *)p->stack + SBX_STACK_SIZE, SBX_STACK_SIZE);
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0) { /* the init blocks SIGCHLD */
        sbx_child_fail(p, errno, "sigprocmask", NULL);
        _exit(SBX_MAIN_FAILED);
    }
    if (sbx_layers_enter_main(p) < 0)
        _exit(SBX_MAIN_FAILED);
    if (p->inproc) { /* zygote mode: no execve; it closes 3 and up itself */
        sbx_inproc->run_main(p);
        _exit(SBX_MAIN_FAILED);
    }
    /* CLOEXEC rather than close: the report pipe must stay usable if execve fails. */
    if (close_range(SBX_FD_REPORT, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
        sbx_child_fail(p, errno, "close_range(CLOSE_RANGE_CLOEXEC)", NULL);
        _exit(SBX_MAIN_FAILED);
    }
    if (p->seal_fd >= 0 && fcntl(SBX_FD_SEAL, F_SETFD, 0) < 0) { /* the guard's, past execve */
        sbx_child_fail(p, errno, "fcntl(seal, F_SETFD)", NULL);
        _exit(SBX_MAIN_FAILED);
    }
    execve(p->python, p->argv, (char *const *)p->envp);
    sbx_child_fail(p, errno, "execve(", p->python, ")", NULL);
    _exit(SBX_EXEC_FAILED);
}

/* Zygote mode: the main process goes on on a copy of this (the zygote's) stack. */
static pid_t sbx_init_fork_main(sbx_proc *p)
{
    pid_t pid = (pid_t)syscall(SYS_clone, (unsigned long)SIGCHLD, NULL, NULL, NULL, 0UL);
    if (pid == 0)
        _exit(sbx_init_job_main(p));
    return pid;
}

pid_t sbx_init_reap_dead(sbx_init_main_proc *m, int sigfd)
{
    struct signalfd_siginfo si;
    while (read(sigfd, &si, sizeof si) > 0)
        ;
    int st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG | __WALL)) > 0)
        sbx_init_reaped(m, w, st);
    return w;
}

void sbx_init_reaped(sbx_init_main_proc *m, pid_t w, int st)
{
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS)
        m->sigsys++;
    if (w == m->pid && !m->exited) {
        m->exited = true;
        m->status = st;
    }
}

/* The seccomp listener's channel or the listener itself turned readable (sbx_seccomp.c):
 * true when the job is to end for a refused call. */
static bool sbx_init_seccomp(sbx_proc *p, sbx_init_main_proc *m, struct pollfd *f)
{
    if (p->sc_listen < 0) { /* the main process sends it, or closes the channel failing */
        char tag;
        int n = 1;
        int rc = sbx_recv_fds(p->sc_chan[0], &tag, &p->sc_listen, &n, MSG_DONTWAIT);
        if (rc < 0 && (errno == EAGAIN || errno == EINTR))
            return false;
        close(p->sc_chan[0]); /* the listener came, or never will */
        p->sc_chan[0] = -1;
        f->fd = p->sc_listen;
        return false;
    }
    bool refused = sbx_seccomp_listen(&p->sc_listen, m);
    f->fd = p->sc_listen;
    return refused;
}

/* Waits until the main process exits, the parent says stop (or is gone) or the seccomp
 * listener reports a refused call, reaping orphans as they die. The parent's deadline, then
 * its SIGKILL, bound how long this takes. */
static int sbx_init_supervise(sbx_proc *p, sbx_init_main_proc *m, int sigfd)
{
    struct pollfd fds[3] = {{.fd = SBX_FD_CTL, .events = POLLIN},
                            {.fd = sigfd, .events = POLLIN},
                            {.fd = p->sc_chan[0], .events = POLLIN}};
    while (!m->exited) {
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            return sbx_child_fail(p, errno, "poll", NULL);
        }
        sbx_init_reap_dead(m, sigfd);
        if (fds[2].revents && sbx_init_seccomp(p, m, &fds[2]))
            return 0;
        if (fds[0].revents)
            return 0; /* stop, or EOF: the worker is gone */
    }
    return 0;
}

/* Kills every other process of the namespace and reaps them all, so that the rusage the
 * parent gets from wait4() covers them and nothing outlives the init. */
static void sbx_init_kill_all(sbx_init_main_proc *m)
{
    /* kill(-1) outside a pid namespace of our own would hit the host: never. */
    if (getpid() != 1)
        return;
    kill(-1, SIGKILL);
    /* Forks racing the kill fail (the parent has a fatal signal pending); the repeated
     * kill is belt and braces. Bounded by the count and by the parent's SIGKILL. */
    for (unsigned i = 1; i < (1u << 22); i++) {
        int st;
        pid_t w = waitpid(-1, &st, __WALL);
        if (w < 0 && errno != EINTR)
            return; /* ECHILD: everyone is reaped */
        if (w > 0)
            sbx_init_reaped(m, w, st);
        if (i % 64 == 0)
            kill(-1, SIGKILL);
    }
}

/* SIGCHLD is blocked and read from a signalfd, so the init waits on the control socket and
 * its children at once, without a signal handler. Made before the layers: RLIMIT_NOFILE
 * may leave no room for it afterwards. */
int sbx_init_sigchld_fd(const char **step)
{
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    *step = "sigprocmask(SIGCHLD)";
    if (sigprocmask(SIG_BLOCK, &chld, NULL) < 0)
        return -1;
    *step = "signalfd(SIGCHLD)";
    return signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int sbx_init_sigchld(sbx_proc *p)
{
    const char *step;
    int fd = sbx_init_sigchld_fd(&step);
    return fd < 0 ? sbx_child_fail(p, errno, step, NULL) : fd;
}

/* The steps before the job's main process exists: a clean process, its cgroup and network,
 * its descriptors, the go; then the init's own signalfd (sigfd non-NULL) and the layers. */
static int sbx_init_enter(sbx_proc *p, int *sigfd)
{
    if (sbx_init_signals(p) < 0 || sbx_init_session(p) < 0 || sbx_cgroup_join(p) < 0 ||
        sbx_net_join(p) < 0 || sbx_init_fds(p) < 0 || sbx_init_wait_go(p) < 0 ||
        (sigfd && (*sigfd = sbx_init_sigchld(p)) < 0))
        return -1;
    return sbx_layers_enter_init(p);
}

/* Self-init: the job's /work and mount namespace to the supervisor, on the control socket,
 * before the job's code can run. The supervisor copies the artifacts out of /work once the job
 * is dead, from outside the namespace (sbx_fs.c), and holds the namespace until its teardown,
 * so that taking it down is not on the job's path. */
static int sbx_init_send_work(sbx_proc *p)
{
    int fds[2] = {open("/work", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
                  open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC)};
    if (fds[0] < 0 || fds[1] < 0)
        return sbx_child_fail(p, errno, fds[0] < 0 ? "open(/work)" : "open(/proc/self/ns/mnt)",
                              NULL);
    int rc = sbx_send_fds(SBX_FD_CTL, 'w', fds, 2);
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return rc == 0 ? 0 : sbx_child_fail(p, err, "sendmsg(/work to the supervisor)", NULL);
}

int sbx_send_fds(int sock, char tag, const int *fds, int n)
{
    char ctl[CMSG_SPACE(4 * sizeof(int))];
    if (n < 1 || n > 4)
        return errno = EINVAL, -1;
    struct iovec iov = {.iov_base = &tag, .iov_len = 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = CMSG_SPACE(n * sizeof(int))};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    *c = (struct cmsghdr){.cmsg_len = CMSG_LEN(n * sizeof(int)), .cmsg_level = SOL_SOCKET,
                          .cmsg_type = SCM_RIGHTS};
    memcpy(CMSG_DATA(c), fds, n * sizeof(int));
    ssize_t k;
    do
        k = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (k < 0 && errno == EINTR);
    return k == 1 ? 0 : (k >= 0 ? (errno = EIO, -1) : -1);
}

int sbx_recv_fds(int sock, char *tag, int *fds, int *n, int flags)
{
    char ctl[CMSG_SPACE(4 * sizeof(int))];
    if (*n < 1 || *n > 4)
        return errno = EINVAL, -1;
    struct iovec iov = {.iov_base = tag, .iov_len = 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = sizeof ctl};
    ssize_t k = recvmsg(sock, &m, flags | MSG_CMSG_CLOEXEC);
    if (k <= 0)
        return (int)k;
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    int got = c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS
                  ? (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int))
                  : 0;
    if (got > *n || (m.msg_flags & MSG_CTRUNC)) {
        int *in = got > 0 ? (int *)CMSG_DATA(c) : NULL;
        for (int i = 0; i < got; i++)
            close(in[i]);
        return errno = EMFILE, -1;
    }
    memcpy(fds, CMSG_DATA(c), got * sizeof(int));
    *n = got;
    return 1;
}

/* The job's main process when the supervisor is the job's pid 1 (sbx_self_pid set): it makes the
 * init's steps itself, then goes on as the main process. Zygote mode only (fork-like). */
int sbx_init_self_main(void *arg)
{
    sbx_proc *p = arg;
    if (sbx_init_enter(p, NULL) < 0 || sbx_init_send_work(p) < 0)
        _exit(SBX_MAIN_FAILED);
    return sbx_init_job_main(p);
}

int sbx_init_main(void *arg)
{
    sbx_proc *p = arg;
    int sigfd = -1;
    if (p->init_on_stack) /* on the lower half of p->stack (sbx_spawn) */
        sbx_init_asan_stack(p->stack, SBX_STACK_SIZE);
    if (sbx_init_enter(p, &sigfd) < 0)
        _exit(SBX_INIT_FAILED);

    /* The channel the main process sends the seccomp listener on (sbx_seccomp.c). */
    if (p->seccomp_prog && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p->sc_chan) < 0) {
        sbx_child_fail(p, errno, "socketpair(seccomp listener)", NULL);
        _exit(SBX_INIT_FAILED);
    }
    char *main_stack_top = (char *)p->stack + 2 * SBX_STACK_SIZE;
    sbx_init_main_proc m = {.pid = p->inproc ? sbx_init_fork_main(p)
                                             : clone(sbx_init_job_main, main_stack_top, SIGCHLD, p)};
    if (m.pid < 0) {
        sbx_child_fail(p, errno, "clone(main)", NULL);
        _exit(SBX_INIT_FAILED);
    }
    if (p->sc_chan[1] >= 0) {
        close(p->sc_chan[1]);
        p->sc_chan[1] = -1;
    }
    sbx_close(&p->seal_fd); /* the main process has its own */
    /* From here the job's code may run: a failure is no longer the setup's (sbx_result.unstarted). */
    p->setting_up = false;
    int rc = sbx_init_supervise(p, &m, sigfd);
    sbx_seccomp_listen(&p->sc_listen, &m); /* a refused call made as the main process ended */
    sbx_init_kill_all(&m);
    if (rc < 0 || !m.exited || sbx_layers_leave_init(p) < 0)
        _exit(SBX_INIT_FAILED);

    sbx_report r = {.kind = SBX_REPORT_EXIT, .wstatus = m.status, .sigsys = m.sigsys,
                    .refused = m.refused, .skipped = p->artifacts_skipped};
    if (write(SBX_FD_REPORT, &r, sizeof r) != (ssize_t)sizeof r)
        _exit(SBX_INIT_FAILED);
    int st = m.status;
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}
