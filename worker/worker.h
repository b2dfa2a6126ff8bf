/* worker: the life of a job, from a Kafka record to a published result and audit trail.
 *
 * Contract
 * - A job record is decoded (wrk_job), validated (validator/), run (sandbox/) and turned into
 *   exactly one result message; every step also emits audit events. `codeq run` and the Kafka
 *   worker share this path (wrk_execute), so a local run shows what the worker would publish.
 * - Bad input never crashes or disappears: an undecodable job with an id gets an `invalid`
 *   result; one without a usable id goes to the dead-letter topic with the reason.
 * - At-least-once: a job's offset is committed only after its result and audit records were
 *   acknowledged by the broker.
 */
#ifndef CODEQ_WORKER_H
#define CODEQ_WORKER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox.h"
#include "validator.h"

#define WRK_MAX_KAFKA_PROPS 32
/* The largest code and stdin a job may carry (schemas/job.schema.json), and the largest job
 * message a worker fetches (fetch.max.bytes, wrk_consume.c): what the CLI reads at most. */
#define WRK_JOB_MAX_CODE (256 * 1024)
#define WRK_JOB_MAX_STDIN (1024 * 1024)
#define WRK_JOB_MAX_MESSAGE (32 * 1024 * 1024)

/* Kafka settings shared by every subcommand that talks to a broker (kcat's -X convention). */
typedef struct {
    const char *brokers;
    const char *jobs_topic, *results_topic, *audit_topic, *dlq_topic;
    const char *props[WRK_MAX_KAFKA_PROPS][2]; /* -X name=value pass-through */
    int nprops;
} wrk_kafka_opts;

void wrk_kafka_opts_default(wrk_kafka_opts *o);
/* Parses "name=value" into o->props; returns -1 with a message on bad input. */
int wrk_kafka_opts_add(wrk_kafka_opts *o, char *nv, char *err, size_t errlen);

/* What the worker process fixes at start-up. */
typedef struct {
    wrk_kafka_opts kafka;
    const char *group;
    const char *worker_id;      /* stated in every result and audit event */
    sbx_config sandbox;
    sbx_limits defaults, max;   /* job limits: defaults and operator maxima */
    const char *instance_id;    /* stable per instance: the transactional.id is built from it */
    int slots;                  /* jobs running at once (default: CPU count) */
    int max_attempts;           /* starts of one job before it is answered as a poison pill */
    int commit_interval_ms;     /* longest a finished result waits for its transaction */
    int drain_ms;               /* on revoke: how long in-flight jobs may finish */
    int grace_ms;               /* on SIGTERM: how long in-flight jobs may finish */
    const val_policy *policy;   /* validator policy (--policy); NULL: the built-in "strict" */
    const char *heartbeat_path; /* touched by the main loop while it turns; NULL: none */
    size_t result_max_bytes;    /* a result is shrunk to fit one record (wrk_fit.c) */
    const char *reply_prefix;   /* reply_to must start with it (or be the results topic);
                                 * "" allows any topic but codeq's own */
    const char *http_addr;      /* --http ADDR:PORT: /metrics, /healthz, /readyz; NULL: off */
    int health_stall_ms;        /* /healthz fails when the loop has not turned for this long */
    int health_max_aborts;      /* ... or when this many transactions aborted in a row */
    int health_commit_ms;       /* ... or when one commit has been in flight this long */
    int host_fault_ms;          /* a host that cannot run a trivial job this long: stop, exit 4 */
    bool audit_code_full;       /* --audit-code full: the received event keeps the code text */
    uint64_t started_ms;        /* monotonic ms the worker's start began: its 5 min budget
                                 * counts from here, topic reads before the broker included */
    bool internal_paths;        /* an internal error's host paths in the result too: only where
                                 * the caller is the operator (`codeq run`) */
} wrk_config;

void wrk_config_default(wrk_config *c);
/* After the options, in zygote mode: the zygote compiles the policy's runtime guard once, and
 * without --zygote-preload it imports every module the policy allows that is installed (numpy
 * and pandas under "data"), so no job pays for either. */
void wrk_config_finish(wrk_config *c);

/* A decoded job. Strings point into the json_t it came from. */
typedef struct {
    json_t *root;               /* owns everything below */
    const char *id;
    const char *code; size_t code_len;
    const char *stdin_data; size_t stdin_len;
    sbx_limits limits;          /* defaults overlaid with the job's own */
    const char *reply_to;       /* NULL: the results topic */
    json_t *metadata;           /* borrowed; NULL when absent */
    int64_t deadline_ms;        /* Unix epoch ms after which the job must not start; 0: none */
    char code_sha256[65];
    sbx_file *files;            /* input files for /work (owned; paths and text borrowed) */
    char **file_bufs;           /* decoded base64 contents, owned */
    size_t nfiles;
} wrk_job;

/* Decodes one job. On failure returns -1 and writes the reason; job->id is still set when an
 * id could be read, so the caller can answer `invalid`. Always release with wrk_job_free. */
int wrk_job_decode(const char *buf, size_t len, const wrk_config *c, wrk_job *job, char *why,
                   size_t whylen);
void wrk_job_free(wrk_job *job);

/* Where a job came from, for audit events; topic NULL for a local run. */
typedef struct {
    const char *topic;
    int partition;
    long long offset;
} wrk_source;

/* A dead letter the broker refused is produced again cut back a step (wrk_dlq.c): to
 * what any topic takes (refused as too large), then minimal (none of the record: its origin,
 * sizes and hashes), then not at all: given up, said in the log and its audit event. */
typedef enum { WRK_DEAD_FULL, WRK_DEAD_SMALL, WRK_DEAD_MINIMAL, WRK_DEAD_GIVEN_UP } wrk_dead_level;

/* Collected output of one job: its result and its audit events, in order. */
typedef struct {
    json_t *result;
    json_t *audit;              /* array of events */
    const char *status;         /* borrowed from result */
    char *reply_to;             /* owned; NULL: the results topic */
    wrk_dead_level dead_level;  /* how far its dead letter is cut back after refusals */
    char dead_refused[300];     /* the refusal that made it minimal, for its codeq.refused */
} wrk_outcome;

/* One job in progress (wrk_dispatch.c), so a worker can run many at once. */
typedef struct wrk_task wrk_task;

/* Decodes, checks the deadline, validates and starts the sandbox; returns at once. With
 * `refuse` set the job is answered `internal_error` with that reason without running (poison
 * pills). NULL only when out of memory. */
wrk_task *wrk_task_start(const wrk_config *c, const char *buf, size_t len, const wrk_source *src,
                         const char *refuse);
/* The running sandbox to drive with sbx_pollfds/sbx_service; NULL when nothing runs. */
sbx_proc *wrk_task_proc(const wrk_task *t);
bool wrk_task_done(const wrk_task *t);
void wrk_task_kill(wrk_task *t, const char *why);
/* Collects the sandbox's report (once done) into the result; the outcome stays owned by t. */
wrk_outcome *wrk_task_finish(wrk_task *t);
/* True when the record has no usable id and belongs on the dead-letter topic. */
bool wrk_task_dead_letter(const wrk_task *t, const char **why);
/* Once done: collects the sandbox's report and says whether the sandbox itself failed
 * (internal_error), whether the job's code never ran, and why. */
bool wrk_task_sandbox_failed(wrk_task *t, bool *unstarted, const char **why);
/* The job's id once decoded, else NULL. */
const char *wrk_task_job_id(const wrk_task *t);
/* The audit event of a run stopped unfinished by its worker (a stop's or a drain's end): when
 * it started and why it ends so; NULL for a record without a job id. The job runs again at
 * the partition's next owner: without the event, nothing of this run would be on record. */
json_t *wrk_task_abandoned_event(const wrk_task *t, const char *why);
/* A record the consumer could not hand over (e.g. a batch that fails to decompress): a
 * dead-lettered task with the error as its reason, so its partition moves on. buf NULL: its
 * bytes are not known, and its audit event's code_sha256 is null. */
wrk_task *wrk_task_dead(const wrk_config *c, const char *why, const char *buf, size_t len,
                        const wrk_source *src);
uint64_t wrk_task_token(const wrk_task *t);
/* Publish failures that belong to the job's records (too large for the broker, an unknown or
 * forbidden reply_to, a dead letter its topic refuses): the records are cut back a step for
 * the next try, so one job never stalls the others. A result gives way to a short
 * internal_error on the results topic, then its audit events lose the job's code; a dead
 * letter is cut back (wrk_dead_level; a step is skipped unless too_large). Returns what was
 * done, for the log, or NULL when nothing is left to cut: then the topic refuses what any
 * job would produce. */
const char *wrk_task_unpublishable(wrk_task *t, const char *why, bool too_large);
/* What t's records are, for the log: "job ID", or "the dead letter of TOPIC [P] at OFFSET". */
const char *wrk_task_name(const wrk_task *t, char *buf, size_t n);
void wrk_task_free(wrk_task *t);

/* Runs the whole path on a raw job record: decode, validate, limits, sandbox. Never fails:
 * every problem becomes a result status. dead_letter is set (and result NULL) when the
 * record has no usable id. */
void wrk_execute(const wrk_config *c, const char *buf, size_t len, const wrk_source *src,
                 wrk_outcome *out, bool *dead_letter, char *why, size_t whylen);
void wrk_outcome_free(wrk_outcome *o);

/* Subcommands (worker/cmd_*.c); argv[0] is the subcommand name. Return the exit code. */
int cmd_run(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_broker(int argc, char **argv);
int cmd_topics(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_audit(int argc, char **argv);

#endif
