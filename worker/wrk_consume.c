/* Consume: the exactly-once worker's main loop. The main thread owns the consumer and up to
 * `slots` running jobs; the committer thread (wrk_commit.c) owns the transactional producer.
 * Each turn of the loop, in the order a job travels:
 *   1 take in what the consumer has (rebalance callbacks run here too)
 *   2 read the outcome of the commit in flight, if it ended (claims confirmed, lease raised)
 *   3 fill free slots: start jobs, round-robin over partitions (careful ones are claimed)
 *   4 service the running sandboxes (poll); finished jobs become DONE
 *   5 when due, hand DONE results + offsets to the committer; it commits beside the loop
 *   6 backpressure: pause what we must, resume only what we paused
 * SIGTERM/SIGINT: stop taking jobs, let running ones finish within the grace period, kill
 * the rest, commit, leave the group; wrk_stop.c bounds the whole of it. A fatal producer error
 * ends the process non-zero so that its orchestrator restarts it. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wrk_metrics.h"
#include "wrk_audit_chain.h"
#include "wrk_worker.h"

#define INTAKE_MAX 64
#define POLL_EVERY_MS 500
#define STALL_MS 30000
#define STALL_CHECK_MS 5000

/* Consumer errors (opaque: the worker); the producer's go to the committer. */
static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    wrk_worker *w = opaque;
    if (err != RD_KAFKA_RESP_ERR__FATAL) {
        wrk_logx(WRK_LOG_WARN, "kafka_error", NULL,
                 "worker: kafka: %s: %s", rd_kafka_err2name(err), reason);
        return;
    }
    char fatal[512];
    rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, fatal, sizeof fatal);
    wrk_worker_fatal(w, "codeq: worker: kafka fatal error %s: %s", rd_kafka_err2name(orig), fatal);
}

/* A numeric setting as the configuration holds it (ours or the operator's); 0 unknown. */
static uint64_t conf_num(rd_kafka_conf_t *conf, const char *name)
{
    char v[32];
    size_t n = sizeof v;
    return rd_kafka_conf_get(conf, name, v, &n) == RD_KAFKA_CONF_OK ? strtoull(v, NULL, 10) : 0;
}

static rd_kafka_t *new_consumer(wrk_worker *w, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(&w->c->kafka, err, errlen);
    if (!conf) return NULL;
    const char *const kv[][2] = {
        {"group.id", w->c->group},
        {"partition.assignment.strategy", "cooperative-sticky"},
        {"enable.auto.commit", "false"}, /* offsets go through our transactions only */
        {"enable.auto.offset.store", "false"},
        {"auto.offset.reset", "earliest"},
        {"isolation.level", "read_committed"},
        {"queued.max.messages.kbytes", "1024"}, /* do not hoard jobs others could run */
        /* What one fetch, and one record decompressed, may cost: a job is at most a few MB
         * (its files: 16 MiB in base64 at most); a batch beyond this fails and is dead-
         * lettered instead of costing the worker hundreds of MB (librdkafka: 100 MB). */
        {"fetch.max.bytes", "33554432"},
        {"receive.message.max.bytes", "34603008"},
        {"queued.min.messages", "100"},
        {"fetch.wait.max.ms", "100"},           /* a job queue wants latency, not batches */
        /* Where a partition ends: the position then moves past transaction markers and
         * aborted records (wrk_part_at_end), which no record reports, and a probe past a
         * batch that cannot be decoded learns it overshot at once (wrk_lost.c). */
        {"enable.partition.eof", "true"},
        /* A batch that fails to decompress is stepped through by fetches (wrk_lost.c), each
         * after this back-off: about 2 log2(n) of them for n records. Lower costs the broker a
         * request per partition that often while one keeps failing. */
        {"fetch.error.backoff.ms", "100"},
        {"session.timeout.ms", "10000"},        /* a dead worker's jobs move on in seconds */
        {"heartbeat.interval.ms", "2000"},
    };
    /* Ours over wrk_kafka_conf's defaults, then the operator's -X over ours. */
    if (wrk_kafka_set_all(conf, kv, sizeof kv / sizeof kv[0], err, errlen) < 0) goto fail;
    for (int i = 0; i < w->c->kafka.nprops; i++)
        if (wrk_kafka_set(conf, w->c->kafka.props[i][0], w->c->kafka.props[i][1], err, errlen) < 0)
            goto fail;
    w->record_max = conf_num(conf, "receive.message.max.bytes");
    /* A probe's answer comes after the back-off of the fetch that failed before it and a fetch
     * round; the rest is room for a decompression that fails (33 MB) on a loaded machine. */
    w->probe_ms = conf_num(conf, "fetch.error.backoff.ms") + conf_num(conf, "fetch.wait.max.ms") +
                  800;
    rd_kafka_conf_set_rebalance_cb(conf, wrk_rebalance_cb);
    rd_kafka_conf_set_error_cb(conf, on_error);
    rd_kafka_conf_set_opaque(conf, w);
    rd_kafka_t *k = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!k) {
        snprintf(err, errlen, "codeq: worker: consumer: %s", kerr);
        return NULL;
    }
    rd_kafka_poll_set_consumer(k);
    w->k = k;
    /* Test hook: a member that never joins, as one that silently dropped out (wrk_idle.c). */
    if (!getenv("CODEQ_TEST_NO_SUBSCRIBE") && wrk_subscribe(w, err, errlen) < 0) {
        rd_kafka_destroy(k);
        w->k = NULL;
        return NULL;
    }
    return k;
fail:
    rd_kafka_conf_destroy(conf);
    return NULL;
}

int wrk_subscribe(wrk_worker *w, char *err, size_t errlen)
{
    rd_kafka_topic_partition_list_t *t = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(t, w->c->kafka.jobs_topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t e = rd_kafka_subscribe(w->k, t);
    rd_kafka_topic_partition_list_destroy(t);
    if (e)
        snprintf(err, errlen, "codeq: worker: subscribe %s: %s", w->c->kafka.jobs_topic,
                 rd_kafka_err2str(e));
    return e ? -1 : 0;
}

rd_kafka_error_t *wrk_part_seek(wrk_worker *w, wrk_part *p, int64_t offset, bool pause)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = offset;
    if (pause) {
        rd_kafka_pause_partitions(w->k, l);
        p->paused = true;
    }
    p->fetch_from = offset;
    rd_kafka_error_t *e = rd_kafka_seek_partitions(w->k, l, 5000);
    if (e && rd_kafka_error_code(e) == RD_KAFKA_RESP_ERR__TIMED_OUT) {
        /* Still queued: the broker thread applies it when it gets to it (one busy with a batch
         * that fails to decompress, on a loaded machine, took longer). The call raised the
         * partition's version barrier already, so nothing fetched before the seek is handed
         * over, and the next fetch starts at offset. */
        wrk_logx(WRK_LOG_WARN, "seek_slow", NULL,
                 "worker: seek %s [%d] to %lld: %s; it takes effect when librdkafka gets to it",
                 p->topic, (int)p->partition, (long long)offset, rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        e = NULL;
    } else if (!e && l->elems[0].err) { /* the partition's own error, left in the list */
        e = rd_kafka_error_new(l->elems[0].err, "%s", rd_kafka_err2str(l->elems[0].err));
    }
    rd_kafka_topic_partition_list_destroy(l);
    return e;
}

void wrk_part_hold(wrk_worker *w, wrk_part *p, int64_t offset)
{
    rd_kafka_error_t *e = wrk_part_seek(w, p, offset, true);
    if (e) {
        wrk_worker_fatal(w, "codeq: worker: seek %s [%d]: %s", p->topic, (int)p->partition,
                         rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
}

static void take(wrk_worker *w, rd_kafka_message_t *m)
{
    wrk_part *p = m->rkt ? wrk_worker_part(w, rd_kafka_topic_name(m->rkt), m->partition) : NULL;
    if (p && m->offset >= 0) {
        p->fetched_at = wrk_now_ms();
        p->restarts = 0;
    }
    if (wrk_lost_take(w, p, m)) return;
    if (m->err) {
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (p) wrk_part_at_end(p, m->offset);
        } else {
            wrk_logx(WRK_LOG_WARN, "consume_error", NULL,
                     "worker: consume: %s", rd_kafka_message_errstr(m));
        }
        rd_kafka_message_destroy(m);
        return;
    }
    bool skipped;
    if (!p) { /* a record fetched just before its partition was revoked */
        rd_kafka_message_destroy(m);
        return;
    }
    if (wrk_part_consumed(p, m, &skipped)) return;
    if (!skipped) wrk_part_hold(w, p, m->offset); /* full: back to m, paused until it drains */
    rd_kafka_message_destroy(m);
}

static size_t pending(const wrk_worker *w)
{
    return wrk_slots_count(w, WRK_E_PENDING, NULL);
}

/* Takes in up to INTAKE_MAX records while fewer than 4 x slots wait for a slot. Above that
 * the records stay in librdkafka's bounded queue (queued.max.messages.kbytes) instead of
 * pausing the partitions: a resumed partition fetches again only on the broker thread's next
 * wake-up, up to a second later, which held a worker of short jobs to ~12 jobs/s. The consumer
 * is still polled every POLL_EVERY_MS, so rebalances are served and the group keeps us. */
static void intake(wrk_worker *w, int first_wait_ms)
{
    size_t hi = (size_t)w->c->slots * 4;
    uint64_t now = wrk_now_ms();
    bool full = pending(w) >= hi;
    if (full && now - w->last_poll < POLL_EVERY_MS) return;
    w->last_poll = now;
    for (int i = 0; i < INTAKE_MAX && (i == 0 || pending(w) < hi); i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(w->k, i == 0 && !full ? first_wait_ms : 0);
        if (!m) return;
        take(w, m);
    }
}

static void set_paused(wrk_worker *w, wrk_part *p, bool pause)
{
    if (p->paused == pause) return;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, p->topic, p->partition);
    rd_kafka_resp_err_t e = pause ? rd_kafka_pause_partitions(w->k, l)
                                  : rd_kafka_resume_partitions(w->k, l);
    rd_kafka_topic_partition_list_destroy(l);
    if (e)
        wrk_logx(WRK_LOG_WARN, "pause_error", NULL,
                 "worker: %s %s [%d]: %s", pause ? "pause" : "resume", p->topic, (int)p->partition,
                 rd_kafka_err2str(e));
    else
        p->paused = pause;
}

/* Pause everything when the records taken in by the periodic polls reach twice the prefetch
 * bound (long jobs), resume (only what we paused) below the bound; a partition near its
 * entry bound stays paused on its own. */
static void backpressure(wrk_worker *w, bool stopping)
{
    size_t n = pending(w), hi = (size_t)w->c->slots * 8, lo = (size_t)w->c->slots * 4;
    for (size_t i = 0; i < w->nparts; i++) {
        wrk_part *p = w->parts[i];
        bool full = p->n >= WRK_PART_PAUSE_AT;
        if (stopping || full || n >= hi) set_paused(w, p, true);
        else if (n <= lo) set_paused(w, p, false);
    }
}

static void report(wrk_worker *w, uint64_t *next)
{
    uint64_t now = wrk_now_ms();
    if (now < *next) return;
    *next = now + 10000;
    wrk_logx(WRK_LOG_INFO, "status", NULL,
             "worker %s: %zu partition%s, %d running, %zu pending, %lu job%s committed in %lu "
             "transaction%s (%lu aborted)",
             w->c->worker_id, w->nparts, wrk_s((long long)w->nparts), w->running, pending(w),
             w->jobs_done, wrk_s((long long)w->jobs_done), w->commits,
             wrk_s((long long)w->commits), w->aborts);
    if (w->nparts == 0) wrk_idle_report(w);
}

/* Restarts a partition's fetch at offset `from`: first a seek; if that did not help, the
 * partition is unassigned and assigned again locally (a fresh fetch state, no rebalance). */
static void restart_fetch(wrk_worker *w, wrk_part *p, int64_t from)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = from;
    rd_kafka_error_t *e = NULL;
    rd_kafka_resume_partitions(w->k, l); /* whoever paused it, it must fetch */
    if (p->restarts++ % 2 == 0) {
        e = rd_kafka_seek_partitions(w->k, l, 5000);
    } else if (!(e = rd_kafka_incremental_unassign(w->k, l))) {
        e = rd_kafka_incremental_assign(w->k, l);
    }
    if (e) {
        wrk_logx(WRK_LOG_WARN, "fetch_restart_error", NULL, "worker: %s [%d]: restarting the fetch: %s", p->topic, (int)p->partition,
                rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
    }
    rd_kafka_topic_partition_list_destroy(l);
    p->paused = false;
    p->fetched_at = wrk_now_ms();
    p->fetch_from = from;
}

/* A partition we hold with records waiting, from which nothing arrived for STALL_MS while
 * the worker was idle, is stalled; no other worker can take its jobs while we hold it. The
 * one cause found (a pause that outlived a lost assignment, see wrk_rebalance.c) is fixed at
 * its source; this catches the class: resume, restart the fetch, and say so. Checked only
 * when idle, every STALL_CHECK_MS, with one watermark query per partition. Records are judged
 * from the check that first saw them: on a partition idle for minutes, records produced just
 * before a check were taken for a stall (nothing fetched for minutes) and the fetch restarted. */
static void watchdog(wrk_worker *w, uint64_t *next)
{
    uint64_t now = wrk_now_ms();
    if (now < *next) return;
    *next = now + STALL_CHECK_MS;
    if (w->running || pending(w) || wrk_commit_busy(w)) return;
    for (size_t i = 0; i < w->nparts; i++) {
        wrk_part *p = w->parts[i];
        int64_t lo, hi, from = p->next >= 0 ? p->next : p->watermark;
        if (now - p->fetched_at < STALL_MS ||
            rd_kafka_query_watermark_offsets(w->k, p->topic, p->partition, &lo, &hi, 2000))
            continue;
        if (from < 0) from = lo; /* nothing committed or consumed: the fetch starts there */
        if (hi <= from) {
            p->waiting_seen = 0;
            continue;
        }
        if (!p->waiting_seen || p->waiting_from != from || p->fetched_at >= p->waiting_seen) {
            p->waiting_seen = now; /* first seen: a fetch has until the next check */
            p->waiting_from = from;
            continue;
        }
        wrk_logx(WRK_LOG_WARN, "partition_stalled", NULL, "worker: %s [%d]: stalled: %lld records wait from offset %lld, none fetched for "
                "%lu s (%lu s since they were seen)%s; restarting its fetch (%s)",
                p->topic, (int)p->partition, (long long)(hi - from), (long long)from,
                (unsigned long)((now - p->fetched_at) / 1000),
                (unsigned long)((now - p->waiting_seen) / 1000), p->paused ? " (paused by us)" : "",
                p->restarts % 2 == 0 ? "seek" : "unassign + assign");
        restart_fetch(w, p, from);
    }
}

/* The loop is turning: a liveness probe reads the file's age (deploy/kubernetes/). */
static void heartbeat(wrk_worker *w)
{
    uint64_t now = wrk_now_ms();
    if (w->beat_fd < 0 || now < w->next_beat) return;
    w->next_beat = now + 2000;
    if (futimens(w->beat_fd, NULL) < 0)
        wrk_logx(WRK_LOG_WARN, "heartbeat_error", NULL,
                 "worker: heartbeat %s: %s", w->c->heartbeat_path, strerror(errno));
}

static void kill_all(wrk_worker *w, const char *why)
{
    for (size_t i = 0; i < w->nparts; i++)
        for (size_t j = 0; j < w->parts[i]->n; j++)
            if (w->parts[i]->e[j].state == WRK_E_RUNNING)
                wrk_task_kill(w->parts[i]->e[j].task, why);
}

/* The probes see a worker that is finishing its jobs, not a stalled loop: a wait longer than
 * --health-stall-ms would have /healthz fail, and the worker be killed by its orchestrator
 * with the jobs it was letting finish. A job that finishes while others run is answered now,
 * not when the last one ends: that could be the whole wait later, or never if the wait is cut
 * short by SIGKILL. And a slot a finished job frees takes the next job of a partition that is
 * kept (a revoke's drain), not left idle for the rest of the wait; nothing starts once a stop
 * is asked for, nor on a partition being handed over. */
void wrk_worker_wait_turn(wrk_worker *w, int wait_ms)
{
    wrk_metrics_turn(w);
    heartbeat(w);
    wrk_commit_collect(w, false);
    wrk_slots_fill(w);
    /* the answers of the turns before: those of the last job the caller waits for go in the
     * final commit that follows its loop, not in one more just before it */
    wrk_commit_in_wait(w);
    wrk_slots_service(w, wait_ms);
}

/* Finish or kill in-flight work within the grace period, publish what finished. */
static void shut_down(wrk_worker *w)
{
    uint64_t deadline = wrk_stop_grace_end(); /* from the signal: a drain may have come first */
    wrk_logx(WRK_LOG_INFO, "worker_stopping", NULL,
             "worker %s: stopping: %d job%s running, up to %d ms to finish", w->c->worker_id,
             w->running, wrk_s(w->running), (int)(deadline > wrk_now_ms() ? deadline - wrk_now_ms() : 0));
    backpressure(w, true);
    wrk_commit_give_up_at(w, deadline + 10000); /* the final commit gets 10 s more */
    wrk_stop_step("the commit in flight");
    wrk_commit_collect(w, true);
    for (size_t i = 0; i < w->nparts; i++) { /* claimed but not started: leave them */
        w->parts[i]->handoff = true;
        for (size_t j = 0; j < w->parts[i]->n; j++) {
            wrk_entry *e = &w->parts[i]->e[j];
            if (e->state != WRK_E_CLAIMED) continue;
            wrk_slots_unclaim(w, w->parts[i], e);
            e->state = WRK_E_PENDING;
        }
    }
    wrk_stop_step("running jobs");
    wrk_slots_service(w, 0); /* what finished meanwhile is answered, even with no grace left */
    while (w->running > 0 && wrk_now_ms() < deadline && !w->fatal) {
        wrk_worker_wait_turn(w, 50);
        rd_kafka_message_t *m = rd_kafka_consumer_poll(w->k, 0); /* serves the group only */
        if (m) rd_kafka_message_destroy(m); /* not taken: the next owner runs it */
    }
    for (size_t i = 0; i < w->nparts; i++) wrk_slots_abandon(w, w->parts[i]);
    wrk_stop_step("the final commit");
    if (!w->fatal) wrk_commit_flush(w);
}

static int run(wrk_worker *w)
{
    uint64_t next_report = wrk_now_ms() + 10000, next_watch = 0;
    while (!wrk_stop_requested() && !w->fatal && !w->gave_up) {
        wrk_metrics_turn(w);
        wrk_fault_tick(w);
        heartbeat(w);
        /* idle, the consumer may block, briefly while a commit may unlock jobs */
        intake(w, w->running ? 0 : wrk_commit_busy(w) ? 2 : 50);
        wrk_lost_tick(w);
        wrk_commit_collect(w, false);
        wrk_slots_fill(w);
        wrk_slots_service(w, w->running ? 10 : 0);
        if (wrk_commit_due(w)) wrk_commit_send(w);
        backpressure(w, false);
        wrk_idle_watch(w); /* before report: it says what the watch last saw */
        report(w, &next_report);
        watchdog(w, &next_watch);
    }
    if (!w->fatal && !wrk_stop_requested())
        wrk_stop_begin(true, 4); /* giving up: the host cannot run jobs, they get the grace */
    if (!w->fatal) shut_down(w);
    if (w->fatal) kill_all(w, w->why);
    return w->fatal ? 3 : w->gave_up ? 4 : 0;
}

/* librdkafka 2.0.2 asserts in the cooperative-sticky assignor when a consumer that never got
 * an assignment is closed (#4381). A worker stopped right after it started waits (bounded)
 * for its first assignment, discarding any record it is handed: not started, not committed,
 * so the group's next owner runs it. If none comes, the consumer is left to the process exit;
 * the group drops the member after session.timeout.ms. */
static bool wait_first_assignment(wrk_worker *w)
{
    wrk_stop_step("the first assignment");
    /* The idle watch found no jobs topic: no assignment can come, so none is waited for. */
    bool absent = w->idle.since && w->idle.partitions == 0;
    uint64_t deadline = wrk_now_ms() + (absent ? 0 : 15000);
    while (!w->assigned_once && wrk_now_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(w->k, 100);
        if (m) rd_kafka_message_destroy(m);
    }
    if (!w->assigned_once)
        wrk_logx(WRK_LOG_WARN, "close_skipped", NULL,
                 "worker %s: no assignment %s; not closing the consumer (librdkafka 2.0.2 "
                 "#4381), the group drops this member after its session timeout",
                 w->c->worker_id, absent ? "(the jobs topic does not exist)" : "yet");
    return w->assigned_once;
}

static void close_consumer(rd_kafka_t *k)
{
    wrk_stop_step("the consumer's close");
    rd_kafka_consumer_close(k); /* runs the revoke callback: nothing left but to commit */
    rd_kafka_destroy(k);
}

/* The Kafka side of the start, each step said to the probes while it runs. The chain is
 * resumed after init_transactions fenced a predecessor of this instance, so nothing of it can
 * still commit behind the event found. */
static int start_kafka(wrk_worker *w, const wrk_config *c, char *err, size_t errlen)
{
    char txid[WRK_CHAIN_ID_MAX];
    wrk_commit_txid(c, txid, sizeof txid);
    wrk_metrics_starting("initialising transactions (codeq-%s-%s) with the brokers at %s",
                         c->group, c->instance_id, c->kafka.brokers);
    if (wrk_committer_producer(w->cm, c, err, errlen) < 0) return -1;
    wrk_metrics_starting("resuming the audit chain of %s from %s", txid, c->kafka.audit_topic);
    if (wrk_chain_resume(c, txid, err, errlen) < 0) return -1;
    wrk_metrics_starting("joining group %s", c->group);
    if (!(w->k = new_consumer(w, err, errlen))) return -1;
    return wrk_committer_start(w->cm, err, errlen);
}

int wrk_worker_loop(const wrk_config *c)
{
    char err[512];
    wrk_worker w = {.c = c, .beat_fd = -1, .cm = wrk_committer_new()};
    if (!w.cm) {
        wrk_logx(WRK_LOG_ERROR, "start_failed", NULL, "codeq: worker: out of memory");
        return 1;
    }
    if (c->heartbeat_path &&
        (w.beat_fd = open(c->heartbeat_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
        wrk_logx(WRK_LOG_ERROR, "start_failed", NULL, "codeq: worker: heartbeat file %s: %s",
                 c->heartbeat_path, strerror(errno));
        return 1;
    }
    if (start_kafka(&w, c, err, sizeof err) < 0) {
        bool stopped = wrk_stop_requested(); /* the start gave up because it was asked to */
        wrk_stop_begin(false, stopped ? 0 : 1); /* the destroys below are bounded too */
        wrk_logx(stopped ? WRK_LOG_INFO : WRK_LOG_ERROR, stopped ? "worker_leaving" : "start_failed",
                 NULL, "%s%s", stopped ? "worker: stopped during start-up: " : "", err);
        if (w.k) rd_kafka_destroy(w.k);
        wrk_committer_free(w.cm);
        if (w.beat_fd >= 0) unlink(c->heartbeat_path);
        return stopped ? 0 : 1;
    }
    wrk_logx(WRK_LOG_INFO, "worker_started", NULL,
             "worker %s: consuming %s as group %s on %s, %d slot%s, transactional id codeq-%s-%s",
             c->worker_id, c->kafka.jobs_topic, c->group, c->kafka.brokers, c->slots,
             wrk_s(c->slots), c->group, c->instance_id);
    wrk_stop_step("the job loop");
    int rc = run(&w);
    if (w.fatal) wrk_stop_begin(false, 3); /* the worker's own end is bounded too */
    if (!w.fatal)
        wrk_logx(WRK_LOG_INFO, "worker_leaving", NULL, "worker %s: leaving group %s",
                 c->worker_id, c->group);
    w.leaving = true;
    if (wait_first_assignment(&w)) {
        close_consumer(w.k);
        w.k = NULL;
    }
    wrk_stop_step("the revoke's commit");
    wrk_commit_collect(&w, true);
    while (w.nparts) {
        wrk_part *p = w.parts[--w.nparts];
        wrk_slots_abandon(&w, p);
        wrk_part_drop(p);
    }
    free(w.parts);
    free(w.limbo);
    if (json_array_size(w.audit_extra)) /* no commit came after them: a lost partition's */
        wrk_logx(WRK_LOG_WARN, "audit_uncommitted", NULL, "worker %s: %zu audit event%s of "
                 "runs that answered nothing (abandoned, rerun) not committed: no commit came "
                 "after them (or its outcome is unknown)", c->worker_id, json_array_size(w.audit_extra),
                 wrk_s((long long)json_array_size(w.audit_extra)));
    json_decref(w.audit_extra);
    wrk_stop_step("the producer's close");
    wrk_committer_free(w.cm);
    if (w.fatal) wrk_logx(WRK_LOG_ERROR, "fatal", NULL, "%s", w.why);
    if (w.beat_fd >= 0) { /* a stopped worker is not alive: the probe must not say it is */
        close(w.beat_fd);
        unlink(c->heartbeat_path);
    }
    return rc;
}
