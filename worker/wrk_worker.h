/* The exactly-once worker's shared state. The main thread owns the consumer, the partitions it
 * was assigned and the jobs running in its slots; a committer thread owns the transactional
 * calls. A job flows one way, one step per file:
 *   wrk_consume.c  intake: records -> PENDING entries (rebalances run here: wrk_rebalance.c;
 *                  a record batch that cannot be decoded: wrk_lost.c)
 *   wrk_slots.c    start PENDING jobs (or claim careful ones), service them -> DONE
 *   wrk_commit.c   DONE -> a batch for the committer thread -> COMMITTED
 * Nothing calls back up the chain: what a commit unlocks (claims, the lease) is read from
 * the partitions by the next turn of the loop. */
#ifndef CODEQ_WRK_WORKER_H
#define CODEQ_WRK_WORKER_H

#include "wrk_internal.h"
#include "wrk_offsets.h"

typedef struct wrk_committer wrk_committer;

/* wrk_idle.c: a member without partitions, watching whether its group makes progress. */
typedef struct {
    uint64_t since;           /* without partitions since (monotonic ms); 0: has some */
    uint64_t next_check, moved_at, rejoin_after;
    unsigned backoff_ms;
    int64_t committed;        /* sum of the group's committed offsets at the last check */
    int partitions;           /* the jobs topic's at the last check; 0 none, -1 unreachable */
    rd_kafka_resp_err_t topic_err; /* why it could not be asked */
    bool have;
    unsigned long rejoins;
} wrk_idle;

/* wrk_fault.c: the host cannot run a trivial job; nothing starts until it can. */
typedef struct {
    bool active;
    uint64_t since, next_probe;   /* monotonic ms */
    unsigned backoff_ms;
    unsigned long requeued;       /* jobs put back to wait because the sandbox failed */
    char why[256];                /* the self-check's last failure */
} wrk_fault;

typedef struct {
    const wrk_config *c;
    wrk_committer *cm;      /* the commit thread and its batch */
    rd_kafka_t *k;          /* consumer */
    wrk_part **parts;
    size_t nparts, capparts;
    wrk_part **limbo;       /* lost while in the commit in flight: freed when it ends */
    size_t nlimbo;
    int running;            /* RUNNING entries (sandboxes alive or just finished) */
    size_t rr;              /* where claiming starts next, so no partition starves the rest */
    uint64_t last_commit;   /* monotonic ms */
    uint64_t commit_sent;   /* monotonic ms the batch in flight went to the committer; 0: none */
    uint64_t last_poll;     /* of the consumer, monotonic ms */
    uint64_t retry_at;      /* no commit before this after an abort */
    bool fatal;
    bool assigned_once;     /* a rebalance has assigned us something (even nothing) */
    bool leaving;           /* the loop is over: partitions assigned now are not taken */
    wrk_fault fault;
    wrk_idle idle;
    bool gave_up;           /* the host stayed at fault for host_fault_ms: exit 4 */
    char why[512];
    unsigned long jobs_done, commits, aborts;
    unsigned long dead_given_up; /* dead letters refused even minimal (wrk_task_unpublishable) */
    int beat_fd;            /* --heartbeat-file, or -1 */
    uint64_t next_beat;     /* when it is touched next, monotonic ms */
    size_t record_max;      /* the consumer's receive.message.max.bytes */
    uint64_t probe_ms;      /* a probe into a batch that cannot be decoded unanswered this long
                             * went past it (wrk_lost.c) */
    json_t *audit_extra;    /* audit events of runs that answered nothing (abandoned, rerun),
                             * for the next commit (wrk_commit_later); NULL: none */
} wrk_worker;

/* wrk_commit.c: the producer's delivery-report and error callbacks (opaque: the committer). */
void wrk_commit_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque);
void wrk_commit_error(rd_kafka_t *rk, int err, const char *reason, void *opaque);
wrk_committer *wrk_committer_new(void);
/* The transactional.id of this worker (codeq-GROUP-INSTANCE); it also names its audit chain. */
void wrk_commit_txid(const wrk_config *c, char *buf, size_t n);
/* The transactional producer's configuration: the worker's Kafka settings, the committer's
 * own, then the operator's -X properties over both. */
rd_kafka_conf_t *wrk_commit_conf(const wrk_config *c, char *err, size_t errlen);
/* Creates the transactional producer and initialises its transactions. */
int wrk_committer_producer(wrk_committer *cm, const wrk_config *c, char *err, size_t errlen);
/* Starts the thread once the producer and consumer exist. */
int wrk_committer_start(wrk_committer *cm, char *err, size_t errlen);
void wrk_committer_free(wrk_committer *cm);
/* Whether a refusal by topic (error e) is t's to be cut back for: a record too large, or one its
 * topic will not take (its key, its contents, its time), or the topic its job named (reply_to)
 * as a whole. A dead letter only for the dead-letter topic's refusal: a refused audit event
 * says nothing of it. One of the worker's own topics refusing as a whole (unknown, forbidden)
 * would refuse any job's records: nothing is cut, the batch goes again later. */
bool wrk_commit_jobs_refusal(const wrk_config *c, wrk_task *t, const char *topic,
                             rd_kafka_resp_err_t e);

/* wrk_slots.c: fills free slots: starts jobs (below the lease), claims careful ones, starts
 * claimed ones whose claim is committed; asks for a lease where a job waits for one. Nothing
 * once a stop is asked for or while the host is at fault. */
void wrk_slots_fill(wrk_worker *w);
/* Polls running sandboxes up to timeout_ms and moves finished jobs to DONE. */
void wrk_slots_service(wrk_worker *w, int timeout_ms);
/* Kills and forgets the running and claimed jobs of p; they will run again elsewhere. */
void wrk_slots_abandon(wrk_worker *w, wrk_part *p);
/* A CLAIMED entry given back before it started (a stop, a revoke): its claim no longer counts
 * as a start, and a claim that put a rerun event on the audit trail gets an abandoned one. */
void wrk_slots_unclaim(wrk_worker *w, const wrk_part *p, wrk_entry *e);
size_t wrk_slots_count(const wrk_worker *w, wrk_estate s, const wrk_part *only);
void wrk_entry_release(wrk_entry *e);

/* wrk_lost.c: every record of a batch librdkafka cannot decode gets an entry and a dead
 * letter. Takes m (true) when it is such a batch's error, or a record that a probe past the
 * end of such a batch fetched; false: m is the caller's to take in. */
bool wrk_lost_take(wrk_worker *w, wrk_part *p, rd_kafka_message_t *m);
/* Where the next probe goes: past hi (the batch's last offset known), twice the last step
 * (wrk_lost_step of the range it entered), or half way to bound (the first offset known past
 * the batch; -1 none); at most room entries ahead, below end (the partition's end; -1 not
 * known: one record). Pure, for the tests. */
int64_t wrk_lost_next(int64_t hi, int64_t bound, int64_t step, int64_t room, int64_t end);
int64_t wrk_lost_step(int64_t from, int64_t to);
/* Once per turn: a probe left unanswered past probe_ms went past the batch. */
void wrk_lost_tick(wrk_worker *w);
/* Frees an entry's view of its batch's error (e->view). */
void wrk_lost_view_free(rd_kafka_message_t *m);

/* wrk_commit.c: a batch (DONE results, offsets + metadata of every partition with work) goes
 * to the committer thread; collect applies its outcome (committed, or aborted: retried
 * later) and sets w->fatal on a fatal producer error. flush = collect, send, collect, waiting:
 * for revoke and shutdown. No entry may be released while a batch is out. */
bool wrk_commit_due(const wrk_worker *w);
void wrk_commit_send(wrk_worker *w);
void wrk_commit_collect(wrk_worker *w, bool wait);
void wrk_commit_flush(wrk_worker *w);
bool wrk_commit_busy(const wrk_worker *w);
/* An audit event of no finished job (ev is taken): it goes in the next transaction the worker
 * commits, before that batch's results, and is kept for the one after when that aborts. */
void wrk_commit_later(wrk_worker *w, json_t *ev);
/* For loops that wait on running jobs (a revoke's drain, a stop's grace), after a collect:
 * sends a commit when work waits for it, at once for a job waiting to start (a claim, a kept
 * partition's lease), within the commit interval for answers. Never for the hand-over alone:
 * the final commit after the wait carries it. */
void wrk_commit_in_wait(wrk_worker *w);
/* The group metadata a transaction's offsets go with: the consumer's now, else the last it
 * gave (kept by the committer), else NULL. librdkafka has none to give once its consumer is
 * closing, and the revoke that rd_kafka_consumer_close runs is when the hand-over commit is
 * made: the last one stands in, and the coordinator, which checks its generation and member,
 * refuses it if stale (the transaction aborts; nothing of it was visible). */
rd_kafka_consumer_group_metadata_t *wrk_commit_group(wrk_committer *cm, rd_kafka_t *k);
/* From then on a transactional call that keeps failing retriably gives up (fatal): stopping
 * must not wait for a broker that is away. */
void wrk_commit_give_up_at(wrk_worker *w, uint64_t when);

/* wrk_consume.c: one turn of a loop that waits on running jobs (a revoke's drain, a stop's
 * grace period): the slots serviced for up to wait_ms, each answer committed as it comes
 * (not when the last job ends), free slots filled from the partitions that are kept (unless
 * stopping), and the probes (/healthz, the heartbeat file) told that the worker is alive. */
void wrk_worker_wait_turn(wrk_worker *w, int wait_ms);

/* wrk_fault.c: called by wrk_slots.c for a finished job: true when the job was put back to
 * PENDING because the sandbox, not the job, failed (see the file's comment). */
bool wrk_fault_rerun(wrk_worker *w, wrk_entry *e);
/* True while no job may start. */
bool wrk_fault_holding(const wrk_worker *w);
/* Once per turn: retries the self-check when due; recovers, or sets gave_up. */
void wrk_fault_tick(wrk_worker *w);

/* wrk_idle.c: once per turn; rejoins the group when it is stuck without us (see the file). */
void wrk_idle_watch(wrk_worker *w);
/* Says why the worker has no partitions, from the watch's last look at the cluster. */
void wrk_idle_report(const wrk_worker *w);
/* wrk_consume.c: subscribes the consumer to the jobs topic. */
int wrk_subscribe(wrk_worker *w, char *err, size_t errlen);

/* wrk_rebalance.c */
void wrk_rebalance_cb(rd_kafka_t *k, rd_kafka_resp_err_t e, rd_kafka_topic_partition_list_t *l,
                      void *opaque);
wrk_part *wrk_worker_part(wrk_worker *w, const char *topic, int32_t partition);
/* wrk_consume.c: sets p's fetch at offset, pausing it first if asked. */
rd_kafka_error_t *wrk_part_seek(wrk_worker *w, wrk_part *p, int64_t offset, bool pause);
/* A partition full of unfinished entries: its fetch goes back to offset, paused until the
 * entries drain (backpressure resumes it); a seek that fails is fatal. */
void wrk_part_hold(wrk_worker *w, wrk_part *p, int64_t offset);
/* Releases every entry of p and frees it. */
void wrk_part_drop(wrk_part *p);
void wrk_worker_fatal(wrk_worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
