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
 * Format: "codeq1;d=<delta>,...;a=<delta>:<attempts>,..." with offsets as deltas from the
 * watermark. librdkafka 2.0.2 sends this in TxnOffsetCommit and returns it from
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

typedef enum {
    WRK_E_KNOWN,     /* not consumed yet; known from the committed metadata only */
    WRK_E_PENDING,   /* consumed, waiting for a slot */
    WRK_E_CLAIMED,   /* given a slot; its start is being recorded in a commit */
    WRK_E_RUNNING,   /* started */
    WRK_E_DONE,      /* finished; its records go out in the next transaction */
    WRK_E_COMMITTED, /* its records and offset are committed (or it was skipped as such) */
} wrk_estate;

struct wrk_task;

typedef struct {
    int64_t offset;
    wrk_estate state;
    int attempts;             /* starts so far, this one included once claimed */
    rd_kafka_message_t *msg;  /* owned while not committed */
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
    bool dirty;         /* something to commit for this partition */
} wrk_part;

wrk_part *wrk_part_new(const char *topic, int32_t partition, int64_t committed,
                       const char *metadata, size_t mdlen);
void wrk_part_free(wrk_part *p);
/* Finds or inserts the entry for offset; NULL when full. */
wrk_entry *wrk_part_entry(wrk_part *p, int64_t offset);
/* Records a consumed message; returns its entry, or NULL if it is already committed (the
 * caller skips it) or the partition is full. Takes ownership of m unless NULL is returned. */
wrk_entry *wrk_part_consumed(wrk_part *p, rd_kafka_message_t *m, bool *skipped);
/* The offset to commit if every DONE entry were committed (the watermark after commit). */
int64_t wrk_part_commit_offset(const wrk_part *p);
/* Writes the metadata for a commit at wrk_part_commit_offset(); returns its length. */
size_t wrk_part_metadata(const wrk_part *p, char *buf, size_t len);
/* After a successful commit: DONE -> COMMITTED, watermark advanced, old entries dropped.
 * Entries released are passed to `release` (to free their task and message). */
void wrk_part_committed(wrk_part *p, void (*release)(wrk_entry *));
size_t wrk_part_count(const wrk_part *p, wrk_estate s);

#endif
