/* Commit: exactly-once through Kafka transactions. One short transaction carries the results
 * and audit events of every finished job together with the consumed offsets (watermark +
 * metadata, see wrk_offsets.h). No transaction is open while jobs run: finished work waits in
 * memory, at most one commit interval, then goes out at once. An abortable failure keeps the
 * finished work and tries again on a later tick (no consumer rewind needed); a fatal one
 * (fenced, producer fatal error) ends the worker so that its orchestrator restarts it.
 * Error classes follow librdkafka: retriable -> retry, txn_requires_abort -> abort, else fatal. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_worker.h"

#define TXN_TIMEOUT_MS 10000
#define TXN_TRIES 6
#define ABORT_BACKOFF_MS 200

static bool has_work(const wrk_part *p)
{
    if (p->dirty) return true;
    int64_t off = wrk_part_commit_offset(p);
    return off >= 0 && off != p->watermark;
}

bool wrk_commit_due(const wrk_worker *w)
{
    uint64_t now = wrk_now_ms();
    if (now < w->retry_at) return false;
    bool claimed = false, done = false, other = false;
    for (size_t i = 0; i < w->nparts; i++) {
        const wrk_part *p = w->parts[i];
        claimed |= wrk_part_count(p, WRK_E_CLAIMED) > 0;
        done |= wrk_part_count(p, WRK_E_DONE) > 0;
        other |= has_work(p);
    }
    /* Claimed jobs wait for this commit to start: never make them wait longer. Finished
     * results go at once when idle, otherwise batched within the commit interval. */
    if (claimed) return true;
    if (!done && !other) return false;
    return w->running == 0 || now - w->last_commit >= (uint64_t)w->c->commit_interval_ms;
}

/* Runs one transactional call with retries; returns 0, 1 (abort needed) or -1 (fatal). */
static int txn_step(wrk_worker *w, const char *what, rd_kafka_error_t *(*call)(wrk_worker *, void *),
                    void *arg)
{
    for (int i = 0; i < TXN_TRIES; i++) {
        rd_kafka_error_t *e = call(w, arg);
        if (!e) return 0;
        bool retry = rd_kafka_error_is_retriable(e), abort = rd_kafka_error_txn_requires_abort(e);
        wrk_log("worker: transaction: %s: %s%s", what, rd_kafka_error_string(e),
                retry ? " (retrying)" : abort ? " (aborting)" : "");
        if (!retry && !abort) {
            wrk_worker_fatal(w, "codeq: worker: transaction %s: %s", what,
                             rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
            return -1;
        }
        rd_kafka_error_destroy(e);
        if (abort) return 1;
    }
    return 1;
}

static rd_kafka_error_t *send_offsets(wrk_worker *w, void *offsets)
{
    rd_kafka_consumer_group_metadata_t *g = rd_kafka_consumer_group_metadata(w->k);
    rd_kafka_error_t *e = rd_kafka_send_offsets_to_transaction(w->p, offsets, g, TXN_TIMEOUT_MS);
    rd_kafka_consumer_group_metadata_destroy(g);
    return e;
}

static rd_kafka_error_t *commit_txn(wrk_worker *w, void *arg)
{
    (void)arg;
    return rd_kafka_commit_transaction(w->p, TXN_TIMEOUT_MS);
}

static rd_kafka_error_t *abort_txn(wrk_worker *w, void *arg)
{
    (void)arg;
    return rd_kafka_abort_transaction(w->p, TXN_TIMEOUT_MS);
}

/* One DONE job's records. A record that can never be produced (-2) costs only its job: the
 * job is answered with a short internal_error instead, in this same transaction. */
static int produce_one(wrk_worker *w, wrk_entry *e)
{
    char err[512];
    const char *why;
    void *token = (void *)(uintptr_t)wrk_task_token(e->task);
    wrk_outcome *o = wrk_task_finish(e->task);
    bool dead = wrk_task_dead_letter(e->task, &why);
    int rc = dead ? wrk_publish_dead_letter(w->p, w->c, e->msg, why, o, NULL, token, err, sizeof err)
                  : wrk_publish_outcome(w->p, w->c, o->reply_to, o, NULL, token, err, sizeof err);
    if (rc == -2 && !dead && !wrk_task_unpublished(e->task)) {
        wrk_log("worker: job %s: %s; answered internal_error instead",
                json_string_value(json_object_get(o->result, "id")), err);
        wrk_task_unpublishable(e->task, err + strlen("codeq: publish: "));
        rc = wrk_publish_outcome(w->p, w->c, o->reply_to, o, NULL, token, err, sizeof err);
    }
    if (rc < 0) wrk_log("worker: %s", err);
    return rc < 0 ? -1 : 0;
}

/* Produces the records of every DONE job; -1 if one could not be queued. */
static int produce_done(wrk_worker *w)
{
    for (size_t i = 0; i < w->nparts; i++)
        for (size_t j = 0; j < w->parts[i]->n; j++) {
            wrk_entry *e = &w->parts[i]->e[j];
            if (e->state == WRK_E_DONE && produce_one(w, e) < 0) return -1;
        }
    return 0;
}

/* A record the broker refused for itself (too large for the topic, an unknown or forbidden
 * reply_to): its job is answered another way in the next transaction, after this one aborts.
 * Purged records of an aborted transaction and worker-wide errors change nothing. */
void wrk_commit_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    wrk_worker *w = opaque;
    uint64_t token = (uint64_t)(uintptr_t)m->_private;
    if (!m->err || !token || !wrk_publish_record_error(m->err)) return;
    for (size_t i = 0; i < w->nparts; i++)
        for (size_t j = 0; j < w->parts[i]->n; j++) {
            wrk_entry *e = &w->parts[i]->e[j];
            if (e->state != WRK_E_DONE || wrk_task_token(e->task) != token) continue;
            char why[300];
            snprintf(why, sizeof why, "%s refused it: %s", rd_kafka_topic_name(m->rkt),
                     rd_kafka_err2str(m->err));
            wrk_log("worker: a record of job offset %lld: %s; answering internal_error",
                    (long long)e->offset, why);
            wrk_task_unpublishable(e->task, why);
            return;
        }
}

static rd_kafka_topic_partition_list_t *offsets_to_commit(wrk_worker *w)
{
    char md[4096];
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)w->nparts);
    for (size_t i = 0; i < w->nparts; i++) {
        wrk_part *p = w->parts[i];
        int64_t off = wrk_part_commit_offset(p);
        if (off < 0 || !has_work(p)) continue;
        rd_kafka_topic_partition_t *t = rd_kafka_topic_partition_list_add(l, p->topic, p->partition);
        t->offset = off;
        size_t n = wrk_part_metadata(p, md, sizeof md);
        t->metadata = malloc(n);
        memcpy(t->metadata, md, n);
        t->metadata_size = n;
    }
    return l;
}

static void committed(wrk_worker *w)
{
    for (size_t i = 0; i < w->nparts; i++) {
        w->jobs_done += wrk_part_count(w->parts[i], WRK_E_DONE);
        wrk_part_committed(w->parts[i], wrk_entry_release);
    }
    w->commits++;
    wrk_slots_start_claimed(w);
}

static int abort_and_back_off(wrk_worker *w)
{
    w->aborts++;
    w->retry_at = wrk_now_ms() + ABORT_BACKOFF_MS;
    if (txn_step(w, "abort", abort_txn, NULL) != 0 && !w->fatal)
        wrk_worker_fatal(w, "codeq: worker: transaction could not be aborted");
    return -1;
}

int wrk_commit_batch(wrk_worker *w)
{
    rd_kafka_topic_partition_list_t *l = offsets_to_commit(w);
    w->last_commit = wrk_now_ms();
    if (l->cnt == 0) {
        rd_kafka_topic_partition_list_destroy(l);
        return 0;
    }
    rd_kafka_error_t *e = rd_kafka_begin_transaction(w->p);
    if (e) {
        wrk_worker_fatal(w, "codeq: worker: begin transaction: %s", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        rd_kafka_topic_partition_list_destroy(l);
        return -1;
    }
    int rc = produce_done(w) < 0 ? 1 : txn_step(w, "send offsets", send_offsets, l);
    if (rc == 0) rc = txn_step(w, "commit", commit_txn, NULL);
    rd_kafka_topic_partition_list_destroy(l);
    if (rc == 0) {
        committed(w);
        return 0;
    }
    return rc > 0 ? abort_and_back_off(w) : -1;
}
