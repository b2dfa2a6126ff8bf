/* Dead letters: a record without a usable id goes to the dead-letter topic unchanged — its
 * value, its key and its headers — with the reason and its origin in headers added after the
 * original ones, so its owner can find it (by key) and replay it, and nothing the producer
 * sent is ever lost. One without a key gets one, where it is: a compacted dead-letter topic
 * takes no record without. What does not fit one record is cut, and said so in headers. Its
 * audit events follow it in the same transaction (wrk_publish.c). */
#include <stdio.h>
#include <string.h>

#include "wrk_internal.h"

/* A header's framing in a record (varint lengths and attributes): an upper bound. */
#define HDR_COST 12
/* What the headers codeq adds when it cuts a dead letter can cost at most. */
#define CUT_RESERVE 512
/* A dead letter the broker refused although cut to the worker's budget: its topic's limit was
 * lowered after start. Kafka accepts records of this size on any topic (its minimum). */
#define DEAD_REFUSED_MAX 16384

static size_t header_cost(const char *name, size_t len)
{
    return strlen(name) + len + HDR_COST;
}

/* "name.size" and "name.sha256" of a field cut to fit, so its owner can tell what it was. */
static void add_original(rd_kafka_headers_t *h, const char *field, const void *data, size_t len)
{
    char name[64], v[65];
    snprintf(name, sizeof name, "codeq.%s.size", field);
    snprintf(v, sizeof v, "%zu", len);
    rd_kafka_header_add(h, name, -1, v, -1);
    snprintf(name, sizeof name, "codeq.%s.sha256", field);
    wrk_sha256_hex(data, len, v);
    rd_kafka_header_add(h, name, -1, v, -1);
}

/* The original headers into h (NULL: only their cost), in order, as long as they fit in
 * room; the others are counted in codeq.headers.dropped. Returns the cost of those kept. */
static size_t copy_headers(rd_kafka_headers_t *h, const rd_kafka_headers_t *orig, size_t room)
{
    const char *name;
    const void *val;
    size_t sz, used = 0, dropped = 0, i;
    for (i = 0; orig && !rd_kafka_header_get_all(orig, i, &name, &val, &sz); i++) {
        if (used + header_cost(name, sz) > room) {
            dropped++;
            continue;
        }
        used += header_cost(name, sz);
        if (h) rd_kafka_header_add(h, name, -1, val, (ssize_t)sz);
    }
    if (h && dropped) {
        char v[64];
        snprintf(v, sizeof v, "%zu of %zu", dropped, i);
        rd_kafka_header_add(h, "codeq.headers.dropped", -1, v, -1);
    }
    return used;
}

/* The dead letter's key: the record's own, cut to kkeep bytes; where it had none, or it is cut
 * to nothing (a minimal dead letter), where the record is, "topic/partition/offset": a compacted
 * dead-letter topic refuses a record without a key (INVALID_RECORD), and its owner finds the
 * dead letter by key. */
static const char *dead_letter_key(const rd_kafka_message_t *m, size_t kkeep,
                                   const char *where, size_t *keylen)
{
    *keylen = kkeep;
    if (m->key && (kkeep > 0 || m->key_len == 0)) return m->key;
    *keylen = strlen(where);
    return where;
}

/* What of a record its dead letter keeps: bytes of its key, its value and its headers. */
typedef struct {
    size_t klen, kkeep, vlen, vkeep, hlen, hkept;
} dead_cut;

/* Cuts the dead letter to room: the key and the original headers to a quarter of it each, the
 * value to the rest, each cut said in headers with the original size and sha256 (to match it
 * on replay). A room of 0 keeps none of them. True if anything was cut. */
static bool cut_dead_letter(rd_kafka_headers_t *h, const rd_kafka_message_t *m,
                            const rd_kafka_headers_t *orig, const void *value, size_t room,
                            dead_cut *k)
{
    k->klen = m->key ? m->key_len : 0;
    k->vlen = value ? m->len : 0;
    k->hlen = copy_headers(NULL, orig, SIZE_MAX);
    bool cut = k->klen + k->vlen + k->hlen > room;
    k->kkeep = cut && k->klen > room / 4 ? room / 4 : k->klen;
    k->hkept = copy_headers(h, orig, cut ? room / 4 : SIZE_MAX);
    size_t vroom = room - k->kkeep - k->hkept;
    k->vkeep = k->vlen > vroom ? vroom : k->vlen;
    if (k->kkeep < k->klen) {
        rd_kafka_header_add(h, "codeq.key.truncated", -1, "true", -1);
        add_original(h, "key", m->key, k->klen);
    }
    if (k->vkeep < k->vlen) {
        rd_kafka_header_add(h, "codeq.value.truncated", -1, "true", -1);
        add_original(h, "value", value, k->vlen);
    }
    return cut;
}

/* codeq's own headers, after the record's: why, what the record lacked, where it is. */
static void add_codeq_headers(rd_kafka_headers_t *h, const rd_kafka_message_t *m,
                              const char *why, const wrk_outcome *o)
{
    char num[32];
    /* A record that could not be decoded may well have had a key: it is not known. */
    if (!m->key)
        rd_kafka_header_add(h, m->err ? "codeq.key.unavailable" : "codeq.key.absent", -1, "true",
                            -1);
    if (m->err) rd_kafka_header_add(h, "codeq.value.unavailable", -1, "true", -1);
    if (o->dead_level >= WRK_DEAD_MINIMAL)
        rd_kafka_header_add(h, "codeq.refused", -1, o->dead_refused, -1);
    rd_kafka_header_add(h, "codeq.error", -1, why, -1);
    rd_kafka_header_add(h, "codeq.source.topic", -1, rd_kafka_topic_name(m->rkt), -1);
    snprintf(num, sizeof num, "%d", (int)m->partition);
    rd_kafka_header_add(h, "codeq.source.partition", -1, num, -1);
    snprintf(num, sizeof num, "%lld", (long long)m->offset);
    rd_kafka_header_add(h, "codeq.source.offset", -1, num, -1);
}

int wrk_publish_dead_letter(rd_kafka_t *p, const wrk_config *c, const rd_kafka_message_t *m,
                            const char *why, const wrk_outcome *o, wrk_delivery *d,
                            void *opaque, char *err, size_t errlen)
{
    char where[320];
    const char *topic = rd_kafka_topic_name(m->rkt);
    if (wrk_publish_audit_fits(c, o, err, errlen) < 0) return -2;
    if (o->dead_level == WRK_DEAD_GIVEN_UP) return wrk_publish_audit(p, c, o, d, opaque, err, errlen);
    rd_kafka_headers_t *orig = NULL;
    /* A record that could not be decoded has none (and a view of its batch's error,
     * wrk_lost.c, is not librdkafka's to ask). */
    if (m->err || rd_kafka_message_headers(m, &orig) != RD_KAFKA_RESP_ERR_NO_ERROR) orig = NULL;
    snprintf(where, sizeof where, "%s/%d/%lld", topic, (int)m->partition, (long long)m->offset);
    /* A dead letter must fit one record like a result: a job record near its topic's limit,
     * with codeq's headers added, or a dead-letter topic with a smaller limit than the jobs
     * topic, would be refused forever and hold every commit. What does not fit is cut. */
    size_t budget = c->result_max_bytes ? c->result_max_bytes
                                        : WRK_RECORD_DEFAULT_MAX - WRK_RECORD_OVERHEAD;
    if (o->dead_level == WRK_DEAD_SMALL) /* smaller than the one refused, whatever it was */
        budget = budget / 2 < DEAD_REFUSED_MAX ? budget / 2 : DEAD_REFUSED_MAX;
    size_t ours = header_cost("codeq.error", strlen(why)) +
                  header_cost("codeq.source.topic", strlen(topic)) + 2 * header_cost("codeq.source.offset", 20) +
                  header_cost("codeq.value.unavailable", 4) + header_cost("codeq.key.absent", 4) +
                  strlen(where) + CUT_RESERVE;
    size_t room = budget > ours && o->dead_level < WRK_DEAD_MINIMAL ? budget - ours : 0;
    /* A record the consumer could not decode carries librdkafka's error text as its payload,
     * not the job: it is left out, said in a header; codeq.source.* tell where the job is. */
    const void *value = m->err ? NULL : m->payload;
    size_t keylen;
    dead_cut k;
    rd_kafka_headers_t *h = rd_kafka_headers_new(8);
    if (cut_dead_letter(h, m, orig, value, room, &k) && o->dead_level < WRK_DEAD_MINIMAL)
        wrk_log("worker: dead letter of %s [%d] at %lld cut to fit %zu bytes: key %zu of %zu, "
                "value %zu of %zu, headers %zu of %zu", topic, (int)m->partition,
                (long long)m->offset, budget, k.kkeep, k.klen, k.vkeep, k.vlen, k.hkept, k.hlen);
    add_codeq_headers(h, m, why, o);
    const char *key = dead_letter_key(m, k.kkeep, where, &keylen);
    int rc = wrk_publish_produce(p, c->kafka.dlq_topic, key, keylen, value, k.vkeep, h, d, opaque, err,
                     errlen);
    return rc < 0 ? rc : wrk_publish_audit(p, c, o, d, opaque, err, errlen);
}
