/* Offsets: per-partition bookkeeping for exactly-once with out-of-order completion.
 * See wrk_offsets.h for the design; this file is pure bookkeeping (no Kafka calls), so it is
 * unit-tested on its own (tests/unit/test_worker_offsets.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_offsets.h"

#define MD_PREFIX "codeq1"

/* Index of the first entry with offset >= off. */
static size_t lower_bound(const wrk_part *p, int64_t off)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->e[mid].offset < off) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

wrk_entry *wrk_part_entry(wrk_part *p, int64_t offset)
{
    size_t i = lower_bound(p, offset);
    if (i < p->n && p->e[i].offset == offset) return &p->e[i];
    if (p->n >= WRK_PART_MAX_ENTRIES) return NULL;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        wrk_entry *e = realloc(p->e, cap * sizeof *e);
        if (!e) return NULL;
        p->e = e;
        p->cap = cap;
    }
    memmove(&p->e[i + 1], &p->e[i], (p->n - i) * sizeof *p->e);
    p->n++;
    p->e[i] = (wrk_entry){.offset = offset, .state = WRK_E_KNOWN};
    return &p->e[i];
}

/* Reads "d=1,4", "a=2:1,3:2" and "h=64" sections; anything else is ignored (a newer format). */
static void parse_metadata(wrk_part *p, const char *md, size_t len)
{
    char buf[4200];
    if (p->watermark < 0 || len >= sizeof buf || len < strlen(MD_PREFIX) ||
        strncmp(md, MD_PREFIX, strlen(MD_PREFIX)) != 0)
        return;
    memcpy(buf, md, len);
    buf[len] = '\0';
    char *save = NULL;
    for (char *sec = strtok_r(buf, ";", &save); sec; sec = strtok_r(NULL, ";", &save)) {
        if (strncmp(sec, "h=", 2) == 0) {
            long long h = strtoll(sec + 2, NULL, 10);
            if (h > 0) p->careful_until = p->watermark + h;
            continue;
        }
        bool done = strncmp(sec, "d=", 2) == 0, att = strncmp(sec, "a=", 2) == 0;
        if (!done && !att) continue;
        char *s2 = NULL;
        for (char *it = strtok_r(sec + 2, ",", &s2); it; it = strtok_r(NULL, ",", &s2)) {
            char *end;
            long long delta = strtoll(it, &end, 10);
            int attempts = (att && *end == ':') ? atoi(end + 1) : 0;
            /* a finished offset is above the watermark; a started one may be at it */
            wrk_entry *e = (delta > 0 || (att && delta == 0))
                               ? wrk_part_entry(p, p->watermark + delta) : NULL;
            if (!e) continue;
            if (done) {
                e->state = WRK_E_COMMITTED;
            } else {
                e->attempts = attempts;
                e->suspect = attempts > 0;
            }
        }
    }
}

wrk_part *wrk_part_new(const char *topic, int32_t partition, int64_t committed,
                       const char *metadata, size_t mdlen)
{
    wrk_part *p = calloc(1, sizeof *p);
    if (!p || !(p->topic = strdup(topic))) {
        free(p);
        return NULL;
    }
    p->partition = partition;
    p->watermark = committed >= 0 ? committed : -1;
    p->next = p->watermark;
    p->fetch_from = p->watermark; /* librdkafka starts at the committed offset */
    p->err_at = p->lost_hi = p->lost_bound = -1;
    p->lost_step = 1;
    p->lease = -1; /* a new owner starts nothing before its own lease is committed */
    p->careful_until = -1;
    if (metadata && mdlen) parse_metadata(p, metadata, mdlen);
    return p;
}

void wrk_part_free(wrk_part *p)
{
    if (!p) return;
    free(p->e);
    free(p->topic);
    free(p);
}

wrk_entry *wrk_part_consumed(wrk_part *p, rd_kafka_message_t *m, bool *skipped)
{
    *skipped = false;
    if (p->watermark < 0) p->watermark = p->next = m->offset;
    if (m->offset < p->watermark) {
        *skipped = true;
        return NULL;
    }
    wrk_entry *e = wrk_part_entry(p, m->offset);
    if (!e) return NULL;
    if (e->state != WRK_E_KNOWN) {
        /* committed by an earlier owner (skip it), or a redelivery of one we hold */
        *skipped = true;
        if (m->offset + 1 > p->next) p->next = m->offset + 1;
        if (e->state == WRK_E_COMMITTED) p->dirty = true;
        return NULL;
    }
    e->state = WRK_E_PENDING;
    e->msg = m;
    if (m->offset + 1 > p->next) p->next = m->offset + 1;
    return e;
}

bool wrk_part_at_end(wrk_part *p, int64_t end)
{
    /* nothing taken or committed, the fetch set at the partition's start: no record below end */
    if (p->next < 0 && p->watermark < 0 && p->fetch_from >= 0 && end > p->fetch_from)
        p->watermark = p->next = p->fetch_from;
    /* nothing taken or committed, the start librdkafka's own (auto.offset.reset; the worker's
     * query for it failed): no record below end was handed over since, so the position is
     * the end, committed once, as a Java consumer's is. Left unknown, the partition stayed
     * uncommitted for good, and a reset to the latest would skip what came meanwhile. */
    if (p->next < 0 && p->watermark < 0 && p->fetch_from < 0 && end > 0) {
        p->watermark = p->next = end;
        p->dirty = true;
        return true;
    }
    /* fetch_from -1 with a known position: librdkafka's own start (auto.offset.reset), at or
     * below the first record taken */
    if (p->next < 0 || end <= p->next || p->fetch_from > p->next) return false;
    p->next = end;
    return true;
}

static bool finished(wrk_estate s)
{
    return s == WRK_E_DONE || s == WRK_E_COMMITTING || s == WRK_E_COMMITTED;
}

int64_t wrk_part_commit_offset(const wrk_part *p)
{
    if (p->next < 0) return -1;
    for (size_t i = 0; i < p->n; i++)
        if (!finished(p->e[i].state)) return p->e[i].offset < p->next ? p->e[i].offset : p->next;
    return p->next;
}

static size_t append(char *buf, size_t len, size_t at, const char *fmt, long long a, int b)
{
    if (at >= len) return at;
    int k = snprintf(buf + at, len - at, fmt, a, b);
    return k < 0 ? at : at + (size_t)k;
}

size_t wrk_part_metadata(const wrk_part *p, int64_t lease, char *buf, size_t len)
{
    int64_t w = wrk_part_commit_offset(p);
    /* Written in passes to keep the format readable: finished offsets, attempts, lease. */
    size_t at = (size_t)snprintf(buf, len, "%s", MD_PREFIX);
    bool first = true;
    for (size_t i = 0; i < p->n; i++) {
        if (p->e[i].offset <= w || !finished(p->e[i].state)) continue;
        at = append(buf, len, at, first ? ";d=%lld" : ",%lld", (long long)(p->e[i].offset - w), 0);
        first = false;
    }
    first = true;
    for (size_t i = 0; i < p->n; i++) {
        const wrk_entry *e = &p->e[i];
        if (e->offset < w || finished(e->state) || e->attempts <= 0) continue;
        at = append(buf, len, at, first ? ";a=%lld:%d" : ",%lld:%d", (long long)(e->offset - w),
                    e->attempts);
        first = false;
    }
    if (lease >= w) at = append(buf, len, at, ";h=%lld", (long long)(lease - w), 0);
    return at < len ? at : len - 1;
}

wrk_start wrk_part_start_rule(const wrk_part *p, const wrk_entry *e)
{
    if (e->suspect || e->offset < p->careful_until)
        return e->state == WRK_E_CLAIMED && e->claim_ok ? WRK_START_NOW : WRK_START_CLAIM;
    return e->offset < p->lease && !p->handoff ? WRK_START_NOW : WRK_START_WAIT;
}

/* The lease the next commit promises: none past the watermark on hand-over; otherwise far
 * enough ahead that starting jobs rarely waits for it. */
static int64_t next_lease(const wrk_part *p, int64_t offset)
{
    if (p->handoff) return offset;
    int64_t ahead = (p->next > offset ? p->next : offset) + WRK_LEASE_AHEAD;
    return p->lease > ahead ? p->lease : ahead;
}

bool wrk_part_has_work(const wrk_part *p)
{
    if (p->in_batch) return false;
    if (p->dirty || p->want_lease || p->handoff) return true;
    int64_t off = wrk_part_commit_offset(p);
    return off >= 0 && (off != p->watermark || p->lease < p->next + WRK_LEASE_AHEAD / 2);
}

bool wrk_part_batch(wrk_part *p, int64_t *offset, char *md, size_t mdlen, size_t *mdn)
{
    int64_t off = wrk_part_commit_offset(p);
    if (off < 0 || !wrk_part_has_work(p)) return false;
    for (size_t i = 0; i < p->n; i++) {
        wrk_entry *e = &p->e[i];
        if (e->state == WRK_E_DONE) e->state = WRK_E_COMMITTING;
        if (e->state == WRK_E_CLAIMED && !e->claim_ok) e->claim_sent = true;
    }
    p->batch_offset = *offset = off;
    p->batch_lease = next_lease(p, off);
    *mdn = wrk_part_metadata(p, p->batch_lease, md, mdlen);
    p->in_batch = true;
    p->dirty = p->want_lease = false;
    return true;
}

void wrk_part_batch_end(wrk_part *p, bool committed, void (*release)(wrk_entry *))
{
    if (!p->in_batch) return;
    p->in_batch = false;
    for (size_t i = 0; i < p->n; i++) {
        wrk_entry *e = &p->e[i];
        if (e->state == WRK_E_COMMITTING) {
            e->state = committed ? WRK_E_COMMITTED : WRK_E_DONE;
            if (committed) release(e);
        }
        if (e->claim_sent) e->claim_ok = committed;
        e->claim_sent = false;
    }
    if (!committed) {
        p->dirty = true;
        return;
    }
    size_t drop = 0;
    while (drop < p->n && p->e[drop].offset < p->batch_offset) release(&p->e[drop++]);
    if (drop) memmove(p->e, p->e + drop, (p->n - drop) * sizeof *p->e); /* e may be NULL */
    p->n -= drop;
    p->watermark = p->batch_offset;
    p->lease = p->batch_lease;
}

size_t wrk_part_count(const wrk_part *p, wrk_estate s)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) n += p->e[i].state == s;
    return n;
}
