/* sbx_cgroup_layer.c: the cgroup layer — one backend for the process, chosen at first use.
 *
 * cgroup v1 (this development VM: memory, pids, cpu, cpuacct hierarchies) and v2 (the
 * unified hierarchy of most production hosts) need different files but the same steps, so
 * each is a backend with one interface (sbx_int.h: sbx_cgroup_ops) in its own file, like
 * nsjail's cgroup.cc / cgroup2.cc. A host whose /sys/fs/cgroup is cgroup2 gets v2; one with
 * a v1 memory hierarchy gets v1 (a hybrid host's empty unified mount is not used).
 * The job's cgroup is made before the clone, the init is in it before it is let go (so
 * nothing of the job ever runs outside it): v1's init joins by itself (see sbx_cgroup.c for
 * why), v2's is born in it (clone3, sbx_spawn.c; attached by the parent where clone3 is
 * missing or predates CLONE_INTO_CGROUP), its figures are read once the init is reaped,
 * and it is emptied and removed at collect. In zygote mode the cgroup is made by the job's
 * pre-forked supervisor before the job arrives, without limits and with nothing in it
 * (sbx_cgroup_ahead); the job's limits are written into it at prepare, before the clone, so
 * it is still one new cgroup per job, limited before anything of the job runs in it. While
 * the job runs, the parent polls its CPU time and ends the job at cpu_ms: RLIMIT_CPU is per
 * process and counts whole seconds, the cgroup's total is the job's. The cgroup's quota is
 * one CPU, so the total cannot reach cpu_ms sooner than the time still left to it: the poll
 * comes every SBX_CG_POLL_MS, and sooner when the job is closer to its limit than that.
 */
#include "sbx_int.h"

#include <dirent.h>
#include <errno.h>
#include <libcgroup.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/statfs.h>
#include <fcntl.h>
#include <unistd.h>

enum { SBX_CG_POLL_MS = 100, SBX_CG_POLL_MIN_MS = 2 };

static const sbx_cgroup_ops *sbx_cg_chosen;
static char sbx_cg_why[200];
static pthread_once_t sbx_cg_once = PTHREAD_ONCE_INIT;

const char *sbx_cgroup_strerror(int rc)
{
    if (rc == ECGOTHER)
        return strerrordesc_np(cgroup_get_last_errno()) ? strerrordesc_np(cgroup_get_last_errno())
                                                         : "unknown error";
    return cgroup_strerror(rc);
}

static void sbx_cg_choose(void)
{
    struct statfs fs;
    if (statfs("/sys/fs/cgroup", &fs) < 0) {
        snprintf(sbx_cg_why, sizeof sbx_cg_why, "cgroup: statfs(/sys/fs/cgroup): %s",
                 strerrordesc_np(errno));
        return;
    }
    const sbx_cgroup_ops *ops = NULL;
    if (fs.f_type == CGROUP2_SUPER_MAGIC)
        ops = &sbx_cgroup_v2;
    else if (statfs("/sys/fs/cgroup/memory", &fs) == 0 && fs.f_type == CGROUP_SUPER_MAGIC)
        ops = &sbx_cgroup_v1;
    if (!ops) {
        snprintf(sbx_cg_why, sizeof sbx_cg_why,
                 "cgroup: neither cgroup2 at /sys/fs/cgroup nor a v1 memory hierarchy");
        return;
    }
    int rc = cgroup_init();
    if (rc != 0) {
        snprintf(sbx_cg_why, sizeof sbx_cg_why, "cgroup: cgroup_init: %s",
                 sbx_cgroup_strerror(rc));
        return;
    }
    sbx_cg_chosen = ops;
}

const sbx_cgroup_ops *sbx_cgroup_backend(char *why, size_t whylen)
{
    pthread_once(&sbx_cg_once, sbx_cg_choose);
    if (!sbx_cg_chosen)
        snprintf(why, whylen, "%s", sbx_cg_why);
    return sbx_cg_chosen;
}

static int sbx_cgroup_prepare(sbx_proc *p)
{
    if (!p->use_cgroup)
        return 0;
    char why[200];
    p->cg_ops = sbx_cgroup_backend(why, sizeof why);
    if (!p->cg_ops)
        return sbx_fail(p, 0, "%s", why);
    return p->cg_ops->create(p);
}

int sbx_cgroup_ahead(const sbx_config *c, char *why, size_t whylen)
{
    sbx_config def;
    sbx_config_default(&def);
    if (strcmp(c->profile ? c->profile : def.profile, "no-cgroup") == 0)
        return 0;
    char bad[200];
    const sbx_cgroup_ops *ops = sbx_cgroup_backend(bad, sizeof bad);
    if (!ops) {
        snprintf(why, whylen, SBX_PREFIX "%s", bad);
        return -1;
    }
    return ops->ahead ? ops->ahead(c->cgroup_parent ? c->cgroup_parent : def.cgroup_parent,
                                   why, whylen)
                      : 0;
}

int sbx_cgroup_ahead_drop(void)
{
    char why[200];
    const sbx_cgroup_ops *ops = sbx_cgroup_backend(why, sizeof why);
    return ops && ops->ahead_drop ? ops->ahead_drop() : 0;
}

int sbx_cgroup_place(sbx_proc *p)
{
    char why[300];
    if (!p->use_cgroup)
        return 0;
    const sbx_cgroup_ops *ops = sbx_cgroup_backend(why, sizeof why);
    if (!ops)
        return sbx_fail(p, 0, "%s", why);
    if (ops->place && ops->place(p->cgroup_parent, why, sizeof why) < 0)
        return sbx_fail(p, 0, "%s", why + strlen(SBX_PREFIX));
    return 0;
}

int sbx_cgroup_join(sbx_proc *p)
{
    return p->cg && p->cg_ops->join ? p->cg_ops->join(p) : 0;
}

int sbx_cgroup_clone_fd(sbx_proc *p)
{
    return p->cg && p->cg_ops->clone_fd ? p->cg_ops->clone_fd(p) : -1;
}

/* The next poll: when the job, at one CPU, could first reach cpu_ms, but at least every
 * SBX_CG_POLL_MS, and never sooner than SBX_CG_POLL_MIN_MS. */
static void sbx_cg_next_check(sbx_proc *p, uint64_t now, uint64_t used_ms)
{
    uint64_t left = p->limits.cpu_ms > used_ms ? p->limits.cpu_ms - used_ms : 0;
    uint64_t wait = left < SBX_CG_POLL_MIN_MS ? SBX_CG_POLL_MIN_MS
                    : left < SBX_CG_POLL_MS  ? left
                                             : SBX_CG_POLL_MS;
    p->cg_next_check_ms = now + wait;
}

static int sbx_cgroup_from_parent(sbx_proc *p)
{
    if (!p->cg)
        return 0;
    if (!p->res.cgroup_born && p->cg_ops->attach(p) < 0)
        return -1;
    sbx_cg_next_check(p, sbx_now_ms(), 0);
    return 0;
}

bool sbx_cgroup_cpu_over(sbx_proc *p)
{
    uint64_t now = sbx_now_ms(), ns = 0;
    if (!p->cg || !p->cg_next_check_ms || now < p->cg_next_check_ms)
        return false;
    if (p->cg_ops->cpu_ns(p, &ns) < 0) {
        sbx_cg_next_check(p, now, 0);
        return false;
    }
    uint64_t used_ms = ns / 1000000u;
    if (used_ms >= p->limits.cpu_ms)
        return true;
    sbx_cg_next_check(p, now, used_ms);
    return false;
}

static int sbx_cgroup_account(sbx_proc *p)
{
    p->cg_next_check_ms = 0;
    if (!p->cg || p->pid <= 0)
        return 0;
    return p->cg_ops->account(p);
}

static int sbx_cgroup_collect(sbx_proc *p)
{
    if (!p->cg)
        return 0;
    return p->cg_ops->destroy(p);
}

const sbx_layer sbx_layer_cgroup = {
    .name = "cgroup",
    .prepare = sbx_cgroup_prepare,
    .from_parent = sbx_cgroup_from_parent,
    .account = sbx_cgroup_account,
    .collect = sbx_cgroup_collect,
};

int sbx_cgroup_create_ahead(struct cgroup *cg, const char *name, char *keep, size_t keeplen,
                            char *why, size_t whylen)
{
    int rc = cg ? cgroup_create_cgroup(cg, SBX_CG_KEEP_OWNER) : ECGFAIL;
    cgroup_free(&cg);
    if (rc != 0) {
        snprintf(why, whylen, SBX_PREFIX "cgroup create ahead %s: %s", name,
                 sbx_cgroup_strerror(rc));
        return -1;
    }
    snprintf(keep, keeplen, "%s", name);
    return 0;
}

int sbx_cgroup_probe_cycle(struct cgroup *cg, const char *name, char *why, size_t whylen)
{
    int rc = cg ? cgroup_create_cgroup(cg, SBX_CG_KEEP_OWNER) : ECGFAIL;
    if (rc != 0)
        snprintf(why, whylen, SBX_PREFIX "cgroup create %s: %s", name, sbx_cgroup_strerror(rc));
    if (cg && rc == 0 && (rc = cgroup_delete_cgroup_ext(cg, 0)) != 0)
        snprintf(why, whylen, SBX_PREFIX "cgroup remove %s: %s", name, sbx_cgroup_strerror(rc));
    cgroup_free(&cg);
    return rc == 0 ? 0 : -1;
}

void sbx_cgroup_sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};
    nanosleep(&ts, NULL);
}

int sbx_cgroup_delete_retry(struct cgroup *cg, int flags)
{
    int rc = ECGOTHER;
    for (int tries = 0; tries < 200; tries++) {
        if ((rc = cgroup_delete_cgroup_ext(cg, flags)) == 0)
            break;
        sbx_cgroup_sleep_ms(5);
    }
    return rc;
}

int sbx_cgroup_rmdir_retry(const char *dir)
{
    for (int tries = 0; tries < 200; tries++) {
        if (rmdir(dir) == 0)
            return 0;
        if (errno != EBUSY)
            return -1;
        sbx_cgroup_sleep_ms(5);
    }
    return -1;
}

/* Only empty cgroups are removed (rmdir refuses the others with EBUSY, in every hierarchy of
 * either version), and only those whose creator (the pid in job-<pid>-<n>) no longer exists:
 * a job's creator removes its cgroup itself unless it was killed first, and the job dies with
 * it (exec mode: the init's PR_SET_PDEATHSIG; zygote mode: the creator is the job's pid 1),
 * so an orphan empties by itself. Nothing is killed here: in
 * a misconfiguration where workers in different pid namespaces share one parent, the pid test
 * cannot tell theirs apart. */
int sbx_cgroup_sweep_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        int pid;
        unsigned n;
        char extra;
        if (sscanf(e->d_name, "job-%d-%u%c", &pid, &n, &extra) != 2 || pid <= 0 ||
            kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

int sbx_cgroup_sweep(const sbx_config *c)
{
    char why[200];
    const sbx_cgroup_ops *ops = sbx_cgroup_backend(why, sizeof why);
    return ops ? ops->sweep(c->cgroup_parent ? c->cgroup_parent : "codeq") : -1;
}
