/* Rebalance: cooperative-sticky, served from our own poll, so it always runs between loop
 * steps; the commit in flight runs on the committer thread.
 * ASSIGN: read each new partition's committed offset and metadata (finished offsets above
 *   the watermark, start counts of jobs that were running) and start from there.
 * REVOKE: stop taking that partition's jobs; let its running jobs finish within the drain
 *   budget and kill the rest (they run again at the new owner); commit while our generation
 *   is still valid, promising that nothing more starts (h=0, wrk_offsets.h); then let the
 *   partition go.
 * LOST: another member may already own it: kill its jobs and discard their results; without
 *   waiting for the commit in flight (the broker may be away), whose batch holds some of them. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wrk_metrics.h"
#include "wrk_worker.h"

#define COMMITTED_TRIES 10

void wrk_worker_fatal(wrk_worker *w, const char *fmt, ...)
{
    va_list ap;
    if (w->fatal) return;
    va_start(ap, fmt);
    vsnprintf(w->why, sizeof w->why, fmt, ap);
    va_end(ap);
    w->fatal = true;
    /* why is a whole error ("codeq: worker: ..."); the line has the prefix once */
    const char *text = w->why, *prefix = "codeq: worker: ";
    if (!strncmp(text, prefix, strlen(prefix))) text += strlen(prefix);
    wrk_logx(WRK_LOG_ERROR, "fatal", NULL, "worker: fatal: %s", text);
}

wrk_part *wrk_worker_part(wrk_worker *w, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < w->nparts; i++)
        if (w->parts[i]->partition == partition && !strcmp(w->parts[i]->topic, topic))
            return w->parts[i];
    return NULL;
}

static void log_parts(const char *what, const rd_kafka_topic_partition_list_t *l)
{
    char buf[512];
    size_t o = 0;
    buf[0] = '\0';
    /* An offset only where there is one: librdkafka's "none yet" (-1001) means nothing here. */
    for (int i = 0; i < l->cnt && o < sizeof buf - 40; i++) {
        const rd_kafka_topic_partition_t *p = &l->elems[i];
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d", i ? "," : "", (int)p->partition);
        if (p->offset >= 0)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "@%lld", (long long)p->offset);
    }
    wrk_logx(WRK_LOG_INFO, "rebalance", NULL, "worker: %s partitions [%s]", what, buf);
}

/* The committed offsets and metadata of l; retried because a partition whose previous owner
 * has a transaction open answers "unstable offset" until that transaction ends. */
static int fetch_committed(wrk_worker *w, rd_kafka_topic_partition_list_t *l)
{
    rd_kafka_resp_err_t e = 0;
    for (int i = 0; i < COMMITTED_TRIES; i++) {
        e = rd_kafka_committed(w->k, l, 10000);
        bool bad = e != 0;
        for (int j = 0; !bad && j < l->cnt; j++) bad = l->elems[j].err != 0;
        if (!bad) return 0;
        if (!e) e = l->elems[0].err;
        wrk_logx(WRK_LOG_WARN, "committed_offsets_retry", NULL,
                 "worker: committed offsets: %s (retrying)", rd_kafka_err2str(e));
        usleep(500 * 1000);
    }
    wrk_worker_fatal(w, "codeq: worker: cannot read committed offsets: %s", rd_kafka_err2str(e));
    return -1;
}

static void add_part(wrk_worker *w, wrk_part *p)
{
    if (w->nparts == w->capparts) {
        size_t cap = w->capparts ? w->capparts * 2 : 16;
        wrk_part **np = realloc(w->parts, cap * sizeof *np);
        if (!np) {
            wrk_worker_fatal(w, "codeq: worker: out of memory");
            wrk_part_free(p);
            return;
        }
        w->parts = np;
        w->capparts = cap;
    }
    w->parts[w->nparts++] = p;
}

/* Whether the consumer resets a partition with nothing committed to its earliest offset: ours
 * (wrk_consume.c), unless the operator set auto.offset.reset. */
static bool resets_to_earliest(wrk_worker *w)
{
    char reset[32] = "";
    size_t n = sizeof reset;
    return rd_kafka_conf_get(rd_kafka_conf(w->k), "auto.offset.reset", reset, &n) ==
               RD_KAFKA_CONF_OK &&
           (!strcmp(reset, "smallest") || !strcmp(reset, "earliest") || !strcmp(reset, "beginning"));
}

/* Where a partition with nothing committed starts when the consumer resets to the earliest:
 * that offset, asked now. Left to librdkafka, 2.0.2 resets the offset itself but wakes its
 * broker thread only for an explicit offset, so a fresh group's first fetch waited for the
 * thread's next wake-up: ~100 ms after the assignment, every time. A failed query (within a
 * budget for the whole assignment) leaves the reset to librdkafka, as before. */
static int64_t start_offset(wrk_worker *w, const rd_kafka_topic_partition_t *t, bool earliest,
                            uint64_t deadline)
{
    int64_t lo, hi;
    uint64_t now = wrk_now_ms();
    /* Test hook (tests/integration/kafka_stall.py): the query failed, the start is librdkafka's */
    if (getenv("CODEQ_TEST_NO_START_QUERY")) return t->offset;
    if (t->offset >= 0 || !earliest || now >= deadline ||
        rd_kafka_query_watermark_offsets(w->k, t->topic, t->partition, &lo, &hi,
                                         (int)(deadline - now)))
        return t->offset;
    return lo;
}

static void take_over(wrk_worker *w, rd_kafka_topic_partition_list_t *l)
{
    rd_kafka_topic_partition_list_t *c = rd_kafka_topic_partition_list_copy(l);
    /* An assignment that arrives while the consumer is closing is handed straight back by the
     * close: nothing of it runs here, and its committed offsets cannot be read any more (the
     * reads time out, 10 x 10 s, holding a SIGTERMed worker far past its grace period). */
    if (w->leaving)
        log_parts("assigned while leaving, not taken:", l);
    else if (fetch_committed(w, c) == 0) {
        uint64_t deadline = wrk_now_ms() + 2000;
        bool earliest = resets_to_earliest(w);
        for (int i = 0; i < c->cnt; i++) {
            rd_kafka_topic_partition_t *t = &c->elems[i];
            wrk_part *p = wrk_part_new(t->topic, t->partition, t->offset, t->metadata,
                                       t->metadata_size);
            if (p) p->fetched_at = wrk_now_ms();
            if (p) add_part(w, p);
            /* where our view starts: committed, or unknown until the first record */
            l->elems[i].offset = start_offset(w, t, earliest, deadline);
            if (p && t->offset < 0) p->fetch_from = l->elems[i].offset; /* the start we set */
        }
        log_parts("assigned", l);
    }
    rd_kafka_topic_partition_list_destroy(c);
    /* librdkafka keeps a partition's pause across unassign and assign: one we paused (back-
     * pressure) before it was lost or revoked would come back paused, while our new view of it
     * says it is not, and nothing would ever resume it (seen after broker outages: assigned,
     * records waiting, nothing fetched, for good). Resumed before the assign starts its fetch. */
    rd_kafka_resume_partitions(w->k, l);
    rd_kafka_error_t *e = rd_kafka_incremental_assign(w->k, l);
    /* Test hook (tests/integration/kafka_stall.py): a pause the worker does not know about,
     * as the one above left behind, for the stall watchdog (wrk_consume.c) to find. */
    if (!e && getenv("CODEQ_TEST_HIDDEN_PAUSE")) rd_kafka_pause_partitions(w->k, l);
    if (e) {
        wrk_worker_fatal(w, "codeq: worker: assign: %s", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
}

void wrk_part_drop(wrk_part *p)
{
    for (size_t j = 0; j < p->n; j++) wrk_entry_release(&p->e[j]);
    wrk_part_free(p);
}

/* A partition in the commit in flight (lost during a broker outage, while the committer waits
 * for the broker) waits in limbo for that commit to end: its batch holds the partition's
 * finished jobs. The loop goes on meanwhile. */
static void remove_part(wrk_worker *w, wrk_part *p)
{
    wrk_slots_abandon(w, p);
    for (size_t i = 0; i < w->nparts; i++)
        if (w->parts[i] == p) {
            w->parts[i] = w->parts[--w->nparts];
            break;
        }
    if (!p->in_batch) {
        wrk_part_drop(p);
        return;
    }
    wrk_part **l = realloc(w->limbo, (w->nlimbo + 1) * sizeof *l);
    if (!l) {
        wrk_commit_collect(w, true); /* out of memory: wait for the commit instead */
        wrk_part_drop(p);
        return;
    }
    w->limbo = l;
    w->limbo[w->nlimbo++] = p;
}

/* Lets the revoked partitions' running jobs finish, up to the drain budget. */
static void drain(wrk_worker *w, wrk_part **rev, int n)
{
    uint64_t deadline = wrk_now_ms() + (uint64_t)w->c->drain_ms;
    for (;;) {
        size_t left = 0;
        for (int i = 0; i < n; i++) left += wrk_slots_count(w, WRK_E_RUNNING, rev[i]);
        uint64_t now = wrk_now_ms(), stop = wrk_stop_grace_end(); /* a stop ends it sooner */
        if (left == 0 || now >= deadline || (stop && now >= stop) || w->fatal) return;
        wrk_worker_wait_turn(w, 50);
    }
}

static void give_back(wrk_worker *w, rd_kafka_topic_partition_list_t *l, bool lost)
{
    wrk_part **rev = calloc((size_t)l->cnt + 1, sizeof *rev);
    int n = 0;
    log_parts(lost ? "lost" : "revoked", l);
    for (int i = 0; i < l->cnt; i++) {
        wrk_part *p = wrk_worker_part(w, l->elems[i].topic, l->elems[i].partition);
        if (p) rev[n++] = p;
    }
    if (!lost) {
        wrk_commit_collect(w, true); /* the hand-over commit follows it */
        for (int i = 0; i < n; i++) {
            rev[i]->handoff = true; /* nothing more starts here */
            for (size_t j = 0; j < rev[i]->n; j++) { /* not started: leave them to the new owner */
                wrk_entry *e = &rev[i]->e[j];
                if (e->state != WRK_E_PENDING && e->state != WRK_E_CLAIMED) continue;
                if (e->state == WRK_E_CLAIMED) wrk_slots_unclaim(w, rev[i], e);
                e->claim_ok = e->claim_sent = false;
                wrk_entry_release(e);
                e->state = WRK_E_KNOWN;
            }
        }
        drain(w, rev, n);
        for (int i = 0; i < n; i++) wrk_slots_abandon(w, rev[i]);
        wrk_commit_flush(w);
    }
    for (int i = 0; i < n; i++) remove_part(w, rev[i]);
    free(rev);
    rd_kafka_error_t *e = rd_kafka_incremental_unassign(w->k, l);
    if (e) {
        wrk_logx(WRK_LOG_WARN, "unassign_error", NULL,
                 "worker: unassign: %s", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
}

void wrk_rebalance_cb(rd_kafka_t *k, rd_kafka_resp_err_t e, rd_kafka_topic_partition_list_t *l,
                      void *opaque)
{
    wrk_worker *w = opaque;
    w->assigned_once = true;
    wrk_metrics_rebalance(e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS, rd_kafka_assignment_lost(k));
    if (e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
        take_over(w, l);
    else
        give_back(w, l, rd_kafka_assignment_lost(k));
}
