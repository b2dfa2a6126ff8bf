/* sbx_proc.c: one job from start to finish, and the one place that orders the layers.
 *
 * sbx_start() runs every layer's prepare, clones the init (sbx_spawn.c), runs from_parent
 * and lets the init go; the init runs enter_init, its main process enter_main (sbx_init.c).
 * In a zygote the supervisor is the job's pid 1 and there is no init: "the init" below is
 * then the main process it clones, which runs enter_init itself, and the reap is of the
 * whole job (sbx_spawn_reap).
 * sbx_service() is the whole parent-side loop body: read output, enforce the output cap and
 * the wall deadline by killing the init, and reap it without blocking; once it is reaped the
 * pipes are drained and the verdict taken (sbx_verdict.c). In a zygote, with a cgroup, the
 * verdict comes earlier, at the init's report (sbx_proc_reported). sbx_finish() waits for
 * the init's exit and runs collect in reverse order; a zygote's supervisor splits it in two
 * (sbx_answer, sbx_teardown) to answer before the teardown. Any failure is recorded once
 * (sbx_fail) and the job is killed: a job whose confinement is incomplete never runs, or
 * stops running.
 */
#include "sbx_int.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layers with nothing to do but their namespace. */
static const sbx_layer sbx_layer_pid = {
    .name = "pid", /* the init (sbx_init.c) is this layer's work */
    .clone_flag = CLONE_NEWPID,
    .clone_flag_name = "CLONE_NEWPID",
};
static const sbx_layer sbx_layer_ipc = {
    .name = "ipc", /* no SysV IPC or POSIX queues shared with the host */
    .clone_flag = CLONE_NEWIPC,
    .clone_flag_name = "CLONE_NEWIPC",
};

/* The order hooks run in (collect: reverse). */
static const sbx_layer *const sbx_layers[] = {
    &sbx_layer_workdir, /* host staging directory: in/ (main.py, inputs), out/, root/ */
    &sbx_layer_files,   /* input bookkeeping; artifacts loaded from out/ (collect) */
    &sbx_layer_capture, /* stdin memfd, stdout/stderr pipes */
    &sbx_layer_env,     /* argv, environment from scratch */
    &sbx_layer_seal,    /* exec mode: the guard's C half as a descriptor */
    &sbx_layer_scrub,   /* the init hides the worker's argv and environment */
    &sbx_layer_user,    /* a uid of the job's own; caps, no_new_privs (enter_main) */
    &sbx_layer_cgroup,  /* memory, pids, cpu: created, the init in it before it goes */
    &sbx_layer_pid,     /* our init is pid 1 */
    &sbx_layer_mnt,     /* private propagation */
    &sbx_layer_fs,      /* minimal root, tmpfs /work, /dev, /proc; pivot_root; artifacts */
    &sbx_layer_net,     /* no network */
    &sbx_layer_ipc,
    &sbx_layer_uts,     /* hostname "codeq" */
    &sbx_layer_rlimits, /* per process: cpu, files, processes (enter_main) */
    &sbx_layer_seccomp, /* last before execve */
};
enum { SBX_NLAYERS = sizeof sbx_layers / sizeof sbx_layers[0] };

int sbx_layers_clone_flags(char *names, size_t n)
{
    int flags = 0;
    size_t at = 0;
    names[0] = '\0';
    for (int i = 0; i < SBX_NLAYERS; i++) {
        if (!sbx_layers[i]->clone_flag)
            continue;
        flags |= sbx_layers[i]->clone_flag;
        int k = snprintf(names + at, n - at, "%s%s", at ? "|" : "", sbx_layers[i]->clone_flag_name);
        if (k > 0 && (size_t)k < n - at)
            at += (size_t)k;
    }
    return flags;
}

/* Defines fn, which runs `hook` of every layer in order and stops at the first failure. */
#define SBX_LAYERS_WALK(fn, hook)                                                          \
    int fn(sbx_proc *p)                                                                    \
    {                                                                                      \
        for (int i = 0; i < SBX_NLAYERS; i++)                                              \
            if (sbx_layers[i]->hook && sbx_layers[i]->hook(p) < 0)                         \
                return -1;                                                                 \
        return 0;                                                                          \
    }

static SBX_LAYERS_WALK(sbx_layers_prepare, prepare)
static SBX_LAYERS_WALK(sbx_layers_from_parent, from_parent)
SBX_LAYERS_WALK(sbx_layers_enter_init, enter_init)
SBX_LAYERS_WALK(sbx_layers_enter_main, enter_main)
SBX_LAYERS_WALK(sbx_layers_leave_init, leave_init)

/* Every layer accounts even if an earlier one failed; the first failure is kept. */
static void sbx_layers_account(sbx_proc *p)
{
    for (int i = 0; i < SBX_NLAYERS; i++)
        if (sbx_layers[i]->account)
            sbx_layers[i]->account(p);
}

/* Every layer collects even if an earlier one failed; the first failure is kept. */
static void sbx_layers_collect(sbx_proc *p)
{
    for (int i = SBX_NLAYERS - 1; i >= 0; i--)
        if (sbx_layers[i]->collect)
            sbx_layers[i]->collect(p);
}

static int sbx_copy(sbx_proc *p, char *dst, size_t n, const char *src, const char *what)
{
    size_t len = strlen(src);
    if (len >= n)
        return sbx_fail(p, ENAMETOOLONG, "%s", what);
    memcpy(dst, src, len + 1);
    return 0;
}

static sbx_proc *sbx_proc_new(void)
{
    sbx_proc *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->res.out.data = calloc(1, 1);
    p->res.err.data = calloc(1, 1);
    if (!p->res.out.data || !p->res.err.data) {
        sbx_result_free(&p->res);
        free(p);
        return NULL;
    }
    p->out = (sbx_stream){.fd = -1, .buf = &p->res.out, .alloc = 1, .name = "stdout"};
    p->err = (sbx_stream){.fd = -1, .buf = &p->res.err, .alloc = 1, .name = "stderr"};
    p->stdin_fd = p->out_wr = p->err_wr = p->out_fd = -1;
    p->uid_slot = -1;
    p->pidfd = p->ctl_rd = p->ctl_wr = p->report_rd = p->report_wr = -1;
    p->workdir_lock = -1;
    p->sigfd = p->work_fd = p->mntns_fd = p->seal_fd = -1;
    p->sc_chan[0] = p->sc_chan[1] = p->sc_listen = -1;
    p->res.exit_code = -1;
    return p;
}

static int sbx_proc_accept(sbx_proc *p, const sbx_config *c, const sbx_job *job)
{
    sbx_config def;
    sbx_config_default(&def);
    if (!c)
        c = &def;
    if (sbx_copy(p, p->python, sizeof p->python, c->python ? c->python : def.python,
                 "config.python") < 0 ||
        sbx_copy(p, p->work_root, sizeof p->work_root, c->work_root ? c->work_root : def.work_root,
                 "config.work_root") < 0 ||
        sbx_copy(p, p->seal_path, sizeof p->seal_path, c->seal_path ? c->seal_path : "",
                 "config.seal_path") < 0)
        return -1;
    if (sbx_profile_apply(p, c->profile ? c->profile : def.profile) < 0)
        return sbx_fail(p, 0, "unknown sandbox profile '%s'", c->profile);
    p->res.profile = p->profile;
    if (sbx_copy(p, p->cgroup_parent, sizeof p->cgroup_parent,
                 c->cgroup_parent ? c->cgroup_parent : def.cgroup_parent,
                 "config.cgroup_parent") < 0)
        return -1;
    p->inproc = sbx_inproc != NULL;
    p->self_init = p->inproc && sbx_self_pid != 0;
    const char *iso = c->isolation ? c->isolation : "exec";
    const char *const *known = sbx_isolations;
    while (*known && strcmp(iso, *known) != 0)
        known++;
    if (!*known)
        return sbx_fail(p, 0, "unknown isolation '%s' (known: exec, zygote)", iso);
    p->remote = !p->inproc && strcmp(iso, "zygote") == 0;
    p->uid_base = c->uid_base ? c->uid_base : def.uid_base;
    p->uid_count = c->uid_count ? c->uid_count : def.uid_count;
    if (!job || (!job->code && job->code_len) || (!job->stdin_data && job->stdin_len) ||
        (!job->files && job->nfiles))
        return sbx_fail(p, EINVAL, "job: missing, or a NULL code/stdin_data/files with a length");
    p->limits = job->limits;
    sbx_limits max;
    sbx_limits_max(&max);
    char why[256];
    if (sbx_limits_check(&p->limits, &max, why, sizeof why) < 0)
        return sbx_fail(p, 0, "%s", why);
    if (sbx_files_check(job->files, job->nfiles, job->code_len,
                        job->prelude ? job->prelude_len : 0, &p->limits, why, sizeof why) < 0)
        return sbx_fail(p, 0, "%s", why);
    p->files = job->files;
    p->nfiles = job->nfiles;
    p->job_id = job->job_id;
    p->code = job->code ? job->code : "";
    p->code_len = job->code_len;
    p->prelude = job->prelude;
    p->prelude_len = job->prelude ? job->prelude_len : 0;
    p->stdin_data = job->stdin_data ? job->stdin_data : "";
    p->stdin_len = job->stdin_len;
    p->code_obj = job->code_obj;
    p->code_obj_len = job->code_obj ? job->code_obj_len : 0;
    return 0;
}

/* Asks the init to end the job (see sbx_spawn.c for why it is asked, not killed). */
static void sbx_proc_kill(sbx_proc *p, sbx_kill_reason why)
{
    if (p->killed == SBX_KILL_NONE)
        p->killed = why;
    sbx_spawn_stop(p);
}

/* Blocks until the init is reaped: the grace to stop by itself, then SIGKILL. The report
 * pipe's EOF, then the pidfd, wake it at the exit. */
static void sbx_proc_wait_gone(sbx_proc *p)
{
    uint64_t end = sbx_now_ms() + SBX_STOP_GRACE_MS;
    while (!p->reaped && sbx_now_ms() < end) {
        int fd = p->self_init ? p->sigfd : p->report_rd >= 0 ? p->report_rd : p->pidfd;
        struct pollfd f = {.fd = fd, .events = POLLIN};
        poll(&f, f.fd >= 0 ? 1 : 0, 10);
        sbx_spawn_read_reports(p);
        sbx_spawn_reap(p, false);
    }
    sbx_spawn_kill(p);
    sbx_spawn_reap(p, true);
}

/* The init has reported the main's end: it had killed and reaped every other process of the
 * job and copied the artifacts out before (sbx_init.c), so everything the job wrote is in
 * the pipes, and with a cgroup, which holds the job's usage, the result is complete. Only the
 * init's own exit is left — its copy of the address space, its mount namespace and the
 * overlays' superblocks, 0.25-0.35 ms (docs/zygote.md) — and a zygote's supervisor, which
 * answers before its teardown, does not wait for it. Without a cgroup, usage is the init's
 * wait4() rusage: the job waits for the reap. In exec mode the caller is the worker's loop,
 * which would then block in sbx_finish for the exit instead of polling: it waits as before.
 * (A supervisor that is the job's pid 1 has no init: its reap of the job is the report.) */
static bool sbx_proc_reported(const sbx_proc *p)
{
    return p->inproc && p->have_exit && p->cg && !p->failed;
}

/* The init is reaped, or has reported: everything the job wrote is in the pipes or already
 * read (its writers are dead; the init holds the write ends until its exit, so the drain
 * stops at an empty pipe, not at EOF). */
static void sbx_proc_conclude(sbx_proc *p)
{
    if (!p->end_ms)
        p->end_ms = sbx_now_ms();
    sbx_capture_read(p, true);
    sbx_spawn_read_reports(p);
    sbx_layers_account(p);
    sbx_verdict(p);
    p->done = true;
}

sbx_proc *sbx_start(const sbx_config *c, const sbx_job *job)
{
    sbx_proc *p = sbx_proc_new();
    if (!p)
        return NULL;
    /* A job refused here (limits, files) is its own fault; what fails from now until the job
     * is handed over is the sandbox's (sbx_result.unstarted). */
    p->setting_up = sbx_proc_accept(p, c, job) == 0;
    if (p->setting_up && p->remote) {
        /* The zygote runs the layers (sbx_zygote.c); a failed hand-over is done at once. */
        sbx_zygote_start(p, c, job);
        p->job_id = p->code = p->stdin_data = p->prelude = p->code_obj = NULL;
        p->files = NULL;
        return p;
    }
    if (!p->failed && sbx_layers_prepare(p) == 0 && sbx_spawn(p) == 0 &&
        sbx_layers_from_parent(p) == 0)
        sbx_spawn_go(p);
    p->job_id = p->code = p->stdin_data = p->prelude = p->code_obj = NULL;
    p->files = NULL;
    if (p->failed) {
        /* Nothing of the job ran yet: no usage to keep, SIGKILL at once. */
        p->killed = SBX_KILL_INTERNAL;
        sbx_spawn_kill(p);
        sbx_spawn_reap(p, true);
        sbx_proc_conclude(p);
    }
    return p;
}

int sbx_pollfds(const sbx_proc *p, struct pollfd *fds, int max)
{
    int n = 0;
    if (p->done)
        return 0;
    if (p->remote) {
        if (max < 1)
            return 0;
        fds[0] = (struct pollfd){.fd = sbx_zygote_pollfd(p), .events = POLLIN};
        return 1;
    }
    /* Once the report pipe is at EOF the init is exiting: its pidfd turns readable when it
     * is reapable, so the caller wakes at the exit instead of at the next 1 ms timeout
     * (sbx_timeout_ms): up to 1 ms on every job's latency path. */
    int exiting = p->report_rd < 0 && !p->reaped ? p->pidfd : -1;
    int seccomp = -1; /* the main's messages on the control socket, then the listener */
    if (p->self_init) { /* every death in the job, the main's included (sbx_spawn_reap) */
        exiting = p->sigfd;
        seccomp = p->sc_listen >= 0 ? p->sc_listen : p->ctl_eof ? -1 : p->ctl_wr;
    }
    int want[SBX_POLLFDS_MAX] = {p->out.fd, p->err.fd, p->report_rd, exiting, seccomp};
    for (size_t i = 0; i < sizeof want / sizeof want[0] && n < max; i++)
        if (want[i] >= 0)
            fds[n++] = (struct pollfd){.fd = want[i], .events = POLLIN};
    return n;
}

int sbx_timeout_ms(const sbx_proc *p)
{
    if (p->done)
        return 0;
    uint64_t now = sbx_now_ms();
    if (p->remote)
        return now >= p->zy_deadline_ms ? 0 : (int)(p->zy_deadline_ms - now);
    /* The init closed the report pipe: its exit is microseconds away. (A main process that
     * is its own init closes it before the job's code runs.) */
    if (p->report_rd < 0 && !p->self_init)
        return 1;
    if (p->stop_ms) { /* the report pipe's EOF wakes the caller at the exit; this is for the SIGKILL */
        uint64_t kill_at = p->stop_ms + SBX_STOP_GRACE_MS;
        return now >= kill_at ? 100 : (int)(kill_at - now);
    }
    uint64_t deadline = p->t0_ms + p->limits.wall_ms;
    if (p->cg_next_check_ms && !p->have_exit && p->cg_next_check_ms < deadline) /* total CPU */
        deadline = p->cg_next_check_ms;
    if (now >= deadline)
        return 0;
    return deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now);
}

void sbx_service(sbx_proc *p)
{
    if (p->done)
        return;
    if (p->remote) {
        sbx_zygote_service(p);
        return;
    }
    sbx_capture_read(p, false);
    sbx_spawn_read_reports(p);
    if (p->self_init && sbx_spawn_seccomp(p) && !p->failed)
        sbx_proc_kill(p, SBX_KILL_SECCOMP);
    if (p->failed)
        sbx_proc_kill(p, SBX_KILL_INTERNAL);
    else if (!p->killed && sbx_capture_overflow(p))
        sbx_proc_kill(p, SBX_KILL_OUTPUT);
    else if (!p->killed && !p->have_exit && sbx_now_ms() >= p->t0_ms + p->limits.wall_ms)
        sbx_proc_kill(p, SBX_KILL_WALL);
    else if (!p->killed && !p->have_exit && sbx_cgroup_cpu_over(p))
        sbx_proc_kill(p, SBX_KILL_CPU);
    if (p->stop_ms && sbx_now_ms() >= p->stop_ms + SBX_STOP_GRACE_MS)
        sbx_spawn_kill(p);
    if (sbx_spawn_reap(p, false) || sbx_proc_reported(p))
        sbx_proc_conclude(p);
}

bool sbx_done(const sbx_proc *p)
{
    return p->done;
}

void sbx_kill(sbx_proc *p, const char *why)
{
    if (p->done)
        return;
    if (p->remote) {
        sbx_zygote_kill(p, why);
        return;
    }
    if (!p->failed) {
        snprintf(p->res.message, sizeof p->res.message, "%s", why ? why : SBX_PREFIX "killed");
        p->res.status = SBX_INTERNAL;
        p->failed = true;
    }
    sbx_proc_kill(p, SBX_KILL_INTERNAL);
}

/* The job is concluded, whatever state it was in: its result is final. */
static void sbx_proc_settle(sbx_proc *p)
{
    if (p->done)
        return;
    sbx_kill(p, SBX_PREFIX "job finished before it was done");
    sbx_proc_wait_gone(p);
    sbx_proc_conclude(p);
}

/* Nothing of the job is left: the init is gone (it exits by itself once it has reported), or
 * a supervisor that is the job's pid 1 lets its mount namespace go; then every layer
 * collects. */
static void sbx_proc_teardown(sbx_proc *p)
{
    if (!p->reaped)
        sbx_proc_wait_gone(p);
    sbx_spawn_drop_ns(p);
    sbx_layers_collect(p);
    sbx_spawn_release(p);
}

void sbx_finish(sbx_proc *p, sbx_result *out)
{
    if (p->remote) {
        sbx_zygote_finish(p);
        *out = p->res;
        free(p);
        return;
    }
    sbx_proc_settle(p);
    sbx_proc_teardown(p);
    *out = p->res;
    free(p);
}

void sbx_answer(sbx_proc *p, sbx_result *out)
{
    sbx_proc_settle(p);
    *out = p->res;
    /* The buffers are the caller's now; what the teardown records is its own failure. */
    memset(&p->res, 0, sizeof p->res);
    p->failed = false;
}

int sbx_teardown(sbx_proc *p, char *why, size_t whylen)
{
    sbx_proc_teardown(p);
    int rc = p->failed ? -1 : 0;
    if (rc < 0)
        snprintf(why, whylen, "%s", p->res.message);
    sbx_result_free(&p->res);
    free(p);
    return rc;
}

void sbx_run(const sbx_config *c, const sbx_job *job, sbx_result *out)
{
    sbx_proc *p = sbx_start(c, job);
    if (!p) {
        memset(out, 0, sizeof *out);
        out->status = SBX_INTERNAL;
        out->exit_code = -1;
        snprintf(out->message, sizeof out->message, SBX_PREFIX "out of memory");
        return;
    }
    /* Bounded in time: the deadline kills the job, and a grace period covers the teardown. */
    uint64_t give_up = sbx_now_ms() + (job ? job->limits.wall_ms : 0) + 10000;
    while (!sbx_done(p) && sbx_now_ms() < give_up) {
        struct pollfd fds[SBX_POLLFDS_MAX];
        int n = sbx_pollfds(p, fds, SBX_POLLFDS_MAX);
        if (poll(fds, (nfds_t)n, sbx_timeout_ms(p)) < 0 && errno != EINTR) {
            char why[128];
            snprintf(why, sizeof why, SBX_PREFIX "poll: %s", strerrordesc_np(errno));
            sbx_kill(p, why);
        }
        sbx_service(p);
    }
    sbx_finish(p, out);
}

int sbx_zygote_prestart(const sbx_config *c, unsigned n, char *err, size_t errlen)
{
    /* an empty job only so that the configuration is resolved as a job's would be */
    sbx_job none = {.job_id = "prestart"};
    sbx_limits_default(&none.limits);
    sbx_proc *p = sbx_proc_new();
    if (!p) {
        snprintf(err, errlen, SBX_PREFIX "zygote prestart: out of memory");
        return -1;
    }
    int rc = sbx_proc_accept(p, c, &none);
    if (rc == 0 && p->remote)
        rc = sbx_zygote_ahead(p, c, n);
    if (rc < 0)
        snprintf(err, errlen, "%s", p->res.message);
    sbx_result_free(&p->res);
    free(p);
    return rc;
}

void sbx_result_free(sbx_result *r)
{
    free(r->out.data);
    free(r->err.data);
    r->out.data = r->err.data = NULL;
    r->out.len = r->err.len = 0;
    for (size_t i = 0; i < r->nartifacts; i++) {
        free((char *)r->artifacts[i].path);
        free((char *)r->artifacts[i].data);
    }
    free(r->artifacts);
    r->artifacts = NULL;
    r->nartifacts = 0;
}
