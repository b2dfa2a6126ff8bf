/* The exactly-once worker's shared state: one thread owns the consumer, the transactional
 * producer, the partitions it was assigned and the jobs running in its slots. Split by step:
 * wrk_consume.c (loop, intake, backpressure, shutdown), wrk_slots.c (claim, start, service),
 * wrk_commit.c (transactions), wrk_rebalance.c (assign, revoke, lost). */
#ifndef CODEQ_WRK_WORKER_H
#define CODEQ_WRK_WORKER_H

#include "wrk_internal.h"
#include "wrk_offsets.h"

typedef struct {
    const wrk_config *c;
    rd_kafka_t *k;          /* consumer */
    rd_kafka_t *p;          /* transactional producer */
    wrk_part **parts;
    size_t nparts, capparts;
    int running;            /* RUNNING entries (sandboxes alive or just finished) */
    size_t rr;              /* where claiming starts next, so no partition starves the rest */
    uint64_t last_commit;   /* monotonic ms */
    uint64_t retry_at;      /* no commit before this after an abort */
    bool fatal;
    bool assigned_once;     /* a rebalance has assigned us something (even nothing) */
    bool leaving;           /* the loop is over: partitions assigned now are not taken */
    char why[512];
    unsigned long jobs_done, commits, aborts;
    int beat_fd;            /* --heartbeat-file, or -1 */
} wrk_worker;

/* wrk_commit.c: the producer's delivery-report callback (opaque: the worker). */
void wrk_commit_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);

/* wrk_slots.c */
void wrk_slots_claim(wrk_worker *w);
void wrk_slots_start_claimed(wrk_worker *w);
/* Polls running sandboxes up to timeout_ms and moves finished jobs to DONE. */
void wrk_slots_service(wrk_worker *w, int timeout_ms);
/* Kills and forgets the running and claimed jobs of p; they will run again elsewhere. */
void wrk_slots_abandon(wrk_worker *w, wrk_part *p);
size_t wrk_slots_count(const wrk_worker *w, wrk_estate s, const wrk_part *only);
void wrk_entry_release(wrk_entry *e);

/* wrk_commit.c: publishes DONE results and commits offsets + metadata in one transaction.
 * Returns 0 on success (or nothing to do), -1 after an abort (retried later); sets w->fatal
 * on a fatal producer error. */
int wrk_commit_batch(wrk_worker *w);
bool wrk_commit_due(const wrk_worker *w);

/* wrk_rebalance.c */
void wrk_rebalance_cb(rd_kafka_t *k, rd_kafka_resp_err_t e, rd_kafka_topic_partition_list_t *l,
                      void *opaque);
wrk_part *wrk_worker_part(wrk_worker *w, const char *topic, int32_t partition);
void wrk_worker_fatal(wrk_worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
