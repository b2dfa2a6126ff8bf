/* sbx_zygote.c: zygote mode, the worker's side — a pool of zygote processes and one job on each.
 *
 * A zygote (sbx_zygote_serve.c) is a fresh exec of the codeq-zygote binary, never a fork of
 * the worker: the worker has librdkafka threads and an embedded CPython of its own, and a
 * fork of a multi-threaded process may only call async-signal-safe functions. posix_spawn
 * starts it with the control socket on descriptor 3 and nothing else of ours
 * (closefrom 4). The zygote runs every layer of a job itself — exactly the exec mode's code,
 * with only the last step different — so the worker hands over the job and waits for the
 * result; its own bound is the job's wall limit plus a grace, after which the zygote is
 * SIGKILLed (its supervisors die with it, PR_SET_PDEATHSIG, and each job with its supervisor,
 * its pid 1) and the job ends internal_error: a
 * wedged zygote never hangs the worker.
 * One job per zygote at a time; a second concurrent job gets a second zygote. A zygote is
 * retired after zygote_max_jobs jobs or zygote_max_age_s seconds (a fresh exec: new ASLR
 * layout, new hash secret), and a dead one (EOF on its socket) is replaced on next use.
 * sbx_zygote_ahead starts zygotes without waiting for them: their interpreters and preloads
 * come up while the worker joins its group, and the first job waits only for what is left.
 */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sbx_zygote.h"

enum { SBX_ZY_MAX = 64, SBX_ZY_READY_MS = 10000, SBX_ZY_GRACE_MS = 5000, SBX_ZY_EXIT_MS = 2000 };

struct sbx_zy {
    pid_t pid;
    int pidfd, sock;
    bool busy;
    bool ready;   /* its "ready" was read; a zygote started ahead is not, until taken */
    unsigned jobs, max_jobs;
    uint64_t born_ms, max_age_ms;
    uint32_t seq;
    char *key; /* the configuration it serves, whole: a cut key could match another */
};

static struct sbx_zy *sbx_zy_pool[SBX_ZY_MAX];
static pthread_mutex_t sbx_zy_mu = PTHREAD_MUTEX_INITIALIZER;

const char *const sbx_isolations[] = {"exec", "zygote", NULL};

/* A healthy zygote is let go by closing its socket: it exits at EOF once its last job's
 * supervisor is gone, so nothing of it outlives this call. A broken one, or one that does
 * not exit within SBX_ZY_EXIT_MS, is SIGKILLed (its supervisors, and their jobs, die with it). */
static void sbx_zy_retire(struct sbx_zy *z, bool graceful)
{
    if (graceful && z->pidfd >= 0) {
        shutdown(z->sock, SHUT_RDWR);
        struct pollfd f = {.fd = z->pidfd, .events = POLLIN};
        uint64_t end = sbx_now_ms() + SBX_ZY_EXIT_MS;
        for (int i = 0; i < 100 && sbx_now_ms() < end; i++)
            if (poll(&f, 1, (int)(end - sbx_now_ms())) > 0)
                break;
    }
    if (z->pidfd >= 0)
        pidfd_send_signal(z->pidfd, SIGKILL, NULL, 0);
    else
        kill(z->pid, SIGKILL); /* our unreaped child: the pid cannot have been reused */
    while (waitpid(z->pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (z->pidfd >= 0)
        close(z->pidfd);
    close(z->sock);
    free(z->key);
    free(z);
}

/* The configuration as a string (the caller frees it), or NULL without memory. */
static char *sbx_zy_key(const sbx_config *c)
{
    char *key;
    /* The prelude by address: it is the policy's, loaded once and kept for the process. */
    if (asprintf(&key, "%s|%s|%s|%s|%s|%u|%u|%u|%u|%s|%p", c->zygote_path ? c->zygote_path : "",
             c->python ? c->python : "", c->work_root ? c->work_root : "",
             c->profile ? c->profile : "", c->cgroup_parent ? c->cgroup_parent : "", c->uid_base,
             c->uid_count, c->zygote_max_jobs, c->zygote_max_age_s,
             c->zygote_preload ? c->zygote_preload : "", (const void *)c->zygote_prelude) < 0)
        return NULL;
    return key;
}

/* The binary: the configured path, else codeq-zygote beside the running executable, else the
 * build tree's (unit tests and benches live in subdirectories of it). */
#ifdef CODEQ_ZYGOTE_BUILD_PATH
#define SBX_ZY_BUILD_PATH CODEQ_ZYGOTE_BUILD_PATH
#else
#define SBX_ZY_BUILD_PATH NULL
#endif

static int sbx_zy_path(const sbx_config *c, char *path, size_t n)
{
    if (c->zygote_path) {
        snprintf(path, n, "%s", c->zygote_path);
        return 0;
    }
    return sbx_beside_self("codeq-zygote", X_OK, SBX_ZY_BUILD_PATH, path, n);
}

static int sbx_zy_exec(sbx_proc *p, const sbx_config *c, int theirs, pid_t *pid)
{
    char path[PATH_MAX], ub[16], uc[16], ppid[16];
    if (sbx_zy_path(c, path, sizeof path) < 0)
        return sbx_fail(p, ENOENT, "zygote binary codeq-zygote not found");
    snprintf(ub, sizeof ub, "%u", c->uid_base);
    snprintf(uc, sizeof uc, "%u", c->uid_count);
    snprintf(ppid, sizeof ppid, "%d", (int)getpid());
    char *argv[] = {path, "--python", (char *)c->python, "--work-root", (char *)c->work_root,
                    "--profile", (char *)c->profile, "--cgroup-parent", (char *)c->cgroup_parent,
                    "--uid-base", ub, "--uid-count", uc, "--parent", ppid,
                    "--preload", (char *)(c->zygote_preload ? c->zygote_preload : ""),
                    "--prelude", (char *)(c->zygote_prelude ? c->zygote_prelude : ""), NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, theirs, SBX_ZY_FD);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclosefrom_np(&fa, SBX_ZY_FD + 1);
    /* A session of its own: a signal to the worker's process group (a shell's kill -- -PGID,
     * timeout(1), a terminal's) is the worker's to act on. It killed the zygotes at once, so a
     * SIGTERM meant to let running jobs finish ended them internal_error. The zygote still dies
     * with the worker (PR_SET_PDEATHSIG, EOF on its socket). */
    posix_spawnattr_t at;
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID);
    int rc = posix_spawn(pid, path, &fa, &at, argv, (char **)sbx_zygote_envp);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return sbx_fail(p, rc, "posix_spawn(%s)", path);
    return 0;
}

/* Waits for the zygote's "ready" (its interpreter is up), bounded by start_ms. */
static int sbx_zy_wait_ready(sbx_proc *p, struct sbx_zy *z, unsigned start_ms)
{
    struct pollfd f = {.fd = z->sock, .events = POLLIN};
    int r;
    do
        r = poll(&f, 1, (int)(start_ms ? start_ms : SBX_ZY_READY_MS));
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return sbx_fail(p, r == 0 ? ETIMEDOUT : errno, "zygote %d: no ready message", (int)z->pid);
    sbx_zy_msg m;
    ssize_t n = recv(z->sock, &m, sizeof m, 0);
    if (n != (ssize_t)sizeof m || m.type != SBX_ZY_READY) {
        return sbx_fail(p, n < 0 ? errno : 0, "zygote %d: start-up failed%s%.200s", (int)z->pid,
                        n == (ssize_t)sizeof m && m.type == SBX_ZY_ERROR ? ": " : "",
                        n == (ssize_t)sizeof m && m.type == SBX_ZY_ERROR ? m.text : "");
    }
    return 0;
}

/* Zygotes started by this process, for the worker's metrics (a rise means restarts). */
static _Atomic unsigned long sbx_zy_starts;

unsigned long sbx_zygote_starts(void)
{
    return sbx_zy_starts;
}

static struct sbx_zy *sbx_zy_launch(sbx_proc *p, const sbx_config *c, const char *key)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
        sbx_fail(p, errno, "socketpair(zygote)");
        return NULL;
    }
    struct sbx_zy *z = calloc(1, sizeof *z);
    char *own_key = strdup(key);
    pid_t pid = 0;
    /* Where job cgroups go is settled here, before the zygote inherits our cgroup. */
    int rc = !z || !own_key ? sbx_fail(p, ENOMEM, "zygote")
             : sbx_cgroup_place(p) < 0 ? -1 : sbx_zy_exec(p, c, sv[1], &pid);
    close(sv[1]);
    if (rc < 0) {
        close(sv[0]);
        free(own_key);
        free(z);
        return NULL;
    }
    *z = (struct sbx_zy){.pid = pid, .sock = sv[0], .pidfd = pidfd_open(pid, 0),
                         .born_ms = sbx_now_ms(),
                         .max_jobs = c->zygote_max_jobs ? c->zygote_max_jobs : 1000,
                         .max_age_ms = 1000ull * (c->zygote_max_age_s ? c->zygote_max_age_s : 600),
                         .key = own_key};
    sbx_zy_starts++;
    return z;
}

/* A launched zygote once it said ready within start_ms of its launch; NULL (and z retired)
 * if it did not. */
static struct sbx_zy *sbx_zy_readied(sbx_proc *p, struct sbx_zy *z, unsigned start_ms)
{
    if (!z || z->ready)
        return z;
    unsigned waited = (unsigned)(sbx_now_ms() - z->born_ms);
    unsigned bound = start_ms ? start_ms : SBX_ZY_READY_MS;
    if (sbx_zy_wait_ready(p, z, waited < bound ? bound - waited : 1) < 0) {
        sbx_zy_retire(z, false);
        return NULL;
    }
    z->ready = true;
    return z;
}

/* Whether the zygote can take a job now: not stopped or traced ('T', 't': SIGSTOP, a
 * debugger) and not dead ('Z', 'X'). A stopped zygote would never read the job, which would
 * then end internal_error after its wall limit plus the grace, though the job did nothing.
 * One read of /proc/<pid>/stat per job (the pid is our unreaped child: never reused). */
static bool sbx_zy_runnable(pid_t pid)
{
    char path[32], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')'); /* the name in parentheses may hold anything */
    if (!rp || rp[1] != ' ' || !rp[2])
        return false;
    return !strchr("TtZX", rp[2]);
}

typedef enum { SBX_ZY_KEEP, SBX_ZY_RETIRE, SBX_ZY_KILL } sbx_zy_fate;

/* An idle zygote must be silent: anything readable (EOF included) means it died or broke.
 * A stopped one is SIGKILLed at once: the graceful retire would wait SBX_ZY_EXIT_MS for an
 * exit that cannot come. */
static sbx_zy_fate sbx_zy_usable(struct sbx_zy *z, const char *key)
{
    if (strcmp(z->key, key) != 0)
        return SBX_ZY_RETIRE;
    struct pollfd f = {.fd = z->sock, .events = POLLIN};
    /* a zygote started ahead has its "ready" waiting there: not a sign of trouble */
    bool unexpected = z->ready && poll(&f, 1, 0) != 0;
    if (unexpected || z->jobs >= z->max_jobs || sbx_now_ms() - z->born_ms >= z->max_age_ms)
        return SBX_ZY_RETIRE;
    return sbx_zy_runnable(z->pid) ? SBX_ZY_KEEP : SBX_ZY_KILL;
}

static int sbx_zy_pool_free(void)
{
    for (int i = 0; i < SBX_ZY_MAX; i++)
        if (!sbx_zy_pool[i])
            return i;
    return -1;
}

/* Takes an idle zygote for this configuration, replacing worn-out or dead ones. */
static struct sbx_zy *sbx_zy_acquire(sbx_proc *p, const sbx_config *c)
{
    char *key = sbx_zy_key(c);
    if (!key) {
        sbx_fail(p, ENOMEM, "zygote key");
        return NULL;
    }
    pthread_mutex_lock(&sbx_zy_mu);
    struct sbx_zy *z = NULL;
    int free_at = -1, at = -1;
    for (int i = 0; i < SBX_ZY_MAX && !z; i++) {
        struct sbx_zy *q = sbx_zy_pool[i];
        sbx_zy_fate fate = q && !q->busy ? sbx_zy_usable(q, key) : SBX_ZY_KEEP;
        if (fate != SBX_ZY_KEEP) {
            sbx_zy_retire(q, fate == SBX_ZY_RETIRE);
            sbx_zy_pool[i] = q = NULL;
        }
        if (!q && free_at < 0)
            free_at = i;
        if (q && !q->busy)
            z = q, at = i;
    }
    if (z) {
        /* one started ahead that never came up (retired): this job's failure, as a fresh
         * one's would be */
        if (!(z = sbx_zy_readied(p, z, c->zygote_start_ms)))
            sbx_zy_pool[at] = NULL;
    } else if (free_at < 0) {
        sbx_fail(p, EAGAIN, "all %d zygotes busy", SBX_ZY_MAX);
    } else if ((z = sbx_zy_readied(p, sbx_zy_launch(p, c, key), c->zygote_start_ms))) {
        sbx_zy_pool[free_at] = z;
    }
    if (z)
        z->busy = true;
    pthread_mutex_unlock(&sbx_zy_mu);
    free(key);
    return z;
}

/* The configuration a zygote is started with: the caller's, with what sbx_proc_accept
 * resolved (defaults, the profile) filled in, so that equal settings make equal keys. */
static void sbx_zy_full(const sbx_proc *p, const sbx_config *c, sbx_config *full)
{
    sbx_config_default(full);
    full->zygote_path = c->zygote_path;
    full->zygote_preload = c->zygote_preload;
    full->zygote_prelude = c->zygote_prelude;
    full->zygote_max_jobs = c->zygote_max_jobs;
    full->zygote_max_age_s = c->zygote_max_age_s;
    full->zygote_start_ms = c->zygote_start_ms;
    full->profile = p->profile;
    full->python = p->python;
    full->work_root = p->work_root;
    full->cgroup_parent = p->cgroup_parent;
    full->uid_base = p->uid_base;
    full->uid_count = p->uid_count;
}

/* Zygote mode: n zygotes for c, launched now and not waited for; they count as idle ones
 * of the pool and the jobs that take them wait for their "ready". Those already idle for c
 * count towards n. */
int sbx_zygote_ahead(sbx_proc *p, const sbx_config *c, unsigned n)
{
    sbx_config full;
    sbx_zy_full(p, c, &full);
    char *key = sbx_zy_key(&full);
    if (!key)
        return sbx_fail(p, ENOMEM, "zygote key");
    pthread_mutex_lock(&sbx_zy_mu);
    unsigned have = 0;
    for (int i = 0; i < SBX_ZY_MAX; i++)
        if (sbx_zy_pool[i] && !sbx_zy_pool[i]->busy && !strcmp(sbx_zy_pool[i]->key, key))
            have++;
    int rc = 0;
    for (; have < n; have++) {
        int at = sbx_zy_pool_free();
        if (at < 0)
            break; /* a full pool is not an error: jobs start zygotes as they need them */
        struct sbx_zy *z = sbx_zy_launch(p, &full, key);
        if (!z) {
            rc = -1;
            break;
        }
        sbx_zy_pool[at] = z;
    }
    pthread_mutex_unlock(&sbx_zy_mu);
    free(key);
    return rc;
}

/* Hands z back to the pool, or retires it when it can no longer be trusted. */
static void sbx_zy_release(struct sbx_zy *z, bool broken)
{
    pthread_mutex_lock(&sbx_zy_mu);
    for (int i = 0; i < SBX_ZY_MAX; i++) {
        if (sbx_zy_pool[i] != z)
            continue;
        if (broken) {
            sbx_zy_retire(z, false);
            sbx_zy_pool[i] = NULL;
        } else {
            z->busy = false;
            z->jobs++;
        }
    }
    pthread_mutex_unlock(&sbx_zy_mu);
}

void sbx_zygote_shutdown(void)
{
    pthread_mutex_lock(&sbx_zy_mu);
    for (int i = 0; i < SBX_ZY_MAX; i++) {
        if (sbx_zy_pool[i] && !sbx_zy_pool[i]->busy) {
            sbx_zy_retire(sbx_zy_pool[i], true);
            sbx_zy_pool[i] = NULL;
        }
    }
    pthread_mutex_unlock(&sbx_zy_mu);
}

static void sbx_zy_done(sbx_proc *p, bool broken);

static int sbx_zy_start(sbx_proc *p, const sbx_config *c, const sbx_job *job)
{
    sbx_config full;
    sbx_zy_full(p, c, &full);
    char why[256];
    int fd = sbx_wire_put_job(job, why, sizeof why);
    if (fd < 0)
        return sbx_fail(p, 0, "%s", why + strlen(SBX_PREFIX));
    struct sbx_zy *z = sbx_zy_acquire(p, &full);
    if (!z) {
        close(fd);
        return -1;
    }
    p->zy = z;
    p->t0_ms = sbx_now_ms();
    p->zy_deadline_ms = p->t0_ms + p->limits.wall_ms + SBX_ZY_GRACE_MS;
    sbx_zy_msg m = {.type = SBX_ZY_JOB, .seq = ++z->seq};
    int rc = sbx_zy_send(z->sock, &m, fd);
    close(fd);
    if (rc < 0)
        return sbx_fail(p, errno, "send(zygote %d, job)", (int)z->pid);
    /* The zygote has it: from now on only its result can say the job never started. */
    p->setting_up = false;
    return 0;
}

/* A job the zygote never got is done at once, with the reason; its zygote is not trusted. */
int sbx_zygote_start(sbx_proc *p, const sbx_config *c, const sbx_job *job)
{
    if (sbx_zy_start(p, c, job) == 0)
        return 0;
    sbx_zy_done(p, true);
    return -1;
}

int sbx_zygote_pollfd(const sbx_proc *p)
{
    return p->zy ? p->zy->sock : -1;
}

/* The job is over, one way or the other: the zygote goes back, or away if broken. */
static void sbx_zy_done(sbx_proc *p, bool broken)
{
    if (p->zy)
        sbx_zy_release(p->zy, broken);
    p->zy = NULL;
    p->done = true;
    if (!p->res.out.data)
        p->res.out.data = calloc(1, 1);
    if (!p->res.err.data)
        p->res.err.data = calloc(1, 1);
}

static void sbx_zy_answer(sbx_proc *p, const sbx_zy_msg *m, int fd)
{
    char why[256];
    free(p->res.out.data);
    free(p->res.err.data);
    p->res.out.data = p->res.err.data = NULL;
    if (m->type == SBX_ZY_RESULT && fd >= 0 && sbx_wire_get_result(fd, &p->res, why, sizeof why) == 0) {
        sbx_zy_done(p, false);
    } else {
        bool said = m->type == SBX_ZY_ERROR || m->type == SBX_ZY_UNSTARTED;
        p->failed = false;
        sbx_fail(p, 0, "zygote %d: %.200s", (int)p->zy->pid, said ? m->text : why + strlen(SBX_PREFIX));
        p->res.unstarted = m->type == SBX_ZY_UNSTARTED;
        sbx_zy_done(p, !said);
    }
}

void sbx_zygote_service(sbx_proc *p)
{
    if (p->done || !p->zy) {
        if (!p->done)
            sbx_zy_done(p, false);
        return;
    }
    sbx_zy_msg m;
    int fd = -1;
    ssize_t n = sbx_zy_recv(p->zy->sock, &m, &fd, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (sbx_now_ms() < p->zy_deadline_ms)
            return;
        sbx_fail(p, ETIMEDOUT, "zygote %d did not answer within %u ms: killed", (int)p->zy->pid,
                 p->limits.wall_ms + SBX_ZY_GRACE_MS);
        sbx_zy_done(p, true);
        return;
    }
    if (n != (ssize_t)sizeof m || m.seq != p->zy->seq) {
        sbx_fail(p, n < 0 ? errno : 0, "zygote %d: %s", (int)p->zy->pid,
                 n == 0 ? "died during the job" : "bad answer");
        if (fd >= 0)
            close(fd);
        sbx_zy_done(p, true);
        return;
    }
    sbx_zy_answer(p, &m, fd);
    if (fd >= 0)
        close(fd);
}

/* The zygote stops the job (its supervisor kills and reaps it: sbx_spawn.c) and still
 * answers; the worker's own deadline is brought forward in case it cannot. */
void sbx_zygote_kill(sbx_proc *p, const char *why)
{
    if (p->done || !p->zy)
        return;
    sbx_zy_msg m = {.type = SBX_ZY_STOP, .seq = p->zy->seq};
    snprintf(m.text, sizeof m.text, "%.239s", why ? why : SBX_PREFIX "killed");
    if (sbx_zy_send(p->zy->sock, &m, -1) < 0 && !p->failed)
        sbx_fail(p, errno, "send(zygote %d, stop)", (int)p->zy->pid);
    uint64_t soon = sbx_now_ms() + SBX_STOP_GRACE_MS + SBX_ZY_GRACE_MS;
    if (soon < p->zy_deadline_ms)
        p->zy_deadline_ms = soon;
}

/* Blocks until the answer or the deadline; both bounded. */
void sbx_zygote_finish(sbx_proc *p)
{
    if (!p->done && p->zy)
        sbx_zygote_kill(p, SBX_PREFIX "job finished before it was done");
    while (!p->done) {
        struct pollfd f = {.fd = sbx_zygote_pollfd(p), .events = POLLIN};
        uint64_t now = sbx_now_ms();
        if (f.fd >= 0 && now < p->zy_deadline_ms)
            poll(&f, 1, (int)(p->zy_deadline_ms - now));
        sbx_zygote_service(p);
    }
}
