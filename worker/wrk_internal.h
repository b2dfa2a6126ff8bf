/* Shared helpers of the worker modules; not part of the public contract. */
#ifndef CODEQ_WRK_INTERNAL_H
#define CODEQ_WRK_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
#include <librdkafka/rdkafka.h>

#include "validator.h"
#include "worker.h"

/* "2026-11-30T05:45:29.123Z" */
void wrk_now_iso(char out[32]);
uint64_t wrk_now_ms(void);        /* monotonic */
int64_t wrk_now_epoch_ms(void);    /* wall clock */
/* An RFC 3339 time ("2026-11-30T05:45:29Z", "2026-11-30T06:45:29.5+01:00") as milliseconds
 * since the epoch; false if s is not one or names no day of the calendar. */
bool wrk_parse_time_ms(const char *s, int64_t *out);
/* in with every absolute path ("/tmp/codeq/job-7/in", "lowerdir=/usr") shown as "<host path>",
 * cut to n bytes with its NUL; returns how many were elided. A '/' inside a relative path
 * ("d/e", "codeq/job-7") is kept. */
size_t wrk_elide_paths(const char *in, char *out, size_t n);
void wrk_sha256_hex(const void *data, size_t len, char out[65]);
/* "s" unless n is 1: "1 slot", "2 slots", "0 slots". */
const char *wrk_s(long long n);
/* A JSON string for arbitrary bytes: valid UTF-8 is kept, each invalid byte becomes U+FFFD.
 * *lossy tells whether anything was replaced (the caller then adds the base64 form). */
json_t *wrk_json_bytes(const char *data, size_t len, bool *lossy);
/* A message or reason as a JSON string. Such a text is cut to its buffer by snprintf and can
 * hold the job's own UTF-8 (a file's path), so it can end inside a character, which
 * json_string() refuses (NULL: the field would be missing): that byte becomes U+FFFD. */
json_t *wrk_json_text(const char *s);
/* The part of a job id made from a file's name: at most max_chars characters and n bytes with
 * the NUL, never cut inside a character; a byte that is not UTF-8 and a control character (C0,
 * DEL, hidden: wrk_hidden_at) each become '_', so the id is valid and inert whatever the name
 * holds. */
void wrk_id_part(const char *name, size_t max_chars, char *out, size_t n);
/* The code point of the hidden control character that begins at s, its UTF-8 length in *len;
 * else 0. Hidden: C1 (U+0080-U+009F; terminals act on it as on ESC: U+009B is CSI), and the
 * format characters that reorder or hide text where it is shown: bidi marks, embeddings,
 * overrides and isolates (U+061C, U+200E-F, U+202A-E, U+2066-9: "Trojan source"); invisible
 * ones (soft hyphen U+00AD, U+180E, zero-width space U+200B, word joiner and invisible
 * operators U+2060-4, the deprecated U+206A-F, BOM U+FEFF, interlinear annotation U+FFF9-B,
 * tag characters U+E0000-7F, which carry hidden ASCII); line and paragraph separators
 * U+2028-9. Kept: joiners U+200C-D and variation selectors (scripts and emoji need them).
 * avail: bytes readable at s. */
unsigned wrk_hidden_at(const unsigned char *s, size_t avail, size_t *len);
/* Copies text that a record or a job controls into out (NUL-terminated, never cut inside an
 * escape), its control characters shown instead of kept: C0 and DEL as \xNN, the hidden ones
 * (wrk_hidden_at) as \uNNNN, newline and tab kept only with keep_lines. Returns how many
 * bytes of s it took. */
size_t wrk_escape(const char *s, size_t n, bool keep_lines, char *out, size_t outn);
json_t *wrk_json_base64(const char *data, size_t len);
/* Base64 (at most max_len characters) to bytes, NUL-terminated in *out (caller frees); the
 * length, or -1 (and *out NULL) when it is not base64. */
long wrk_base64_decode(const char *in, size_t len, size_t max_len, char **out);
/* Logging (wrk_log.c): one sink. wrk_log is an info line of event "log"; wrk_logx names the
 * level and event and, where known, the job and its record (topic NULL: none; offset -1). */
typedef enum { WRK_LOG_DEBUG, WRK_LOG_INFO, WRK_LOG_WARN, WRK_LOG_ERROR } wrk_log_level;
typedef struct {
    const char *job_id;
    const char *topic;
    int32_t partition;
    int64_t offset;
} wrk_log_ctx;
/* format: "json" or "text" (NULL: unchanged, text at first); level: debug|info|warn|error. */
int wrk_log_setup(const char *format, const char *level, char *err, size_t errlen);
/* Whether librdkafka's own log lines go through this log (a worker, either format) or to
 * stderr as librdkafka writes them (the one-shot commands). */
bool wrk_log_owns_kafka(void);
void wrk_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void wrk_logx(wrk_log_level level, const char *event, const wrk_log_ctx *ctx, const char *fmt,
              ...) __attribute__((format(printf, 4, 5)));
void wrk_logv(wrk_log_level level, const char *event, const wrk_log_ctx *ctx, const char *fmt,
              va_list ap);
/* librdkafka's log callback, installed on every handle in JSON mode (wrk_kafka_conf). */
void wrk_log_kafka(const rd_kafka_t *rk, int level, const char *fac, const char *buf);

/* The limit called `name` ("wall_ms", "memory_mb", ...) inside l, or NULL (wrk_decode.c). */
uint32_t *wrk_limit_field(sbx_limits *l, const char *name);
/* The i-th limit's name, NULL past the last (for --print-config). */
const char *wrk_limit_name(size_t i);
/* A topic name as Kafka allows it: [A-Za-z0-9._-], at most 249 characters, not "." or "..". */
bool wrk_topic_name_ok(const char *s);
/* A JSON string used as a name (topic, time, path): its C string, NULL when it is not a
 * string or holds a NUL character (wrk_decode.c). */
const char *wrk_json_name(const json_t *v);

/* Input files of a job (wrk_files.c): [{"path", "content" | "content_base64"}], checked
 * against the sandbox's rules (paths, count, size: with the job's code, already decoded, and
 * the prelude_len bytes of runtime guard staged beside them) so a bad one is answered
 * `invalid`. */
int wrk_files_decode(json_t *arr, wrk_job *job, size_t prelude_len, char *why, size_t whylen);
void wrk_files_free(wrk_job *job);
/* The runtime guard of the worker's policy: the prelude every job runs under. */
const char *wrk_config_guard(const wrk_config *c, size_t *len);

/* Result and audit builders (wrk_result.c, wrk_audit.c). */
json_t *wrk_result_new(const char *id, const char *status, const char *worker_id,
                       const char *received_at, json_t *metadata);
void wrk_result_set_run(json_t *r, const sbx_result *s, const sbx_limits *lim);
/* The first `max` findings (0: all) as JSON. A job's result and audit trail carry at most
 * WRK_FINDINGS_MAX and say how many there were (findings_total): 32,000 findings made a
 * 4 MB result no broker would take. */
enum { WRK_FINDINGS_MAX = 100 };
json_t *wrk_findings_json(const val_report *report, size_t max);
json_t *wrk_audit_event(const char *event, const char *job_id, const char *worker_id,
                        const char *sha256, const wrk_source *src);
/* The sandbox profile named in every result and audit event; fixed at start-up ("full"). */
void wrk_result_profile(const char *name);

/* Kafka plumbing (wrk_kafka.c). Handles are created with the shared -X props applied. */
rd_kafka_conf_t *wrk_kafka_conf(const wrk_kafka_opts *o, char *err, size_t errlen);
/* Whether a librdkafka property holds a secret: masked when printed; its -X value may be
 * "@FILE" (the secret is read from FILE, one trailing newline dropped). */
bool wrk_kafka_secret(const char *name);
int wrk_kafka_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *err,
                  size_t errlen);
/* n {name, value} pairs, in order. */
int wrk_kafka_set_all(rd_kafka_conf_t *conf, const char *const (*kv)[2], size_t n, char *err,
                      size_t errlen);
/* The cluster's metadata for one topic, asked through rk for up to wait_ms: the request's
 * error, or 0 and *md (the caller destroys it). The topic's own error, and whether the answer
 * names it, are the caller's to read. */
rd_kafka_resp_err_t wrk_kafka_topic_metadata(rd_kafka_t *rk, const char *topic, int wait_ms,
                                             const rd_kafka_metadata_t **md);
/* What a topic created a moment ago answers while its leader settles: not leader, no leader
 * yet, unknown, transport. */
bool wrk_kafka_settling(rd_kafka_resp_err_t e);
/* A partition's low and high watermarks, asked again while the answer is settling, for up to
 * budget_ms in all. */
rd_kafka_resp_err_t wrk_kafka_watermarks(rd_kafka_t *k, const char *topic, int32_t p,
                                         int64_t *lo, int64_t *hi, int budget_ms);
/* The largest result (wrk_fit.c) a record can carry: the producer's message.max.bytes and
 * the results, audit and dead-letter topics' max.message.bytes (DescribeConfigs), the least,
 * less WRK_RECORD_OVERHEAD for the key and record framing. A topic whose configuration cannot
 * be read is said in note (the producer's figure is used); -1 with err if none fits, -2 with
 * err if the cluster says one of those topics does not exist. */
enum { WRK_RECORD_DEFAULT_MAX = 1000000, WRK_RECORD_OVERHEAD = 2048 };
/* The smallest record a worker starts with: an audit event's fixed part (a job id of up to
 * 1 KiB, the worker's id, the source topic, hashes and times, the chain) must fit one, cut as
 * far as it goes, or its job would hold every commit. */
enum { WRK_RECORD_MIN = 8192 };
int wrk_kafka_record_budget(const wrk_kafka_opts *o, size_t *budget, char *note, size_t notelen,
                            char *err, size_t errlen);
/* What a topic takes, from its configuration (DescribeConfigs through rk, waiting about
 * wait_ms): max_bytes its max.message.bytes, 0 unknown; create_time whether it keeps the
 * producer's timestamps (message.timestamp.type CreateTime) and then checks them against
 * before_ms / after_ms (message.timestamp.{before,after}.max.ms), -1 unknown. All unknown
 * when the broker did not say (no answer, not authorized to describe it). */
typedef struct {
    size_t max_bytes;
    bool create_time;
    int64_t before_ms, after_ms;
} wrk_topic_limits;
/* A topic's max.message.bytes through a handle of its own (a client's producer must be told its
 * batch.size before it is made), asked for about wait_ms; 0 where the broker does not say. */
size_t wrk_kafka_topic_max_bytes(const wrk_kafka_opts *o, const char *topic, int wait_ms);
void wrk_kafka_topic_limits(rd_kafka_t *rk, const char *topic, int wait_ms,
                            wrk_topic_limits *out);
/* Creates those of codeq's topics (jobs, results, audit, dead-letter) the cluster lacks, with
 * req's partitions and settings; those it has are left as they are and said on stderr. */
typedef struct {
    int partitions;
    bool partitions_given;      /* --partitions was asked for, not the default */
    const char *const (*cfg)[2]; /* ncfg topic settings {name, value} for the new topics */
    int ncfg;
} wrk_topic_request;
int wrk_kafka_create_topics(const wrk_kafka_opts *o, const wrk_topic_request *req, char *err,
                            size_t errlen);

/* Fit (wrk_fit.c): shrinks result r until it encodes in at most max bytes (0: no bound):
 * output cut and flagged truncated, artifacts dropped (artifacts_truncated), findings cut
 * (findings_total), and as a last resort a short internal_error. 0 if it fitted as it was, 1
 * if shrunk, -1 if replaced. */
int wrk_result_fit(json_t *r, size_t max);
/* What the audit chain (wrk_audit_chain.c) adds to an event when it is produced, with margin:
 * its writer's name, epochs, hashes, seq; 0 where no chain is stamped (`codeq run`). */
size_t wrk_chain_room(void);
/* Shrinks audit event ev until, chained, it encodes in at most budget bytes (0: no bound): its
 * findings cut (findings_total), its code left out (code_omitted), its reason cut. 0 if it
 * fitted as it was, 1 if shrunk, -1 if still too large (a budget below WRK_RECORD_MIN's). */
int wrk_event_fit(json_t *ev, size_t budget);

/* Publish (wrk_publish.c): produce a job's records. Inside a transaction d is NULL (the
 * commit confirms delivery); outside, d counts acknowledgements for wrk_publish_wait. */
typedef struct {
    int outstanding;  /* records not yet acknowledged */
    int failed;       /* records the broker refused or that timed out */
    char err[256];    /* first delivery error */
} wrk_delivery;

/* Delivery-report callback to install on the producer's conf. */
void wrk_publish_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);
/* A job's records: 0 queued, -1 not now (try again in a later transaction), -2 one of them can
 * never be produced (too large, invalid, its topic unknown or forbidden): the job is answered
 * another way (wrk_task_unpublishable). opaque goes to the delivery report when d is NULL. */
int wrk_publish_outcome(rd_kafka_t *p, const wrk_config *c, const char *reply_to,
                        const wrk_outcome *o, wrk_delivery *d, void *opaque, char *err,
                        size_t errlen);
/* A transaction begins: no record of it was produced to a reply topic yet (a reply topic's
 * records are flushed before they would make a batch above its max.message.bytes). */
void wrk_publish_txn_begin(void);
/* The record m to the dead-letter topic with why and where it was (wrk_dlq.c), then o's audit
 * events; returns as wrk_publish_outcome. */
int wrk_publish_dead_letter(rd_kafka_t *p, const wrk_config *c, const rd_kafka_message_t *m,
                            const char *why, const wrk_outcome *o, wrk_delivery *d,
                            void *opaque, char *err, size_t errlen);
/* Asks the broker once about the results, audit and dead-letter topics so that the first
 * records for them go at once; -1 with err when it did not answer (they then wait for
 * librdkafka's own scan, up to 1 s). */
int wrk_publish_warm(rd_kafka_t *p, const wrk_config *c, char *err, size_t errlen);
/* Whether a produce or delivery error belongs to the record rather than to the worker. */
bool wrk_publish_record_error(rd_kafka_resp_err_t e);
/* The topic and error of this thread's last publish that returned -2 (a record that can never
 * be produced, found before producing it). */
void wrk_publish_refusal(const char **topic, rd_kafka_resp_err_t *e);
/* Shared by wrk_publish.c and wrk_dlq.c. One record, copied; inside a transaction d is NULL
 * and opaque the job's token; -2 when it can never be produced. */
int wrk_publish_produce(rd_kafka_t *p, const char *topic, const void *key, size_t keylen,
                        const void *val, size_t len, rd_kafka_headers_t *hdrs, wrk_delivery *d,
                        void *opaque, char *err, size_t errlen);
/* -2 when an audit event of o does not fit its record even cut; else 0. */
int wrk_publish_audit_fits(const wrk_config *c, const wrk_outcome *o, char *err, size_t errlen);
/* o's audit events, chained and produced; -1 on any error. */
int wrk_publish_audit(rd_kafka_t *p, const wrk_config *c, const wrk_outcome *o,
                      wrk_delivery *d, void *opaque, char *err, size_t errlen);
/* Serves delivery reports until d has none outstanding; -1 if any failed or time ran out. */
int wrk_publish_wait(rd_kafka_t *p, wrk_delivery *d, int timeout_ms, char *err, size_t errlen);

/* Stop (wrk_stop.c): SIGTERM/SIGINT are a stop, and a stop ends the process within
 * grace + 25 s whatever it waits on (exit 3 past that, as a crash would). wrk_stop_install
 * comes first in the worker's start, so that a SIGTERM during the seconds of start-up
 * (zygotes, validator, self-check) is a stop, not a death by signal. wrk_stop_begin starts
 * the bound for the worker's own end, ending with rc past it: 25 s, after the grace period if
 * grace (a worker giving up lets its jobs finish); it does nothing once a stop or end began.
 * wrk_stop_step names what the stop waits on now (a string literal), for the log line if the
 * bound is hit. */
int wrk_stop_install(const wrk_config *c, char *err, size_t errlen);
bool wrk_stop_requested(void);
/* When the grace period of a stop ends (wrk_now_ms's clock), 0 if none began: every wait of
 * the stop, a revoke's drain included, ends by then. */
uint64_t wrk_stop_grace_end(void);
void wrk_stop_begin(bool grace, int rc);
void wrk_stop_step(const char *what);

/* Consume (wrk_consume.c): the worker's main loop; returns the process exit code. */
int wrk_worker_loop(const wrk_config *c);

#endif
