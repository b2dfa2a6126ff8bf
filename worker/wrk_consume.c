/* Consume: the worker's main loop, one thread, top to bottom:
 *   poll a job -> dispatch (decode, validate, run) -> publish -> wait for acks -> commit.
 * One job at a time per worker in this at-least-once design; scale comes from more workers
 * in the group. A publish that is not acknowledged rewinds the partition, so the job is run
 * again rather than lost. SIGTERM/SIGINT let the current job finish (bounded by its limits),
 * publish and commit it, then leave the group. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "wrk_internal.h"

#define PUBLISH_TIMEOUT_MS 30000

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void install_signals(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

static rd_kafka_t *new_producer(const wrk_config *c, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(&c->kafka, err, errlen);
    if (!conf) return NULL;
    /* Idempotence: librdkafka's own retries never duplicate a result or audit record. */
    if (wrk_kafka_set(conf, "enable.idempotence", "true", err, errlen) < 0 ||
        wrk_kafka_set(conf, "linger.ms", "5", err, errlen) < 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, wrk_publish_dr_cb);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, kerr, sizeof kerr);
    if (!p) snprintf(err, errlen, "codeq: worker: producer: %s", kerr);
    return p;
}

static void log_parts(const char *what, const rd_kafka_topic_partition_list_t *parts)
{
    char buf[512];
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < parts->cnt && o < sizeof buf - 16; i++)
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d", i ? "," : "",
                              (int)parts->elems[i].partition);
    wrk_log("worker: %s partitions [%s]", what, buf);
}

/* Rebalances are served from our own poll, i.e. only between jobs: a job in hand is published
 * and committed before its partition is given up, so a clean hand-over runs no job twice.
 * (Without this callback librdkafka revokes in the background while a job runs.) */
static void on_rebalance(rd_kafka_t *k, rd_kafka_resp_err_t e,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    (void)opaque;
    bool coop = !strcmp(rd_kafka_rebalance_protocol(k), "COOPERATIVE");
    rd_kafka_error_t *err = NULL;
    rd_kafka_resp_err_t rerr = 0;
    if (e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        log_parts("assigned", parts);
        if (coop) err = rd_kafka_incremental_assign(k, parts);
        else rerr = rd_kafka_assign(k, parts);
    } else {
        log_parts(rd_kafka_assignment_lost(k) ? "lost" : "revoked", parts);
        if (coop) err = rd_kafka_incremental_unassign(k, parts);
        else rerr = rd_kafka_assign(k, NULL);
    }
    if (err) {
        wrk_log("worker: rebalance: %s", rd_kafka_error_string(err));
        rd_kafka_error_destroy(err);
    } else if (rerr) {
        wrk_log("worker: rebalance: %s", rd_kafka_err2str(rerr));
    }
}

static rd_kafka_t *new_consumer(const wrk_config *c, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(&c->kafka, err, errlen);
    if (!conf) return NULL;
    const char *set[][2] = {
        {"group.id", c->group},
        {"enable.auto.commit", "false"},      /* we commit only after acks */
        {"enable.auto.offset.store", "false"},
        {"auto.offset.reset", "earliest"},    /* a new group starts with the oldest job */
        {"isolation.level", "read_committed"},
        {"queued.max.messages.kbytes", "1024"}, /* do not hoard jobs other workers could run */
    };
    for (size_t i = 0; i < sizeof set / sizeof set[0]; i++)
        if (wrk_kafka_set(conf, set[i][0], set[i][1], err, errlen) < 0) {
            rd_kafka_conf_destroy(conf);
            return NULL;
        }
    rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
    rd_kafka_t *k = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!k) {
        snprintf(err, errlen, "codeq: worker: consumer: %s", kerr);
        return NULL;
    }
    rd_kafka_poll_set_consumer(k);
    rd_kafka_topic_partition_list_t *t = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(t, c->kafka.jobs_topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t e = rd_kafka_subscribe(k, t);
    rd_kafka_topic_partition_list_destroy(t);
    if (e) {
        snprintf(err, errlen, "codeq: worker: subscribe %s: %s", c->kafka.jobs_topic,
                 rd_kafka_err2str(e));
        rd_kafka_destroy(k);
        return NULL;
    }
    return k;
}

/* One job record, from dispatch to commit. */
static void handle(rd_kafka_t *k, rd_kafka_t *p, const wrk_config *c, rd_kafka_message_t *m)
{
    char why[512] = "", err[512] = "";
    bool dead = false;
    wrk_outcome o;
    wrk_delivery d = {0};
    wrk_source src = {rd_kafka_topic_name(m->rkt), (int)m->partition, (long long)m->offset};
    wrk_execute(c, m->payload ? m->payload : "", m->len, &src, &o, &dead, why, sizeof why);
    int rc;
    if (dead) {
        wrk_log("worker: %s [%d] offset %lld dead-lettered: %s", src.topic, src.partition,
                src.offset, why);
        rc = wrk_publish_dead_letter(p, c, m, why, &o, &d, err, sizeof err);
    } else {
        rc = wrk_publish_outcome(p, c, o.reply_to, &o, &d, err, sizeof err);
    }
    if (rc == 0) rc = wrk_publish_wait(p, &d, PUBLISH_TIMEOUT_MS, err, sizeof err);
    if (rc == 0) {
        if (!dead)
            wrk_log("worker: job %s: %s", json_string_value(json_object_get(o.result, "id")),
                    o.status);
        if (wrk_commit_after(k, m, err, sizeof err) < 0)
            wrk_log("worker: %s (the job may run again on another worker)", err);
    } else {
        wrk_log("worker: %s; rewinding to run the job again", err);
        rd_kafka_flush(p, 1000);
        if (wrk_commit_rewind(k, m, err, sizeof err) < 0) wrk_log("worker: %s", err);
    }
    wrk_outcome_free(&o);
}

static void consumer_error(const rd_kafka_message_t *m)
{
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return;
    wrk_log("worker: consume: %s", rd_kafka_message_errstr(m));
}

int wrk_worker_loop(const wrk_config *c)
{
    char err[512];
    rd_kafka_t *p = new_producer(c, err, sizeof err);
    rd_kafka_t *k = p ? new_consumer(c, err, sizeof err) : NULL;
    if (!k) {
        fprintf(stderr, "%s\n", err);
        if (p) rd_kafka_destroy(p);
        return 1;
    }
    install_signals();
    wrk_log("worker %s: consuming %s as group %s on %s", c->worker_id, c->kafka.jobs_topic,
            c->group, c->kafka.brokers);
    while (!stop_requested) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(k, 200);
        rd_kafka_poll(p, 0);
        if (!m) continue;
        if (m->err)
            consumer_error(m);
        else
            handle(k, p, c, m);
        rd_kafka_message_destroy(m);
    }
    wrk_log("worker %s: stopping: leaving group %s", c->worker_id, c->group);
    rd_kafka_consumer_close(k);
    rd_kafka_destroy(k);
    rd_kafka_flush(p, 10000);
    rd_kafka_destroy(p);
    return 0;
}
