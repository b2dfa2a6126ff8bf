/* sandbox: run one untrusted Python program in a confined child and report what happened.
 *
 * Contract
 * - sbx_start() forks a child that is the init (pid 1) of fresh pid, mount, net, ipc and uts
 *   namespaces; it runs the interpreter on the job's code in a private working directory with
 *   rlimits applied. When the job's main process exits, or the job is killed, every process it
 *   created dies with its pid namespace: nothing of a job outlives sbx_finish().
 * - The caller drives the job with poll(2): sbx_pollfds() gives the descriptors to watch,
 *   sbx_service() reads output and enforces the wall deadline, sbx_done() says when to finish.
 *   sbx_run() does all of it synchronously for one job.
 * - A layer that cannot be set up never runs the job unconfined: the result is SBX_INTERNAL
 *   with the reason in `message` (e.g. "codeq: sandbox: unshare(CLONE_NEWNET): Operation not permitted").
 * - Output is captured concurrently from stdout and stderr, each capped at limits.output_bytes;
 *   a job that writes more is killed and reported SBX_OUTPUT_LIMIT with the head kept.
 */
#ifndef CODEQ_SANDBOX_H
#define CODEQ_SANDBOX_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t wall_ms;      /* wall-clock limit, whole job */
    uint32_t cpu_ms;       /* CPU time (RLIMIT_CPU, rounded up to seconds) */
    uint32_t memory_mb;    /* address space of each process (RLIMIT_AS) */
    uint32_t pids;         /* processes + threads (RLIMIT_NPROC in the job's own uid later) */
    uint32_t output_bytes; /* cap per stream (stdout, stderr) */
    uint32_t file_mb;      /* largest file the job may write (RLIMIT_FSIZE) */
    uint32_t open_files;   /* RLIMIT_NOFILE */
} sbx_limits;

/* Defaults follow the seeds: 5 s wall, 50 MB memory. */
void sbx_limits_default(sbx_limits *l);
/* Operator maxima: a job may ask for less or more than the default, never above these. */
void sbx_limits_max(sbx_limits *l);
/* Checks l against max; on violation writes "limits.memory_mb 4096 above maximum 1024" to why. */
int sbx_limits_check(const sbx_limits *l, const sbx_limits *max, char *why, size_t whylen);

typedef enum {
    SBX_OK = 0,       /* exit 0 */
    SBX_ERROR,        /* non-zero exit (uncaught exception) */
    SBX_TIMEOUT,      /* wall or CPU limit */
    SBX_MEMORY_LIMIT, /* the address-space limit was hit (MemoryError / allocation failure) */
    SBX_OUTPUT_LIMIT, /* stdout or stderr above the cap */
    SBX_SIGNAL,       /* killed by a signal the job brought on itself (SIGSEGV, SIGABRT, ...) */
    SBX_INTERNAL      /* the sandbox failed; the job may not have run */
} sbx_status;

const char *sbx_status_name(sbx_status s); /* "ok", "error", "timeout", "memory_limit", ... */

typedef struct {
    char *data;      /* captured bytes (head), NUL-terminated for convenience; may hold NULs */
    size_t len;      /* bytes in data */
    size_t total;    /* bytes the job wrote to the stream (>= len) */
    bool truncated;  /* total > len */
} sbx_buf;

typedef struct {
    sbx_status status;
    int exit_code;       /* -1 when killed by a signal */
    int signal;          /* 0 or the terminating signal of the job's main process */
    sbx_buf out, err;
    uint64_t wall_ms, cpu_ms, max_rss_kb;
    char message[256];   /* why, for timeout/memory/internal; empty otherwise */
} sbx_result;

typedef struct {
    const char *code;   size_t code_len;
    const char *stdin_data; size_t stdin_len;
    sbx_limits limits;
    const char *job_id; /* for names and messages only */
    /* Optional Python source run by the interpreter instead of main.py (the validator's
     * runtime guard); it is written beside main.py as _codeq_prelude.py and is responsible
     * for running main.py as __main__. NULL: the interpreter runs main.py directly. */
    const char *prelude; size_t prelude_len;
} sbx_job;

/* Process-wide settings, fixed at start-up. */
typedef struct {
    const char *python;   /* interpreter to exec; default /usr/bin/python3 */
    const char *work_root;/* parent of per-job working directories; default /tmp/codeq */
} sbx_config;

void sbx_config_default(sbx_config *c);

typedef struct sbx_proc sbx_proc;

/* Starts the job. Returns NULL only on allocation failure; a failed start still returns a proc
 * that is immediately done with status SBX_INTERNAL. */
sbx_proc *sbx_start(const sbx_config *c, const sbx_job *job);
/* Fills up to max pollfds the caller should watch for this job; returns how many. */
int sbx_pollfds(const sbx_proc *p, struct pollfd *fds, int max);
/* Milliseconds until this job's deadline (0 if due), for the caller's poll timeout. */
int sbx_timeout_ms(const sbx_proc *p);
/* Reads available output, feeds stdin, enforces deadline and caps, reaps. Never blocks. */
void sbx_service(sbx_proc *p);
bool sbx_done(const sbx_proc *p);
/* Kills the job now (e.g. on shutdown) with status SBX_INTERNAL and the given reason. */
void sbx_kill(sbx_proc *p, const char *why);
/* Waits for the job to be fully gone, removes its working directory, moves the result out,
 * frees p. */
void sbx_finish(sbx_proc *p, sbx_result *out);

/* Convenience: start, service until done, finish. */
void sbx_run(const sbx_config *c, const sbx_job *job, sbx_result *out);
void sbx_result_free(sbx_result *r);

#endif
