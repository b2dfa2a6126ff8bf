/* The audit hash chain: stamping (committer thread), resuming after a restart (worker start)
 * and verifying (codeq audit --verify). The format is described in wrk_audit_chain.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "wrk_audit_chain.h"
#include "wrk_internal.h"

void wrk_chain_new_epoch(char out[64])
{
    struct timespec ts;
    struct tm tm;
    uint32_t r = 0;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    /* A clock alone could repeat (two starts in one ms, or a clock set back): add randomness.
     * If getrandom fails the time still tells most epochs apart. */
    if (getrandom(&r, sizeof r, 0) != sizeof r) r = (uint32_t)ts.tv_nsec ^ (uint32_t)getpid();
    char t[32];
    strftime(t, sizeof t, "%Y%m%dT%H%M%S", &tm);
    snprintf(out, 64, "%s.%03ldZ-%08" PRIx32, t, ts.tv_nsec / 1000000, r);
}

void wrk_chain_init(wrk_chain *ch, const char *writer, const char *epoch, const char *prev_epoch,
                    const char *prev_hash)
{
    memset(ch, 0, sizeof *ch);
    snprintf(ch->writer, sizeof ch->writer, "%s", writer);
    snprintf(ch->epoch, sizeof ch->epoch, "%s", epoch);
    snprintf(ch->prev_epoch, sizeof ch->prev_epoch, "%s", prev_epoch ? prev_epoch : "");
    snprintf(ch->first_prev, sizeof ch->first_prev, "%s", prev_hash ? prev_hash : "");
}

int wrk_chain_hash(const json_t *ev, char hex[65])
{
    /* Shallow copies: setting a field in them leaves ev and its chain as they were. */
    json_t *e = json_copy((json_t *)ev);
    json_t *chain = json_object_get(ev, "chain");
    json_t *c = chain ? json_copy(chain) : NULL;
    if (!e || (chain && !c)) {
        json_decref(e);
        return -1;
    }
    if (c) {
        json_object_del(c, "hash");
        json_object_set_new(e, "chain", c);
    }
    char *s = json_dumps(e, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(e);
    if (!s) return -1;
    wrk_sha256_hex(s, strlen(s), hex);
    free(s);
    return 0;
}

int wrk_chain_stamp(wrk_chain *ch, json_t *ev)
{
    const char *prev = ch->seq == 0 ? ch->first_prev : ch->prev;
    json_t *c = json_pack("{s:s, s:s, s:I, s:s?}", "writer", ch->writer, "epoch", ch->epoch,
                          "seq", (json_int_t)ch->seq, "prev", prev[0] ? prev : NULL);
    if (!c) return -1;
    if (ch->seq == 0)
        json_object_set_new(c, "prev_epoch",
                            ch->prev_epoch[0] ? json_string(ch->prev_epoch) : json_null());
    json_object_set_new(ev, "chain", c);
    char hex[65];
    if (wrk_chain_hash(ev, hex) < 0) return -1;
    json_object_set_new(c, "hash", json_string(hex));
    memcpy(ch->undo_prev, ch->prev, sizeof hex);
    memcpy(ch->prev, hex, sizeof hex);
    ch->seq++;
    return 0;
}

void wrk_chain_unstamp(wrk_chain *ch)
{
    if (ch->seq == 0) return;
    ch->seq--;
    memcpy(ch->prev, ch->undo_prev, sizeof ch->prev);
}

void wrk_chain_commit(wrk_chain *ch)
{
    ch->c_seq = ch->seq;
    memcpy(ch->c_prev, ch->prev, sizeof ch->prev);
}

void wrk_chain_rewind(wrk_chain *ch)
{
    ch->seq = ch->c_seq;
    memcpy(ch->prev, ch->c_prev, sizeof ch->prev);
}

/* ---- resuming after a restart ---- */

static wrk_chain worker_chain;
static bool worker_chain_on;

wrk_chain *wrk_chain_worker(void)
{
    return worker_chain_on ? &worker_chain : NULL;
}

size_t wrk_chain_room(void)
{
    /* ,"chain":{"writer":W,"epoch":E,"seq":N,"prev":H,"prev_epoch":E,"hash":H}: ~240 bytes
     * beside the writer, whose name an escape could double. */
    return worker_chain_on ? 320 + 2 * strlen(worker_chain.writer) : 0;
}

/* The writer's epochs seen in the tail: each one's newest event, and whether a later epoch
 * names it as its predecessor. The newest epoch is the one no other names; start times
 * (which begin an epoch id) decide only when links are out of sight, so a clock set back
 * between two starts does not mislead it while the later epoch's seq 0 is in the tail. */
#define EPOCHS_MAX 64
typedef struct {
    char epoch[64];
    int64_t seq;
    char hash[65];
    bool named;
} seen_epoch;

typedef struct {
    seen_epoch e[EPOCHS_MAX];
    int n;
    const char *epoch; /* the result */
    int64_t seq;
    const char *hash;
} newest;

static seen_epoch *epoch_slot(newest *n, const char *epoch)
{
    for (int i = 0; i < n->n; i++)
        if (!strcmp(n->e[i].epoch, epoch)) return &n->e[i];
    int i = 0;
    if (n->n < EPOCHS_MAX) i = n->n++;
    else /* more epochs than that in the tail: the oldest by start time makes room */
        for (int j = 1; j < EPOCHS_MAX; j++)
            if (strcmp(n->e[j].epoch, n->e[i].epoch) < 0) i = j;
    n->e[i] = (seen_epoch){.seq = -1};
    snprintf(n->e[i].epoch, sizeof n->e[i].epoch, "%s", epoch);
    return &n->e[i];
}

/* An event's chain fields, pointing into it. */
typedef struct {
    const json_t *chain;
    const char *writer, *epoch, *hash, *prev, *prev_epoch; /* prev, prev_epoch: NULL if none */
    int64_t seq;
} chain_fields;

/* Reads ev's chain; false unless writer, epoch, seq >= 0 and a 64-digit hash are there and a
 * prev, if any, is 64 digits too. */
static bool chain_read(const json_t *ev, chain_fields *f)
{
    const json_t *ch = json_object_get(ev, "chain"), *sq = json_object_get(ch, "seq");
    *f = (chain_fields){
        .chain = ch,
        .writer = json_string_value(json_object_get(ch, "writer")),
        .epoch = json_string_value(json_object_get(ch, "epoch")),
        .hash = json_string_value(json_object_get(ch, "hash")),
        .prev = json_string_value(json_object_get(ch, "prev")),
        .prev_epoch = json_string_value(json_object_get(ch, "prev_epoch")),
        .seq = json_is_integer(sq) ? json_integer_value(sq) : -1,
    };
    return f->writer && f->epoch && f->hash && f->seq >= 0 && strlen(f->hash) == 64 &&
           (!f->prev || strlen(f->prev) == 64);
}

static void consider(newest *n, const char *writer, const rd_kafka_message_t *m)
{
    /* Most records are other writers': a byte search spares parsing them. */
    if (!m->payload || !memmem(m->payload, m->len, writer, strlen(writer))) return;
    json_t *ev = json_loadb(m->payload, m->len, JSON_ALLOW_NUL, NULL);
    chain_fields f;
    if (chain_read(ev, &f) && !strcmp(f.writer, writer)) {
        seen_epoch *e = epoch_slot(n, f.epoch);
        if (f.seq > e->seq) {
            e->seq = f.seq;
            memcpy(e->hash, f.hash, 65);
        }
        if (f.prev_epoch) epoch_slot(n, f.prev_epoch)->named = true;
    }
    json_decref(ev);
}

static void pick_newest(newest *n)
{
    const seen_epoch *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++) /* unnamed ones first */
        for (int i = 0; i < n->n; i++) {
            const seen_epoch *e = &n->e[i];
            if (e->seq < 0 || (pass == 0 && e->named)) continue;
            if (!best || strcmp(e->epoch, best->epoch) > 0) best = e;
        }
    n->epoch = best ? best->epoch : NULL;
    n->seq = best ? best->seq : -1;
    n->hash = best ? best->hash : NULL;
}

#define RESUME_MS 20000

/* A handle whose watermark queries answer the high watermark: a read_committed one answers
 * the last stable offset, short of records behind another worker's open transaction. */
static rd_kafka_t *high_handle(const wrk_config *c, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(&c->kafka, err, errlen);
    if (!conf) return NULL;
    const char *const kv[][2] = {{"group.id", "codeq-audit-resume"},
                                 {"isolation.level", "read_uncommitted"}};
    if (wrk_kafka_set_all(conf, kv, 2, err, errlen) < 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_t *k = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!k) snprintf(err, errlen, "codeq: audit chain: consumer: %s", kerr);
    return k;
}

/* Reads the tail of every partition of the audit topic into n. -1 (err) on a Kafka error; a
 * read that runs out of time leaves n with what was seen and says so in err with 1. */
static int read_tail(const wrk_config *c, const char *writer, newest *n, char *err,
                     size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(&c->kafka, err, errlen);
    if (!conf) return -1;
    const char *const kv[][2] = {{"group.id", "codeq-audit-resume"},
                                 {"enable.auto.commit", "false"},
                                 {"isolation.level", "read_committed"},
                                 {"enable.partition.eof", "true"}};
    if (wrk_kafka_set_all(conf, kv, 4, err, errlen) < 0) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_t *k = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!k) {
        snprintf(err, errlen, "codeq: audit chain: consumer: %s", kerr);
        return -1;
    }
    const char *topic = c->kafka.audit_topic;
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t e = wrk_kafka_topic_metadata(k, topic, 10000, &md);
    int rc = 0;
    if (e) {
        snprintf(err, errlen, "codeq: audit chain: metadata of %s: %s", topic, rd_kafka_err2str(e));
        rd_kafka_destroy(k);
        return -1;
    }
    int np = md->topic_cnt == 1 && !md->topics[0].err ? md->topics[0].partition_cnt : 0;
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(np > 0 ? np : 1);
    int64_t *end = calloc(np > 0 ? (size_t)np : 1, sizeof *end);
    int left = 0;
    if (!end) rc = -1, snprintf(err, errlen, "codeq: audit chain: out of memory");
    rd_kafka_t *q = rc == 0 && np > 0 ? high_handle(c, err, errlen) : NULL;
    if (np > 0 && !q) rc = -1;
    for (int p = 0; p < np && rc == 0; p++) {
        int64_t lo, hi;
        e = rd_kafka_query_watermark_offsets(q, topic, p, &lo, &hi, 10000);
        end[p] = -1;
        if (e) {
            snprintf(err, errlen, "codeq: audit chain: offsets of %s [%d]: %s", topic, p,
                     rd_kafka_err2str(e));
            rc = -1;
            break;
        }
        if (hi <= lo) continue;
        rd_kafka_topic_partition_list_add(l, topic, p)->offset =
            hi - lo > WRK_CHAIN_LOOKBACK ? hi - WRK_CHAIN_LOOKBACK : lo;
        end[p] = hi;
        left++;
    }
    if (q) rd_kafka_destroy(q);
    if (rc == 0 && left && (e = rd_kafka_assign(k, l))) {
        snprintf(err, errlen, "codeq: audit chain: assign: %s", rd_kafka_err2str(e));
        rc = -1;
    }
    uint64_t deadline = wrk_now_ms() + RESUME_MS;
    while (rc == 0 && left > 0) {
        if (wrk_now_ms() > deadline) {
            snprintf(err, errlen, "codeq: audit chain: reading the tail of %s took over %d s",
                     topic, RESUME_MS / 1000);
            rc = 1;
            break;
        }
        rd_kafka_message_t *m = rd_kafka_consumer_poll(k, 200);
        if (!m) continue;
        /* Up to the high watermark read after our fencing, not to the first end of what is
         * readable: another worker's open transaction holds read_committed back there, and
         * the newest event of ours may lie behind it. */
        int p = m->partition;
        bool in = p >= 0 && p < np && end[p] >= 0;
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (in && m->offset >= end[p]) end[p] = -1, left--;
        } else if (m->err) {
            snprintf(err, errlen, "codeq: audit chain: reading %s: %s", topic,
                     rd_kafka_message_errstr(m));
            rc = -1;
        } else {
            consider(n, writer, m);
            if (in && m->offset + 1 >= end[p]) end[p] = -1, left--;
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_topic_partition_list_destroy(l);
    free(end);
    rd_kafka_consumer_close(k);
    rd_kafka_destroy(k);
    return rc;
}

int wrk_chain_resume(const wrk_config *c, const char *writer, char *err, size_t errlen)
{
    static newest n; /* large; the worker resumes once */
    char epoch[64];
    int rc = read_tail(c, writer, &n, err, errlen);
    wrk_chain_new_epoch(epoch);
    /* The chain goes on either way. A worker that may not read the audit topic (ACL), or did
     * not read its tail in time, names no predecessor rather than one that may not be the
     * last: prev_epoch null says "unknown", a wrong link would read as a cut. */
    if (rc == 0) pick_newest(&n); /* else n.epoch stays NULL */
    wrk_chain_init(&worker_chain, writer, epoch, n.epoch, n.hash);
    worker_chain_on = true;
    if (rc != 0) {
        wrk_logx(WRK_LOG_WARN, "audit_chain_resume", NULL,
                 "%s; audit chain %s epoch %s names no predecessor", err, writer, epoch);
        err[0] = '\0';
    } else if (n.epoch)
        wrk_logx(WRK_LOG_INFO, "audit_chain", NULL,
                 "worker: audit chain %s epoch %s follows epoch %s at seq %" PRId64, writer,
                 epoch, n.epoch, n.seq);
    else
        wrk_logx(WRK_LOG_INFO, "audit_chain", NULL,
                 "worker: audit chain %s epoch %s: no earlier epoch in the last %d records of "
                 "each partition of %s", writer, epoch, WRK_CHAIN_LOOKBACK,
                 c->kafka.audit_topic);
    return 0;
}

/* ---- verifying ---- */

enum { F_GAP_SAID = 1, F_LINK_SAID = 2 };

typedef struct {
    int64_t seq;
    char hash[65], prev[65]; /* prev "" when null */
    char prev_epoch[64];     /* seq 0 only */
    int partition;
    int64_t offset;
    int flags;
} v_entry;

typedef struct {
    int partition;
    int64_t seq, offset;
} v_last;

typedef struct {
    char writer[WRK_CHAIN_ID_MAX], epoch[64];
    v_entry *e;
    size_t n, cap;
    int64_t base;            /* seq of at[0] */
    size_t *at;              /* index+1 into e by seq - base; 0: not seen */
    size_t nat;
    v_last *last;            /* per partition: the last seq read */
    size_t nlast;
} v_chain;

struct wrk_verifier {
    bool partial;
    char topic[256];
    v_chain *c;
    size_t n, cap;
    size_t events;
};

#define SEQ_SPAN_MAX 50000000 /* a chain longer than this in one read is not believed */

wrk_verifier *wrk_verifier_new(bool partial)
{
    wrk_verifier *v = calloc(1, sizeof *v);
    if (v) v->partial = partial;
    return v;
}

void wrk_verifier_free(wrk_verifier *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        free(v->c[i].e);
        free(v->c[i].at);
        free(v->c[i].last);
    }
    free(v->c);
    free(v);
}

void wrk_verifier_counts(const wrk_verifier *v, size_t *chains, size_t *events)
{
    *chains = v->n;
    *events = v->events;
}

static v_chain *chain_get(wrk_verifier *v, const char *writer, const char *epoch, bool add)
{
    for (size_t i = 0; i < v->n; i++)
        if (!strcmp(v->c[i].writer, writer) && !strcmp(v->c[i].epoch, epoch)) return &v->c[i];
    if (!add) return NULL;
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        v_chain *n = realloc(v->c, cap * sizeof *n);
        if (!n) return NULL;
        v->c = n;
        v->cap = cap;
    }
    v_chain *c = &v->c[v->n++];
    memset(c, 0, sizeof *c);
    snprintf(c->writer, sizeof c->writer, "%s", writer);
    snprintf(c->epoch, sizeof c->epoch, "%s", epoch);
    return c;
}

static void say(wrk_verifier *v, FILE *out, int partition, int64_t offset, const char *writer,
                const char *epoch, int64_t seq, const char *fmt, const char *a, const char *b)
{
    fprintf(out, "%s/%d@%" PRId64 ": writer %s epoch %s seq %" PRId64 ": ", v->topic, partition,
            offset, writer, epoch, seq);
    fprintf(out, fmt, a, b);
    fputc('\n', out);
}

/* The entry of seq, or NULL. */
static v_entry *entry_at(v_chain *c, int64_t seq)
{
    if (!c->nat || seq < c->base || seq - c->base >= (int64_t)c->nat) return NULL;
    size_t i = c->at[seq - c->base];
    return i ? &c->e[i - 1] : NULL;
}

/* Makes room for seq in the index (which can grow downwards: partitions are read side by
 * side, so a chain's seqs arrive in any order). */
static int index_room(v_chain *c, int64_t seq)
{
    int64_t lo = c->nat ? (seq < c->base ? seq : c->base) : seq;
    int64_t hi = c->nat ? (seq >= c->base + (int64_t)c->nat ? seq : c->base + (int64_t)c->nat - 1)
                        : seq;
    if (hi - lo >= SEQ_SPAN_MAX) return -1;
    size_t need = (size_t)(hi - lo + 1);
    if (lo == c->base && need <= c->nat && c->nat) return 0;
    size_t cap = need < 1024 ? 1024 : need + need / 2;
    size_t *n = calloc(cap, sizeof *n);
    if (!n) return -1;
    if (c->nat) memcpy(n + (c->base - lo), c->at, c->nat * sizeof *n);
    free(c->at);
    c->at = n;
    c->nat = cap;
    c->base = lo;
    return 0;
}

static int add_entry(v_chain *c, const v_entry *e)
{
    if (index_room(c, e->seq) < 0) return -1;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        v_entry *n = realloc(c->e, cap * sizeof *n);
        if (!n) return -1;
        c->e = n;
        c->cap = cap;
    }
    c->e[c->n++] = *e;
    c->at[e->seq - c->base] = c->n;
    return 0;
}

/* The last seq read from this partition of c, and records this one. NULL if none before. */
static v_last *partition_last(v_chain *c, int partition, v_last *prior)
{
    for (size_t i = 0; i < c->nlast; i++)
        if (c->last[i].partition == partition) {
            *prior = c->last[i];
            return &c->last[i];
        }
    v_last *n = realloc(c->last, (c->nlast + 1) * sizeof *n);
    if (!n) return NULL;
    c->last = n;
    n[c->nlast] = (v_last){partition, -1, -1};
    *prior = n[c->nlast];
    return &n[c->nlast++];
}

int wrk_verifier_add(wrk_verifier *v, const char *topic, int partition, int64_t offset,
                     const json_t *ev, FILE *out)
{
    if (!v->topic[0]) snprintf(v->topic, sizeof v->topic, "%s", topic);
    v->events++;
    chain_fields f;
    if (!chain_read(ev, &f)) {
        say(v, out, partition, offset, f.writer ? f.writer : "?", f.epoch ? f.epoch : "?", -1,
            "no valid chain fields (%s%s): not written by a chaining worker, or altered",
            f.chain ? "malformed" : "missing", "");
        return 1;
    }
    const char *w = f.writer, *ep = f.epoch, *h = f.hash, *pv = f.prev;
    int64_t seq = f.seq;
    char hex[65] = "";
    int problems = 0;
    /* An altered event still holds its place (by the seq and hash it claims), so that it is
     * named once, not again as a gap. */
    if (wrk_chain_hash(ev, hex) < 0 || strcmp(hex, h)) {
        say(v, out, partition, offset, w, ep, seq,
            "altered: the event's hash is %.16s..., its content hashes to %.16s...", h, hex);
        problems++;
    }
    v_chain *c = chain_get(v, w, ep, true);
    if (!c) {
        fprintf(out, "codeq: audit: out of memory\n");
        return problems + 1;
    }
    v_last prior, *last = partition_last(c, partition, &prior);
    v_entry *dup = entry_at(c, seq);
    if (dup) {
        char where[300];
        snprintf(where, sizeof where, "%s/%d@%" PRId64, v->topic, dup->partition, dup->offset);
        say(v, out, partition, offset, w, ep, seq,
            !strcmp(dup->hash, h) ? "replayed: the same event was already read at %s%s"
                                  : "duplicate seq: another event with this seq is at %s%s",
            where, "");
        problems++;
    } else if (last && prior.seq >= 0 && seq < prior.seq) {
        char s[32], o[32];
        snprintf(s, sizeof s, "%" PRId64, prior.seq);
        snprintf(o, sizeof o, "%" PRId64, prior.offset);
        say(v, out, partition, offset, w, ep, seq,
            "out of order: read after seq %s (offset %s) in the same partition", s, o);
        problems++;
    }
    if (last && (prior.seq < 0 || seq > prior.seq)) last->seq = seq, last->offset = offset;
    if (dup) return problems;
    v_entry e = {.seq = seq, .partition = partition, .offset = offset};
    memcpy(e.hash, h, 65);
    snprintf(e.prev, sizeof e.prev, "%s", pv ? pv : "");
    snprintf(e.prev_epoch, sizeof e.prev_epoch, "%s", f.prev_epoch ? f.prev_epoch : "");
    if (add_entry(c, &e) < 0) {
        say(v, out, partition, offset, w, ep, seq, "seq too far from the chain's others%s%s",
            "", "");
        problems++;
    }
    return problems;
}

/* The link from an epoch's seq 0 to the epoch it names. */
static int check_epoch_link(wrk_verifier *v, v_chain *c, v_entry *first, FILE *out)
{
    if (!first->prev_epoch[0] || (first->flags & F_LINK_SAID)) return 0;
    v_chain *p = chain_get(v, c->writer, first->prev_epoch, false);
    if (!p || !p->n) return 0; /* older than what was read: nothing to hold it against */
    v_entry *tail = NULL, *named = NULL;
    for (size_t i = 0; i < p->n; i++) {
        if (!tail || p->e[i].seq > tail->seq) tail = &p->e[i];
        if (!strcmp(p->e[i].hash, first->prev)) named = &p->e[i];
    }
    if (named == tail) return 0;
    char s[64];
    first->flags |= F_LINK_SAID;
    if (named) {
        snprintf(s, sizeof s, "%" PRId64 "..%" PRId64, named->seq + 1, tail->seq);
        say(v, out, first->partition, first->offset, c->writer, c->epoch, first->seq,
            "epoch %s has events (seq %s) after the one this epoch names as its predecessor",
            p->epoch, s);
    } else {
        say(v, out, first->partition, first->offset, c->writer, c->epoch, first->seq,
            "prev names no event of epoch %s%s (its last event dropped, or this one altered)",
            p->epoch, "");
    }
    return 1;
}

static int check_chain(wrk_verifier *v, v_chain *c, FILE *out)
{
    int problems = 0;
    v_entry *before = NULL;
    for (size_t i = 0; i < c->nat; i++) {
        if (!c->at[i]) continue;
        v_entry *e = &c->e[c->at[i] - 1];
        int64_t from = before ? before->seq + 1 : v->partial ? e->seq : 0;
        if (e->seq > from && !(e->flags & F_GAP_SAID)) {
            char s[64];
            e->flags |= F_GAP_SAID;
            snprintf(s, sizeof s, "%" PRId64 "..%" PRId64, from, e->seq - 1);
            say(v, out, e->partition, e->offset, c->writer, c->epoch, e->seq,
                "dropped: seq %s missing before this event%s", s, "");
            problems++;
        } else if (before && e->seq == before->seq + 1 && strcmp(e->prev, before->hash) &&
                   !(e->flags & F_LINK_SAID)) {
            char s[32];
            e->flags |= F_LINK_SAID;
            snprintf(s, sizeof s, "%" PRId64, before->seq);
            say(v, out, e->partition, e->offset, c->writer, c->epoch, e->seq,
                "broken link: prev %.16s... is not the hash of seq %s", e->prev[0] ? e->prev : "null", s);
            problems++;
        }
        if (e->seq == 0) problems += check_epoch_link(v, c, e, out);
        before = e;
    }
    return problems;
}

int wrk_verifier_check(wrk_verifier *v, FILE *out)
{
    int problems = 0;
    for (size_t i = 0; i < v->n; i++) problems += check_chain(v, &v->c[i], out);
    return problems;
}
