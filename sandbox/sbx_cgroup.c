/* sbx_cgroup.c: cgroup v1 backend — memory (+memsw), pids, cpu, cpuacct (and blkio) hierarchies.
 *
 * Through libcgroup: the job's cgroup <parent>/job-<worker pid>-<n> is created in the four
 * hierarchies with its limits in one cgroup_create_cgroup() (values are written in the
 * order added: memory.limit_in_bytes before memory.memsw.limit_in_bytes, which must not be
 * below it), figures read with cgroup_read_value_*(), and the cgroup removed with
 * cgroup_delete_cgroup_ext().
 * The init joins the cgroup itself, by writing "0" to each hierarchy's `tasks` file through a
 * descriptor the parent opened (sbx_cg1_join), rather than the parent writing its pid to
 * cgroup.procs as cgroup_attach_task_pid() does: a pid, or a whole thread group, makes the
 * kernel take cgroup_threadgroup_rwsem for writing, and that waits for an RCU grace period —
 * measured 6-15 ms per job, the largest single cost of a trivial job. A single thread moving
 * itself skips that lock (kernel/cgroup/cgroup.c, cgroup_procs_write_start: "If we migrate a
 * single thread ... we can skip the global lock"). The init is one thread (clone without
 * CLONE_THREAD), so moving the thread moves the process; its children are born inside.
 *   memory   limit_in_bytes = memsw.limit_in_bytes = memory_mb: no swap beyond the limit;
 *            where memsw is absent (swapaccount=0) swappiness 0 instead. Peak:
 *            max_usage_in_bytes; OOM kills: the oom_kill line of memory.oom_control.
 *   pids     pids.max = pids (processes and threads).
 *   cpu      cfs_quota_us = cfs_period_us: one CPU at most.
 *   cpuacct  usage (ns) for the job's CPU time; its file is kept open, because the parent
 *            polls it while the job runs and a pread() is all that costs.
 *   blkio    where mounted and writable: blkio.throttle.{read,write}_{bps,iops}_device on
 *            the disks of /usr and the work root (sbx_iodev.c). v1 throttles reads and direct
 *            or synchronous writes only; buffered writes are flushed by writeback outside the
 *            job's cgroup.
 * The parent's cpu.shares is raised once per process to 1024 x 4 per online CPU: all jobs sit
 * in that one group, which otherwise weighs as much as a single host task, so that under
 * load every job would crawl (measured: a trivial job's wall time doubled at load 10).
 * v1 has no cgroup.kill: at the end every pid still listed is SIGKILLed (normally none: the
 * pid namespace died with the init), bounded retries, then the directories are removed;
 * rmdir may briefly say EBUSY while exiting tasks leave.
 */
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
#include <time.h>
#include <unistd.h>

/* The hierarchies a job's cgroup lives in (cpu and cpuacct may be one, co-mounted). */
enum { SBX_CG1_MEMORY, SBX_CG1_PIDS, SBX_CG1_CPU, SBX_CG1_CPUACCT, SBX_CG1_BLKIO, SBX_CG1_NCTL };
static const char *const sbx_cg1_ctl[SBX_CG1_NCTL] = {"memory", "pids", "cpu", "cpuacct",
                                                      "blkio"};

typedef struct {
    struct cgroup *cg;
    char name[192];
    int usage_fd;                   /* cpuacct.usage */
    int join_fd[SBX_CG1_NCTL];      /* <hierarchy>/<name>/tasks, for the init to join; or -1 */
} sbx_cg1;

static atomic_uint sbx_cg1_seq;
static pthread_once_t sbx_cg1_once = PTHREAD_ONCE_INIT;
static char sbx_cg1_parent[128];
static int sbx_cg1_parent_rc;
static char *sbx_cg1_mount[SBX_CG1_NCTL]; /* mount point per controller; blkio's may be NULL */
static bool sbx_cg1_first[SBX_CG1_NCTL];  /* not co-mounted with an earlier one: join it */
static bool sbx_cg1_memsw;                /* memory.memsw.* exists (swap accounting on) */

/* Mount points once per process, not per job: the job path (create, usage file, join) and
 * the sweep all read them from here. */
static int sbx_cg1_mounts(void)
{
    for (int i = 0; i < SBX_CG1_NCTL; i++) {
        int rc = cgroup_get_subsys_mount_point(sbx_cg1_ctl[i], &sbx_cg1_mount[i]);
        if (i == SBX_CG1_BLKIO &&
            (rc != 0 || !sbx_cg1_mount[i] || access(sbx_cg1_mount[i], W_OK) < 0)) {
            sbx_cg1_mount[i] = NULL; /* optional: absent or read-only, no I/O limits */
            continue;
        }
        if (rc != 0 || !sbx_cg1_mount[i])
            return rc ? rc : ECGFAIL;
        sbx_cg1_first[i] = true;
        for (int j = 0; j < i; j++)
            if (sbx_cg1_mount[j] && strcmp(sbx_cg1_mount[j], sbx_cg1_mount[i]) == 0)
                sbx_cg1_first[i] = false;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/memory.memsw.limit_in_bytes", sbx_cg1_mount[SBX_CG1_MEMORY]);
    sbx_cg1_memsw = access(path, F_OK) == 0;
    return 0;
}

static pthread_once_t sbx_cg1_mounts_done = PTHREAD_ONCE_INIT;
static int sbx_cg1_mounts_rc;
static void sbx_cg1_mounts_run(void) { sbx_cg1_mounts_rc = sbx_cg1_mounts(); }
static int sbx_cg1_mounts_once(void)
{
    pthread_once(&sbx_cg1_mounts_done, sbx_cg1_mounts_run);
    return sbx_cg1_mounts_rc;
}

static void sbx_cg1_parent_setup(void)
{
    if ((sbx_cg1_parent_rc = sbx_cg1_mounts_once()) != 0)
        return;
    struct cgroup *cg = cgroup_new_cgroup(sbx_cg1_parent);
    struct cgroup_controller *cpu = cg ? cgroup_add_controller(cg, "cpu") : NULL;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t shares = 1024u * 4u * (uint64_t)(cpus > 0 ? cpus : 1);
    bool described = cpu && cgroup_add_value_uint64(cpu, "cpu.shares", shares) == 0;
    sbx_cg1_parent_rc = described ? cgroup_create_cgroup(cg, SBX_CG_KEEP_OWNER) : ECGFAIL;
    cgroup_free(&cg);
}

static int sbx_cg1_fail(sbx_proc *p, const char *what, const char *name, int rc)
{
    return sbx_fail(p, 0, "cgroup %s %s: %s", what, name, sbx_cgroup_strerror(rc));
}

/* The job's cgroup described with its limits, or with none (l NULL: sbx_cg1_ahead). */
static struct cgroup *sbx_cg1_describe(const char *name, const sbx_limits *l)
{
    struct cgroup *cg = cgroup_new_cgroup(name);
    if (!cg)
        return NULL;
    struct cgroup_controller *mem = cgroup_add_controller(cg, "memory");
    struct cgroup_controller *pids = cgroup_add_controller(cg, "pids");
    struct cgroup_controller *cpu = cgroup_add_controller(cg, "cpu");
    struct cgroup_controller *acct = cgroup_add_controller(cg, "cpuacct");
    bool no_blkio = sbx_cg1_mount[SBX_CG1_BLKIO] && !cgroup_add_controller(cg, "blkio");
    if (!mem || !pids || !cpu || !acct || no_blkio) {
        cgroup_free(&cg);
        return NULL;
    }
    if (!l)
        return cg;
    uint64_t bytes = (uint64_t)l->memory_mb << 20;
    if (cgroup_add_value_uint64(mem, "memory.limit_in_bytes", bytes) ||
        (sbx_cg1_memsw ? cgroup_add_value_uint64(mem, "memory.memsw.limit_in_bytes", bytes)
                             : cgroup_add_value_uint64(mem, "memory.swappiness", 0)) ||
        cgroup_add_value_uint64(pids, "pids.max", l->pids) ||
        cgroup_add_value_uint64(cpu, "cpu.cfs_period_us", 100000) ||
        cgroup_add_value_int64(cpu, "cpu.cfs_quota_us", 100000)) {
        cgroup_free(&cg);
        return NULL;
    }
    return cg;
}

static int sbx_cg1_open_usage(sbx_proc *p, sbx_cg1 *g)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/cpuacct.usage", sbx_cg1_mount[SBX_CG1_CPUACCT], g->name);
    g->usage_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (g->usage_fd < 0)
        return sbx_fail(p, errno, "cgroup open %s", path);
    return 0;
}

static int sbx_cg1_open_join(sbx_proc *p, sbx_cg1 *g)
{
    char path[PATH_MAX];
    for (int i = 0; i < SBX_CG1_NCTL; i++) {
        if (!sbx_cg1_first[i])
            continue;
        snprintf(path, sizeof path, "%s/%s/tasks", sbx_cg1_mount[i], g->name);
        if ((g->join_fd[i] = open(path, O_WRONLY | O_CLOEXEC)) < 0)
            return sbx_fail(p, errno, "cgroup open %s", path);
    }
    return 0;
}

/* Zygote mode: the next job's cgroup, made by its pre-forked supervisor (sbx_cgroup_ahead).
 * Made without limits, because v1 refuses memory.limit_in_bytes above memsw.limit_in_bytes:
 * the job's values are then written in create's order, as onto a fresh cgroup. */
static char sbx_cg1_ahead_name[192];

static int sbx_cg1_parent_ready(const char *parent)
{
    if (!sbx_cg1_parent[0])
        snprintf(sbx_cg1_parent, sizeof sbx_cg1_parent, "%s", parent);
    pthread_once(&sbx_cg1_once, sbx_cg1_parent_setup);
    return sbx_cg1_parent_rc;
}

static int sbx_cg1_ahead(const char *parent, char *why, size_t whylen)
{
    int rc = sbx_cg1_parent_ready(parent);
    if (rc != 0) {
        snprintf(why, whylen, SBX_PREFIX "cgroup create parent %s: %s", parent,
                 sbx_cgroup_strerror(rc));
        return -1;
    }
    char name[sizeof sbx_cg1_ahead_name];
    snprintf(name, sizeof name, "%s/job-%d-%u", parent, (int)sbx_pid(),
             atomic_fetch_add(&sbx_cg1_seq, 1));
    return sbx_cgroup_create_ahead(sbx_cg1_describe(name, NULL), name, sbx_cg1_ahead_name,
                                   sizeof sbx_cg1_ahead_name, why, whylen);
}

static int sbx_cg1_ahead_drop(void)
{
    int rc = 0;
    for (int i = 0; sbx_cg1_ahead_name[0] && i < SBX_CG1_NCTL; i++) {
        char dir[PATH_MAX];
        if (!sbx_cg1_first[i])
            continue;
        snprintf(dir, sizeof dir, "%s/%s", sbx_cg1_mount[i], sbx_cg1_ahead_name);
        if (sbx_cgroup_rmdir_retry(dir) < 0 && errno != ENOENT)
            rc = -1;
    }
    sbx_cg1_ahead_name[0] = '\0';
    return rc;
}

/* The job's cgroup: the one made ahead under the same parent if there is one (it only gets
 * the limits), else a new one. */
static int sbx_cg1_make(sbx_proc *p, sbx_cg1 *g)
{
    size_t plen = strlen(p->cgroup_parent);
    bool ahead = strncmp(sbx_cg1_ahead_name, p->cgroup_parent, plen) == 0 &&
                 strncmp(sbx_cg1_ahead_name + plen, "/job-", 5) == 0;
    if (ahead)
        snprintf(g->name, sizeof g->name, "%s", sbx_cg1_ahead_name);
    else
        snprintf(g->name, sizeof g->name, "%s/job-%d-%u", p->cgroup_parent, (int)sbx_pid(),
                 atomic_fetch_add(&sbx_cg1_seq, 1));
    sbx_cg1_ahead_name[0] = '\0';
    g->cg = sbx_cg1_describe(g->name, &p->limits);
    if (!g->cg)
        return sbx_fail(p, ENOMEM, "cgroup describe %s", g->name);
    int rc = ahead ? cgroup_modify_cgroup(g->cg) : cgroup_create_cgroup(g->cg, SBX_CG_KEEP_OWNER);
    if (rc != 0)
        return sbx_cg1_fail(p, ahead ? "limit" : "create", g->name, rc);
    return 0;
}

static int sbx_cg1_create(sbx_proc *p)
{
    sbx_cg1 *g = calloc(1, sizeof *g);
    if (!g)
        return sbx_fail(p, ENOMEM, "cgroup");
    g->usage_fd = -1;
    for (int i = 0; i < SBX_CG1_NCTL; i++)
        g->join_fd[i] = -1;
    p->cg = g;
    if (sbx_cg1_parent_ready(p->cgroup_parent) != 0)
        return sbx_cg1_fail(p, "create parent", sbx_cg1_parent, sbx_cg1_parent_rc);
    if (sbx_cg1_make(p, g) < 0)
        return -1;
    if (sbx_cg1_mount[SBX_CG1_BLKIO]) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", sbx_cg1_mount[SBX_CG1_BLKIO], g->name);
        if (sbx_iodev_apply(p, dir, false) < 0)
            return -1;
    }
    return sbx_cg1_open_usage(p, g) < 0 ? -1 : sbx_cg1_open_join(p, g);
}

/* In the init, before anything else: see the top of this file. */
static int sbx_cg1_join(sbx_proc *p)
{
    sbx_cg1 *g = p->cg;
    for (int i = 0; i < SBX_CG1_NCTL; i++) {
        if (g->join_fd[i] < 0)
            continue;
        if (write(g->join_fd[i], "0", 1) != 1)
            return sbx_child_fail(p, errno, "cgroup join ", g->name, " (", sbx_cg1_ctl[i], ")",
                                  NULL);
        close(g->join_fd[i]);
        g->join_fd[i] = -1;
    }
    return 0;
}

/* The parent's part: the init has its own copies of the join descriptors. */
static void sbx_cg1_close_join(sbx_cg1 *g)
{
    for (int i = 0; i < SBX_CG1_NCTL; i++)
        if (g->join_fd[i] >= 0) {
            close(g->join_fd[i]);
            g->join_fd[i] = -1;
        }
}

static int sbx_cg1_attach(sbx_proc *p)
{
    sbx_cg1_close_join(p->cg);
    return 0;
}

/* The number after `key` in a controller file ("oom_kill 3"), or its first number. */
static int sbx_cg1_read(const char *name, const char *controller, const char *file,
                        const char *key, uint64_t *v)
{
    void *h = NULL;
    char line[256];
    size_t klen = key ? strlen(key) : 0;
    int rc = cgroup_read_value_begin(controller, name, (char *)file, &h, line, sizeof line);
    for (int i = 0; rc == 0 && i < 64; i++) {
        if (!key || (strncmp(line, key, klen) == 0 && line[klen] == ' ')) {
            *v = strtoull(line + (key ? klen + 1 : 0), NULL, 10);
            break;
        }
        rc = cgroup_read_value_next(&h, line, sizeof line);
    }
    if (h)
        cgroup_read_value_end(&h);
    return rc == 0 ? 0 : -1;
}

static int sbx_cg1_cpu_ns(sbx_proc *p, uint64_t *ns)
{
    sbx_cg1 *g = p->cg;
    char buf[32];
    ssize_t n = g->usage_fd >= 0 ? pread(g->usage_fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    *ns = strtoull(buf, NULL, 10);
    return 0;
}

static int sbx_cg1_account(sbx_proc *p)
{
    sbx_cg1 *g = p->cg;
    if (sbx_cg1_read(g->name, "memory", "memory.max_usage_in_bytes", NULL, &p->cg_peak_bytes) ||
        sbx_cg1_read(g->name, "memory", "memory.oom_control", "oom_kill", &p->cg_oom_kills) ||
        sbx_cg1_cpu_ns(p, &p->cg_cpu_ns) < 0)
        return sbx_fail(p, errno, "cgroup read usage of %s", g->name);
    p->cg_have = true;
    return 0;
}

/* SIGKILLs whatever is still listed, until nothing is; 0 once empty. */
static int sbx_cg1_empty(sbx_cg1 *g)
{
    for (int round = 0; round < 200; round++) {
        pid_t *pids = NULL;
        int n = 0;
        if (cgroup_get_procs(g->name, "pids", &pids, &n) != 0) {
            free(pids);
            return -1;
        }
        for (int i = 0; i < n; i++)
            kill(pids[i], SIGKILL);
        free(pids);
        if (n == 0)
            return 0;
        sbx_cgroup_sleep_ms(5);
    }
    return -1;
}

static int sbx_cg1_destroy(sbx_proc *p)
{
    sbx_cg1 *g = p->cg;
    int rc = 0;
    if (g->usage_fd >= 0)
        close(g->usage_fd);
    sbx_cg1_close_join(g);
    if (g->cg) {
        if (sbx_cg1_empty(g) < 0)
            rc = sbx_fail(p, 0, "cgroup %s: processes left after SIGKILL", g->name);
        int drc = sbx_cgroup_delete_retry(g->cg, CGFLAG_DELETE_EMPTY_ONLY);
        if (drc != 0 && rc == 0)
            rc = sbx_cg1_fail(p, "remove", g->name, drc);
        cgroup_free(&g->cg);
    }
    free(g);
    p->cg = NULL;
    return rc;
}

static int sbx_cg1_probe(const char *parent, char *why, size_t whylen)
{
    sbx_limits l;
    sbx_limits_default(&l);
    char name[192];
    snprintf(name, sizeof name, "%s/selfcheck-%d", parent, (int)getpid());
    int rc = sbx_cg1_mounts_once();
    if (rc != 0) {
        snprintf(why, whylen, SBX_PREFIX "cgroup mount points: %s", sbx_cgroup_strerror(rc));
        return -1;
    }
    struct cgroup *cg = sbx_cg1_describe(name, &l);
    return sbx_cgroup_probe_cycle(cg, name, why, whylen);
}

/* Every hierarchy, not just memory: a removal that failed half-way leaves some of them. */
static int sbx_cg1_sweep(const char *parent)
{
    char dir[PATH_MAX];
    int removed = 0;
    if (sbx_cg1_mounts_once() != 0)
        return -1;
    for (int i = 0; i < SBX_CG1_NCTL; i++) {
        if (!sbx_cg1_first[i])
            continue;
        snprintf(dir, sizeof dir, "%s/%s", sbx_cg1_mount[i], parent);
        int n = sbx_cgroup_sweep_dir(dir);
        removed += n > 0 ? n : 0;
    }
    return removed;
}

const sbx_cgroup_ops sbx_cgroup_v1 = {
    .name = "cgroup-v1",
    .create = sbx_cg1_create,
    .join = sbx_cg1_join,
    .attach = sbx_cg1_attach,
    .cpu_ns = sbx_cg1_cpu_ns,
    .account = sbx_cg1_account,
    .destroy = sbx_cg1_destroy,
    .probe = sbx_cg1_probe,
    .sweep = sbx_cg1_sweep,
    .ahead = sbx_cg1_ahead,
    .ahead_drop = sbx_cg1_ahead_drop,
};
