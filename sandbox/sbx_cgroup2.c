/* sbx_cgroup2.c: cgroup v2 backend — the unified hierarchy of most production hosts.
 *
 * NOT TESTED on a v2 host: this development VM is v1 (its unified mount has no controllers).
 * Written against the kernel's Documentation/admin-guide/cgroup-v2.rst and libcgroup 2.0.2.
 *
 * Where: under the worker's own cgroup (from /proc/self/cgroup, "0::/path"), which is what a
 * delegated subtree gives us (systemd Delegate=yes, a container's cgroup namespace):
 * <own>/<parent>/job-<worker pid>-<n>. The "no internal processes" rule forbids enabling
 * controllers for the children of a cgroup that has processes of its own, so at the first
 * job, if <own> holds processes and is not the root, the worker moves itself into the leaf
 * <own>/codeq-worker (as nsjail does). Then "+memory +pids +cpu" is written to the
 * cgroup.subtree_control of <own> and of <own>/<parent> — plain file writes: libcgroup 2.0.2
 * has no call for it.
 * Per job, through libcgroup (create, attach, delete): memory.max = memory_mb,
 * memory.swap.max = 0 (where swap accounting exists; without it there is no swap to use
 * beyond what the host's own swap allows — run such hosts without swap), pids.max = pids, cpu.max = "100000 100000" (one CPU). Figures:
 * memory.peak (kernel >= 5.19; without it max RSS falls back to rusage), cpu.stat
 * usage_usec, and the oom_kill line of memory.events. The end: cgroup.kill (kernel >= 5.14)
 * kills every process at once, then rmdir, retried while exiting tasks leave.
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SBX_CG2_MOUNT "/sys/fs/cgroup"

typedef struct {
    struct cgroup *cg;
    char name[1200];       /* relative to the mount: libcgroup's name */
    char dir[1300];        /* absolute */
    int stat_fd;           /* cpu.stat */
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
    size_t len = strlen(line), k = strlen("codeq-worker");
    if (len >= k && strcmp(line + len - k, "codeq-worker") == 0 && (len == k || line[len - k - 1] == '/'))
        line[len == k ? 0 : len - k - 1] = '\0';
    snprintf(own, n, "%s", line);
    return 0;
}

/* Moves the whole worker into the leaf <own>/codeq-worker ("no internal processes"). */
static int sbx_cg2_leave_own(const char *own, char *step, size_t n)
{
    char pid[32];
    snprintf(step, n, SBX_CG2_MOUNT "/%s/codeq-worker", own);
    if (mkdir(step, 0755) < 0 && errno != EEXIST)
        return -1;
    snprintf(step + strlen(step), n - strlen(step), "/cgroup.procs");
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    return sbx_cg2_write(step, pid);
}

/* Makes <own>/<parent> a place where job cgroups get memory, pids and cpu; once. */
static int sbx_cg2_setup(const char *parent, char *why, size_t whylen)
{
    static const char ctl[] = "+memory +pids +cpu";
    char own[800], step[2048];
    if (sbx_cg2_self(own, sizeof own) < 0) {
        snprintf(why, whylen, SBX_PREFIX "cgroup: /proc/self/cgroup: %s", strerrordesc_np(errno));
        return -1;
    }
    const char *sep = own[0] ? "/" : "";
    snprintf(step, sizeof step, SBX_CG2_MOUNT "%s%s/cgroup.subtree_control", sep, own);
    int rc = sbx_cg2_write(step, ctl);
    if (rc < 0 && errno == EBUSY && own[0]) {
        rc = sbx_cg2_leave_own(own, step, sizeof step);
        if (rc == 0) {
            snprintf(step, sizeof step, SBX_CG2_MOUNT "/%s/cgroup.subtree_control", own);
            rc = sbx_cg2_write(step, ctl);
        }
    }
    if (rc == 0) {
        snprintf(step, sizeof step, SBX_CG2_MOUNT "%s%s/%s", sep, own, parent);
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
        snprintf(step + at, sizeof step - at, "/cgroup.subtree_control");
        rc = sbx_cg2_write(step, ctl);
    }
    if (rc < 0) {
        snprintf(why, whylen, SBX_PREFIX "cgroup %s: %s", step, strerrordesc_np(errno));
        return -1;
    }
    snprintf(sbx_cg2_own, sizeof sbx_cg2_own, "%s%s%s", own, sep, parent);
    return 0;
}

static int sbx_cg2_ready(const char *parent, char *why, size_t whylen)
{
    pthread_mutex_lock(&sbx_cg2_lock);
    int rc = sbx_cg2_own[0] ? 0 : sbx_cg2_setup(parent, why, whylen);
    pthread_mutex_unlock(&sbx_cg2_lock);
    return rc;
}

static struct cgroup *sbx_cg2_describe(const char *name, const sbx_limits *l)
{
    struct cgroup *cg = cgroup_new_cgroup(name);
    if (!cg)
        return NULL;
    struct cgroup_controller *mem = cgroup_add_controller(cg, "memory");
    struct cgroup_controller *pids = cgroup_add_controller(cg, "pids");
    struct cgroup_controller *cpu = cgroup_add_controller(cg, "cpu");
    if (!mem || !pids || !cpu ||
        cgroup_add_value_uint64(mem, "memory.max", (uint64_t)l->memory_mb << 20) ||
        (sbx_cg2_swap && cgroup_add_value_uint64(mem, "memory.swap.max", 0)) ||
        cgroup_add_value_uint64(pids, "pids.max", l->pids) ||
        cgroup_add_value_string(cpu, "cpu.max", "100000 100000")) {
        cgroup_free(&cg);
        return NULL;
    }
    return cg;
}

static int sbx_cg2_create(sbx_proc *p)
{
    char why[256];
    if (sbx_cg2_ready(p->cgroup_parent, why, sizeof why) < 0)
        return sbx_fail(p, 0, "%s", why + strlen(SBX_PREFIX));
    sbx_cg2 *g = calloc(1, sizeof *g);
    if (!g)
        return sbx_fail(p, ENOMEM, "cgroup");
    g->stat_fd = -1;
    p->cg = g;
    snprintf(g->name, sizeof g->name, "%s/job-%d-%u", sbx_cg2_own, (int)getpid(),
             atomic_fetch_add(&sbx_cg2_seq, 1));
    snprintf(g->dir, sizeof g->dir, SBX_CG2_MOUNT "/%s", g->name);
    if (!(g->cg = sbx_cg2_describe(g->name, &p->limits)))
        return sbx_fail(p, ENOMEM, "cgroup describe %s", g->name);
    int rc = cgroup_create_cgroup(g->cg, SBX_CG_KEEP_OWNER);
    if (rc != 0)
        return sbx_fail(p, 0, "cgroup create %s: %s", g->name, sbx_cgroup_strerror(rc));
    char path[1400];
    snprintf(path, sizeof path, "%s/cpu.stat", g->dir);
    if ((g->stat_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return sbx_fail(p, errno, "cgroup open %s", path);
    return 0;
}

static int sbx_cg2_attach(sbx_proc *p)
{
    sbx_cg2 *g = p->cg;
    int rc = cgroup_attach_task_pid(g->cg, p->pid);
    if (rc != 0)
        return sbx_fail(p, 0, "cgroup attach init to %s: %s", g->name, sbx_cgroup_strerror(rc));
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

static int sbx_cg2_destroy(sbx_proc *p)
{
    sbx_cg2 *g = p->cg;
    int rc = 0;
    if (g->stat_fd >= 0)
        close(g->stat_fd);
    if (g->cg) {
        if (sbx_cg2_empty(g) < 0)
            rc = sbx_fail(p, 0, "cgroup %s: processes left after kill", g->name);
        int drc = sbx_cgroup_delete_retry(g->cg, 0);
        if (drc != 0 && rc == 0)
            rc = sbx_fail(p, 0, "cgroup remove %s: %s", g->name, sbx_cgroup_strerror(drc));
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
    char name[1200];
    snprintf(name, sizeof name, "%s/selfcheck-%d", sbx_cg2_own, (int)getpid());
    struct cgroup *cg = sbx_cg2_describe(name, &l);
    return sbx_cgroup_probe_cycle(cg, name, why, whylen);
}

static int sbx_cg2_sweep(const char *parent)
{
    char why[256], dir[1400];
    if (sbx_cg2_ready(parent, why, sizeof why) < 0)
        return -1;
    snprintf(dir, sizeof dir, SBX_CG2_MOUNT "/%s", sbx_cg2_own);
    return sbx_cgroup_sweep_dir(dir, sbx_cg2_own);
}

const sbx_cgroup_ops sbx_cgroup_v2 = {
    .name = "cgroup-v2",
    .create = sbx_cg2_create,
    .attach = sbx_cg2_attach,
    .cpu_ns = sbx_cg2_cpu_ns,
    .account = sbx_cg2_account,
    .destroy = sbx_cg2_destroy,
    .probe = sbx_cg2_probe,
    .sweep = sbx_cg2_sweep,
};
