/* Offsets: what a worker knows of one assigned partition, and how that knowledge is written
 * into (and read back from) the metadata of the transactional offset commit.
 *
 * Committing only the contiguous finished prefix would make a quick job's result wait for a
 * slow job at a lower offset (head-of-line blocking). Instead, as Parallel Consumer does, the
 * committed offset is the watermark below which every consumed record is finished, and the
 * offsets finished above it travel in the commit's metadata string, in the same transaction
 * as their results. A new owner reads the metadata on assignment and skips those offsets,
 * so a result is published exactly once. The metadata also carries, for each job that was
 * running, how many times it was started: a job that kills its worker again and again is
 * recognised and answered instead of crash-looping the group (poison pill).
 *
 * Starting a job costs no commit. Instead each owner holds a lease it committed ("h"): it
 * starts at once any job below the lease, and raises the lease (WRK_LEASE_AHEAD past what it
 * consumed) in the commits that carry results anyway. A start is recorded in the next commit
 * that runs while the job does. If the owner dies, the next owner knows which jobs it may
 * have started without a record: those between the watermark and the dead owner's lease. Those,
 * and every job with a recorded start that did not finish, are *careful*: their start is
 * committed (claimed) before they run, so a job that kills its worker is counted each time
 * from then on. A clean hand-over commits h=0: nothing was started that is not on record.
 * Format: "codeq1;d=<delta>,...;a=<delta>:<attempts>,...;h=<delta>" with offsets as deltas
 * from the watermark. Metadata without h (from before leases, when every start was committed
 * first) has no careful range. librdkafka 2.0.2 sends this in TxnOffsetCommit and returns it from
 * rd_kafka_committed() (verified against Kafka 4.1.2; see docs/exactly-once.md). */
#ifndef CODEQ_WRK_OFFSETS_H
#define CODEQ_WRK_OFFSETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <librdkafka/rdkafka.h>

/* Entries above the watermark a partition may hold; beyond it the partition is paused, which
 * bounds the metadata well under Kafka's 4096-byte offset.metadata.max.bytes. */
#define WRK_PART_MAX_ENTRIES 200
/* Backpressure pauses a partition holding this many, before it is full. */
#define WRK_PART_PAUSE_AT (WRK_PART_MAX_ENTRIES - 20)
/* How far past the last consumed offset a commit moves the lease: the most jobs a successor
 * runs carefully (a commit before each start) after this owner died. */
#define WRK_LEASE_AHEAD 64

typedef enum {
    WRK_E_KNOWN,     /* not consumed yet; known from the committed metadata only */
    WRK_E_PENDING,   /* consumed, waiting for a slot */
    WRK_E_CLAIMED,   /* careful: given a slot; its start is being recorded in a commit */
    WRK_E_RUNNING,   /* started */
    WRK_E_DONE,      /* finished; its records go out in the next transaction */
    WRK_E_COMMITTING,/* finished; its records are in the transaction in flight */
    WRK_E_COMMITTED, /* its records and offset are committed (or it was skipped as such) */
} wrk_estate;

struct wrk_task;

typedef struct {
    int64_t offset;
    wrk_estate state;
    int attempts;             /* starts so far, this one included once claimed */
    bool suspect;             /* a previous start is on record and did not finish */
    bool claim_sent;          /* CLAIMED: the claim is in the transaction in flight */
    bool claim_ok;            /* CLAIMED: the claim is committed; the job may start */
    int reruns;               /* runs again after the sandbox failed before the job began */
    rd_kafka_message_t *msg;  /* owned while not committed */
    bool view;                /* msg is a view of a batch's error (wrk_lost.c), not librdkafka's */
    struct wrk_task *task;    /* RUNNING / DONE */
} wrk_entry;

typedef struct {
    char *topic;
    int32_t partition;
    int64_t watermark;  /* committed offset: consumed records below it are all finished; -1 unknown */
    int64_t next;       /* one past the highest consumed offset; -1 unknown */
    wrk_entry *e;       /* ascending offsets >= watermark */
    size_t n, cap;
    bool paused;        /* paused by us (backpressure); only these are ever resumed */
    uint64_t fetched_at;/* monotonic ms of the last record (or of the assignment) */
    uint64_t waiting_seen; /* the stall watchdog's first sight of records waiting from
                              waiting_from with none fetched since; 0 none */
    int64_t waiting_from;
    int restarts;       /* fetch restarts by the stall watchdog since the last record */
    int64_t fetch_from; /* where the worker last set the fetch (assignment, seek); -1 unknown */
    int64_t err_at;     /* offset of the last record error seen (wrk_lost.c); -1 none */
    int64_t lost_hi;    /* the batch failing at err_at holds every offset up to this; -1 none */
    int64_t lost_bound; /* and ends below this; -1 not known */
    int64_t lost_step;  /* how far past lost_hi the next probe goes */
    uint64_t lost_probe_at; /* monotonic ms the probe was set (or its partition resumed) */
    bool dirty;         /* something to commit for this partition */
    int64_t lease;      /* committed by this owner: jobs below it may start at once; -1 none */
    int64_t careful_until; /* a dead previous owner may have started jobs below it */
    bool want_lease;    /* a job waits for the lease to be raised */
    bool handoff;       /* being handed over: the next commit promises that nothing more starts */
    bool in_batch;      /* part of the transaction in flight, with: */
    int64_t batch_offset, batch_lease;
} wrk_part;

/* What a pending job needs before it may start. */
typedef enum {
    WRK_START_NOW,   /* below the committed lease, not careful */
    WRK_START_CLAIM, /* careful: its start must be committed first */
    WRK_START_WAIT,  /* at or past the lease: the next commit raises it */
} wrk_start;

wrk_part *wrk_part_new(const char *topic, int32_t partition, int64_t committed,
                       const char *metadata, size_t mdlen);
void wrk_part_free(wrk_part *p);
/* Finds or inserts the entry for offset; NULL when full. */
wrk_entry *wrk_part_entry(wrk_part *p, int64_t offset);
/* Records a consumed message; returns its entry, or NULL if it is already committed (the
 * caller skips it) or the partition is full. Takes ownership of m unless NULL is returned. */
wrk_entry *wrk_part_consumed(wrk_part *p, rd_kafka_message_t *m, bool *skipped);
/* The fetch reached the partition's end at `end` (librdkafka's PARTITION_EOF, every record
 * below it handed over). Whatever lies between the last record consumed and `end` is no job
 * (transaction markers, records of aborted transactions), so the position moves past it, as a
 * Java consumer's does: the next commit carries it, and the group's lag reads 0 at rest.
 * Only when the fetch was set at or below the position (not while it probes ahead, wrk_lost.c)
 * and the position is known: a record was taken, an offset committed, or the fetch set at the
 * partition's start (wrk_rebalance.c). Returns whether it moved. */
bool wrk_part_at_end(wrk_part *p, int64_t end);
/* The offset to commit if every DONE entry were committed (the watermark after commit). */
int64_t wrk_part_commit_offset(const wrk_part *p);
/* Writes the metadata for a commit at wrk_part_commit_offset() promising `lease`; returns its
 * length. */
size_t wrk_part_metadata(const wrk_part *p, int64_t lease, char *buf, size_t len);
wrk_start wrk_part_start_rule(const wrk_part *p, const wrk_entry *e);
/* Whether p has anything for a commit: results, claims, starts to record, a lease to raise. */
bool wrk_part_has_work(const wrk_part *p);
/* Takes p into the next transaction: DONE -> COMMITTING, unsent claims sent; writes the
 * offset and metadata (md, *mdn bytes) that transaction commits. False if nothing to commit. */
bool wrk_part_batch(wrk_part *p, int64_t *offset, char *md, size_t mdlen, size_t *mdn);
/* The transaction ended. Committed: COMMITTING -> COMMITTED, sent claims may start, lease and
 * watermark advanced, entries below it dropped (passed to `release` to free their task and
 * message). Aborted: back to DONE and unsent, to go in a later transaction. */
void wrk_part_batch_end(wrk_part *p, bool committed, void (*release)(wrk_entry *));
size_t wrk_part_count(const wrk_part *p, wrk_estate s);

#endif
