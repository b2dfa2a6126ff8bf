/* The audit trail's hash chain (docs/security-model.md, "Audit trail"). Every audit event a
 * worker commits carries chain = {writer, epoch, seq, prev, hash}:
 *   writer  the worker's transactional.id (codeq-GROUP-INSTANCE): Kafka lets one producer of
 *           that id commit at a time, so one writer's epochs follow each other in one line
 *   epoch   one per process start: its UTC start time and 32 random bits
 *   seq     0, 1, 2, ... within the epoch, in commit order
 *   prev    hash of seq-1; at seq 0 the last hash of the writer's previous epoch (prev_epoch
 *           names it), null where none was found
 *   hash    SHA-256 (hex) of the event's canonical encoding without chain.hash: jansson's
 *           json_dumps(JSON_SORT_KEYS | JSON_COMPACT) - keys in byte order at every level, no
 *           white space, UTF-8 unescaped, reals with 17 significant digits.
 * Only the committer thread stamps (inside the transaction); an abort rewinds the head to the
 * last committed one, so a read_committed reader sees each (writer, epoch) without gaps. */
#ifndef CODEQ_WRK_AUDIT_CHAIN_H
#define CODEQ_WRK_AUDIT_CHAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "worker.h"

#define WRK_CHAIN_ID_MAX 320

typedef struct {
    char writer[WRK_CHAIN_ID_MAX];
    char epoch[64];
    char prev_epoch[64];    /* "" when no earlier epoch was found */
    char first_prev[65];    /* its last hash; "" unknown */
    uint64_t seq;           /* next seq to give (pending head) */
    char prev[65];          /* hash of the last event stamped; "" none yet */
    char undo_prev[65];     /* prev before the last stamp (wrk_chain_unstamp) */
    uint64_t c_seq;         /* the committed head */
    char c_prev[65];
} wrk_chain;

/* A fresh epoch id: "20261201T215500.123Z-1a2b3c4d". */
void wrk_chain_new_epoch(char out[64]);
/* prev_epoch/prev_hash: the writer's last committed event before this start, NULL if unknown. */
void wrk_chain_init(wrk_chain *ch, const char *writer, const char *epoch, const char *prev_epoch,
                    const char *prev_hash);
/* Sets ev's chain field (replacing one from an aborted attempt) and advances the pending head. */
int wrk_chain_stamp(wrk_chain *ch, json_t *ev);
/* The event last stamped was not produced after all: its number goes to the next one. */
void wrk_chain_unstamp(wrk_chain *ch);
/* The transaction committed: the pending head becomes the committed one. */
void wrk_chain_commit(wrk_chain *ch);
/* A transaction begins (after an abort, its events get their numbers again). */
void wrk_chain_rewind(wrk_chain *ch);
/* hex = SHA-256 of ev's canonical encoding without chain.hash; ev is left as it was. */
int wrk_chain_hash(const json_t *ev, char hex[65]);

/* The worker's own chain, stamped by the committer thread in wrk_publish.c. NULL until
 * wrk_chain_resume ran (then `codeq run` and other callers stamp nothing). */
wrk_chain *wrk_chain_worker(void);
/* At worker start, after init_transactions fenced any predecessor: reads the last
 * WRK_CHAIN_LOOKBACK records of each audit partition (read_committed) for this writer's newest
 * event, so the new epoch names it. Not finding one (first start, older than the look-back) or
 * not being able to read (ACL, time out: logged) starts an epoch that names no predecessor;
 * it never stops the worker. Returns 0. */
#define WRK_CHAIN_LOOKBACK 5000
int wrk_chain_resume(const wrk_config *c, const char *writer, char *err, size_t errlen);

/* Verification (codeq audit --verify): records are added in the order read; problems are
 * printed to out as "TOPIC/PARTITION@OFFSET: writer W epoch E seq N: what". */
typedef struct wrk_verifier wrk_verifier;
/* partial: the read did not start at the beginning (--since), so a chain need not start at 0. */
wrk_verifier *wrk_verifier_new(bool partial);
/* Checks that need one record: chain fields, hash, duplicate, order within its partition.
 * Returns the problems found (printed). */
int wrk_verifier_add(wrk_verifier *v, const char *topic, int partition, int64_t offset,
                     const json_t *ev, FILE *out);
/* Checks over whole chains: gaps, prev links, links between epochs. Problems already printed
 * by an earlier call are not printed again; returns those newly found. */
int wrk_verifier_check(wrk_verifier *v, FILE *out);
/* Chains and events seen, for the summary. */
void wrk_verifier_counts(const wrk_verifier *v, size_t *chains, size_t *events);
void wrk_verifier_free(wrk_verifier *v);

#endif
