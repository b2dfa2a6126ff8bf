/* Publish: a job's result goes to its reply_to (or the results topic) keyed by job id, its audit
 * events to the audit topic keyed by job id, so all records of one job land in one partition
 * in order. A record without a usable id goes to the dead-letter topic (wrk_dlq.c).
 * Each produce carries a wrk_delivery as opaque; the delivery-report callback counts it down,
 * and the caller commits only when it reaches zero with no failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_audit_chain.h"
#include "wrk_internal.h"

void wrk_publish_dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    wrk_delivery *d = m->_private;
    if (!d) return;
    d->outstanding--;
    if (m->err) {
        if (!d->failed)
            snprintf(d->err, sizeof d->err, "delivery to %s failed: %s",
                     rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err));
        d->failed++;
    }
}

bool wrk_publish_record_error(rd_kafka_resp_err_t e)
{
    switch (e) {
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_RECORD:
    case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
    case RD_KAFKA_RESP_ERR_INVALID_MSG:
    case RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE:
    /* the topic's message.timestamp.{before,after}.max.ms refuse the record's time: sent
     * again, it would be refused again */
    case RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP:
    case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TOPIC_DELETION_DISABLED:
        return true;
    default:
        return false;
    }
}

/* Which topic refused the last record that can never be produced (-2), and how: the committer
 * decides from it whose refusal it is (wrk_publish_refusal). */
static _Thread_local struct {
    const char *topic;
    rd_kafka_resp_err_t err;
} refusal;

static int refused(const char *topic, rd_kafka_resp_err_t e)
{
    refusal.topic = topic;
    refusal.err = e;
    return -2;
}

void wrk_publish_refusal(const char **topic, rd_kafka_resp_err_t *e)
{
    *topic = refusal.topic;
    *e = refusal.err;
}

/* Inside a transaction d is NULL and opaque the job's token (the worker's delivery callback
 * finds the job by it); outside, opaque is d. -2 when this record can never be produced. */
int wrk_publish_produce(rd_kafka_t *p, const char *topic, const void *key, size_t keylen,
                        const void *val, size_t len, rd_kafka_headers_t *hdrs, wrk_delivery *d,
                        void *opaque, char *err, size_t errlen)
{
    rd_kafka_resp_err_t e = rd_kafka_producev(
        p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY((void *)key, key ? keylen : 0),
        RD_KAFKA_V_VALUE((void *)val, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(d ? (void *)d : opaque), RD_KAFKA_V_END);
    if (e) {
        if (hdrs) rd_kafka_headers_destroy(hdrs);
        snprintf(err, errlen, "codeq: publish: produce %zu bytes to %s: %s", len, topic,
                 rd_kafka_err2str(e));
        return wrk_publish_record_error(e) ? refused(topic, e) : -1;
    }
    if (d) d->outstanding++;
    return 0;
}

#define RECORD_FRAMING 128 /* record batch header (61) and one record's varints, with margin */
#define BATCH_FLUSH_MS 10000
#define REPLY_CACHE 16

/* A reply topic's limit and what this transaction has produced to it since the last flush. A
 * reply topic is not the worker's own, whose batches batch.size keeps under their limit. */
typedef struct {
    size_t max_bytes; /* its max.message.bytes, 0 where not known */
    size_t *batched;  /* bytes produced to it since the last flush, or NULL */
} topic_room;

/* The reply topics with a limit that this transaction has produced to. The worker publishes
 * from one thread. */
static struct {
    char topic[256];
    size_t bytes;
} reply_batched[REPLY_CACHE];
static size_t nreply_batched;

void wrk_publish_txn_begin(void)
{
    nreply_batched = 0;
}

/* Every record produced so far delivered: nothing is left for a new one to be batched with. */
static int flush_batches(rd_kafka_t *p, const char *topic, char *err, size_t errlen)
{
    rd_kafka_resp_err_t e = rd_kafka_flush(p, BATCH_FLUSH_MS);
    if (e) {
        snprintf(err, errlen, "codeq: publish: records before one for %s not delivered in %d ms: "
                 "%s", topic, BATCH_FLUSH_MS, rd_kafka_err2str(e));
        return -1;
    }
    for (size_t i = 0; i < nreply_batched; i++) reply_batched[i].bytes = 0;
    return 0;
}

/* *bytes: the counter of what this transaction produced to topic since the last flush. */
static int reply_batched_bytes(rd_kafka_t *p, const char *topic, size_t **bytes, char *err,
                               size_t errlen)
{
    for (size_t i = 0; i < nreply_batched; i++)
        if (!strcmp(reply_batched[i].topic, topic)) {
            *bytes = &reply_batched[i].bytes;
            return 0;
        }
    if (nreply_batched == REPLY_CACHE) { /* every counted topic flushed: counted afresh */
        if (flush_batches(p, topic, err, errlen) < 0) return -1;
        nreply_batched = 0;
    }
    snprintf(reply_batched[nreply_batched].topic, sizeof reply_batched[0].topic, "%s", topic);
    reply_batched[nreply_batched].bytes = 0;
    *bytes = &reply_batched[nreply_batched++].bytes;
    return 0;
}

/* Records already produced to the topic go out first when this one would join them in a
 * batch above its limit: the broker judges a record batch, not a record, and would refuse
 * them together, aborting the transaction and every result in it. */
static int keep_batch_under(rd_kafka_t *p, const char *topic, const topic_room *room,
                            size_t need, char *err, size_t errlen)
{
    if (!room->batched || !*room->batched || *room->batched + need <= room->max_bytes) return 0;
    return flush_batches(p, topic, err, errlen);
}

/* room: NULL, or the topic's limit: a record that cannot fit it is a per-record error (-2),
 * found before the broker refuses it and aborts the transaction with it. */
static int produce_json(rd_kafka_t *p, const char *topic, const char *key, json_t *j,
                        const topic_room *room, wrk_delivery *d, void *opaque, char *err,
                        size_t errlen)
{
    char *s = json_dumps(j, JSON_COMPACT);
    if (!s) {
        snprintf(err, errlen, "codeq: publish: cannot encode a record for %s", topic);
        return -1;
    }
    size_t len = strlen(s), keylen = key ? strlen(key) : 0, need = len + keylen + RECORD_FRAMING;
    int rc = 0;
    if (room && room->max_bytes && need > room->max_bytes) {
        snprintf(err, errlen, "codeq: publish: reply topic %s takes records of at most %zu "
                 "bytes (max.message.bytes), the result needs %zu", topic, room->max_bytes, need);
        rc = refused(topic, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    } else if (room && room->max_bytes) {
        rc = keep_batch_under(p, topic, room, need, err, errlen);
    }
    if (rc == 0) rc = wrk_publish_produce(p, topic, key, keylen, s, len, NULL, d, opaque, err, errlen);
    if (rc == 0 && room && room->batched) *room->batched += need;
    free(s);
    return rc;
}

/* -2 when an audit event of o does not fit its record even cut (wrk_event_fit: those
 * wrk_task_finish fitted stay as they are). Found before any of the job's records is
 * produced: its records cut back are produced again in the same transaction, and would be
 * published twice. */
int wrk_publish_audit_fits(const wrk_config *c, const wrk_outcome *o, char *err, size_t errlen)
{
    size_t i;
    json_t *ev;
    json_array_foreach(o->audit, i, ev) {
        if (wrk_event_fit(ev, c->result_max_bytes) >= 0) continue;
        snprintf(err, errlen, "codeq: publish: its %s audit event does not fit in %zu bytes",
                 json_string_value(json_object_get(ev, "event")), c->result_max_bytes);
        return refused(c->kafka.audit_topic, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    }
    return 0;
}

/* After the job's first record: an error of the audit topic's own aborts (-1), as it would
 * refuse any job's events. */
int wrk_publish_audit(rd_kafka_t *p, const wrk_config *c, const wrk_outcome *o,
                      wrk_delivery *d, void *opaque, char *err, size_t errlen)
{
    size_t i;
    json_t *ev;
    wrk_chain *chain = wrk_chain_worker();
    json_array_foreach(o->audit, i, ev) {
        /* Numbered here, in the transaction, so the chain holds exactly what commits. */
        if (chain && wrk_chain_stamp(chain, ev) < 0) {
            snprintf(err, errlen, "codeq: publish: cannot chain an audit event (out of memory)");
            return -1;
        }
        const char *key = json_string_value(json_object_get(ev, "job_id"));
        int rc = produce_json(p, c->kafka.audit_topic, key, ev, NULL, d, opaque, err, errlen);
        if (rc < 0) {
            if (chain) wrk_chain_unstamp(chain); /* a number never produced is no gap */
            return -1;
        }
    }
    return 0;
}

/* Reply topics known to exist and to be described to us lately: one metadata request per
 * topic per REPLY_OK_MS, not one per result. The worker publishes from one thread. Each entry
 * also holds what the topic takes (its configuration), read with its metadata. */
#define REPLY_OK_MS 1000
#define REPLY_MD_TIMEOUT_MS 3000
/* The least message.timestamp.{before,after}.max.ms a reply topic (CreateTime) may have. The
 * broker checks the timestamps of a transaction's markers against them too, and Kafka 4.1.2
 * cannot write a marker so refused: the coordinator throws, the transaction stays in
 * PrepareAbort/PrepareCommit, and the worker's transactional.id can neither commit nor start
 * again until that broker restarts. An hour is Kafka 4's default after.max.ms. */
#define REPLY_MIN_TIMESTAMP_MS 3600000
static struct {
    char topic[256];
    uint64_t until;
    wrk_topic_limits limits;
} reply_ok[REPLY_CACHE];

static int reply_known(const char *topic)
{
    uint64_t now = wrk_now_ms();
    for (int i = 0; i < REPLY_CACHE; i++)
        if (reply_ok[i].until > now && !strcmp(reply_ok[i].topic, topic)) return i;
    return -1;
}

static void reply_remember(const char *topic, const wrk_topic_limits *limits)
{
    int oldest = 0;
    for (int i = 1; i < REPLY_CACHE; i++)
        if (reply_ok[i].until < reply_ok[oldest].until) oldest = i;
    snprintf(reply_ok[oldest].topic, sizeof reply_ok[oldest].topic, "%s", topic);
    reply_ok[oldest].until = wrk_now_ms() + REPLY_OK_MS;
    reply_ok[oldest].limits = *limits;
}

/* A topic whose timestamp checks are so tight that a transaction's marker could be refused. */
static bool tight_timestamps(const wrk_topic_limits *l)
{
    return l->create_time &&
           ((l->before_ms >= 0 && l->before_ms < REPLY_MIN_TIMESTAMP_MS) ||
            (l->after_ms >= 0 && l->after_ms < REPLY_MIN_TIMESTAMP_MS));
}

/* Whether this producer asks the broker to create a topic it does not find (librdkafka's
 * producer default, unlike its consumer's). */
static bool may_create_topics(rd_kafka_t *p)
{
    char v[16];
    size_t n = sizeof v;
    return rd_kafka_conf_get(rd_kafka_conf(p), "allow.auto.create.topics", v, &n) !=
               RD_KAFKA_CONF_OK || strcmp(v, "false");
}

/* A reply_to topic the broker says does not exist (deleted, or never created, and this
 * producer may not create topics) or will not describe to us: -2 at once. Left to the
 * producer, librdkafka holds such a record for topic.metadata.propagation.max.ms (30 s)
 * before failing it, and every job's commit waits with it. Where the producer may create
 * topics, "unknown" is also the broker's first answer while it creates one, so only the
 * producer can tell. A slow or absent answer proves nothing: 0, and the producer decides.
 * A topic whose timestamp checks could refuse a transaction marker: -2 too.
 * *max_bytes: the topic's max.message.bytes where the broker told it, else 0. */
static int reply_topic_check(rd_kafka_t *p, const char *topic, size_t *max_bytes, char *err,
                             size_t errlen)
{
    *max_bytes = 0;
    int at = reply_known(topic);
    if (at >= 0) {
        *max_bytes = reply_ok[at].limits.max_bytes;
        return 0;
    }
    const rd_kafka_metadata_t *md = NULL;
    if (wrk_kafka_topic_metadata(p, topic, REPLY_MD_TIMEOUT_MS, &md)) return 0;
    rd_kafka_resp_err_t te = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int i = 0; i < md->topic_cnt; i++)
        if (!strcmp(md->topics[i].topic, topic)) te = md->topics[i].err;
    rd_kafka_metadata_destroy(md);
    if ((te == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART && !may_create_topics(p)) ||
        te == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) {
        snprintf(err, errlen, "codeq: publish: reply topic %s: %s", topic, rd_kafka_err2str(te));
        return refused(topic, te);
    }
    if (te != RD_KAFKA_RESP_ERR_NO_ERROR) return 0;
    /* Its limit, so that a result too large for it is answered without producing it: the
     * broker's refusal would abort the transaction holding every other finished job's
     * result, and a submitter sending such jobs steadily would keep every one aborting. */
    wrk_topic_limits l;
    wrk_kafka_topic_limits(p, topic, REPLY_MD_TIMEOUT_MS, &l);
    if (tight_timestamps(&l)) {
        snprintf(err, errlen, "codeq: publish: reply topic %s: its message.timestamp.before.max.ms "
                 "(%lld) or message.timestamp.after.max.ms (%lld) is below %d ms, which could "
                 "refuse the transaction's markers and wedge the worker", topic,
                 (long long)l.before_ms, (long long)l.after_ms, REPLY_MIN_TIMESTAMP_MS);
        return refused(topic, RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP);
    }
    reply_remember(topic, &l);
    *max_bytes = l.max_bytes;
    return 0;
}

/* librdkafka asks the broker about a topic it has not met only from its topic scan, once a
 * second: the first record for the results or audit topic would wait up to 1 s before its
 * transaction can register the partition — the first results after every start and every new
 * producer (measured: 0.78 s). One metadata request for the worker's own topics when the
 * producer is made fills librdkafka's cache, from which the topics are taken when first
 * produced to. Reply topics get theirs on first use (reply_topic_check). */
int wrk_publish_warm(rd_kafka_t *p, const wrk_config *c, char *err, size_t errlen)
{
    const char *names[] = {c->kafka.results_topic, c->kafka.audit_topic, c->kafka.dlq_topic};
    enum { N = sizeof names / sizeof names[0] };
    rd_kafka_topic_t *rkt[N] = {0};
    for (int i = 0; i < N; i++) rkt[i] = rd_kafka_topic_new(p, names[i], NULL);
    const rd_kafka_metadata_t *md = NULL;
    /* all_topics 0 and no topic: the topics this handle knows, i.e. these three */
    rd_kafka_resp_err_t e = rd_kafka_metadata(p, 0, NULL, &md, REPLY_MD_TIMEOUT_MS);
    for (int i = 0; i < N; i++)
        if (rkt[i]) rd_kafka_topic_destroy(rkt[i]);
    if (e) {
        snprintf(err, errlen, "codeq: publish: metadata of %s, %s, %s: %s", names[0], names[1],
                 names[2], rd_kafka_err2str(e));
        return -1;
    }
    rd_kafka_metadata_destroy(md);
    return 0;
}

int wrk_publish_outcome(rd_kafka_t *p, const wrk_config *c, const char *reply_to,
                        const wrk_outcome *o, wrk_delivery *d, void *opaque, char *err,
                        size_t errlen)
{
    const char *id = json_string_value(json_object_get(o->result, "id"));
    const char *topic = reply_to ? reply_to : c->kafka.results_topic;
    size_t max_bytes = 0;
    if (wrk_publish_audit_fits(c, o, err, errlen) < 0) return -2;
    if (strcmp(topic, c->kafka.results_topic) &&
        reply_topic_check(p, topic, &max_bytes, err, errlen) < 0)
        return -2;
    topic_room room = {max_bytes, NULL};
    if (max_bytes && reply_batched_bytes(p, topic, &room.batched, err, errlen) < 0) return -1;
    int rc = produce_json(p, topic, id, o->result, &room, d, opaque, err, errlen);
    return rc < 0 ? rc : wrk_publish_audit(p, c, o, d, opaque, err, errlen);
}

int wrk_publish_wait(rd_kafka_t *p, wrk_delivery *d, int timeout_ms, char *err, size_t errlen)
{
    uint64_t deadline = wrk_now_ms() + (uint64_t)timeout_ms;
    while (d->outstanding > 0 && wrk_now_ms() < deadline) rd_kafka_poll(p, 50);
    if (d->outstanding > 0) {
        snprintf(err, errlen, "codeq: publish: %d record%s unacknowledged after %d ms",
                 d->outstanding, wrk_s(d->outstanding), timeout_ms);
        return -1;
    }
    if (d->failed) {
        snprintf(err, errlen, "codeq: publish: %s", d->err);
        return -1;
    }
    return 0;
}
