/* sbx_int.h: what the sandbox's files share — the per-job state and the layer interface.
 *
 * Every confinement concern is a "layer" in its own file with the same hooks (nsjail's
 * initNsFromParent / initNs split, plus the two ends around them):
 *   prepare      parent, before clone: create what the child will need (dirs, pipes, argv)
 *   from_parent  parent, after clone, before the init is let go (cgroup attach, if not born
 *                in it)
 *   enter_init   the init (pid 1 of the job), once, before it forks the job's main process;
 *                with a supervisor as the job's pid 1 (sbx_self_pid set), the main process first
 *   enter_main   the job's main process, just before execve (seccomp is last here)
 *   leave_init   the init, once every other process of the job is dead (artifacts out); or
 *                the supervisor that is the job's pid 1, once it has reaped them all
 *   account      parent, before the verdict, once the init is reaped or — in a zygote, with
 *                a cgroup — has reported the main's end (cgroup usage, OOM, artifacts)
 *   collect      parent, after the init is reaped, in reverse order (close, remove); the
 *                result is complete before it (a zygote's supervisor answers first)
 * A hook returns 0 or -1; a parent hook records the reason with sbx_fail(), a child hook sends
 * it to the parent with sbx_child_fail(). The order of the layers is in sbx_proc.c only.
 *
 * Code that runs in the child (enter_init, enter_main, sbx_init.c) was started by clone() from
 * a possibly multi-threaded worker: it must not malloc or use stdio (another thread may have
 * held their locks at clone time). Everything it needs is prepared in the parent.
 * In zygote mode (docs/zygote.md) the parent is the single-threaded zygote, and the job's main
 * process runs the zygote's interpreter (sbx_inproc) instead of execve.
 */
#ifndef CODEQ_SBX_INT_H
#define CODEQ_SBX_INT_H

#include "sandbox.h"

#include <limits.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#define SBX_PREFIX "codeq: sandbox: "

/* The runtime guard's file in the working directory (sandbox.h, sbx_job.prelude). */
#define SBX_PRELUDE_NAME "_codeq_prelude.py"

/* Each of the init and the job's main process runs on its half of one mapping until execve. */
enum { SBX_STACK_SIZE = 256 * 1024 };

/* Descriptors inside the init and the job's main process, fixed by sbx_init.c. SBX_FD_SEAL
 * only in exec mode under a prelude (sbx_seal.c); the guard knows its number
 * (validator/val_guard.py, _SEAL_FD). */
enum { SBX_FD_REPORT = 3, SBX_FD_CTL = 4, SBX_FD_SEAL = 5, SBX_FD_FIRST_FREE = 6 };

/* Bytes the parent sends the init on the control socket. */
#define SBX_CTL_GO 'g'
#define SBX_CTL_STOP 's'

/* How long the init gets to kill and reap the job before it is SIGKILLed itself. */
enum { SBX_STOP_GRACE_MS = 1000 };

/* Why the parent killed the job, if it did; the first reason wins. */
typedef enum {
    SBX_KILL_NONE = 0,
    SBX_KILL_WALL,
    SBX_KILL_OUTPUT,
    SBX_KILL_INTERNAL,
    SBX_KILL_CPU,     /* the cgroup's CPU time passed cpu_ms */
    SBX_KILL_SECCOMP, /* a process of the job made a call the filter refuses (sbx_seccomp.c) */
} sbx_kill_reason;

/* The first call of the job the seccomp filter refused, as its listener told the supervisor
 * (sbx_seccomp.c): the call never ran, and the job is ended for it. */
typedef struct {
    int32_t seen; /* 1 once told */
    int32_t nr;   /* the call's number, in arch's table */
    uint32_t arch; /* AUDIT_ARCH_* (libseccomp's SCMP_ARCH_* tokens are the same values) */
} sbx_sc_refused;

/* One message from the child on the report pipe; 256 bytes < PIPE_BUF, so writes are atomic. */
/* SBX_REPORT_CODE: zygote mode's main process runs sbx_job.code_obj (sent before the job's
 * code runs, and the pipe is closed before it does: the job cannot send it). */
enum { SBX_REPORT_FAIL = 1, SBX_REPORT_EXIT = 2, SBX_REPORT_CODE = 3 };
typedef struct {
    int32_t kind;
    int32_t wstatus; /* SBX_REPORT_EXIT: wait status of the job's main process */
    int32_t sigsys;  /* SBX_REPORT_EXIT: processes of the job the seccomp filter killed */
    sbx_sc_refused refused; /* SBX_REPORT_EXIT: a call the filter refused, if any */
    int32_t skipped; /* SBX_REPORT_EXIT: artifacts left out (not plain files, or over caps) */
    int32_t setup;   /* SBX_REPORT_FAIL: sent before the job's main process existed, or by it
                        before it ran the job's code (sbx_result.unstarted) */
    char msg[228];   /* SBX_REPORT_FAIL: "codeq: sandbox: mount(proc, /proc): ..." */
} sbx_report;
_Static_assert(sizeof(sbx_report) <= PIPE_BUF, "report writes must stay atomic");

typedef struct sbx_cgroup_ops sbx_cgroup_ops;

/* The job's main process as whoever reaps it sees it (sbx_init.c). */
typedef struct {
    pid_t pid;
    bool exited;
    int status;
    int sigsys; /* reaped processes the seccomp filter killed (the main, orphans) */
    sbx_sc_refused refused;
} sbx_init_main_proc;

typedef struct {
    int fd;          /* parent's read end, -1 once at EOF */
    sbx_buf *buf;    /* points into the proc's result */
    size_t cap;      /* output_bytes */
    size_t alloc;    /* bytes allocated for buf->data (cap + 1 at most) */
    const char *name;
} sbx_stream;

struct sbx_proc {
    sbx_result res;          /* res.status is final once `done`; SBX_INTERNAL set early wins */
    bool failed;             /* a sandbox step failed: res.status/message hold it */
    /* Parent: from a job accepted until the init is let go (exec) or the zygote has the job;
     * a failure meanwhile is sbx_result.unstarted. The init: false until the job's main
     * process exists, so its later failures (artifacts out) are not the setup's. */
    bool setting_up;
    bool done;
    sbx_limits limits;
    const char *job_id;      /* only valid during sbx_start */
    const char *code;        /* only valid during sbx_start */
    size_t code_len;
    const char *stdin_data;  /* only valid during sbx_start */
    size_t stdin_len;
    const char *prelude;     /* only valid during sbx_start; NULL: run main.py directly */
    size_t prelude_len;
    const sbx_file *files;   /* only valid during sbx_start */
    size_t nfiles;
    /* sbx_job.code_obj: only valid during sbx_start, and in the job's processes (zygote
     * mode's init and main are fork-like clones made during it, with their own copy) */
    const char *code_obj;
    size_t code_obj_len;

    /* the profile's layers (sbx_profile.c) */
    const char *profile;
    bool use_cgroup, use_seccomp;

    char python[PATH_MAX];
    char seal_path[PATH_MAX]; /* sbx_config.seal_path; empty: found (sbx_seal.c) */
    int seal_fd;             /* parent, until the init has it: _codeq_seal.so, or -1 */
    char work_root[PATH_MAX];
    char workdir[PATH_MAX];  /* host staging directory, empty until created: in/ out/ root/ */
    int workdir_lock;        /* its descriptor, flock()ed while the job lives (sbx_workdir.c) */
    char fs_in[PATH_MAX + 8], fs_out[PATH_MAX + 8], fs_root[PATH_MAX + 8];
    char fs_scratch[PATH_MAX + 16]; /* where the init moves the job's scratch tmpfs out of its root */

    /* sbx_fs.c, sbx_files.c */
    char fs_passwd[256], fs_group[128], fs_tmpfs_opts[64];
    int out_fd;              /* the init's descriptor on the staging out/ */
    uint64_t copy_files_left, copy_bytes_left;
    uint64_t *input_sums;    /* sbx_files.c: size and hash of each input, to tell changed ones */
    char **input_paths;
    size_t ninputs;

    /* sbx_user.c */
    char cgroup_parent[128];
    unsigned uid_base, uid_count;
    int uid_slot;            /* the flock()ed descriptor that holds our uid; -1: none */
    uid_t uid;
    gid_t gid;

    /* sbx_cgroup*.c: backend state, and what the account hook read */
    const sbx_cgroup_ops *cg_ops;
    void *cg;
    bool cg_have;            /* the figures below are the cgroup's */
    uint64_t cg_peak_bytes, cg_cpu_ns, cg_oom_kills;
    uint64_t cg_next_check_ms;

    /* sbx_seccomp.c: SBX_SECCOMP_FILTERS BPF programs (struct sock_fprog), built once per
     * process: the values filter, the calls filter, and the calls filter that kills instead
     * (for a process that may not have a listener of its own) */
    const void *seccomp_prog;

    /* sbx_env.c: argv and envp for execve, built in the parent */
    char *argv[5];
    char *const *envp;       /* sbx_job_envp */

    /* sbx_scrub.c: where the worker's argv and environ strings are, in the init too (in a
     * zygote's jobs: its environment only, sbx_scrub_args) */
    unsigned long scrub_at;
    size_t scrub_len;

    /* sbx_capture.c */
    int stdin_fd;            /* sealed memfd, becomes fd 0 of the job */
    int out_wr, err_wr;      /* child ends, closed in the parent after clone */
    sbx_stream out, err;

    /* sbx_spawn.c */
    pid_t pid;               /* the init (self_init: the main process), in our pid namespace;
                                0 before clone */
    int pidfd;
    int ctl_rd, ctl_wr;      /* socketpair: go, then stop; EOF means the worker is gone */
    int report_rd, report_wr;
    void *stack;             /* init's and main's stacks (one mapping, see sbx_spawn.c) */
    size_t stack_len;
    bool init_on_stack;      /* cloned onto the lower half of `stack` (else fork-like) */
    bool reaped;
    int init_wstatus;
    struct rusage ru;        /* of the init and every descendant it reaped */
    bool have_exit;          /* the init reported the main process's wait status */
    int main_wstatus;
    int sigsys;              /* processes killed by the seccomp filter */
    sbx_sc_refused refused;  /* a call the filter refused (the job was ended for it) */
    int artifacts_skipped;
    /* sbx_seccomp.c: the calls filter's listener, which the main process sends its supervisor
     * (the init on sc_chan, a socketpair made before the main's clone; a supervisor that is the
     * job's pid 1 on the control socket); -1 without seccomp, before it arrives and after its
     * POLLHUP (no process of the job is left under the filter). */
    int sc_chan[2];
    int sc_listen;
    bool ctl_eof;            /* self_init: the main process closed its end of the control socket */

    uint64_t t0_ms, end_ms;  /* CLOCK_MONOTONIC */
    sbx_kill_reason killed;
    uint64_t stop_ms;        /* when the init was asked to stop */
    const char *kill_stream; /* which stream overflowed */

    /* sbx_zygote*.c: zygote mode. In the worker, `zy` is the zygote running this job and
     * everything else above stays unused (the zygote runs the layers). In the zygote,
     * `inproc` makes the main process run the interpreter in place instead of execve. */
    struct sbx_zy *zy;
    uint64_t zy_deadline_ms; /* the worker gives up on the zygote's answer here */
    bool remote;             /* the worker's proc of a zygote job */
    bool inproc;
    /* A zygote's supervisor that is pid 1 of the job's pid namespace (sbx_self_pid set): there is
     * no init. The supervisor forks the main process, which does the init's steps itself
     * (sbx_init_self_main), and reaps the job itself (sbx_spawn.c); `pid` is the main's. */
    bool self_init;
    sbx_init_main_proc self; /* self_init: the main process and what the reaping saw */
    int sigfd;               /* self_init: SIGCHLD, blocked in the supervisor */
    int work_fd, mntns_fd;   /* self_init: the job's /work and mount namespace, from main */
};

/* Zygote mode, inside the zygote process (sbx_zygote_py.c sets these): the interpreter's fork
 * hygiene around the zygote's fork of a supervisor, whose descendants run no Python until the
 * job's main process (run_main, which makes the interpreter whole after the fork and never
 * returns). NULL outside a zygote. */
typedef struct {
    void (*before_fork)(void);
    void (*after_fork_parent)(void);
    void (*run_main)(sbx_proc *p);
} sbx_inproc_hooks;
extern const sbx_inproc_hooks *sbx_inproc;

/* Set (non-zero) only in a zygote's supervisor forked into a pid namespace of its own
 * (sbx_zygote_serve.c), whose jobs run with it as their pid 1: its pid in the zygote's
 * namespace, which names what it makes (cgroups) for the zygote's sweep. sbx_pid() is that,
 * elsewhere getpid(). */
extern pid_t sbx_self_pid;
pid_t sbx_pid(void);

/* sbx_zygote.c: the worker's side of a zygote job (sbx_proc.c calls these when zy is set). */
int sbx_zygote_start(sbx_proc *p, const sbx_config *c, const sbx_job *job);
int sbx_zygote_ahead(sbx_proc *p, const sbx_config *c, unsigned n);
int sbx_zygote_pollfd(const sbx_proc *p);
void sbx_zygote_service(sbx_proc *p);
void sbx_zygote_kill(sbx_proc *p, const char *why);
void sbx_zygote_finish(sbx_proc *p);

/* sbx_finish() in two steps, for a zygote's supervisor that answers before its teardown
 * (local procs only): sbx_answer() hands over the result, which is final (the job concluded
 * first if it had not, as in sbx_finish); sbx_teardown() waits for the init's exit, runs every
 * collect and frees p: -1 and the reason if a step failed, which can no longer change the
 * result (what it leaves, the zygote's sweeps remove). */
void sbx_answer(sbx_proc *p, sbx_result *out);
int sbx_teardown(sbx_proc *p, char *why, size_t whylen);

/* sbx_zygote_wire.c: a job to the zygote and a result back, each in a sealed memfd. */
int sbx_wire_put_job(const sbx_job *job, char *why, size_t whylen);
int sbx_wire_get_job(int fd, sbx_job *job, void **map, size_t *maplen, sbx_file **files,
                     char *why, size_t whylen);
int sbx_wire_put_result(const sbx_result *r, char *why, size_t whylen);
int sbx_wire_get_result(int fd, sbx_result *r, char *why, size_t whylen);

typedef struct {
    const char *name;
    int clone_flag;          /* namespace this layer needs, or 0 */
    const char *clone_flag_name;
    int (*prepare)(sbx_proc *p);
    int (*from_parent)(sbx_proc *p);
    int (*enter_init)(sbx_proc *p);
    int (*enter_main)(sbx_proc *p);
    int (*leave_init)(sbx_proc *p);
    int (*account)(sbx_proc *p);
    int (*collect)(sbx_proc *p);
} sbx_layer;

#define SBX_SECCOMP_FILTERS 3

extern const sbx_layer sbx_layer_workdir, sbx_layer_capture, sbx_layer_env, sbx_layer_scrub,
    sbx_layer_mnt, sbx_layer_net, sbx_layer_uts, sbx_layer_rlimits, sbx_layer_fs,
    sbx_layer_files, sbx_layer_user, sbx_layer_cgroup, sbx_layer_seccomp, sbx_layer_seal;

/* Closes *fd if open and sets it to -1 (sbx_capture.c). */
void sbx_close(int *fd);

/* sbx_seal.c: `name` beside the running executable if access(mode) allows it, else
 * build_path (the build tree's, for tests and benches in its subdirectories; NULL: none). 0,
 * or -1 when neither is there. */
int sbx_beside_self(const char *name, int mode, const char *build_path, char *path, size_t n);

/* A cgroup backend (sbx_cgroup.c: v1, sbx_cgroup2.c: v2), chosen once per process by
 * sbx_cgroup_backend(). Parent side only; every hook returns 0 or -1 with sbx_fail(). */
struct sbx_cgroup_ops {
    const char *name;          /* "cgroup-v1", "cgroup-v2" */
    int (*create)(sbx_proc *p);      /* make the job's cgroup with its limits */
    int (*join)(sbx_proc *p);        /* init side, first thing: move itself in (or NULL) */
    int (*attach)(sbx_proc *p);      /* parent side, before the init is let go: move it in,
                                      * or (v1) just drop the parent's copy of what join used */
    int (*clone_fd)(sbx_proc *p);    /* the cgroup's directory for clone3(CLONE_INTO_CGROUP),
                                      * or -1 (or NULL): the init joins or is attached */
    int (*cpu_ns)(sbx_proc *p, uint64_t *ns); /* CPU so far, cheap: polled while running */
    int (*account)(sbx_proc *p);     /* peak memory, CPU, OOM kills into p->cg_* */
    int (*destroy)(sbx_proc *p);     /* kill what is left, remove the cgroup */
    int (*probe)(const char *parent, char *why, size_t whylen); /* self-check */
    int (*sweep)(const char *parent); /* sbx_cgroup_sweep() for this backend */
    /* Settles, once per process, where this process's job cgroups go (or NULL: nothing to
     * settle). v2 may move the process itself (sbx_cgroup2.c), so a parent that spawns
     * helpers that make job cgroups (zygotes) settles it first, for them to inherit. */
    int (*place)(const char *parent, char *why, size_t whylen);
    /* Zygote mode: makes this process's next job cgroup, without limits, before the job
     * exists (its pre-forked supervisor); create() then adopts it and writes the job's limits
     * into it instead of making one. Nothing can be in it before: only the job's init joins.
     * 0, or -1 with the reason. */
    int (*ahead)(const char *parent, char *why, size_t whylen);
    /* Removes the cgroup ahead() made if no job took it; 0, or -1 with errno. */
    int (*ahead_drop)(void);
};

extern const sbx_cgroup_ops sbx_cgroup_v1, sbx_cgroup_v2;
/* cgroup_create_cgroup's ignore_ownership: nonzero skips its recursive chown and chmod of
 * every file of the new group (libcgroup 2.0 api.c). Ours are root's, made by root, and no job
 * is ever given one: the chown walk was ~6% of a zygote job's CPU (kernfs lookups). */
#define SBX_CG_KEEP_OWNER 1
/* Runs the backend's place hook for p's cgroup parent, if p uses cgroups. 0, or -1 reported. */
int sbx_cgroup_place(sbx_proc *p);
/* The backend for this host, or NULL with the reason (e.g. no cgroup file system). */
const sbx_cgroup_ops *sbx_cgroup_backend(char *why, size_t whylen);
/* libcgroup's error for rc, with errno when it says ECGOTHER. */
const char *sbx_cgroup_strerror(int rc);
/* Self-check shared by both backends: creates and removes the described cgroup `name`,
 * freeing cg; 0, or -1 with the reason in why. */
struct cgroup;
void sbx_cgroup_sleep_ms(int ms);
/* Removes a cgroup, retrying for up to a second while the kernel still counts the job's last
 * processes in it; libcgroup's last error code, or 0. */
int sbx_cgroup_delete_retry(struct cgroup *cg, int flags);
/* Removes the empty job-<pid>-<n> cgroups in `dir` (absolute) whose creating process is
 * gone; how many, or -1 if dir cannot be read. */
int sbx_cgroup_sweep_dir(const char *dir);
/* rmdir(dir), retried while exiting tasks still hold it (EBUSY); 0, or -1 with errno. */
int sbx_cgroup_rmdir_retry(const char *dir);
int sbx_cgroup_probe_cycle(struct cgroup *cg, const char *name, char *why, size_t whylen);
/* Backends' ahead(): creates the described cgroup `name` (no limits yet; cg may be NULL: out
 * of memory) and keeps its name in keep; frees cg. 0, or -1 with the reason in why. */
int sbx_cgroup_create_ahead(struct cgroup *cg, const char *name, char *keep, size_t keeplen,
                            char *why, size_t whylen);

/* sbx_iodev.c: the whole disks behind /usr, /etc/alternatives and the work root, found once
 * per process (the first caller's work_root counts); up to max into devs, how many (0: none
 * is a block device, nothing to throttle). */
int sbx_iodev_list(const char *work_root, dev_t *devs, int max);
/* Writes p's I/O limits for each of those disks into the job's cgroup directory `dir`: v1's
 * blkio.throttle.* files, or (v2) io.max. 0, or -1 reported with sbx_fail(). */
int sbx_iodev_apply(sbx_proc *p, const char *dir, bool v2);

/* sbx_cgroup_layer.c: zygote mode, in a pre-forked supervisor: the next job's cgroup made
 * ahead of it (the backend's ahead()) when c's profile uses cgroups; 0, or -1 with why. */
int sbx_cgroup_ahead(const sbx_config *c, char *why, size_t whylen);
/* Removes that cgroup when no job came (0 when there is none). */
int sbx_cgroup_ahead_drop(void);
/* sbx_cgroup_layer.c: the init's first step, before it closes inherited descriptors: joins
 * the job's cgroup where the backend lets the init do that itself. 0, or -1 reported. */
int sbx_cgroup_join(sbx_proc *p);
int sbx_cgroup_clone_fd(sbx_proc *p);
/* sbx_cgroup_layer.c: true once the job's cgroup CPU time passed cpu_ms (polled, throttled). */
bool sbx_cgroup_cpu_over(sbx_proc *p);

/* sbx_net.c, zygote mode: the network namespace the zygote's jobs take turns in, or -1 (each
 * job's init is then cloned into a new one). sbx_net_share makes it, once, in the zygote: 0, or
 * -1 with why. sbx_net_join is the init's step before it closes inherited descriptors: into
 * that namespace, or into a new one of its own if sbx_net_sockets finds a socket left in it
 * (1; 0 none; -1 errno). 0, or -1 reported. */
extern int sbx_net_shared;
int sbx_net_share(char *why, size_t whylen);
/* A new one in place of the old, when the zygote cannot vouch that the last job is gone (its
 * supervisor died without answering); -1 until then. 0, or -1 with why. */
int sbx_net_renew(char *why, size_t whylen);
int sbx_net_sockets(void);
int sbx_net_join(sbx_proc *p);
/* True when p's init joins that namespace rather than being cloned into a new one: the one
 * decision sbx_spawn (clone flags) and sbx_net_join must agree on. */
bool sbx_net_turns(const sbx_proc *p);

/* sbx_rlimits.c: RLIMIT_CPU's soft limit in seconds. Without a cgroup it is the job's CPU bound
 * (whole seconds, rounded up); with one it is a backstop a second behind the cgroup's exact
 * bound (sbx_cgroup_cpu_over), so that the job ends at cpu_ms, not at the next whole second. */
uint64_t sbx_cpu_rlimit_s(const sbx_proc *p);
/* sbx_rlimits.c: where the host's core_pattern is read (a test points it at a file of its own). */
extern const char *sbx_core_pattern_path;

/* sbx_env.c: the job's environment, in both modes (the zygote is spawned with it). */
extern char *const sbx_job_envp[];
extern char *const sbx_zygote_envp[]; /* the job's, with SBX_ZYGOTE_BIND_NOW set */
#define SBX_ZYGOTE_BIND_NOW "LD_BIND_NOW"

/* sbx_scrub.c, zygote mode: zeroes this process's own command-line arguments, once, so that
 * its jobs' processes only hide its environment (pointers into the arguments are dead after
 * it). 0, or -1 with why. */
int sbx_scrub_args(char *why, size_t whylen);

/* sbx_profile.c: which layers a profile turns on; -1 for an unknown name. */
int sbx_profile_apply(sbx_proc *p, const char *name);

/* sbx_proc.c: walk the layers in their one order. */
int sbx_layers_clone_flags(char *names, size_t n);
int sbx_layers_enter_init(sbx_proc *p);
int sbx_layers_enter_main(sbx_proc *p);
int sbx_layers_leave_init(sbx_proc *p);

/* sbx_err.c */
void sbx_errfmt(char *dst, size_t n, int err, const char *const *parts);
int sbx_fail(sbx_proc *p, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sbx_child_fail(sbx_proc *p, int err, ...) __attribute__((sentinel));
void sbx_fail_reported(sbx_proc *p, const sbx_report *r);
uint64_t sbx_now_ms(void);

/* sbx_spawn.c: the init from the parent's side. */
int sbx_spawn(sbx_proc *p);
int sbx_spawn_go(sbx_proc *p);
void sbx_spawn_stop(sbx_proc *p);
void sbx_spawn_kill(sbx_proc *p);
int sbx_spawn_reap(sbx_proc *p, bool block);
void sbx_spawn_read_reports(sbx_proc *p);
/* Self-init: takes what the main process sent on the control socket (its /work, the seccomp
 * listener) and asks the listener; true when the job is to end for a refused call. */
bool sbx_spawn_seccomp(sbx_proc *p);
void sbx_spawn_drop_ns(sbx_proc *p);
void sbx_spawn_release(sbx_proc *p);

/* sbx_init.c: the init itself, pid 1 of the job; or, with a supervisor as pid 1, the steps
 * the init would take, made by the job's main process itself. What a reap tells, for both. */
int sbx_init_main(void *arg);
int sbx_init_self_main(void *arg);
void sbx_init_reaped(sbx_init_main_proc *m, pid_t w, int st);
/* SIGCHLD blocked and read from a signalfd, for a poll loop that wakes at every death among
 * its children (the init, or a supervisor that is the job's pid 1): the descriptor, or -1
 * with errno and the step that failed. */
int sbx_init_sigchld_fd(const char **step);
/* Drains that signalfd and reaps every dead child without waiting, into m: 0 while a child
 * lives, -1 (ECHILD) once none is left. */
pid_t sbx_init_reap_dead(sbx_init_main_proc *m, int sigfd);
/* Descriptors over a unix socket, one tagged byte with them, 1 to 4 (syscalls only: the init
 * uses them). send: 0, or -1 with errno. recv (MSG_DONTWAIT as `flags` allows): 1 with the tag
 * and *n descriptors (CLOEXEC; *n in: room, out: how many came), 0 at EOF, -1 with errno
 * (EAGAIN: nothing yet; EMFILE: a message whose descriptors did not all fit, those that did
 * closed). */
int sbx_send_fds(int sock, char tag, const int *fds, int n);
int sbx_recv_fds(int sock, char *tag, int *fds, int *n, int flags);

/* sbx_seccomp.c: the supervisor's side of the calls filter's listener (-1: none). A message on
 * it means a process of the job made a call the filter refuses; it waits in the kernel, unrun,
 * until the job is ended. True: recorded in m (the first only), end the job. A listener that
 * is done (every process under the filter gone, or failed) is closed and set to -1. */
bool sbx_seccomp_listen(int *listener, sbx_init_main_proc *m);
/* "setxattr (188)", or the number and arch where libseccomp has no name for it. */
void sbx_seccomp_name(const sbx_sc_refused *r, char *buf, size_t len);

/* sbx_capture.c */
void sbx_capture_read(sbx_proc *p, bool final);
bool sbx_capture_overflow(sbx_proc *p);

/* sbx_workdir.c */
/* Creates the work root (0700) if missing, and refuses one that is not a real directory owned
 * by us and writable by no one else; 0, or -1 with the reason in why. */
int sbx_workdir_root_check(const char *root, char *why, size_t whylen);
int sbx_rmtree(const char *path, char *why, size_t whylen);

/* sbx_files.c: copies that the init makes without malloc. */
int sbx_files_copy_in(sbx_proc *p, int src_dfd, int dst_dfd);
int sbx_files_copy_out(sbx_proc *p, int src_dfd, int dst_dfd, int *skipped);
bool sbx_path_ok(const char *path, char *why, size_t whylen);

/* sbx_user.c */
void sbx_user_release(sbx_proc *p);
int sbx_user_euid_only(uid_t uid);

/* sbx_verdict.c */
void sbx_verdict(sbx_proc *p);

#endif
