/* Lost records: a record batch librdkafka cannot decode (one that fails to decompress, e.g.
 * one that expands beyond receive.message.max.bytes) reaches the worker as one error, at the
 * batch's first offset, for a fetch set anywhere inside the batch; librdkafka fetches it again
 * and again, so its partition would never move on. Every record of it is still answered: each
 * gets an entry holding a view of that error at its own offset, and is dead-lettered.
 *
 * librdkafka does not say where such a batch ends, and every fetch that fails waits
 * fetch.error.backoff.ms: one record per fetch held a partition for minutes behind a batch of
 * thousands of small records. So the fetch probes ahead. A fetch set at offset T that gets the
 * batch's error again proves T is in the batch (a broker answers a fetch with the first batch
 * whose last offset is at or past T), hence every offset up to T: they are entered at once,
 * and the next probe goes twice as far. A probe that gets anything else (a record, another
 * batch's error) proves the batch ends below T: nothing of that fetch is taken, and the next
 * probe halves the distance. A batch of n records takes about 2 log2(n) fetches, at most as
 * many records per step as the partition has room for entries, and never a probe past the end
 * of the partition that librdkafka last saw (an out-of-range fetch would reset the offset).
 * That end is the high watermark, not the last stable offset: a probe at a transaction's
 * commit marker gets the partition's end (PARTITION_EOF) instead of a record, also past the
 * batch; one past an open transaction of a submitter's gets no answer at all, so a probe
 * unanswered for probe_ms counts as one past the batch too (were it inside, the batch's
 * error would have come at once: the batch is committed data). A seek that fails leaves the
 * fetch where it cannot be known, and a record could be skipped: the worker stops (fatal),
 * and the next owner goes on from what was committed (one that is only slow is not a failure:
 * wrk_part_seek). Only errors that say a record cannot be
 * decoded are taken; others (authorization, ...) say nothing of the record at their offset. */
#include <stdio.h>
#include <stdlib.h>

#include "wrk_worker.h"

/* One error message of librdkafka's, shared by the views made of it. */
typedef struct {
    rd_kafka_message_t *err;
    int refs;
} lost_error;

typedef struct {
    rd_kafka_message_t m; /* first: an entry holds &view->m as its message */
    lost_error *from;
} lost_view;

static void drop(lost_error *le)
{
    if (--le->refs > 0) return;
    rd_kafka_message_destroy(le->err);
    free(le);
}

void wrk_lost_view_free(rd_kafka_message_t *m)
{
    lost_view *v = (lost_view *)m;
    drop(v->from);
    free(v);
}

static void forget(wrk_part *p)
{
    p->lost_hi = p->lost_bound = -1;
    p->lost_step = 1;
}

static bool probing(const wrk_part *p)
{
    return p->lost_hi >= 0 && p->fetch_from > p->lost_hi + 1;
}

/* What librdkafka says of a record it has but cannot hand over. */
static bool undecodable(rd_kafka_resp_err_t e)
{
    return e == RD_KAFKA_RESP_ERR__BAD_COMPRESSION || e == RD_KAFKA_RESP_ERR__BAD_MSG ||
           e == RD_KAFKA_RESP_ERR__NOT_IMPLEMENTED || e == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE;
}

static void fetch_at(wrk_worker *w, wrk_part *p, int64_t at)
{
    rd_kafka_error_t *e = wrk_part_seek(w, p, at, false);
    p->lost_probe_at = wrk_now_ms();
    if (!e) return;
    wrk_worker_fatal(w, "codeq: worker: seek %s [%d] to %lld, stepping through a record batch "
                     "that cannot be decoded: %s", p->topic, (int)p->partition, (long long)at,
                     rd_kafka_error_string(e));
    rd_kafka_error_destroy(e);
}

int64_t wrk_lost_next(int64_t hi, int64_t bound, int64_t step, int64_t room, int64_t end)
{
    int64_t at = bound > hi ? hi + (bound - hi) / 2 : hi + step;
    if (at > hi + room) at = hi + room;
    if (end < 0) end = hi + 2; /* not known: one record at a time */
    if (at > end - 1) at = end - 1;
    return at > hi ? at : hi + 1;
}

int64_t wrk_lost_step(int64_t from, int64_t to)
{
    int64_t twice = 2 * (to - from + 1);
    return twice < WRK_PART_MAX_ENTRIES ? twice : WRK_PART_MAX_ENTRIES;
}

static int64_t next_probe(wrk_worker *w, const wrk_part *p)
{
    int64_t lo, end;
    if (rd_kafka_get_watermark_offsets(w->k, p->topic, p->partition, &lo, &end) != 0) end = -1;
    return wrk_lost_next(p->lost_hi, p->lost_bound, p->lost_step,
                         WRK_PART_PAUSE_AT - (int64_t)p->n, end);
}

/* Enters a view of m (which it takes) for each offset in [from, to], counting those entered
 * in *entered; returns the last offset entered or skipped as known already, from - 1 when the
 * partition is full at `from`. */
static int64_t enter(wrk_part *p, rd_kafka_message_t *m, int64_t from, int64_t to,
                     size_t *entered)
{
    lost_error *le = malloc(sizeof *le);
    if (!le) {
        rd_kafka_message_destroy(m);
        return from - 1;
    }
    *le = (lost_error){m, 1}; /* this function's hold, dropped at the end */
    int64_t off = from;
    for (; off <= to; off++) {
        lost_view *v = malloc(sizeof *v);
        if (!v) break;
        *v = (lost_view){*m, le};
        v->m.offset = off;
        le->refs++;
        bool skipped;
        wrk_entry *e = wrk_part_consumed(p, &v->m, &skipped);
        if (e) {
            e->view = true;
            (*entered)++;
            continue;
        }
        wrk_lost_view_free(&v->m);
        if (!skipped) break; /* full */
    }
    drop(le);
    return off - 1;
}

/* Overshot: the batch ends below the offset the fetch was set at. */
static void overshot(wrk_worker *w, wrk_part *p)
{
    p->lost_bound = p->fetch_from;
    fetch_at(w, p, next_probe(w, p));
}

void wrk_lost_tick(wrk_worker *w)
{
    uint64_t now = wrk_now_ms();
    for (size_t i = 0; i < w->nparts && !w->fatal; i++) {
        wrk_part *p = w->parts[i];
        if (!probing(p)) continue;
        if (p->paused) /* no answer can come while paused: the wait starts at the resume */
            p->lost_probe_at = now;
        else if (now - p->lost_probe_at > w->probe_ms)
            overshot(w, p);
    }
}

bool wrk_lost_take(wrk_worker *w, wrk_part *p, rd_kafka_message_t *m)
{
    if (!p || m->offset < 0) return false;
    if (!m->err || m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) { /* a record, or the end */
        if (!probing(p)) {
            if (p->lost_hi >= 0) forget(p); /* the batch is behind us */
            return false;
        }
        rd_kafka_message_destroy(m);
        overshot(w, p);
        return true;
    }
    if (!undecodable(m->err)) return false;
    int64_t batch = m->offset;
    bool again = batch < p->fetch_from && (batch == p->err_at || batch < p->watermark);
    if (probing(p) && !(again && batch == p->err_at)) { /* another batch's error */
        rd_kafka_message_destroy(m);
        overshot(w, p);
        return true;
    }
    if (batch != p->err_at) forget(p);
    p->err_at = batch;
    if (again && p->lost_hi >= p->fetch_from) { /* a fetch set back: nothing new */
        rd_kafka_message_destroy(m);
        fetch_at(w, p, next_probe(w, p));
        return true;
    }
    int64_t from = !again ? batch : p->lost_hi >= 0 ? p->lost_hi + 1 : p->fetch_from;
    int64_t to = again ? p->fetch_from : batch;
    char errstr[256];
    snprintf(errstr, sizeof errstr, "%s", rd_kafka_message_errstr(m));
    size_t entered = 0;
    int64_t last = enter(p, m, from, to, &entered);
    wrk_log_ctx ctx = {NULL, p->topic, p->partition, from};
    char span[48] = "";
    if (last > from) snprintf(span, sizeof span, "s %lld-%lld", (long long)from, (long long)last);
    else snprintf(span, sizeof span, " %lld", (long long)from);
    if (entered)
        wrk_logx(WRK_LOG_WARN, "dead_lettered", &ctx,
                 "worker: %s [%d] offset%s%s: %s; %zu dead-lettered, skipped", p->topic,
                 (int)p->partition, span,
                 again ? " (in the record batch that fails at its first offset)" : "", errstr,
                 entered);
    if (last < from) {
        wrk_part_hold(w, p, from);
        return true;
    }
    if (last == to && p->lost_bound < 0) p->lost_step = wrk_lost_step(from, to);
    p->lost_hi = last;
    fetch_at(w, p, next_probe(w, p));
    return true;
}
