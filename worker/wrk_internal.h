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
/* Parses "2026-11-30T05:45:29Z" or with fractional seconds; -1 if not that form. */
int64_t wrk_parse_iso_ms(const char *s);
void wrk_sha256_hex(const void *data, size_t len, char out[65]);
/* A JSON string for arbitrary bytes: valid UTF-8 is kept, each invalid byte becomes U+FFFD.
 * *lossy tells whether anything was replaced (the caller then adds the base64 form). */
json_t *wrk_json_bytes(const char *data, size_t len, bool *lossy);
json_t *wrk_json_base64(const char *data, size_t len);
void wrk_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The limit called `name` ("wall_ms", "memory_mb", ...) inside l, or NULL (wrk_decode.c). */
uint32_t *wrk_limit_field(sbx_limits *l, const char *name);

/* Input files of a job (wrk_files.c): [{"path", "content" | "content_base64"}], checked
 * against the sandbox's rules (paths, count, size) so a bad one is answered `invalid`. */
int wrk_files_decode(json_t *arr, wrk_job *job, char *why, size_t whylen);
void wrk_files_free(wrk_job *job);

/* Result and audit builders (wrk_result.c, wrk_audit.c). */
json_t *wrk_result_new(const char *id, const char *status, const char *worker_id,
                       const char *received_at, json_t *metadata);
void wrk_result_set_run(json_t *r, const sbx_result *s, const sbx_limits *lim);
json_t *wrk_findings_json(const val_report *report);
json_t *wrk_audit_event(const char *event, const char *job_id, const char *worker_id,
                        const char *sha256, const wrk_source *src);
/* The sandbox profile named in every result and audit event; fixed at start-up ("full"). */
void wrk_result_profile(const char *name);

/* Kafka plumbing (wrk_kafka.c). Handles are created with the shared -X props applied. */
rd_kafka_conf_t *wrk_kafka_conf(const wrk_kafka_opts *o, char *err, size_t errlen);
int wrk_kafka_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *err,
                  size_t errlen);
/* Creates codeq's topics (jobs, results, audit, dead-letter) when missing. */
int wrk_kafka_create_topics(const wrk_kafka_opts *o, int partitions, char *err, size_t errlen);

/* Publish (wrk_publish.c): produce a job's records. Inside a transaction d is NULL (the
 * commit confirms delivery); outside, d counts acknowledgements for wrk_publish_wait. */
typedef struct {
    int outstanding;  /* records not yet acknowledged */
    int failed;       /* records the broker refused or that timed out */
    char err[256];    /* first delivery error */
} wrk_delivery;

/* Delivery-report callback to install on the producer's conf. */
void wrk_publish_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);
int wrk_publish_outcome(rd_kafka_t *p, const wrk_config *c, const char *reply_to,
                        const wrk_outcome *o, wrk_delivery *d, char *err, size_t errlen);
int wrk_publish_dead_letter(rd_kafka_t *p, const wrk_config *c, const rd_kafka_message_t *m,
                            const char *why, const wrk_outcome *o, wrk_delivery *d, char *err,
                            size_t errlen);
/* Serves delivery reports until d has none outstanding; -1 if any failed or time ran out. */
int wrk_publish_wait(rd_kafka_t *p, wrk_delivery *d, int timeout_ms, char *err, size_t errlen);

/* Consume (wrk_consume.c): the worker's main loop; returns the process exit code. */
int wrk_worker_loop(const wrk_config *c);

#endif
