/* sandbox: run one untrusted Python program in a confined child and report what happened.
 *
 * Contract
 * - sbx_start() forks a child that is the init (pid 1) of fresh pid, mount, net, ipc and uts
 *   namespaces, attached to a cgroup of its own (memory without swap, pids, cpu quota). The
 *   init builds a minimal read-only root (pivot_root onto a tmpfs: /usr, a private /dev, the
 *   job's /proc, a size-capped tmpfs as /work and /tmp) and runs the interpreter on the job's
 *   code there as an unprivileged uid with no capabilities, no_new_privs and a seccomp
 *   allowlist. When the job's main process exits, or the job is killed, every process it
 *   created dies with its pid namespace and cgroup: nothing of a job outlives sbx_finish().
 * - Input files are copied into /work before the job starts; afterwards regular files left in
 *   /work come back as artifacts (capped; symlinks, hard links, FIFOs, devices skipped).
 * - The profile (sbx_config.profile) names which layers are on; "full" is the default and
 *   every weaker one is stated in each result (sbx_result.profile). sbx_selfcheck() proves at
 *   start-up that the chosen profile works on this host, so a missing layer fails closed.
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
    uint32_t cpu_ms;       /* CPU time of the whole job (cgroup), and of each process (RLIMIT_CPU,
                              rounded up to seconds) */
    uint32_t memory_mb;    /* the job's memory cgroup, swap off (RLIMIT_AS without a cgroup) */
    uint32_t pids;         /* processes + threads: pids cgroup and RLIMIT_NPROC of the job's uid */
    uint32_t output_bytes; /* cap per stream (stdout, stderr) */
    uint32_t file_mb;      /* largest file the job may write (RLIMIT_FSIZE) */
    uint32_t open_files;   /* RLIMIT_NOFILE */
    uint32_t tmpfs_mb;     /* /work, /tmp and /dev/shm together (one tmpfs) */
    uint32_t artifact_files; /* output artifacts collected at most */
    uint32_t artifact_bytes; /* their total size at most */
    uint32_t io_read_bps, io_write_bps;   /* bytes/s from and to the host's block devices */
    uint32_t io_read_iops, io_write_iops; /* operations/s (cgroup blkio throttle / io.max,
                                             sbx_iodev.c: the disks of /usr and the work root) */
} sbx_limits;

/* Defaults follow the seeds: 5 s wall, 50 MB memory. */
void sbx_limits_default(sbx_limits *l);
/* Operator maxima: a job may ask for less or more than the default, never above these. */
void sbx_limits_max(sbx_limits *l);
/* Below these no job can start: the interpreter's own descriptors, exec mode's init and main. */
#define SBX_MIN_OPEN_FILES 16
#define SBX_MIN_PIDS 2
/* Below these a job's throttled reads would hold pages of the host's /usr, locked for every
 * reader while they wait their turn, for seconds (1 byte/s: a page for the whole wall time):
 * at the floors one read-ahead window (128 KiB) takes 31 ms, one request 10 ms. */
#define SBX_MIN_IO_BPS (4u << 20)
#define SBX_MIN_IO_IOPS 100
/* Checks l against max and the minimums (1 for the others); on violation writes
 * "limits.memory_mb 4096 above maximum 1024" to why. */
int sbx_limits_check(const sbx_limits *l, const sbx_limits *max, char *why, size_t whylen);

typedef enum {
    SBX_OK = 0,       /* exit 0 */
    SBX_ERROR,        /* non-zero exit (uncaught exception) */
    SBX_TIMEOUT,      /* wall or CPU limit */
    SBX_MEMORY_LIMIT, /* the address-space limit was hit (MemoryError / allocation failure) */
    SBX_OUTPUT_LIMIT, /* stdout or stderr above the cap */
    SBX_SIGNAL,       /* killed by a signal the job brought on itself (SIGSEGV, SIGABRT, ...) */
    SBX_INTERNAL,     /* the sandbox failed; the job may not have run */
    SBX_SECCOMP       /* a process of the job made a forbidden system call (job ended, SIGSYS) */
} sbx_status;

const char *sbx_status_name(sbx_status s); /* "ok", "error", "timeout", "memory_limit", ...,
                                              "seccomp_violation" */

/* A file going into the working directory (sbx_job.files) or coming out of it
 * (sbx_result.artifacts). path is relative to /work: no leading '/', no "." or ".." component,
 * no empty component, no NUL, at most SBX_PATH_MAX bytes. In a result both strings are owned
 * by the result (sbx_result_free); data is NUL-terminated for convenience and may hold NULs. */
typedef struct {
    const char *path;
    const char *data; size_t len;
} sbx_file;

enum { SBX_MAX_FILES = 64, SBX_PATH_MAX = 255 };

/* Checks input files: count <= SBX_MAX_FILES, each path valid and distinct from main.py and the
 * prelude, and that they fit l->tmpfs_mb together with the main.py (code_len bytes) and the
 * prelude (prelude_len) the sandbox writes beside them, as the tmpfs stores them: each file in
 * whole pages. On violation writes "files[2].path: '..' is not allowed" to why and returns -1.
 * sbx_start() checks again. */
int sbx_files_check(const sbx_file *files, size_t n, size_t code_len, size_t prelude_len,
                    const sbx_limits *l, char *why, size_t whylen);

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
    uint64_t wall_ms, cpu_ms, max_rss_kb; /* cgroup figures: the job's own, every process */
    char message[256];   /* why, for timeout/memory/internal; empty otherwise */
    sbx_file *artifacts; /* regular files the job left in /work (not main.py, prelude, inputs
                            unless changed), sorted by path; NULL when none */
    size_t nartifacts;
    bool artifacts_truncated; /* some were left out: over artifact_files/artifact_bytes, or
                                 not a plain file (symlink, hard link, FIFO, device) */
    bool code_obj_used;  /* the job ran sbx_job.code_obj: its source was not compiled again */
    bool cgroup_born;    /* the job's init was cloned into its cgroup (v2, clone3), not moved
                            there after: no cgroup migration on the job's path */
    bool unstarted;      /* SBX_INTERNAL, and the job's code never ran: the sandbox failed while
                            setting it up (staging, cgroup, namespaces, a zygote that never took
                            it). The job is not the cause; running it again later is safe. */
    const char *profile; /* the sandbox profile the job ran under (static string) */
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
    /* Input files written into /work before the job starts (see sbx_file, sbx_files_check). */
    const sbx_file *files; size_t nfiles;
    /* Optional: `code` already compiled, from the parse that validated it (val_code: the
     * compiling interpreter's 4-byte magic, then marshal.dumps(code)). Zygote mode runs it
     * instead of compiling main.py again when the magic is the zygote's own and the object's
     * file name is sbx_code_obj_filename()'s; otherwise, and in exec mode, the source is
     * compiled as before. main.py is written either way: tracebacks show its lines. Under a
     * prelude, the object is handed to it as the global `_CODEQ_MAIN_CODE`. */
    const char *code_obj; size_t code_obj_len;
} sbx_job;

/* Process-wide settings, fixed at start-up. */
typedef struct {
    const char *python;   /* interpreter to exec; default /usr/bin/python3 */
    const char *work_root;/* parent of per-job host staging directories; default /tmp/codeq */
    /* "full" (default): every layer, fail closed. Weaker, for hosts that cannot do better,
     * chosen by the operator on purpose and stated in every result:
     *   "no-cgroup"  no cgroup: memory by RLIMIT_AS per process, pids by RLIMIT_NPROC only,
     *                no total CPU bound, no peak memory or OOM record;
     *   "no-seccomp" no system call filter. */
    const char *profile;
    const char *cgroup_parent; /* job cgroups are <parent>/job-<pid>-<n>; default "codeq" */
    unsigned uid_base, uid_count; /* jobs run as uid (and gid) uid_base + slot, slot <
                                     uid_count, so concurrent jobs differ; default 61000, 1000 */
    /* "exec" (this library's default): a fresh interpreter is exec'd per job. "zygote" (codeq's
     * default, docs/zygote.md): the job is forked from a pre-initialized interpreter process
     * with the same layers, and execve/execveat denied. */
    const char *isolation;
    const char *zygote_path;    /* the codeq-zygote binary; default beside /proc/self/exe */
    /* Exec mode, a job with a prelude: the _codeq_seal.so extension module its guard loads
     * (sbx_seal.c); default beside /proc/self/exe. */
    const char *seal_path;
    /* Comma-separated modules the zygote imports once ("?name": only if installed); NULL:
     * none. */
    const char *zygote_preload;
    /* The prelude every job of this worker carries (the policy's runtime guard): the zygote
     * compiles it once and runs it once with the global _CODEQ_PREPARE set; a prelude that
     * then leaves _CODEQ_START (the guard does) has prepared what does not depend on the job,
     * and each job with a byte-identical prelude calls _CODEQ_START(code object or None)
     * instead of running the prelude. A job with another prelude is refused by such a zygote.
     * A zygote prelude must run nothing job-specific when _CODEQ_PREPARE is set. NULL: none.
     * Must outlive the config. */
    const char *zygote_prelude;
    unsigned zygote_max_jobs;   /* restart a zygote after this many jobs; default 1000 */
    unsigned zygote_max_age_s;  /* ... or after this many seconds; default 600 */
    unsigned zygote_start_ms;   /* longest a zygote may take to start (interpreter, preloads,
                                 * warm-up job); default 10000 */
} sbx_config;

void sbx_config_default(sbx_config *c);
/* The file name a code object for this job must carry (what compiling its main.py gives it:
 * "main.py" under a prelude, which runs main.py from /work by that name, else
 * "/work/main.py"), or NULL when this configuration never runs one (exec isolation). */
const char *sbx_code_obj_filename(const sbx_config *c, const sbx_job *job);
/* Isolation modes known to this build, NULL-terminated: "exec", "zygote". */
extern const char *const sbx_isolations[];
/* The zygote process's entry point (the codeq-zygote binary): serves jobs on descriptor 3. */
int sbx_zygote_serve(int argc, char **argv);
/* Ends this process's zygotes (tests, shutdown); the next zygote job starts a fresh one. */
void sbx_zygote_shutdown(void);
/* Zygote mode: starts n zygotes for c now without waiting for them, so that their start
 * (interpreter, preloads, prelude) overlaps the caller's own; the first jobs take them and
 * wait only for what is left. Idle ones for c count towards n. 0, or -1 with err (the binary
 * cannot be started); nothing in exec mode. */
int sbx_zygote_prestart(const sbx_config *c, unsigned n, char *err, size_t errlen);
/* Zygotes this process has started so far (any thread may read it). */
unsigned long sbx_zygote_starts(void);
/* Profile names known to this build, NULL-terminated. */
extern const char *const sbx_profiles[];

/* Start-up self-check: the profile is known, its layers can be set up on this host (cgroup
 * controllers, seccomp, namespaces, the minimal root), and a trivial job runs confined as
 * expected (unprivileged, no capabilities, no_new_privs, filtered). Returns 0, or -1 with
 * e.g. "codeq: sandbox: cgroup create codeq/selfcheck: Permission denied" in why. The worker
 * refuses to start on -1: jobs would all end internal_error. */
typedef struct {
    int cgroup_version;  /* 1 or 2; 0 when the profile has no cgroup layer */
    bool cgroup_born;    /* the self-check job was cloned into its cgroup (v2, clone3); false on
                            v2 means every job's init is moved there after its clone (clone3
                            refused or without CLONE_INTO_CGROUP: a kernel before 5.7, a
                            container runtime's seccomp profile) */
} sbx_host;

/* host, when not NULL, receives what the check found (for the worker's start-up log). */
int sbx_selfcheck(const sbx_config *c, sbx_host *host, char *why, size_t whylen);

/* Removes the job cgroups under c->cgroup_parent that were left behind: empty, and made by a
 * process that no longer exists (a worker or zygote supervisor killed before it could remove
 * its job's cgroup, or a removal that timed out while a large job was still exiting). Returns
 * how many were removed, or -1 without a cgroup backend. Each worker's --cgroup-parent must be
 * its own within one pid namespace (docs/security-model.md). */
int sbx_cgroup_sweep(const sbx_config *c);

/* Removes the job staging directories (job-<id>-XXXXXX, with the job's code and files) under
 * c->work_root that were left behind by a process killed before it could remove them (a
 * worker, or a zygote's job supervisor, SIGKILLed mid-job). A live job's directory is never
 * touched, whichever process on this host made it: its creator holds an flock on it for the
 * job's life, and only directories whose lock is free are removed (as hostile trees: symlinks
 * are never followed). Returns how many were removed, or -1 if the work root is unusable. */
int sbx_workdir_sweep(const sbx_config *c);

typedef struct sbx_proc sbx_proc;

/* Starts the job. Returns NULL only on allocation failure; a failed start still returns a proc
 * that is immediately done with status SBX_INTERNAL. */
sbx_proc *sbx_start(const sbx_config *c, const sbx_job *job);
/* Fills up to max pollfds the caller should watch for this job (never more than
 * SBX_POLLFDS_MAX); returns how many. */
enum { SBX_POLLFDS_MAX = 5 };
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
