/* Metrics and health of one worker process (wrk_metrics.c), served over HTTP by wrk_http.c.
 * Process-wide: one worker loop per process, read by the HTTP server's thread. The loop
 * updates them with one-line calls at the points a job or the group changes; everything the
 * loop already counts (commits, aborts, running jobs, partitions) is copied once per turn by
 * wrk_metrics_turn, so the committer and the slots need no metric code of their own (the
 * committer's start says what it waits for; a commit's end, on the loop's thread, counts the
 * jobs it answered). */
#ifndef CODEQ_WRK_METRICS_H
#define CODEQ_WRK_METRICS_H

#include <stdbool.h>
#include <stdio.h>

#include "wrk_worker.h"

/* Thresholds of /healthz; set once before the loop starts. */
void wrk_metrics_init(const wrk_config *c);
/* What a starting worker is doing or waiting for, printf-style, said by /healthz and /readyz
 * ("starting: ...") until the loop first turns: an operator whose worker never gets ready
 * sees why (a broker that does not answer keeps it starting for up to 5 min). */
void wrk_metrics_starting(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Once per turn of the main loop (wrk_consume.c): the loop-turn time, running jobs, free
 * slots, commits and aborts, readiness, and every second the lag of each partition. Also the
 * test hook CODEQ_TEST_STALL_FILE: while that file exists the loop sleeps here (bounded, 120
 * s), so a test can see /healthz turn unhealthy while the HTTP thread still answers. */
void wrk_metrics_turn(const wrk_worker *w);
/* A job's answer was committed (wrk_commit.c): the status published, durations, findings,
 * truncation, dead letter. o may have no result (a dead letter); record_ts_ms is the record's
 * Kafka timestamp (-1). */
void wrk_metrics_job(const wrk_outcome *o, bool dead_letter, int64_t record_ts_ms);
/* A rebalance callback ran (wrk_rebalance.c): assign or revoke. */
void wrk_metrics_rebalance(bool assign, bool lost);
/* Writes the Prometheus text exposition (format 0.0.4) of every metric to f. */
void wrk_metrics_write(FILE *f);
/* /healthz and /readyz: true when healthy (ready); why says what is wrong or what is fine. */
bool wrk_metrics_healthy(char *why, size_t whylen);
bool wrk_metrics_ready(char *why, size_t whylen);

/* HTTP endpoint (wrk_http.c): /metrics, /healthz, /readyz on "ADDR:PORT" ("[::1]:9100" for
 * IPv6); NULL addr: nothing. 0 started, -1 with err. */
int wrk_http_start(const char *addr, char *err, size_t errlen);
/* Whether addr is such an "ADDR:PORT" (port 1-65535), without listening: -1 with err. */
int wrk_http_check(const char *addr, char *err, size_t errlen);
void wrk_http_stop(void);

#endif
