/* sbx_cgroup2.c: cgroup v2 backend — the unified hierarchy of most production hosts.
 *
 * Tested in CI on Debian 12's stock kernel with only cgroup2 mounted (tests/cgroup2/, a QEMU
 * guest: this development VM is v1). Written against the kernel's
 * Documentation/admin-guide/cgroup-v2.rst.
 *
 * Where (sbx_cg2_place, once per process, before any zygote is spawned so that zygotes
 * inherit the decision): under our own cgroup (/proc/self/cgroup, "0::/path") when it is
 * delegated to us — the host's root, systemd Delegate=yes, a container's cgroup namespace —
 * moving ourselves into the leaf <own>/codeq-worker first if we are its only process (the
 * "no internal processes" rule; as nsjail does); under the hierarchy's root when our cgroup is
 * shared with processes that are not ours to move. Then <base>/<parent>/job-<pid>-<n> per job,
 * with "+memory +pids +cpu" (and "+io" where present) written to each cgroup.subtree_control
 * on the way — plain file writes: libcgroup 2.0.2 has no call for it.
 * Per job, made with libcgroup (create; the init is born in it, sbx_spawn.c, or attached
 * where clone3 is missing): memory.max = memory_mb, memory.swap.max = 0
 * (where swap accounting exists; without it there is no swap to use beyond what the host's own
 * swap allows — run such hosts without swap), pids.max = pids, cpu.max = "100000 100000" (one
 * CPU), and where the io controller is enabled io.max on the disks of /usr and the work root
 * (sbx_iodev.c; without the controller, or without a block device, no I/O limit). Figures:
 * memory.peak (kernel >= 5.19; without it max RSS falls back to rusage), cpu.stat usage_usec,
 * and the oom_kill line of memory.events. The end: cgroup.kill (kernel >= 5.14) kills every
 * process at once, then rmdir, retried while exiting tasks leave. */
#include "sbx_int.h"

#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SBX_CG2_MOUNT "/sys/fs/cgroup"
#define SBX_CG2_LEAF "codeq-worker"

typedef struct {
    struct cgroup *cg;
    char name[1200];       /* relative to the mount: libcgroup's name */
    char dir[1300];        /* absolute */
    int stat_fd;           /* cpu.stat */
    int dir_fd;            /* the directory, O_PATH: for clone3(CLONE_INTO_CGROUP) */
} sbx_cg2;

static atomic_uint sbx_cg2_seq;
static pthread_mutex_t sbx_cg2_lock = PTHREAD_MUTEX_INITIALIZER;
static char sbx_cg2_own[1024]; /* the worker's cgroup once set up, "" before */
static bool sbx_cg2_swap;       /* memory.swap.max exists (swap accounting is on) */

static int sbx_cg2_write(const char *path, const char *data)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, data, strlen(data));
    int e = errno;
    close(fd);
    errno = e;
    return w == (ssize_t)strlen(data) ? 0 : -1;
}

static int sbx_cg2_read(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, buf, n - 1);
    close(fd);
    if (r < 0)
        return -1;
    buf[r] = '\0';
    return 0;
}

/* "0::/system.slice/codeq.service" -> "system.slice/codeq.service" ("" for the root). */
static int sbx_cg2_self(char *own, size_t n)
{
    char buf[PATH_MAX + 8];
    if (sbx_cg2_read("/proc/self/cgroup", buf, sizeof buf) < 0)
        return -1;
    char *line = strstr(buf, "0::/");
    if (!line) {
        errno = ENOENT;
        return -1;
    }
    line += 4;
    line[strcspn(line, "\n")] = '\0';
    /* Already moved into our leaf (sbx_cg2_leave_own) by an earlier set-up: its parent is ours. */
    size_t len = strlen(line), k = strlen(SBX_CG2_LEAF);
    if (len >= k && strcmp(line + len - k, SBX_CG2_LEAF) == 0 && (len == k || line[len - k - 1] == '/'))
        line[len == k ? 0 : len - k - 1] = '\0';
    snprintf(own, n, "%s", line);
    return 0;
}

/* Whether the only process in `dir` is this one (cgroup.procs lists thread-group ids). */
static bool sbx_cg2_alone(const char *dir)
{
    char path[1000], buf[4096];
    snprintf(path, sizeof path, "%s/cgroup.procs", dir);
    if (sbx_cg2_read(path, buf, sizeof buf) < 0)
        return false;
    char *end;
    long pid = strtol(buf, &end, 10);
    return end != buf && pid == (long)getpid() && (*end == '\0' || (*end == '\n' && !end[1]));
}

/* Moves the whole worker (every thread) into the leaf <dir>/codeq-worker. */
static int sbx_cg2_leave_own(const char *dir, char *step, size_t n)
{
    char pid[32];
    snprintf(step, n, "%s/" SBX_CG2_LEAF, dir);
    if (mkdir(step, 0755) < 0 && errno != EEXIST)
        return -1;
    snprintf(step + strlen(step), n - strlen(step), "/cgroup.procs");
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    return sbx_cg2_write(step, pid);
}

/* Whether the space-separated `list` names `word`. */
static bool sbx_cg2_listed(const char *list, const char *word)
{
    size_t k = strlen(word);
    for (const char *s = list; (s = strstr(s, word)); s += k)
        if ((s == list || s[-1] == ' ') && (s[k] == ' ' || s[k] == '\n' || s[k] == '\0'))
            return true;
    return false;
}

/* Enables our controllers for the children of `dir` ("" = the mount's root). io is taken
 * where the hierarchy has it (an I/O limit needs it), the other three are required. */
static int sbx_cg2_enable(const char *dir, char *step, size_t n)
{
    char have[512];
    snprintf(step, n, SBX_CG2_MOUNT "%s/cgroup.controllers", dir);
    if (sbx_cg2_read(step, have, sizeof have) < 0)
        return -1;
    snprintf(step, n, SBX_CG2_MOUNT "%s/cgroup.subtree_control", dir);
    bool io = sbx_cg2_listed(have, "io");
    for (const char *const *c = (const char *const[]){"memory", "pids", "cpu", NULL}; *c; c++)
        if (!sbx_cg2_listed(have, *c)) {
            snprintf(step, n, SBX_CG2_MOUNT "%s/cgroup.controllers (no %s controller delegated)",
                     dir, *c);
            errno = ENOENT;
            return -1;
        }
    return sbx_cg2_write(step, io ? "+memory +pids +cpu +io" : "+memory +pids +cpu");
}

/* Where job cgroups can go: our own cgroup where it is ours to divide, else the root.
 *  - Our own cgroup, delegated to us (systemd Delegate=yes, a container's cgroup namespace,
 *    the host's root): its controllers are enabled for its children. The "no internal
 *    processes" rule refuses that (EBUSY) while it holds processes, so if we are alone in
 *    it we first move into the leaf <own>/codeq-worker, as nsjail does.
 *  - Shared with other processes (a login session's scope, a test runner's service): we
 *    must not move them, so the jobs go under the hierarchy's root instead, where the rule
 *    does not apply — as the cgroupfs driver of container engines does.
 * The result, base, is a directory relative to the mount: "/path", or "" for its root. */
static int sbx_cg2_place(char *base, size_t n, char *step, size_t sn)
{
    char own[800], dir[900];
    if (sbx_cg2_self(own, sizeof own) < 0) {
        snprintf(step, sn, "/proc/self/cgroup");
        return -1;
    }
    snprintf(base, n, "%s%s", own[0] ? "/" : "", own);
    snprintf(dir, sizeof dir, SBX_CG2_MOUNT "%s", base);
    if (sbx_cg2_enable(base, step, sn) == 0)
        return 0;
    if (errno != EBUSY)
        return -1;
    if (sbx_cg2_alone(dir)) {
        if (sbx_cg2_leave_own(dir, step, sn) < 0)
            return -1;
        return sbx_cg2_enable(base, step, sn);
    }
    if (!own[0]) { /* the root of a cgroup namespace, shared: nowhere to go */
        snprintf(step, sn, "%s (other processes share this cgroup; run the worker alone in "
                 "a delegated cgroup)", dir);
        errno = EBUSY;
        return -1;
    }
    base[0] = '\0';
    return sbx_cg2_enable(base, step, sn);
}

/* Makes <base>/<parent> a place where job cgroups get memory, pids and cpu; once. */
static int sbx_cg2_setup(const char *parent, char *why, size_t whylen)
{
    char base[850], step[2048];
    int rc = sbx_cg2_place(base, sizeof base, step, sizeof step);
    if (rc == 0) {
        snprintf(step, sizeof step, SBX_CG2_MOUNT "%s/%s", base, parent);
        rc = mkdir(step, 0755) < 0 && errno != EEXIST ? -1 : 0;
    }
    if (rc == 0) {
        /* As in v1 (sbx_cgroup.c): all jobs share this group's weight; 4 tasks per CPU. */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        long weight = 100 * 4 * (cpus > 0 ? cpus : 1);
        char w[24];
        snprintf(w, sizeof w, "%ld", weight > 10000 ? 10000 : weight);
        size_t at = strlen(step);
        snprintf(step + at, sizeof step - at, "/cpu.weight");
        rc = sbx_cg2_write(step, w);
        step[at] = '\0';
    }
    if (rc == 0) {
        size_t at = strlen(step);
        snprintf(step + at, sizeof step - at, "/memory.swap.max");
        sbx_cg2_swap = access(step, F_OK) == 0;
        char dir[1000];
        snprintf(dir, sizeof dir, "%s/%s", base, parent);
        rc = sbx_cg2_enable(dir, step, sizeof step);
    }
    if (rc < 0) {
        snprintf(why, whylen, SBX_PREFIX "cgroup %s: %s", step, strerrordesc_np(errno));
        return -1;
    }
    snprintf(sbx_cg2_own, sizeof sbx_cg2_own, "%s%s%s", base[0] ? base + 1 : "",
             base[0] ? "/" : "", parent);
    return 0;
}

static int sbx_cg2_ready(const char *parent, char *why, size_t whylen)
{
    pthread_mutex_lock(&sbx_cg2_lock);
    int rc = sbx_cg2_own[0] ? 0 : sbx_cg2_setup(parent, why, whylen);
    pthread_mutex_unlock(&sbx_cg2_lock);
    return rc;
}

/* The job's cgroup described with its limits, or with none (l NULL: sbx_cg2_ahead). */
static struct cgroup *sbx_cg2_describe(const char *name, const sbx_limits *l)
{
    struct cgroup *cg = cgroup_new_cgroup(name);
    if (!cg)
        return NULL;
    struct cgroup_controller *mem = cgroup_add_controller(cg, "memory");
    struct cgroup_controller *pids = cgroup_add_controller(cg, "pids");
    struct cgroup_controller *cpu = cgroup_add_controller(cg, "cpu");
    if (!mem || !pids || !cpu) {
        cgroup_free(&cg);
        return NULL;
    }
    if (!l)
        return cg;
    if (cgroup_add_value_uint64(mem, "memory.max", (uint64_t)l->memory_mb << 20) ||
        (sbx_cg2_swap && cgroup_add_value_uint64(mem, "memory.swap.max", 0)) ||
        cgroup_add_value_uint64(pids, "pids.max", l->pids) ||
        cgroup_add_value_string(cpu, "cpu.max", "100000 100000")) {
        cgroup_free(&cg);
        return NULL;
    }
    return cg;
}

/* Zygote mode: the next job's cgroup, made by its pre-forked supervisor (sbx_cgroup_ahead),
 * without limits, as v1 does; create then writes the job's limits into it. */
static char sbx_cg2_ahead_name[1200];

static int sbx_cg2_ahead(const char *parent, char *why, size_t whylen)
{
    if (sbx_cg2_ready(parent, why, whylen) < 0)
        return -1;
    char name[1200];
    snprintf(name, sizeof name, "%s/job-%d-%u", sbx_cg2_own, (int)sbx_pid(),
             atomic_fetch_add(&sbx_cg2_seq, 1));
    return sbx_cgroup_create_ahead(sbx_cg2_describe(name, NULL), name, sbx_cg2_ahead_name,
                                   sizeof sbx_cg2_ahead_name, why, whylen);
}

static int sbx_cg2_ahead_drop(void)
{
    char dir[1300];
    snprintf(dir, sizeof dir, SBX_CG2_MOUNT "/%s", sbx_cg2_ahead_name);
    int rc = sbx_cg2_ahead_name[0] && sbx_cgroup_rmdir_retry(dir) < 0 && errno != ENOENT ? -1 : 0;
    sbx_cg2_ahead_name[0] = '\0';
    return rc;
}

static int sbx_cg2_create(sbx_proc *p)
{
    char why[256];
    if (sbx_cg2_ready(p->cgroup_parent, why, sizeof why) < 0)
        return sbx_fail(p, 0, "%s", why + strlen(SBX_PREFIX));
    sbx_cg2 *g = calloc(1, sizeof *g);
    if (!g)
        return sbx_fail(p, ENOMEM, "cgroup");
    g->stat_fd = g->dir_fd = -1;
    p->cg = g;
    /* The cgroup made ahead, if any: it is under sbx_cg2_own, which is fixed per process. */
    bool ahead = sbx_cg2_ahead_name[0] != '\0';
    if (ahead)
        snprintf(g->name, sizeof g->name, "%s", sbx_cg2_ahead_name);
    else
        snprintf(g->name, sizeof g->name, "%s/job-%d-%u", sbx_cg2_own, (int)sbx_pid(),
                 atomic_fetch_add(&sbx_cg2_seq, 1));
    sbx_cg2_ahead_name[0] = '\0';
    snprintf(g->dir, sizeof g->dir, SBX_CG2_MOUNT "/%s", g->name);
    if (!(g->cg = sbx_cg2_describe(g->name, &p->limits)))
        return sbx_fail(p, ENOMEM, "cgroup describe %s", g->name);
    int rc = ahead ? cgroup_modify_cgroup(g->cg) : cgroup_create_cgroup(g->cg, SBX_CG_KEEP_OWNER);
    if (rc != 0)
        return sbx_fail(p, 0, "cgroup %s %s: %s", ahead ? "limit" : "create", g->name,
                        sbx_cgroup_strerror(rc));
    char path[1400];
    snprintf(path, sizeof path, "%s/io.max", g->dir);
    if (access(path, F_OK) == 0 && sbx_iodev_apply(p, g->dir, true) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/cpu.stat", g->dir);
    if ((g->stat_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return sbx_fail(p, errno, "cgroup open %s", path);
    if ((g->dir_fd = open(g->dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return sbx_fail(p, errno, "cgroup open %s", g->dir);
    return 0;
}

static int sbx_cg2_clone_fd(sbx_proc *p)
{
    return ((sbx_cg2 *)p->cg)->dir_fd;
}

/* Only where clone3 is missing (sbx_spawn.c). One write of the pid: libcgroup's
 * cgroup_attach_task_pid writes it once per controller (three times), each write taking the
 * lock that an init born in its cgroup never takes. */
static int sbx_cg2_attach(sbx_proc *p)
{
    sbx_cg2 *g = p->cg;
    char path[1400], pid[16];
    snprintf(path, sizeof path, "%s/cgroup.procs", g->dir);
    snprintf(pid, sizeof pid, "%d", (int)p->pid);
    if (sbx_cg2_write(path, pid) < 0)
        return sbx_fail(p, errno, "cgroup attach init to %s", g->name);
    return 0;
}

/* The number after "key " in a flat-keyed file. */
static int sbx_cg2_key(const char *text, const char *key, uint64_t *v)
{
    size_t k = strlen(key);
    for (const char *s = text; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
        if (strncmp(s, key, k) == 0 && s[k] == ' ') {
            *v = strtoull(s + k + 1, NULL, 10);
            return 0;
        }
    return -1;
}

static int sbx_cg2_cpu_ns(sbx_proc *p, uint64_t *ns)
{
    sbx_cg2 *g = p->cg;
    char buf[1024];
    ssize_t n = g->stat_fd >= 0 ? pread(g->stat_fd, buf, sizeof buf - 1, 0) : -1;
    uint64_t us = 0;
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    if (sbx_cg2_key(buf, "usage_usec", &us) < 0)
        return -1;
    *ns = us * 1000u;
    return 0;
}

static int sbx_cg2_account(sbx_proc *p)
{
    sbx_cg2 *g = p->cg;
    char path[1400], buf[1024];
    snprintf(path, sizeof path, "%s/memory.events", g->dir);
    if (sbx_cg2_read(path, buf, sizeof buf) < 0 ||
        sbx_cg2_key(buf, "oom_kill", &p->cg_oom_kills) < 0 || sbx_cg2_cpu_ns(p, &p->cg_cpu_ns) < 0)
        return sbx_fail(p, errno, "cgroup read usage of %s", g->name);
    snprintf(path, sizeof path, "%s/memory.peak", g->dir);
    p->cg_peak_bytes = sbx_cg2_read(path, buf, sizeof buf) == 0 ? strtoull(buf, NULL, 10) : 0;
    p->cg_have = true;
    return 0;
}

/* cgroup.kill where the kernel has it; otherwise SIGKILL to each listed pid. */
static int sbx_cg2_empty(sbx_cg2 *g)
{
    char path[1400], buf[4096];
    snprintf(path, sizeof path, "%s/cgroup.kill", g->dir);
    bool has_kill = sbx_cg2_write(path, "1") == 0;
    snprintf(path, sizeof path, "%s/cgroup.procs", g->dir);
    for (int round = 0; round < 200; round++) {
        if (sbx_cg2_read(path, buf, sizeof buf) < 0)
            return -1;
        if (!buf[0])
            return 0;
        for (char *s = buf; !has_kill && *s;) {
            char *end;
            long pid = strtol(s, &end, 10);
            if (end == s)
                break;
            if (pid > 0)
                kill((pid_t)pid, SIGKILL);
            s = end + (*end == '\n');
        }
        sbx_cgroup_sleep_ms(5);
    }
    return -1;
}

/* libcgroup 2.0.2 is not used for the removal: on a v2 hierarchy cgroup_delete_cgroup_ext()
 * removes the one directory once per controller and fails with ENOENT on the second. */
static int sbx_cg2_destroy(sbx_proc *p)
{
    sbx_cg2 *g = p->cg;
    int rc = 0;
    if (g->stat_fd >= 0)
        close(g->stat_fd);
    if (g->dir_fd >= 0)
        close(g->dir_fd);
    if (g->cg) {
        if (sbx_cg2_empty(g) < 0)
            rc = sbx_fail(p, 0, "cgroup %s: processes left after kill", g->name);
        if (sbx_cgroup_rmdir_retry(g->dir) < 0 && rc == 0)
            rc = sbx_fail(p, errno, "cgroup remove %s", g->name);
        cgroup_free(&g->cg);
    }
    free(g);
    p->cg = NULL;
    return rc;
}

static int sbx_cg2_probe(const char *parent, char *why, size_t whylen)
{
    if (sbx_cg2_ready(parent, why, whylen) < 0)
        return -1;
    sbx_limits l;
    sbx_limits_default(&l);
    char name[1200], dir[1300];
    snprintf(name, sizeof name, "%s/selfcheck-%d", sbx_cg2_own, (int)getpid());
    snprintf(dir, sizeof dir, SBX_CG2_MOUNT "/%s", name);
    struct cgroup *cg = sbx_cg2_describe(name, &l);
    int rc = cg ? cgroup_create_cgroup(cg, SBX_CG_KEEP_OWNER) : ECGFAIL;
    cgroup_free(&cg);
    if (rc != 0) {
        snprintf(why, whylen, SBX_PREFIX "cgroup create %s: %s", name, sbx_cgroup_strerror(rc));
        return -1;
    }
    if (sbx_cgroup_rmdir_retry(dir) < 0) {
        snprintf(why, whylen, SBX_PREFIX "cgroup remove %s: %s", name, strerrordesc_np(errno));
        return -1;
    }
    return 0;
}

static int sbx_cg2_sweep(const char *parent)
{
    char why[256], dir[1400];
    if (sbx_cg2_ready(parent, why, sizeof why) < 0)
        return -1;
    snprintf(dir, sizeof dir, SBX_CG2_MOUNT "/%s", sbx_cg2_own);
    return sbx_cgroup_sweep_dir(dir);
}

const sbx_cgroup_ops sbx_cgroup_v2 = {
    .name = "cgroup-v2",
    .create = sbx_cg2_create,
    .attach = sbx_cg2_attach,
    .clone_fd = sbx_cg2_clone_fd,
    .cpu_ns = sbx_cg2_cpu_ns,
    .account = sbx_cg2_account,
    .destroy = sbx_cg2_destroy,
    .probe = sbx_cg2_probe,
    .sweep = sbx_cg2_sweep,
    .place = sbx_cg2_ready,
    .ahead = sbx_cg2_ahead,
    .ahead_drop = sbx_cg2_ahead_drop,
};
