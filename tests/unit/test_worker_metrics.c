/* test_worker_metrics: wrk_metrics.c — what a finished job, a loop turn and a rebalance do to
 * the exposition, and when /healthz and /readyz fail (aborts in a row, a fatal error, the
 * group's first assignment, leaving). The stall itself is tested end to end (worker_ops.py). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "wrk_metrics.h"

static char *exposition(void)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    wrk_metrics_write(f);
    fclose(f);
    return buf;
}

static void assert_has(const char *text, const char *line)
{
    if (!strstr(text, line)) fail_msg("missing \"%s\" in:\n%s", line, text);
}

static void test_job_counts_and_histograms(void **state)
{
    (void)state;
    wrk_outcome o = {0};
    o.result = json_pack("{s:s, s:s, s:s, s:s, s:{s:i}, s:b, s:[{s:s}, {s:s}]}", "status",
                         "rejected", "received_at", "2026-12-01T00:00:00.000Z", "started_at",
                         "2026-12-01T00:00:00.100Z", "finished_at", "2026-12-01T00:00:00.400Z",
                         "usage", "wall_ms", 280, "stdout_truncated", 1, "findings", "rule",
                         "forbidden-import", "rule", "forbidden-call");
    int64_t produced = 1796083200000 - 2000; /* 2 s before received_at */
    wrk_metrics_job(&o, false, produced);
    wrk_metrics_job(NULL, true, -1);
    char *t = exposition();
    assert_has(t, "codeq_jobs_total{status=\"rejected\"} 1\n");
    assert_has(t, "codeq_jobs_total{status=\"dead_letter\"} 1\n");
    assert_has(t, "codeq_dead_letters_total 1\n");
    assert_has(t, "codeq_results_truncated_total 1\n");
    assert_has(t, "codeq_validator_findings_total{rule=\"forbidden-import\"} 1\n");
    assert_has(t, "codeq_validator_findings_total{rule=\"forbidden-call\"} 1\n");
    /* duration 0.4 s: not in le=0.25, in le=0.5 */
    assert_has(t, "codeq_job_duration_seconds_bucket{le=\"0.25\"} 0\n");
    assert_has(t, "codeq_job_duration_seconds_bucket{le=\"0.5\"} 1\n");
    assert_has(t, "codeq_job_duration_seconds_count 1\n");
    /* overhead 0.3 - 0.28 = 0.02 s */
    assert_has(t, "codeq_job_sandbox_overhead_seconds_bucket{le=\"0.01\"} 0\n");
    assert_has(t, "codeq_job_sandbox_overhead_seconds_bucket{le=\"0.025\"} 1\n");
    /* queue wait: started 2.1 s after the record's timestamp */
    assert_has(t, "codeq_job_queue_wait_seconds_bucket{le=\"1\"} 0\n");
    assert_has(t, "codeq_job_queue_wait_seconds_bucket{le=\"5\"} 1\n");
    assert_has(t, "codeq_job_queue_wait_seconds_bucket{le=\"+Inf\"} 1\n");
    /* sums in their shortest form, as Prometheus' clients write them (%.17g wrote 0.4 as
     * 0.40000000000000002) */
    assert_has(t, "codeq_job_duration_seconds_sum 0.4\n");
    assert_has(t, "codeq_job_queue_wait_seconds_sum 2.1\n");
    free(t);
    json_decref(o.result);
}

static void test_health_and_readiness(void **state)
{
    (void)state;
    char why[300];
    wrk_config c;
    wrk_config_default(&c);
    c.health_max_aborts = 3;
    c.health_commit_ms = 1000;
    wrk_metrics_init(&c);
    char *zero = exposition(); /* every status has a series from the start */
    assert_has(zero, "codeq_jobs_total{status=\"timeout\"} 0\n");
    assert_has(zero, "codeq_jobs_total{status=\"seccomp_violation\"} 0\n");
    assert_has(zero, "codeq_jobs_total{status=\"expired\"} 0\n");
    assert_has(zero, "codeq_rebalances_total{kind=\"lost\"} 0\n");
    assert_has(zero, "codeq_rebalances_total{kind=\"revoke\"} 0\n");
    free(zero);
    assert_true(wrk_metrics_healthy(why, sizeof why)); /* starting */
    assert_false(wrk_metrics_ready(why, sizeof why));
    wrk_worker w = {.c = &c, .running = 1};
    wrk_metrics_turn(&w);
    assert_true(wrk_metrics_healthy(why, sizeof why));
    assert_false(wrk_metrics_ready(why, sizeof why));
    assert_non_null(strstr(why, "first assignment"));
    /* idle, the watch finding no jobs topic: /readyz says so (it was only in the log) */
    w.idle.since = 1;
    w.idle.partitions = 0;
    wrk_metrics_turn(&w);
    assert_false(wrk_metrics_ready(why, sizeof why));
    assert_non_null(strstr(why, "the jobs topic codeq.jobs does not exist on the cluster"));
    w.idle.since = 0;
    w.assigned_once = true;
    wrk_metrics_turn(&w);
    assert_true(wrk_metrics_ready(why, sizeof why));
    assert_non_null(strstr(why, "idle"));

    w.aborts = 2;
    wrk_metrics_turn(&w);
    assert_true(wrk_metrics_healthy(why, sizeof why));
    w.aborts = 3;
    wrk_metrics_turn(&w);
    assert_false(wrk_metrics_healthy(why, sizeof why));
    assert_non_null(strstr(why, "3 transactions aborted in a row"));
    w.commits = 10; /* a commit ends the streak */
    w.dead_given_up = 2;
    wrk_metrics_turn(&w);
    assert_true(wrk_metrics_healthy(why, sizeof why));

    char *t = exposition();
    assert_has(t, "codeq_jobs_running 1\n");
    char free_slots[64];
    snprintf(free_slots, sizeof free_slots, "codeq_slots_free %d\n", c.slots - 1);
    assert_has(t, free_slots);
    assert_has(t, "codeq_transactions_aborted_total 3\n");
    assert_has(t, "codeq_transactions_aborted_in_a_row 0\n");
    assert_has(t, "codeq_dead_letters_given_up_total 2\n");
    /* a count as a whole number (the shortest form of 10 is 1e+01) */
    assert_has(t, "codeq_transactions_committed_total 10\n");
    free(t);

    /* A commit the broker does not finish (a marker it refuses): the loop turns, nothing aborts. */
    w.commit_sent = wrk_now_ms() - 900;
    wrk_metrics_turn(&w);
    assert_true(wrk_metrics_healthy(why, sizeof why));
    w.commit_sent = wrk_now_ms() - 5000;
    wrk_metrics_turn(&w);
    assert_false(wrk_metrics_healthy(why, sizeof why));
    assert_non_null(strstr(why, "a commit has been in flight for 5"));
    t = exposition();
    assert_has(t, "codeq_commit_in_flight_seconds 5");
    free(t);
    w.commit_sent = 0;
    wrk_metrics_turn(&w);
    assert_true(wrk_metrics_healthy(why, sizeof why));

    w.leaving = true;
    wrk_metrics_turn(&w);
    assert_false(wrk_metrics_ready(why, sizeof why));
    w.leaving = false;
    w.fatal = true;
    wrk_metrics_turn(&w);
    assert_false(wrk_metrics_healthy(why, sizeof why));
    assert_false(wrk_metrics_ready(why, sizeof why));
}

static void test_rebalances(void **state)
{
    (void)state;
    wrk_metrics_rebalance(true, false);
    wrk_metrics_rebalance(false, false);
    wrk_metrics_rebalance(false, true);
    char *t = exposition();
    assert_has(t, "codeq_rebalances_total{kind=\"assign\"} 1\n");
    assert_has(t, "codeq_rebalances_total{kind=\"revoke\"} 1\n");
    assert_has(t, "codeq_rebalances_total{kind=\"lost\"} 1\n");
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_counts_and_histograms),
        cmocka_unit_test(test_health_and_readiness),
        cmocka_unit_test(test_rebalances),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
