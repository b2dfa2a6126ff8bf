/* Commit: exactly-once through Kafka transactions, run beside the job loop. One short
 * transaction carries the results and audit events of every finished job together with the
 * consumed offsets (watermark + metadata, see wrk_offsets.h). The main thread only takes a
 * snapshot (wrk_commit_send) and later reads the outcome (wrk_commit_collect); the committer
 * thread owns every transactional call, so jobs keep starting and being serviced while a
 * commit waits on the broker, and what finishes meanwhile goes in the next transaction.
 *
 * librdkafka's rules for transactional calls: a call that timed out or failed retriably is
 * called again (not replaced by another), after a back-off; an error that requires an abort
 * aborts (the finished work stays in memory and goes out later, nothing was visible). A
 * fatal producer error ends the worker when another instance fenced it (it is a zombie), and
 * whenever the transaction's commit was asked for: the commit may have happened, and a batch
 * that may be visible is never sent again by this process (a restart finds out from the
 * group's committed offsets). Any other fatal error costs a new producer: init_transactions
 * with the same transactional.id bumps the epoch, nothing was visible, and the batch goes
 * again. At most REBUILDS_MAX of those in REBUILD_WINDOW_MS, then exit.
 * A transaction that a long broker outage (or a stopped worker) kept open past
 * transaction.timeout.ms is rolled back by the coordinator itself, which bumps the producer's
 * epoch; the call that follows (the send of offsets or the abort; the commit, if the outage
 * came during it, which then ends the worker) fails fenced, or, when the coordinator never
 * saw the transaction, INVALID_TXN_STATE. So a fence counts as another instance's only on a
 * transaction younger than that timeout. The test is one-sided: a fence by another instance
 * noticed on an older transaction gets a new producer too, which fences that instance once in
 * turn; the consumer group's generation, which every offset commit carries, keeps either from
 * committing for partitions it does not own, and the fenced successor's next fence comes on a
 * young transaction and ends it (docs/exactly-once.md). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wrk_audit_chain.h"
#include "wrk_metrics.h"
#include "wrk_worker.h"

#define CALL_TIMEOUT_MS 5000   /* one blocking transactional call */
#define INIT_CALL_MS 5000       /* one init_transactions call; resumed after a timeout */
#define INIT_BUDGET_MS 300000   /* at start: then the broker is taken to be unreachable */
#define REBUILDS_MAX 5
#define REBUILD_WINDOW_MS 600000
#define ABORT_BACKOFF_MS 200   /* no new transaction this soon after an abort */

typedef struct {
    wrk_task *task;
    const rd_kafka_message_t *msg; /* the job's record, for a dead letter */
    bool cut_back;                 /* a refusal cut its records back in this transaction */
} batch_item;

typedef enum { C_IDLE, C_QUEUED, C_RUNNING, C_ENDED } cstate;

struct wrk_committer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rd_kafka_t *p;          /* the transactional producer: the committer thread's alone */
    const wrk_config *c;
    bool broken;            /* p had a fatal error that a new producer cures */
    /* the batch's transaction (run_batch sets both first; only its calls read them) */
    uint64_t txn_began;     /* monotonic ms it began; 0: begin_transaction failed */
    bool commit_asked;      /* its commit was called: it may have happened */
    uint64_t test_hold_ms;  /* CODEQ_TEST_TXN_HOLD_MS, a test hook (hold_for_test) */
    uint64_t txn_timeout_ms; /* p's transaction.timeout.ms */
    int rebuilds;
    uint64_t rebuild_window;
    bool started;
    cstate state;           /* under mu */
    bool busy;              /* main thread's own view: a batch was sent and not collected */
    bool stop;
    /* the batch: filled by the main thread while C_IDLE, owned by the committer until C_ENDED */
    batch_item *items;
    size_t nitems, capitems;
    json_t *extra;          /* audit events of no finished job (wrk_commit_later); NULL none */
    rd_kafka_topic_partition_list_t *offsets;
    rd_kafka_consumer_group_metadata_t *group; /* the last the consumer gave (wrk_commit_group) */
    bool committed;
    /* set by the committer thread (under mu); read by the main thread */
    bool fatal;
    char why[512];
    _Atomic uint64_t give_up_at; /* monotonic ms; 0: retry as long as it takes (set on stop) */
    unsigned long dead_given_up; /* by the committer thread; read by the main one in apply */
};

static uint64_t ms_since(uint64_t t0)
{
    return wrk_now_ms() - t0;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void set_fatal(wrk_committer *cm, const char *what, const char *msg)
{
    pthread_mutex_lock(&cm->mu);
    if (!cm->fatal) {
        cm->fatal = true;
        snprintf(cm->why, sizeof cm->why, "codeq: worker: %.200s: %.290s", what, msg);
    }
    pthread_mutex_unlock(&cm->mu);
}

/* Whether a fatal producer error means another instance owns our transactional.id. */
static bool fenced(rd_kafka_resp_err_t e)
{
    return e == RD_KAFKA_RESP_ERR__FENCED || e == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
           e == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH ||
           e == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
}

/* A fence on a transaction open longer than transaction.timeout.ms: the coordinator rolled it
 * back and bumped the epoch itself (see the top of this file). */
static bool fenced_by_own_timeout(const wrk_committer *cm, rd_kafka_resp_err_t e)
{
    bool epoch = e == RD_KAFKA_RESP_ERR__FENCED || e == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
                 e == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH;
    return epoch && cm->txn_began && ms_since(cm->txn_began) > cm->txn_timeout_ms;
}

/* A fatal producer error: the end when fenced by another instance; otherwise the producer is
 * rebuilt. */
static void producer_fatal(wrk_committer *cm)
{
    char msg[400];
    rd_kafka_resp_err_t e = rd_kafka_fatal_error(cm->p, msg, sizeof msg);
    if (cm->commit_asked) {
        char what[160];
        snprintf(what, sizeof what, "kafka fatal error %s after the commit was asked for (it may "
                 "have happened: a restart resumes from the committed offsets)", rd_kafka_err2name(e));
        set_fatal(cm, what, e ? msg : "the call's error was fatal, the producer's is not set");
    } else if (fenced_by_own_timeout(cm, e)) {
        wrk_logx(WRK_LOG_WARN, "transaction_timed_out", NULL,
                 "worker: %s after the transaction was open %lu ms, past transaction.timeout.ms "
                 "%lu: the coordinator rolled it back, not another instance",
                 rd_kafka_err2name(e), (unsigned long)ms_since(cm->txn_began),
                 (unsigned long)cm->txn_timeout_ms);
        cm->broken = true;
    } else if (fenced(e)) {
        /* librdkafka's words name no setting: the operator's mistake is usually two workers
         * given one --instance-id (the authorization failure is the other cause) */
        char what[128], why[600];
        snprintf(what, sizeof what, "kafka fatal error %s", rd_kafka_err2name(e));
        snprintf(why, sizeof why, "%s (%s)",
                 e == RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED
                     ? "this worker's principal may not use its transactional id (an ACL)"
                     : "another worker started with the same --instance-id and group took "
                       "over its transactional id: each worker needs its own --instance-id",
                 msg);
        set_fatal(cm, what, why);
    } else {
        cm->broken = true;
    }
}

/* Producer error callback (opaque: the committer); fatal errors are read where they matter. */
void wrk_commit_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    (void)rk;
    (void)opaque;
    wrk_logx(WRK_LOG_WARN, "kafka_error", NULL, "worker: kafka producer: %s: %s",
             rd_kafka_err2name(err), reason);
}

/* One transactional call, repeated while it fails retriably (a timeout included) for as long
 * as the broker stays away, unless the worker is stopping: 0 done, 1 the transaction must be
 * aborted, -1 fatal. */
static int txn_call(wrk_committer *cm, const char *what,
                    rd_kafka_error_t *(*call)(wrk_committer *))
{
    uint64_t t0 = wrk_now_ms();
    for (int i = 0;; i++) {
        rd_kafka_error_t *e = call(cm);
        if (!e) {
            if (i > 0)
                wrk_logx(WRK_LOG_INFO, "transaction_recovered", NULL, "worker: transaction: %s succeeded after %d tries, %lu ms", what, i + 1,
                        (unsigned long)ms_since(t0));
            return 0;
        }
        uint64_t give_up = cm->give_up_at;
        bool fatal = rd_kafka_error_is_fatal(e), abort = rd_kafka_error_txn_requires_abort(e),
             retry = rd_kafka_error_is_retriable(e) && (!give_up || wrk_now_ms() < give_up);
        if (i < 3 || i % 30 == 0 || !retry)
            wrk_logx(WRK_LOG_WARN, "transaction_error", NULL,
                     "worker: transaction: %s: %s%s", what, rd_kafka_error_string(e),
                     fatal ? "" : abort ? " (aborting)" : retry ? " (retrying)" : "");
        if (fatal) {
            rd_kafka_error_destroy(e);
            producer_fatal(cm);
            return -1;
        }
        if (!abort && !retry) {
            char msg[300];
            snprintf(msg, sizeof msg, "transaction %s: %s", what, rd_kafka_error_string(e));
            rd_kafka_error_destroy(e);
            set_fatal(cm, msg, give_up ? "gave up: the worker is stopping" : "cannot go on");
            return -1;
        }
        rd_kafka_error_destroy(e);
        if (abort) return 1;
        sleep_ms(i < 5 ? 50 << i : 1000);
    }
}

static rd_kafka_error_t *send_offsets(wrk_committer *cm)
{
    return rd_kafka_send_offsets_to_transaction(cm->p, cm->offsets, cm->group, CALL_TIMEOUT_MS);
}

static rd_kafka_error_t *commit_txn(wrk_committer *cm)
{
    return rd_kafka_commit_transaction(cm->p, CALL_TIMEOUT_MS);
}

static rd_kafka_error_t *abort_txn(wrk_committer *cm)
{
    return rd_kafka_abort_transaction(cm->p, CALL_TIMEOUT_MS);
}

/* Whether the broker refused a record for its size alone. */
static bool too_large(rd_kafka_resp_err_t e)
{
    return e == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ||
           e == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE || e == RD_KAFKA_RESP_ERR_INVALID_MSG_SIZE;
}

bool wrk_commit_jobs_refusal(const wrk_config *c, wrk_task *t, const char *topic,
                             rd_kafka_resp_err_t e)
{
    const char *why;
    bool dead = wrk_task_dead_letter(t, &why);
    if (!topic || (dead && strcmp(topic, c->kafka.dlq_topic))) return false;
    if (too_large(e) || e == RD_KAFKA_RESP_ERR_INVALID_RECORD || e == RD_KAFKA_RESP_ERR_INVALID_MSG ||
        e == RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP)
        return true;
    const char *reply = dead ? NULL : wrk_task_finish(t)->reply_to;
    return reply && !strcmp(topic, reply);
}

/* A record of it's job can never be produced, as the broker or the publisher said (why): its
 * records are cut back a step (wrk_task_unpublishable), said in the log. False when nothing is
 * left to cut, or the refusal is not the job's (wrk_commit_jobs_refusal): then the topic refuses what any
 * job would produce (a deleted results topic, say), and the batch is tried again as after any
 * other failure of the worker's own. */
static bool cut_back(wrk_committer *cm, const batch_item *it, const char *why,
                     const char *topic, rd_kafka_resp_err_t e)
{
    char name[400];
    const char *dead_why;
    bool dead = wrk_task_dead_letter(it->task, &dead_why);
    const char *event = dead ? "dead_letter_refused" : "result_unpublishable";
    wrk_log_ctx ctx = {wrk_task_job_id(it->task), rd_kafka_topic_name(it->msg->rkt),
                       it->msg->partition, it->msg->offset};
    wrk_task_name(it->task, name, sizeof name);
    const char *done = wrk_commit_jobs_refusal(cm->c, it->task, topic, e)
                           ? wrk_task_unpublishable(it->task, why, too_large(e)) : NULL;
    bool given_up = dead && wrk_task_finish(it->task)->dead_level == WRK_DEAD_GIVEN_UP;
    if (given_up && done) cm->dead_given_up++; /* the step to given up comes once */
    if (done)
        wrk_logx(given_up ? WRK_LOG_ERROR : WRK_LOG_WARN, event, &ctx, "worker: %s: %s; %s",
                 name, why, done);
    else
        wrk_logx(WRK_LOG_ERROR, event, &ctx, "worker: %s: %s, and nothing of it is left to cut "
                 "for that: %s would refuse any job's records", name, why, topic ? topic : "the topic");
    return done != NULL;
}

static int publish(wrk_committer *cm, const batch_item *it, char *err, size_t errlen)
{
    const char *why;
    void *token = (void *)(uintptr_t)wrk_task_token(it->task);
    wrk_outcome *o = wrk_task_finish(it->task);
    if (wrk_task_dead_letter(it->task, &why))
        return wrk_publish_dead_letter(cm->p, cm->c, it->msg, why, o, NULL, token, err, errlen);
    return wrk_publish_outcome(cm->p, cm->c, o->reply_to, o, NULL, token, err, errlen);
}

/* One finished job's records. A record that can never be produced (-2) costs only its job: its
 * records are cut back and produced again in this same transaction (a -2 comes before any of
 * them was produced). */
static int produce_one(wrk_committer *cm, const batch_item *it)
{
    char err[512];
    const char *topic;
    rd_kafka_resp_err_t e;
    int rc = publish(cm, it, err, sizeof err);
    while (rc == -2) {
        wrk_publish_refusal(&topic, &e);
        if (!cut_back(cm, it, err + strlen("codeq: publish: "), topic, e)) break;
        rc = publish(cm, it, err, sizeof err);
    }
    /* Said here because this path aborts too: a record the broker refused can surface as
     * the next produce's error instead of a commit's. */
    if (rc < 0)
        wrk_logx(WRK_LOG_WARN, "publish_error", NULL, "worker: %s (aborting the transaction)",
                 err);
    return rc < 0 ? -1 : 0;
}

/* A record the broker refused for itself (too large for the topic, an unknown or forbidden
 * reply_to, a dead letter its topic will not take): its job's records are cut back for the
 * next transaction, after this one aborts; once per transaction, however many of them were
 * refused in it. Purged records of an aborted transaction and worker-wide errors change
 * nothing. Runs on the committer thread (inside the commit's flush), where the batch is its
 * own. */
void wrk_commit_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    wrk_committer *cm = opaque;
    uint64_t token = (uint64_t)(uintptr_t)m->_private;
    if (!m->err || !token || !wrk_publish_record_error(m->err)) return;
    for (size_t i = 0; i < cm->nitems; i++) {
        batch_item *it = &cm->items[i];
        if (wrk_task_token(it->task) != token) continue;
        if (it->cut_back) return;
        char why[300];
        snprintf(why, sizeof why, "%s refused it: %s", rd_kafka_topic_name(m->rkt),
                 rd_kafka_err2str(m->err));
        it->cut_back = true;
        cut_back(cm, it, why, rd_kafka_topic_name(m->rkt), m->err);
        return;
    }
}

/* CODEQ_TEST_TXN_HOLD_MS, a test hook: the first transaction that carries results is held open
 * that long after its records and before its offsets, as a broker outage or a stopped worker
 * would hold it (tests/integration/kafka_txn_timeout.py). At most 10 minutes. */
static void hold_for_test(wrk_committer *cm)
{
    if (!cm->test_hold_ms || !cm->nitems) return;
    if (cm->test_hold_ms > 600000) cm->test_hold_ms = 600000;
    wrk_logx(WRK_LOG_WARN, "test_hook", NULL,
             "worker: CODEQ_TEST_TXN_HOLD_MS: holding the transaction open for %lu ms",
             (unsigned long)cm->test_hold_ms);
    sleep_ms((int)cm->test_hold_ms);
    cm->test_hold_ms = 0;
}

/* The batch's audit events of no finished job, older than its results. Small and fixed in
 * shape (no output, no code), so the broker has no reason of the job's own to refuse one. */
static int produce_extra(wrk_committer *cm)
{
    char err[512];
    if (!cm->extra) return 0;
    if (wrk_publish_audit(cm->p, cm->c, &(wrk_outcome){.audit = cm->extra}, NULL, NULL, err,
                          sizeof err) == 0)
        return 0;
    wrk_logx(WRK_LOG_WARN, "publish_error", NULL, "worker: %s (aborting the transaction)", err);
    return 1;
}

/* The whole transaction: true if committed. After an abort the batch goes again later. */
static bool run_batch(wrk_committer *cm)
{
    /* The audit chain goes on from the last committed event: an aborted batch's numbers were
     * never visible, and the batch is numbered again. */
    wrk_chain *chain = wrk_chain_worker();
    if (chain) wrk_chain_rewind(chain);
    cm->txn_began = 0;
    cm->commit_asked = false;
    rd_kafka_error_t *e = rd_kafka_begin_transaction(cm->p);
    if (e) {
        bool fatal = rd_kafka_error_is_fatal(e);
        if (!fatal) set_fatal(cm, "begin transaction", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        if (fatal) producer_fatal(cm);
        return false;
    }
    cm->txn_began = wrk_now_ms();
    wrk_publish_txn_begin();
    int rc = produce_extra(cm);
    for (size_t i = 0; i < cm->nitems; i++) cm->items[i].cut_back = false;
    for (size_t i = 0; i < cm->nitems && rc == 0; i++)
        if (produce_one(cm, &cm->items[i]) < 0) rc = 1;
    if (rc == 0) hold_for_test(cm);
    if (rc == 0) rc = txn_call(cm, "send offsets", send_offsets);
    if (rc == 0) cm->commit_asked = true;
    if (rc == 0) rc = txn_call(cm, "commit", commit_txn);
    /* An abortable commit did not happen: in 2.0.2 a commit fails abortably when a record
     * failed before EndTxn was sent, or when the broker refused EndTxn. (librdkafka also turns
     * any EndTxn error into an abortable one once the transaction is already in its abortable
     * state, where the commit may have succeeded; in this flow every source of that state, a
     * produce, AddPartitions, AddOffsets or TxnOffsetCommit answer, has been read before the
     * commit's flush and the synchronous send of offsets return.) The abort's own errors are
     * then judged as any other. */
    if (rc > 0) cm->commit_asked = false;
    if (rc == 0) {
        if (chain) wrk_chain_commit(chain);
        return true;
    }
    if (rc > 0 && txn_call(cm, "abort", abort_txn) != 0 && !cm->broken)
        set_fatal(cm, "transaction", "could not be aborted");
    return false;
}

/* Stable per instance: a restarted instance fences its predecessor and aborts what it left
 * open, instead of blocking its partitions until the transaction times out. It also names the
 * worker's audit chain, which Kafka's fencing thus keeps to one line of epochs. */
void wrk_commit_txid(const wrk_config *c, char *buf, size_t n)
{
    snprintf(buf, n, "codeq-%s-%s", c->group, c->instance_id);
}

rd_kafka_conf_t *wrk_commit_conf(const wrk_config *c, char *err, size_t errlen)
{
    char txid[512], batch[32];
    rd_kafka_conf_t *conf = wrk_kafka_conf(&c->kafka, err, errlen);
    if (!conf) return NULL;
    wrk_commit_txid(c, txid, sizeof txid);
    snprintf(batch, sizeof batch, "%zu", c->result_max_bytes + WRK_RECORD_OVERHEAD);
    const char *const kv[][2] = {
        {"transactional.id", txid},
        /* A topic's max.message.bytes bounds a record batch, not a record, and librdkafka
         * batches up to 1 MB: under that limit, results and audit events that each fit were
         * refused together, and every transaction aborted again, for good (kafka_reply
         * "batched"). A batch stays within the least limit of the worker's topics and the
         * producer's message.max.bytes, read at start (wrk_kafka_record_budget). */
        {"batch.size", batch},
        {"transaction.timeout.ms", "10000"},
        {"linger.ms", "1"}, /* the commit flushes a batch at once anyway */
        /* The coordinator answers CONCURRENT_TRANSACTIONS to a transaction begun while the
         * previous one's commit markers are still being written (a few ms, longer in a broker
         * GC pause), and librdkafka asks again after retry.backoff.ms: its default 100 ms put
         * 100-180 ms under one job's latency in a few hundred sequential jobs
         * (docs/benchmarks.md). */
        {"retry.backoff.ms", "10"},
        /* a job's reply_to never makes the worker create a topic: unknown is refused */
        {"allow.auto.create.topics", "false"},
    };
    /* Ours over wrk_kafka_conf's defaults, then the operator's -X over ours. */
    if (wrk_kafka_set_all(conf, kv, sizeof kv / sizeof kv[0], err, errlen) < 0 ||
        wrk_kafka_set_all(conf, c->kafka.props, (size_t)c->kafka.nprops, err, errlen) < 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    return conf;
}

static rd_kafka_t *new_producer(wrk_committer *cm, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_commit_conf(cm->c, err, errlen);
    if (!conf) return NULL;
    rd_kafka_conf_set_error_cb(conf, wrk_commit_error);
    rd_kafka_conf_set_dr_msg_cb(conf, wrk_commit_delivery);
    rd_kafka_conf_set_opaque(conf, cm);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, kerr, sizeof kerr);
    if (!p) {
        snprintf(err, errlen, "codeq: worker: producer: %s", kerr);
        return NULL;
    }
    /* The effective value: an operator's -X transaction.timeout.ms overrides ours. */
    char v[32];
    size_t vlen = sizeof v;
    cm->txn_timeout_ms = UINT64_MAX; /* unknown: every fence is another instance's */
    if (rd_kafka_conf_get(rd_kafka_conf(p), "transaction.timeout.ms", v, &vlen) == RD_KAFKA_CONF_OK)
        cm->txn_timeout_ms = strtoull(v, NULL, 10);
    return p;
}

/* init_transactions, repeated while it fails retriably: at start for up to budget_ms from the
 * worker's start (c->started_ms; the reads before it count), and not once a stop is asked for
 * (short calls, resumed, so that it is seen within seconds); with budget_ms 0 (a rebuild)
 * until the committer gives up. 0 or -1 with err. */
static int init_txn(wrk_committer *cm, uint64_t budget_ms, char *err, size_t errlen)
{
    uint64_t t0 = budget_ms && cm->c->started_ms ? cm->c->started_ms : wrk_now_ms();
    for (int i = 0;; i++) {
        rd_kafka_error_t *e = rd_kafka_init_transactions(cm->p, INIT_CALL_MS);
        if (!e) return 0;
        uint64_t give_up = cm->give_up_at, now = wrk_now_ms();
        bool at_start = budget_ms > 0,
             retry = rd_kafka_error_is_retriable(e) && (!at_start || now - t0 < budget_ms) &&
                     (!give_up || now < give_up) && !(at_start && wrk_stop_requested());
        snprintf(err, errlen, "codeq: worker: init transactions (codeq-%.100s-%.100s): %s",
                 cm->c->group, cm->c->instance_id, rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        if (!retry) return -1;
        if (i < 3 || i % 5 == 0)
            wrk_logx(WRK_LOG_WARN, "init_transactions_retry", NULL,
                     "%s (retrying, %lu s so far)", err, (unsigned long)((now - t0) / 1000));
        if (at_start) /* a probe of a worker that never gets ready says why */
            wrk_metrics_starting("%s (brokers %s; retried for %lu s of %lu s so far)", err,
                                 cm->c->kafka.brokers,
                                 (unsigned long)((now - t0) / 1000),
                                 (unsigned long)(budget_ms / 1000));
        sleep_ms(1000);
        if (at_start && wrk_stop_requested()) return -1; /* err: the last failure */
    }
}

/* Not fatal: without it the first records only wait for librdkafka's topic scan. */
static void warm(wrk_committer *cm)
{
    char err[512];
    if (wrk_publish_warm(cm->p, cm->c, err, sizeof err) < 0)
        wrk_logx(WRK_LOG_WARN, "producer_warm", NULL,
                 "worker: %s; the first results may wait up to 1 s", err);
}

int wrk_committer_producer(wrk_committer *cm, const wrk_config *c, char *err, size_t errlen)
{
    cm->c = c;
    const char *hold = getenv("CODEQ_TEST_TXN_HOLD_MS");
    cm->test_hold_ms = hold ? strtoull(hold, NULL, 10) : 0;
    if (!(cm->p = new_producer(cm, err, errlen)) || init_txn(cm, INIT_BUDGET_MS, err, errlen) < 0) return -1;
    warm(cm);
    return 0;
}

/* A new producer in place of one with a fatal error that is not ours to die of. */
static void rebuild(wrk_committer *cm)
{
    char err[512], why[400];
    uint64_t now = wrk_now_ms();
    rd_kafka_resp_err_t e = rd_kafka_fatal_error(cm->p, why, sizeof why);
    if (now - cm->rebuild_window > REBUILD_WINDOW_MS) cm->rebuild_window = now, cm->rebuilds = 0;
    if (++cm->rebuilds > REBUILDS_MAX) {
        set_fatal(cm, "producer", "fatal errors keep coming back; the last one ends the worker");
        return;
    }
    if (cm->give_up_at) { /* stopping: a new producer would only delay the end */
        char what[128];
        snprintf(what, sizeof what, "producer fatal error %s while stopping", rd_kafka_err2name(e));
        set_fatal(cm, what, why);
        return;
    }
    wrk_logx(WRK_LOG_ERROR, "producer_rebuild", NULL, "worker: producer fatal error %s (%s): starting a new producer (%d of %d in 10 min); "
            "nothing of its transaction was visible, the batch goes again",
            rd_kafka_err2name(e), why, cm->rebuilds, REBUILDS_MAX);
    rd_kafka_purge(cm->p, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_destroy(cm->p);
    cm->p = NULL;
    if (!(cm->p = new_producer(cm, err, sizeof err)) || init_txn(cm, 0, err, sizeof err) < 0) {
        set_fatal(cm, "producer", err);
        return;
    }
    warm(cm);
    cm->broken = false;
    wrk_logx(WRK_LOG_INFO, "producer_rebuilt", NULL, "worker: new producer ready");
}

static void *committer_main(void *arg)
{
    wrk_committer *cm = arg;
    pthread_mutex_lock(&cm->mu);
    while (!cm->stop) {
        if (cm->state != C_QUEUED) {
            /* idle: serve the producer's callbacks (errors) now and then */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000000L;
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&cm->cv, &cm->mu, &ts);
            pthread_mutex_unlock(&cm->mu);
            rd_kafka_poll(cm->p, 0);
            pthread_mutex_lock(&cm->mu);
            continue;
        }
        cm->state = C_RUNNING;
        bool fatal = cm->fatal;
        pthread_mutex_unlock(&cm->mu);
        bool ok = !fatal && run_batch(cm);
        if (cm->broken && !fatal) rebuild(cm);
        pthread_mutex_lock(&cm->mu);
        cm->committed = ok;
        cm->state = C_ENDED;
        pthread_cond_broadcast(&cm->cv);
    }
    pthread_mutex_unlock(&cm->mu);
    return NULL;
}

wrk_committer *wrk_committer_new(void)
{
    wrk_committer *cm = calloc(1, sizeof *cm);
    if (!cm) return NULL;
    pthread_mutex_init(&cm->mu, NULL);
    pthread_cond_init(&cm->cv, NULL);
    return cm;
}

int wrk_committer_start(wrk_committer *cm, char *err, size_t errlen)
{
    int e = pthread_create(&cm->thread, NULL, committer_main, cm);
    if (e) {
        snprintf(err, errlen, "codeq: worker: committer thread: %s", strerror(e));
        return -1;
    }
    cm->started = true;
    return 0;
}

void wrk_committer_free(wrk_committer *cm)
{
    if (!cm) return;
    if (cm->started) {
        pthread_mutex_lock(&cm->mu);
        cm->stop = true;
        pthread_cond_broadcast(&cm->cv);
        pthread_mutex_unlock(&cm->mu);
        pthread_join(cm->thread, NULL);
    }
    if (cm->p) rd_kafka_destroy(cm->p);
    if (cm->group) rd_kafka_consumer_group_metadata_destroy(cm->group);
    json_decref(cm->extra);
    free(cm->items);
    pthread_mutex_destroy(&cm->mu);
    pthread_cond_destroy(&cm->cv);
    free(cm);
}

/* Whether a commit may go now: none is out, no retry is pending, and it is urgent or the
 * commit interval has passed (results under load are batched within it). */
static bool send_ready(const wrk_worker *w, bool urgent)
{
    if (w->cm->busy) return false;
    uint64_t now = wrk_now_ms();
    if (now < w->retry_at) return false;
    return urgent || now - w->last_commit >= (uint64_t)w->c->commit_interval_ms;
}

bool wrk_commit_due(const wrk_worker *w)
{
    bool urgent = false, work = false;
    for (size_t i = 0; i < w->nparts; i++) {
        const wrk_part *p = w->parts[i];
        if (!wrk_part_has_work(p)) continue;
        work = true;
        /* a careful job waits for its claim, a job for a lease, a revoked partition to go */
        urgent |= p->want_lease || p->handoff;
        for (size_t j = 0; j < p->n && !urgent; j++)
            urgent = p->e[j].state == WRK_E_CLAIMED && !p->e[j].claim_ok;
    }
    /* results go at once when idle */
    return work && send_ready(w, urgent || w->running == 0);
}

static int add_item(wrk_committer *cm, wrk_entry *e)
{
    if (cm->nitems == cm->capitems) {
        size_t cap = cm->capitems ? cm->capitems * 2 : 64;
        batch_item *n = realloc(cm->items, cap * sizeof *n);
        if (!n) return -1;
        cm->items = n;
        cm->capitems = cap;
    }
    cm->items[cm->nitems++] = (batch_item){e->task, e->msg, false};
    return 0;
}

/* Takes every partition with work into one batch: its finished jobs' records and its offset
 * and metadata. */
static bool fill_batch(wrk_worker *w)
{
    wrk_committer *cm = w->cm;
    char md[4096];
    size_t mdn;
    int64_t off;
    cm->nitems = 0;
    cm->offsets = rd_kafka_topic_partition_list_new((int)w->nparts);
    for (size_t i = 0; i < w->nparts; i++) {
        wrk_part *p = w->parts[i];
        if (!wrk_part_batch(p, &off, md, sizeof md, &mdn)) continue;
        for (size_t j = 0; j < p->n; j++)
            if (p->e[j].state == WRK_E_COMMITTING && add_item(cm, &p->e[j]) < 0) return false;
        rd_kafka_topic_partition_t *t =
            rd_kafka_topic_partition_list_add(cm->offsets, p->topic, p->partition);
        t->offset = off;
        t->metadata = malloc(mdn);
        if (!t->metadata) return false;
        memcpy(t->metadata, md, mdn);
        t->metadata_size = mdn;
    }
    cm->extra = w->audit_extra; /* the committer's now; given back if the batch is not */
    w->audit_extra = NULL;
    return true;
}

/* A batch's extra events that did not commit go before any added since. */
static void extra_back(wrk_worker *w)
{
    wrk_committer *cm = w->cm;
    if (!cm->extra) return;
    if (w->audit_extra && json_array_extend(cm->extra, w->audit_extra) < 0)
        wrk_logx(WRK_LOG_ERROR, "audit_lost", NULL, "worker: out of memory: %zu audit event%s "
                 "of runs that answered nothing dropped", json_array_size(w->audit_extra),
                 wrk_s((long long)json_array_size(w->audit_extra)));
    json_decref(w->audit_extra);
    w->audit_extra = cm->extra;
    cm->extra = NULL;
}

void wrk_commit_later(wrk_worker *w, json_t *ev)
{
    if (!ev) return;
    char id[300];
    const char *jid = json_string_value(json_object_get(ev, "job_id"));
    snprintf(id, sizeof id, "%s", jid ? jid : "-");
    if (!w->audit_extra) w->audit_extra = json_array();
    /* json_array_append_new takes ev even when it fails */
    if (!w->audit_extra || json_array_append_new(w->audit_extra, ev) < 0) {
        if (!w->audit_extra) json_decref(ev);
        wrk_logx(WRK_LOG_ERROR, "audit_lost", NULL, "worker: out of memory keeping an audit "
                 "event of job %s", id);
    }
}

rd_kafka_consumer_group_metadata_t *wrk_commit_group(wrk_committer *cm, rd_kafka_t *k)
{
    rd_kafka_consumer_group_metadata_t *now = k ? rd_kafka_consumer_group_metadata(k) : NULL;
    if (now) {
        if (cm->group) rd_kafka_consumer_group_metadata_destroy(cm->group);
        cm->group = now;
    }
    return cm->group;
}

/* The batch goes nowhere: its entries are as before it was filled. */
static void batch_drop(wrk_worker *w)
{
    for (size_t i = 0; i < w->nparts; i++)
        wrk_part_batch_end(w->parts[i], false, wrk_entry_release);
    rd_kafka_topic_partition_list_destroy(w->cm->offsets);
    w->cm->offsets = NULL;
    extra_back(w);
}

void wrk_commit_send(wrk_worker *w)
{
    wrk_committer *cm = w->cm;
    if (cm->busy) return;
    w->last_commit = wrk_now_ms();
    bool ok = fill_batch(w);
    if (!ok || cm->offsets->cnt == 0) {
        if (!ok) wrk_worker_fatal(w, "codeq: worker: out of memory building a commit");
        batch_drop(w);
        return;
    }
    if (!wrk_commit_group(cm, w->k)) {
        /* Never had one: nothing of the batch was visible, its jobs go to the next owner. */
        wrk_logx(WRK_LOG_WARN, "commit_skipped", NULL,
                 "worker: no consumer group metadata to commit offsets with; %zu finished "
                 "job(s) left to the partitions' next owner", cm->nitems);
        batch_drop(w);
        w->retry_at = wrk_now_ms() + ABORT_BACKOFF_MS;
        return;
    }
    cm->busy = true;
    w->commit_sent = wrk_now_ms();
    pthread_mutex_lock(&cm->mu);
    cm->state = C_QUEUED;
    pthread_cond_broadcast(&cm->cv);
    pthread_mutex_unlock(&cm->mu);
}

/* The jobs a commit answered, counted as answered: a result the broker refused for its job
 * alone was cut back to an internal_error (cut_back) after the job finished, and a count at
 * the finish called it ok. Before the batch's end releases the tasks. */
static void count_answered(const wrk_committer *cm)
{
    const char *why;
    for (size_t i = 0; i < cm->nitems; i++) {
        const batch_item *it = &cm->items[i];
        wrk_metrics_job(wrk_task_finish(it->task), wrk_task_dead_letter(it->task, &why),
                        it->msg->err ? -1 : rd_kafka_message_timestamp(it->msg, 0));
    }
}

static void apply(wrk_worker *w)
{
    wrk_committer *cm = w->cm;
    if (cm->committed) { /* the batch's items: its entries in limbo too */
        count_answered(cm);
        w->jobs_done += cm->nitems;
    }
    for (size_t i = 0; i < w->nparts; i++)
        wrk_part_batch_end(w->parts[i], cm->committed, wrk_entry_release);
    for (size_t i = 0; i < w->nlimbo; i++) /* lost meanwhile: now nothing holds them */
        wrk_part_drop(w->limbo[i]);
    w->nlimbo = 0;
    w->dead_given_up = cm->dead_given_up;
    if (cm->committed) {
        w->commits++;
        json_decref(cm->extra);
        cm->extra = NULL;
    } else {
        w->aborts++;
        w->retry_at = wrk_now_ms() + ABORT_BACKOFF_MS;
        extra_back(w);
    }
    rd_kafka_topic_partition_list_destroy(cm->offsets);
    cm->offsets = NULL;
    cm->nitems = 0;
}

void wrk_commit_collect(wrk_worker *w, bool wait)
{
    wrk_committer *cm = w->cm;
    pthread_mutex_lock(&cm->mu);
    while (wait && (cm->state == C_QUEUED || cm->state == C_RUNNING))
        pthread_cond_wait(&cm->cv, &cm->mu);
    bool ended = cm->state == C_ENDED;
    if (ended) cm->state = C_IDLE;
    bool fatal = cm->fatal;
    pthread_mutex_unlock(&cm->mu);
    if (ended) {
        cm->busy = false;
        w->commit_sent = 0;
        apply(w);
    }
    if (fatal) wrk_worker_fatal(w, "%s", cm->why);
}

/* What a commit would move on in a wait: WAIT_START a job waits to start (a claim to record,
 * a kept partition's lease to raise), WAIT_ANSWER only answers to publish. A partition being
 * handed over always has work for a commit (wrk_part_has_work), which is no reason for one
 * more: the final commit after the wait carries it. */
enum { WAIT_NONE, WAIT_ANSWER, WAIT_START };
static int work_waits(const wrk_worker *w)
{
    int why = WAIT_NONE;
    for (size_t i = 0; i < w->nparts; i++) {
        const wrk_part *p = w->parts[i];
        if (p->want_lease && !p->handoff) return WAIT_START;
        for (size_t j = 0; j < p->n; j++) {
            if (p->e[j].state == WRK_E_CLAIMED && !p->e[j].claim_ok) return WAIT_START;
            if (p->e[j].state == WRK_E_DONE) why = WAIT_ANSWER;
        }
    }
    return why;
}

void wrk_commit_in_wait(wrk_worker *w)
{
    int why = w->fatal ? WAIT_NONE : work_waits(w);
    if (why != WAIT_NONE && send_ready(w, why == WAIT_START)) wrk_commit_send(w);
}

void wrk_commit_flush(wrk_worker *w)
{
    wrk_commit_collect(w, true);
    if (w->fatal) return;
    wrk_commit_send(w);
    wrk_commit_collect(w, true);
}

bool wrk_commit_busy(const wrk_worker *w)
{
    return w->cm->busy;
}

void wrk_commit_give_up_at(wrk_worker *w, uint64_t when)
{
    w->cm->give_up_at = when;
}
