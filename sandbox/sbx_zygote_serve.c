/* sbx_zygote_serve.c: the zygote process — a warm interpreter that runs the worker's jobs.
 *
 * Exec'd fresh by the worker (sbx_zygote.c), single-threaded, never runs job code itself. It
 * dies with the worker (PR_SET_PDEATHSIG, and EOF on its socket). For each job it runs the
 * sandbox as exec mode does — every layer's prepare, the job's first process cloned into new
 * namespaces, cgroup attach, go — with sbx_inproc set, so that the job's main process, after
 * the same enter_main steps (uid, capabilities, no_new_privs, rlimits, seccomp with execve
 * denied), runs the already-initialized interpreter instead of exec'ing a new one
 * (sbx_zygote_py.c). It watches its socket while the job runs, so the worker can stop it.
 * All of that happens in a per-job fork of the zygote (sbx_zy_supervise): no job's data ever
 * enters the zygote's own memory.
 */
#include "sbx_int.h"
#include "sbx_zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern const sbx_inproc_hooks sbx_zy_py_hooks;

static void sbx_zy_say(int32_t type, uint32_t seq, const char *why)
{
    sbx_zy_msg m = {.type = type, .seq = seq};
    snprintf(m.text, sizeof m.text, "%.239s", why);
    sbx_zy_send(SBX_ZY_FD, &m, -1);
}

/* Something failed after the job may have started (or at the zygote's own start). */
static void sbx_zy_error(uint32_t seq, const char *why)
{
    sbx_zy_say(SBX_ZY_ERROR, seq, why);
}

/* The job never reached a sandbox that could run it: running it again is safe. */
static void sbx_zy_unstarted(uint32_t seq, const char *why)
{
    sbx_zy_say(SBX_ZY_UNSTARTED, seq, why);
}

/* Drives the job like sbx_run, and also the socket: a stop from the worker, or its EOF. */
static void sbx_zy_drive(sbx_proc *p, uint32_t seq, uint32_t wall_ms)
{
    bool peer = true;
    uint64_t give_up = sbx_now_ms() + wall_ms + 10000;
    while (!sbx_done(p) && sbx_now_ms() < give_up) {
        struct pollfd fds[SBX_POLLFDS_MAX + 1];
        int n = sbx_pollfds(p, fds, SBX_POLLFDS_MAX);
        if (peer)
            fds[n++] = (struct pollfd){.fd = SBX_ZY_FD, .events = POLLIN};
        poll(fds, (nfds_t)n, sbx_timeout_ms(p));
        if (peer && fds[n - 1].revents) {
            sbx_zy_msg m;
            int fd;
            ssize_t k = sbx_zy_recv(SBX_ZY_FD, &m, &fd, MSG_DONTWAIT);
            if (fd >= 0)
                close(fd);
            if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                peer = false;
                sbx_kill(p, SBX_PREFIX "zygote: worker gone");
            } else if (k > 0 && m.type == SBX_ZY_STOP && m.seq == seq) {
                sbx_kill(p, m.text);
            }
        }
        sbx_service(p);
    }
}

/* Runs the job and answers the worker; returns the job's proc, whose teardown is left to the
 * caller (after it has told the zygote), or NULL when there is none. */
static sbx_proc *sbx_zy_job(const sbx_config *c, uint32_t seq, int fd)
{
    sbx_job job;
    void *map = NULL;
    size_t maplen = 0;
    sbx_file *files = NULL;
    char why[256];
    if (sbx_wire_get_job(fd, &job, &map, &maplen, &files, why, sizeof why) < 0) {
        if (map)
            munmap(map, maplen);
        free(files);
        sbx_zy_unstarted(seq, why);
        return NULL;
    }
    sbx_proc *p = sbx_start(c, &job);
    munmap(map, maplen);
    free(files);
    if (!p) {
        sbx_zy_unstarted(seq, SBX_PREFIX "zygote: out of memory");
        return NULL;
    }
    sbx_zy_drive(p, seq, job.limits.wall_ms);
    sbx_result r;
    sbx_answer(p, &r);
    int rfd = sbx_wire_put_result(&r, why, sizeof why);
    sbx_result_free(&r);
    sbx_zy_msg m = {.type = SBX_ZY_RESULT, .seq = seq};
    if (rfd < 0)
        sbx_zy_error(seq, why);
    else
        sbx_zy_send(SBX_ZY_FD, &m, rfd);
    if (rfd >= 0)
        close(rfd);
    return p;
}

/* Each job's parent side runs in a fork of the zygote, the supervisor: the job's code,
 * stdin, captured output and artifacts pass through the supervisor's memory only, which dies
 * with it. Were they handled in the zygote itself, their freed copies would be in the memory
 * of every later job forked from it (test_no_data_from_previous_job found 499 copies of one
 * job's output in the next job's address space that way). The supervisor answers the worker
 * on the inherited socket; the zygote waits for its answer (a byte on their socketpair), and
 * only speaks if it died without one. Its exit is reaped between jobs, off their path.
 *
 * Supervisors are forked ahead of their job (prefork): the next one is forked, and makes the
 * job's cgroup, while the current job runs, and then waits on a socketpair of its own for the
 * job's descriptor. Its fork and the cgroup's directories (~0.2-0.4 ms) leave the job's
 * latency path. It is still one supervisor and one new cgroup per job: a supervisor serves
 * one job and exits. The network namespace is the zygote's, one job at a time (sbx_net.c).
 * Each supervisor is forked into a new pid namespace and is its job's pid 1: it forks the
 * job's main process itself and reaps the job itself, with no init between them
 * (sbx_self_pid set; docs/zygote.md, item 10): two processes per job, the pid namespace made
 * ahead. */
enum { SBX_ZY_SWEEP_EVERY = 64 };

typedef struct {
    pid_t pid;  /* 0: none */
    int hand;   /* the zygote's end: the job's message and memfd go through it */
} sbx_zy_pre;

/* The pre-forked supervisor: pid 1 of the pid namespace its job will run in (sbx_self_pid set),
 * the job's cgroup, still without limits (sbx_cgroup_ahead), then the job. A failure to make
 * the cgroup is answered to the job, with its reason, when the job comes: no job runs without
 * it. Its pid in the zygote's namespace, which names its cgroup for the zygote's sweep, is the
 * zygote's first message (getpid() says 1); in its own pid namespace getppid() says 0, so a
 * zygote that died before the death signal was set is seen as the EOF on `hand`.
 * Non-dumpable, as the init was: the job's processes see it as their pid 1 (hidden by
 * hidepid=2, and under another uid anyway). */
static void sbx_zy_pre_child(const sbx_config *c, int hand)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || prctl(PR_SET_DUMPABLE, 0) < 0) {
        fprintf(stderr, SBX_PREFIX "zygote: supervisor: prctl: %s\n", strerrordesc_np(errno));
        _exit(1);
    }
    ssize_t k = recv(hand, &sbx_self_pid, sizeof sbx_self_pid, 0);
    if (k != (ssize_t)sizeof sbx_self_pid) {
        if (k != 0) /* 0: EOF, the zygote is gone */
            fprintf(stderr, SBX_PREFIX "zygote: supervisor: recv(its pid): %s\n",
                    k < 0 ? strerrordesc_np(errno) : "short message");
        _exit(1);
    }
    char why[256] = "";
    sbx_cgroup_ahead(c, why, sizeof why);
    sbx_zy_msg m;
    int fd;
    ssize_t n;
    while ((n = sbx_zy_recv(hand, &m, &fd, 0)) < 0 && errno == EINTR)
        ;
    if (n <= 0 || m.type != SBX_ZY_JOB || fd < 0) {
        sbx_cgroup_ahead_drop(); /* else the next sweep takes it: its creator is gone */
        _exit(0); /* the zygote is done with us: never given a job */
    }
    sbx_proc *p = NULL;
    if (why[0])
        sbx_zy_unstarted(m.seq, why);
    else
        p = sbx_zy_job(c, m.seq, fd);
    /* Answered: from here on the zygote may read the worker's socket again (sbx_zy_answered)
     * and hand the next job to the next supervisor, while this one tears its job down. */
    send(hand, "a", 1, MSG_NOSIGNAL);
    if (p && sbx_teardown(p, why, sizeof why) < 0) {
        fprintf(stderr, "%s (zygote job %u, after its answer: left to the sweep)\n", why, m.seq);
        _exit(1);
    }
    _exit(0);
}

/* fork(), the child the first process of a new pid namespace, made here, off the job's path:
 * unshare(CLONE_NEWPID) puts the zygote's next child there, and setns() puts the children after
 * it back into the zygote's own (a second unshare would fail until then). */
static pid_t sbx_zy_pre_clone(void)
{
    static int home = -1;
    if (home < 0 && (home = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    if (unshare(CLONE_NEWPID) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0)
        return 0;
    int err = errno;
    if (setns(home, CLONE_NEWPID) < 0) {
        /* Every later fork of ours would fail: leave, the worker starts another zygote. */
        fprintf(stderr, SBX_PREFIX "zygote: setns(its own pid namespace): %s\n",
                strerrordesc_np(errno));
        exit(1);
    }
    errno = err;
    return pid;
}

static int sbx_zy_pre_fork(const sbx_config *c, sbx_zy_pre *pre, char *why, size_t whylen)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        snprintf(why, whylen, SBX_PREFIX "zygote: socketpair(supervisor): %s",
                 strerrordesc_np(errno));
        return -1;
    }
    sbx_inproc->before_fork();
    pid_t pid = sbx_zy_pre_clone();
    if (pid == 0) {
        /* No PyOS_AfterFork_Child here: the supervisor runs no Python. The interpreter stays
         * as the fork left it (its locks held for the fork) in the supervisor and the init,
         * and the job's main process, the one process of the job that runs Python, makes it
         * whole (sbx_zygote_py.c). Run here, it ran the interpreter's at-fork callbacks in
         * every supervisor and wrote to pages of the zygote's heap: ~190 copy-on-write faults
         * and 0.3-0.5 ms of CPU per guarded job (docs/zygote.md, item 8). */
        close(sv[0]);
        sbx_zy_pre_child(c, sv[1]);
    }
    int err = errno;
    sbx_inproc->after_fork_parent();
    close(sv[1]);
    if (pid > 0 && send(sv[0], &pid, sizeof pid, MSG_NOSIGNAL) != (ssize_t)sizeof pid) {
        err = errno;
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        pid = -1;
    }
    if (pid < 0) {
        close(sv[0]);
        snprintf(why, whylen, SBX_PREFIX "zygote: fork(supervisor, new pid namespace): %s",
                 strerrordesc_np(err));
        return -1;
    }
    *pre = (sbx_zy_pre){.pid = pid, .hand = sv[0]};
    return 0;
}

/* Ends a pre-forked supervisor that got no job (EOF on its socketpair) and reaps it. */
static void sbx_zy_pre_drop(sbx_zy_pre *pre)
{
    if (!pre->pid)
        return;
    close(pre->hand);
    while (waitpid(pre->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    pre->pid = 0;
}

/* Waits until the supervisor has answered the worker (its byte on the socketpair), so that
 * the zygote reads the worker's socket again only once the supervisor no longer does (it
 * reads stops for its job there). The supervisor's exit is reaped later (sbx_zy_reap), off the
 * next job's path. 1 if it answered; 0 if it died first (EOF without the byte), reaped here
 * with its wait status in *st, and the zygote is to answer for it. */
static int sbx_zy_answered(sbx_zy_pre *cur, int *st)
{
    char b;
    ssize_t k;
    while ((k = recv(cur->hand, &b, 1, 0)) < 0 && errno == EINTR)
        ;
    close(cur->hand);
    if (k == 1)
        return 1;
    *st = 0;
    while (waitpid(cur->pid, st, 0) < 0 && errno == EINTR)
        ;
    return 0;
}

/* Hands the job to the pre-forked supervisor and forks the next one; 1 when the supervisor
 * answered and is left to reap. */
static int sbx_zy_supervise(const sbx_config *c, sbx_zy_pre *next, uint32_t seq, int fd)
{
    char why[160];
    sbx_zy_msg m = {.type = SBX_ZY_JOB, .seq = seq};
    /* A pre-forked supervisor that died while waiting is replaced once. */
    for (int tries = 0; tries < 2; tries++) {
        if (!next->pid && sbx_zy_pre_fork(c, next, why, sizeof why) < 0) {
            sbx_zy_unstarted(seq, why);
            return 0;
        }
        if (sbx_zy_send(next->hand, &m, fd) == 0)
            break;
        snprintf(why, sizeof why, SBX_PREFIX "zygote: job to supervisor %d: %s", (int)next->pid,
                 strerrordesc_np(errno));
        sbx_zy_pre_drop(next);
    }
    if (!next->pid) {
        sbx_zy_unstarted(seq, why);
        return 0;
    }
    sbx_zy_pre cur = *next;
    /* The next job's supervisor is made while this one runs; failing that is not this job's
     * problem: the next job forks one itself (above). */
    *next = (sbx_zy_pre){0};
    if (sbx_zy_pre_fork(c, next, why, sizeof why) < 0)
        *next = (sbx_zy_pre){0};
    int st;
    if (sbx_zy_answered(&cur, &st))
        return 1;
    /* Died without answering: its job dies with it (it was the job's pid 1), but the kernel may
     * not have killed the job's processes yet, and they are in the network namespace the next job
     * would join. The next job gets a new one, and a supervisor forked after the change; the
     * job is answered once that is done. */
    if (sbx_net_renew(why, sizeof why) < 0)
        fprintf(stderr, "%s (each job gets a new network namespace)\n", why);
    if (next->pid)
        sbx_zy_pre_drop(next);
    snprintf(why, sizeof why, SBX_PREFIX "zygote: job supervisor died (status %d)", st);
    sbx_zy_error(seq, why);
    return 0;
}

/* Reaps the supervisors that have exited without blocking; how many (not counting a
 * pre-forked one that died while waiting, which is forgotten and replaced when needed). */
static int sbx_zy_reap(sbx_zy_pre *next)
{
    int n = 0;
    for (pid_t w; (w = waitpid(-1, NULL, WNOHANG)) > 0;) {
        if (w == next->pid) {
            close(next->hand);
            *next = (sbx_zy_pre){0};
        } else {
            n++;
        }
    }
    return n;
}

static int sbx_zy_args(int argc, char **argv, sbx_config *c, const char **preload,
                       const char **prelude, pid_t *parent)
{
    static const struct option o[] = {
        {"python", required_argument, NULL, 'p'},      {"work-root", required_argument, NULL, 'w'},
        {"profile", required_argument, NULL, 'f'},     {"cgroup-parent", required_argument, NULL, 'g'},
        {"uid-base", required_argument, NULL, 'b'},    {"uid-count", required_argument, NULL, 'n'},
        {"parent", required_argument, NULL, 'P'},      {"preload", required_argument, NULL, 'l'},
        {"prelude", required_argument, NULL, 'r'},
        {NULL, 0, NULL, 0},
    };
    sbx_config_default(c);
    int opt;
    while ((opt = getopt_long(argc, argv, "", o, NULL)) != -1) {
        switch (opt) {
        case 'p': c->python = optarg; break;
        case 'w': c->work_root = optarg; break;
        case 'f': c->profile = optarg; break;
        case 'g': c->cgroup_parent = optarg; break;
        case 'b': c->uid_base = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'n': c->uid_count = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'P': *parent = (pid_t)strtol(optarg, NULL, 10); break;
        case 'l': *preload = optarg; break;
        case 'r': *prelude = optarg; break;
        default: return -1;
        }
    }
    c->isolation = "exec"; /* in here, sbx_start runs the layers itself (sbx_inproc) */
    /* Copies: the arguments themselves are zeroed once the interpreter is up (sbx_scrub_args). */
    const char **keep[] = {&c->python, &c->work_root, &c->profile, &c->cgroup_parent};
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
        if (*keep[i] && !(*keep[i] = strdup(*keep[i])))
            return -1;
    return 0;
}

/* Staging on memory instead of the work root's disk. The zygote moves into a mount namespace
 * of its own (host mounts still propagate in, nothing propagates out) and mounts a tmpfs on its
 * view of the work root; every job's staging directory (sbx_workdir.c: in/, out/, root/) is
 * made there, and the job's own mount namespace is cloned from this one. The tmpfs is seen by
 * this zygote and its jobs only and vanishes with the zygote, so a zygote killed in the middle
 * of a job leaves nothing behind on the host. Same checks as on disk: the work root must be a
 * real directory of ours before anything is mounted on it (sbx_workdir_root_check), and the
 * tmpfs is 0700, nosuid, nodev, noexec. Its size caps what two jobs at a time can stage (one
 * running, the one before it still being torn down after its answer): for each, inputs (at
 * most the largest tmpfs a job may have), artifacts (at most their largest cap) and room for
 * main.py and the prelude; pages are used only as files are written. ext4 metadata with its
 * journal cost 0.3-1.5 ms of each job (mkdir, file creation, removal); a tmpfs makes those
 * plain dentry operations. */
static int sbx_zy_staging(const char *work_root, char *why, size_t whylen)
{
    char bad[PATH_MAX + 80];
    if (sbx_workdir_root_check(work_root, bad, sizeof bad) < 0) {
        snprintf(why, whylen, SBX_PREFIX "zygote: %.200s", bad);
        return -1;
    }
    if (unshare(CLONE_NEWNS) < 0) {
        snprintf(why, whylen, SBX_PREFIX "zygote: unshare(CLONE_NEWNS): %s", strerrordesc_np(errno));
        return -1;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
        snprintf(why, whylen, SBX_PREFIX "zygote: mount(/, MS_REC|MS_SLAVE): %s",
                 strerrordesc_np(errno));
        return -1;
    }
    sbx_limits max;
    sbx_limits_max(&max);
    char opts[96];
    snprintf(opts, sizeof opts, "mode=0700,size=%llu",
             2 * ((unsigned long long)max.tmpfs_mb * 1048576ull + max.artifact_bytes +
                  64ull * 1048576ull));
    if (mount("codeq-staging", work_root, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0) {
        snprintf(why, whylen, SBX_PREFIX "zygote: mount(tmpfs, %.160s): %s", work_root,
                 strerrordesc_np(errno));
        return -1;
    }
    return 0;
}

/* One trivial job, run by the zygote itself before it says ready: it proves every layer works
 * in this process (fail closed, like sbx_selfcheck), and it leaves the once-per-process work
 * done in the zygote's memory — the seccomp program built, the cgroup backend chosen,
 * libcgroup initialized — instead of redone by every job's supervisor (a fresh fork). */
static int sbx_zy_warm_up(const sbx_config *c, char *why, size_t whylen)
{
    sbx_job job = {.code = "pass\n", .code_len = 5, .job_id = "zygote-warm-up"};
    sbx_limits_default(&job.limits);
    sbx_result r;
    sbx_run(c, &job, &r);
    int rc = r.status == SBX_OK ? 0 : -1;
    if (rc < 0)
        snprintf(why, whylen, SBX_PREFIX "zygote: warm-up job ended %s: %.160s",
                 sbx_status_name(r.status), r.message[0] ? r.message : r.err.data);
    sbx_result_free(&r);
    return rc;
}

int sbx_zygote_serve(int argc, char **argv)
{
    sbx_config c;
    const char *preload = "", *prelude = "";
    pid_t parent = 0;
    if (sbx_zy_args(argc, argv, &c, &preload, &prelude, &parent) < 0) {
        fprintf(stderr, SBX_PREFIX "zygote: bad arguments (or out of memory)\n");
        return 2;
    }
    /* Die with the worker; if it is already gone, the death signal was missed: leave. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || (parent && getppid() != parent))
        return 1;
    /* Its work (binding every function at start) is done: the job's environment is the rest. */
    if (unsetenv(SBX_ZYGOTE_BIND_NOW) < 0)
        return 1;
    char why[256];
    if (sbx_zy_py_init(c.python, preload, prelude, why, sizeof why) < 0) {
        sbx_zy_error(0, why);
        return 1;
    }
    sbx_inproc = &sbx_zy_py_hooks;
    /* preload and prelude, the last users of the arguments, have been taken in. */
    if (sbx_scrub_args(why, sizeof why) < 0 || sbx_zy_staging(c.work_root, why, sizeof why) < 0 ||
        sbx_net_share(why, sizeof why) < 0) {
        sbx_zy_error(0, why);
        return 1;
    }
    if (sbx_zy_warm_up(&c, why, sizeof why) < 0) {
        sbx_zy_error(0, why);
        return 1;
    }
    sbx_zy_msg ready = {.type = SBX_ZY_READY};
    if (sbx_zy_send(SBX_ZY_FD, &ready, -1) < 0)
        return 1;
    sbx_zy_pre next = {0};
    if (sbx_zy_pre_fork(&c, &next, why, sizeof why) < 0) {
        sbx_zy_error(0, why);
        return 1;
    }
    int unreaped = 0; /* supervisors that answered and are exiting */
    int unswept = 0;  /* jobs since the last sbx_cgroup_sweep */
    for (;;) {
        /* Reap every supervisor that has exited, without waiting: jobs that come back to back
         * must not pile up zombies. Then, while no job waits, wait for the rest and sweep what
         * a killed one may have left; under steady load, sweep every SBX_ZY_SWEEP_EVERY jobs. */
        unreaped -= sbx_zy_reap(&next);
        struct pollfd f = {.fd = SBX_ZY_FD, .events = POLLIN};
        if (unreaped > 0 && poll(&f, 1, 2) == 0)
            continue;
        if (unswept > 0 && (unreaped <= 0 || unswept >= SBX_ZY_SWEEP_EVERY) &&
            (unswept >= SBX_ZY_SWEEP_EVERY || poll(&f, 1, 0) == 0)) {
            sbx_cgroup_sweep(&c);
            sbx_workdir_sweep(&c); /* staging directories of supervisors killed mid-job */
            unswept = 0;
        }
        sbx_zy_msg m;
        int fd;
        ssize_t n = sbx_zy_recv(SBX_ZY_FD, &m, &fd, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) { /* the worker is gone, or retires us: leave nothing behind */
            sbx_zy_pre_drop(&next);
            while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
                ; /* supervisors that answered and are exiting */
            sbx_cgroup_sweep(&c);
            sbx_workdir_sweep(&c);
            return 0;
        }
        if (m.type == SBX_ZY_JOB && fd >= 0) {
            unreaped += sbx_zy_supervise(&c, &next, m.seq, fd);
            unswept++;
        }
        else if (m.type == SBX_ZY_JOB)
            sbx_zy_unstarted(m.seq, SBX_PREFIX "zygote: job without its memfd");
        /* A stop for a job that has already ended needs nothing. */
        if (fd >= 0)
            close(fd);
    }
}
