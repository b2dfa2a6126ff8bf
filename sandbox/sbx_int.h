/* sbx_int.h: what the sandbox's files share — the per-job state and the layer interface.
 *
 * Every confinement concern is a "layer" in its own file with the same hooks (nsjail's
 * initNsFromParent / initNs split, plus the two ends around them):
 *   prepare      parent, before clone: create what the child will need (dirs, pipes, argv)
 *   from_parent  parent, after clone, before the init is let go (cgroup attach will go here)
 *   enter_init   the init (pid 1 of the job), once, before it forks the job's main process
 *   enter_main   the job's main process, just before execve (seccomp will be last here)
 *   collect      parent, after the init is reaped, in reverse order (close, remove)
 * A hook returns 0 or -1; a parent hook records the reason with sbx_fail(), a child hook sends
 * it to the parent with sbx_child_fail(). The order of the layers is in sbx_proc.c only.
 *
 * Code that runs in the child (enter_init, enter_main, sbx_init.c) was started by clone() from
 * a possibly multi-threaded worker: it must not malloc or use stdio (another thread may have
 * held their locks at clone time). Everything it needs is prepared in the parent.
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

/* Descriptors inside the init and the job's main process, fixed by sbx_init.c. */
enum { SBX_FD_REPORT = 3, SBX_FD_CTL = 4, SBX_FD_FIRST_FREE = 5 };

/* Bytes the parent sends the init on the control socket. */
#define SBX_CTL_GO 'g'
#define SBX_CTL_STOP 's'

/* How long the init gets to kill and reap the job before it is SIGKILLed itself. */
enum { SBX_STOP_GRACE_MS = 1000 };

/* Why the parent killed the job, if it did; the first reason wins. */
typedef enum { SBX_KILL_NONE = 0, SBX_KILL_WALL, SBX_KILL_OUTPUT, SBX_KILL_INTERNAL } sbx_kill_reason;

/* One message from the child on the report pipe; 256 bytes < PIPE_BUF, so writes are atomic. */
enum { SBX_REPORT_FAIL = 1, SBX_REPORT_EXIT = 2 };
typedef struct {
    int32_t kind;
    int32_t wstatus; /* SBX_REPORT_EXIT: wait status of the job's main process */
    char msg[248];   /* SBX_REPORT_FAIL: "codeq: sandbox: mount(proc, /proc): ..." */
} sbx_report;
_Static_assert(sizeof(sbx_report) <= PIPE_BUF, "report writes must stay atomic");

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
    bool done;
    sbx_limits limits;
    const char *job_id;      /* only valid during sbx_start */
    const char *code;        /* only valid during sbx_start */
    size_t code_len;
    const char *stdin_data;  /* only valid during sbx_start */
    size_t stdin_len;
    const char *prelude;     /* only valid during sbx_start; NULL: run main.py directly */
    size_t prelude_len;

    char python[PATH_MAX];
    char work_root[PATH_MAX];
    char workdir[PATH_MAX];  /* empty until created */

    /* sbx_env.c: argv and envp for execve, built in the parent */
    char *argv[5];
    char *envp[8];
    char env_home[PATH_MAX + 8];

    /* sbx_scrub.c: where the worker's argv and environ strings are, in the init too */
    unsigned long scrub_at;
    size_t scrub_len;

    /* sbx_capture.c */
    int stdin_fd;            /* sealed memfd, becomes fd 0 of the job */
    int out_wr, err_wr;      /* child ends, closed in the parent after clone */
    sbx_stream out, err;

    /* sbx_spawn.c */
    pid_t pid;               /* the init, in our pid namespace; 0 before clone */
    int pidfd;
    int ctl_rd, ctl_wr;      /* socketpair: go, then stop; EOF means the worker is gone */
    int report_rd, report_wr;
    void *stack;             /* init's and main's stacks (one mapping, see sbx_spawn.c) */
    size_t stack_len;
    bool reaped;
    int init_wstatus;
    struct rusage ru;        /* of the init and every descendant it reaped */
    bool have_exit;          /* the init reported the main process's wait status */
    int main_wstatus;

    uint64_t t0_ms, end_ms;  /* CLOCK_MONOTONIC */
    sbx_kill_reason killed;
    uint64_t stop_ms;        /* when the init was asked to stop */
    const char *kill_stream; /* which stream overflowed */
};

typedef struct {
    const char *name;
    int clone_flag;          /* namespace this layer needs, or 0 */
    const char *clone_flag_name;
    int (*prepare)(sbx_proc *p);
    int (*from_parent)(sbx_proc *p);
    int (*enter_init)(sbx_proc *p);
    int (*enter_main)(sbx_proc *p);
    int (*collect)(sbx_proc *p);
} sbx_layer;

extern const sbx_layer sbx_layer_workdir, sbx_layer_capture, sbx_layer_env, sbx_layer_scrub,
    sbx_layer_mnt, sbx_layer_net, sbx_layer_uts, sbx_layer_rlimits;

/* sbx_proc.c: walk the layers in their one order. */
int sbx_layers_clone_flags(char *names, size_t n);
int sbx_layers_enter_init(sbx_proc *p);
int sbx_layers_enter_main(sbx_proc *p);

/* sbx_err.c */
void sbx_errfmt(char *dst, size_t n, int err, const char *const *parts);
int sbx_fail(sbx_proc *p, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int sbx_child_fail(const sbx_proc *p, int err, ...) __attribute__((sentinel));
uint64_t sbx_now_ms(void);

/* sbx_spawn.c: the init from the parent's side. */
int sbx_spawn(sbx_proc *p);
int sbx_spawn_go(sbx_proc *p);
void sbx_spawn_stop(sbx_proc *p);
void sbx_spawn_kill(sbx_proc *p);
int sbx_spawn_reap(sbx_proc *p, bool block);
void sbx_spawn_read_reports(sbx_proc *p);
void sbx_spawn_release(sbx_proc *p);

/* sbx_init.c: the init itself, pid 1 of the job. */
int sbx_init_main(void *arg);

/* sbx_capture.c */
void sbx_capture_read(sbx_proc *p, bool final);
bool sbx_capture_overflow(sbx_proc *p);

/* sbx_workdir.c */
int sbx_rmtree(const char *path, char *why, size_t whylen);

/* sbx_verdict.c */
void sbx_verdict(sbx_proc *p);

#endif
