/* Publish: a job's result goes to its reply_to (or the results topic) keyed by job id, its audit
 * events to the audit topic keyed by job id, so all records of one job land in one partition
 * in order. A record without a usable id goes to the dead-letter topic unchanged — its value,
 * its key and its headers — with the reason and its origin in headers added after the
 * original ones, so its owner can find it (by key) and replay it, and nothing the producer
 * sent is ever lost.
 * Each produce carries a wrk_delivery as opaque; the delivery-report callback counts it down,
 * and the caller commits only when it reaches zero with no failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Inside a transaction d is NULL and opaque the job's token (the worker's delivery callback
 * finds the job by it); outside, opaque is d. -2 when this record can never be produced. */
static int produce(rd_kafka_t *p, const char *topic, const void *key, size_t keylen,
                   const void *val, size_t len, rd_kafka_headers_t *hdrs, wrk_delivery *d,
                   void *opaque,
                   char *err, size_t errlen)
{
    rd_kafka_resp_err_t e = rd_kafka_producev(
        p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY((void *)key, key ? keylen : 0),
        RD_KAFKA_V_VALUE((void *)val, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_OPAQUE(d ? (void *)d : opaque), RD_KAFKA_V_END);
    if (e) {
        if (hdrs) rd_kafka_headers_destroy(hdrs);
        snprintf(err, errlen, "codeq: publish: produce %zu bytes to %s: %s", len, topic,
                 rd_kafka_err2str(e));
        return wrk_publish_record_error(e) ? -2 : -1;
    }
    if (d) d->outstanding++;
    return 0;
}

static int produce_json(rd_kafka_t *p, const char *topic, const char *key, json_t *j,
                        wrk_delivery *d, void *opaque, char *err, size_t errlen)
{
    char *s = json_dumps(j, JSON_COMPACT);
    if (!s) {
        snprintf(err, errlen, "codeq: publish: cannot encode a record for %s", topic);
        return -1;
    }
    int rc = produce(p, topic, key, key ? strlen(key) : 0, s, strlen(s), NULL, d, opaque, err,
                     errlen);
    free(s);
    return rc;
}

static int produce_audit(rd_kafka_t *p, const wrk_config *c, const wrk_outcome *o,
                         wrk_delivery *d, void *opaque, char *err, size_t errlen)
{
    size_t i;
    json_t *ev;
    json_array_foreach(o->audit, i, ev) {
        const char *key = json_string_value(json_object_get(ev, "job_id"));
        int rc = produce_json(p, c->kafka.audit_topic, key, ev, d, opaque, err, errlen);
        if (rc < 0) return rc;
    }
    return 0;
}

/* Reply topics known to exist and to be described to us lately: one metadata request per
 * topic per REPLY_OK_MS, not one per result. The worker publishes from one thread. */
#define REPLY_CACHE 16
#define REPLY_OK_MS 1000
#define REPLY_MD_TIMEOUT_MS 3000
static struct {
    char topic[256];
    uint64_t until;
} reply_ok[REPLY_CACHE];

static bool reply_known(const char *topic)
{
    uint64_t now = wrk_now_ms();
    for (int i = 0; i < REPLY_CACHE; i++)
        if (reply_ok[i].until > now && !strcmp(reply_ok[i].topic, topic)) return true;
    return false;
}

static void reply_remember(const char *topic)
{
    int oldest = 0;
    for (int i = 1; i < REPLY_CACHE; i++)
        if (reply_ok[i].until < reply_ok[oldest].until) oldest = i;
    snprintf(reply_ok[oldest].topic, sizeof reply_ok[oldest].topic, "%s", topic);
    reply_ok[oldest].until = wrk_now_ms() + REPLY_OK_MS;
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
 * producer can tell. A slow or absent answer proves nothing: 0, and the producer decides. */
static int reply_topic_check(rd_kafka_t *p, const char *topic, char *err, size_t errlen)
{
    if (reply_known(topic)) return 0;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(p, topic, NULL);
    if (!rkt) return 0;
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(p, 0, rkt, &md, REPLY_MD_TIMEOUT_MS);
    rd_kafka_topic_destroy(rkt);
    if (e) return 0;
    rd_kafka_resp_err_t te = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int i = 0; i < md->topic_cnt; i++)
        if (!strcmp(md->topics[i].topic, topic)) te = md->topics[i].err;
    rd_kafka_metadata_destroy(md);
    if ((te == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART && !may_create_topics(p)) ||
        te == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) {
        snprintf(err, errlen, "codeq: publish: reply topic %s: %s", topic, rd_kafka_err2str(te));
        return -2;
    }
    if (te == RD_KAFKA_RESP_ERR_NO_ERROR) reply_remember(topic);
    return 0;
}

int wrk_publish_outcome(rd_kafka_t *p, const wrk_config *c, const char *reply_to,
                        const wrk_outcome *o, wrk_delivery *d, void *opaque, char *err,
                        size_t errlen)
{
    const char *id = json_string_value(json_object_get(o->result, "id"));
    const char *topic = reply_to ? reply_to : c->kafka.results_topic;
    if (strcmp(topic, c->kafka.results_topic) && reply_topic_check(p, topic, err, errlen) < 0)
        return -2;
    int rc = produce_json(p, topic, id, o->result, d, opaque, err, errlen);
    return rc < 0 ? rc : produce_audit(p, c, o, d, opaque, err, errlen);
}

int wrk_publish_dead_letter(rd_kafka_t *p, const wrk_config *c, const rd_kafka_message_t *m,
                            const char *why, const wrk_outcome *o, wrk_delivery *d,
                            void *opaque, char *err, size_t errlen)
{
    char num[32];
    rd_kafka_headers_t *orig = NULL;
    rd_kafka_headers_t *h = rd_kafka_message_headers(m, &orig) == RD_KAFKA_RESP_ERR_NO_ERROR
                                ? rd_kafka_headers_copy(orig)
                                : rd_kafka_headers_new(4);
    rd_kafka_header_add(h, "codeq.error", -1, why, -1);
    rd_kafka_header_add(h, "codeq.source.topic", -1, rd_kafka_topic_name(m->rkt), -1);
    snprintf(num, sizeof num, "%d", (int)m->partition);
    rd_kafka_header_add(h, "codeq.source.partition", -1, num, -1);
    snprintf(num, sizeof num, "%lld", (long long)m->offset);
    rd_kafka_header_add(h, "codeq.source.offset", -1, num, -1);
    int rc = produce(p, c->kafka.dlq_topic, m->key, m->key_len, m->payload, m->len, h, d, opaque,
                     err, errlen);
    return rc < 0 ? rc : produce_audit(p, c, o, d, opaque, err, errlen);
}

int wrk_publish_wait(rd_kafka_t *p, wrk_delivery *d, int timeout_ms, char *err, size_t errlen)
{
    uint64_t deadline = wrk_now_ms() + (uint64_t)timeout_ms;
    while (d->outstanding > 0 && wrk_now_ms() < deadline) rd_kafka_poll(p, 50);
    if (d->outstanding > 0) {
        snprintf(err, errlen, "codeq: publish: %d records unacknowledged after %d ms",
                 d->outstanding, timeout_ms);
        return -1;
    }
    if (d->failed) {
        snprintf(err, errlen, "codeq: publish: %s", d->err);
        return -1;
    }
    return 0;
}
