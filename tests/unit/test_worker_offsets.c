/* Offsets bookkeeping: watermark, finished offsets above it, attempt counts, the lease, and
 * their round trip through the commit metadata a new owner reads back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "wrk_offsets.h"

static rd_kafka_message_t msgs[128];
static int released;

static void release(wrk_entry *e)
{
    if (e->msg) released++;
    e->msg = NULL;
}

static wrk_entry *consume(wrk_part *p, int64_t off, bool *skipped)
{
    msgs[off].offset = off;
    return wrk_part_consumed(p, &msgs[off], skipped);
}

/* One commit of p, as the worker makes it: the metadata it carries, then its outcome. */
static int64_t commit(wrk_part *p, bool ok, char *md, size_t mdlen)
{
    int64_t off = -1;
    size_t n = 0;
    if (!wrk_part_batch(p, &off, md, mdlen, &n)) return -1;
    md[n] = '\0';
    wrk_part_batch_end(p, ok, release);
    return off;
}

static void test_out_of_order_completion(void **st)
{
    (void)st;
    char md[512];
    bool sk;
    wrk_part *p = wrk_part_new("t", 0, 10, NULL, 0);
    wrk_entry *e10 = consume(p, 10, &sk), *e11 = consume(p, 11, &sk), *e13 = consume(p, 13, &sk);
    assert_non_null(e10);
    assert_non_null(e13);
    /* 11 and 13 finish while 10 (the slow one) still runs: the watermark stays at 10 */
    e10->state = WRK_E_RUNNING;
    e10->attempts = 1;
    e11 = wrk_part_entry(p, 11);
    e11->state = WRK_E_DONE;
    e13 = wrk_part_entry(p, 13);
    e13->state = WRK_E_DONE;
    assert_int_equal(wrk_part_commit_offset(p), 10);
    released = 0;
    assert_int_equal(commit(p, true, md, sizeof md), 10);
    /* the lease goes WRK_LEASE_AHEAD past the last consumed offset (13) */
    assert_string_equal(md, "codeq1;d=1,3;a=0:1;h=68");
    assert_int_equal(released, 2);
    assert_int_equal(p->watermark, 10);
    assert_int_equal(p->lease, 14 + WRK_LEASE_AHEAD);
    /* 10 finishes: everything consumed is finished, the watermark jumps past the gap at 12 */
    wrk_part_entry(p, 10)->state = WRK_E_DONE;
    assert_int_equal(wrk_part_commit_offset(p), 14);
    assert_int_equal(commit(p, true, md, sizeof md), 14);
    assert_int_equal(p->watermark, 14);
    assert_int_equal(p->n, 0);
    wrk_part_free(p);
}

/* A job that finishes while a commit is in flight goes in the next one, never in that one;
 * an aborted commit gives its jobs back unchanged. */
static void test_commit_in_flight_and_abort(void **st)
{
    (void)st;
    char md[512];
    size_t n;
    int64_t off;
    bool sk;
    wrk_part *p = wrk_part_new("t", 0, 0, NULL, 0);
    consume(p, 0, &sk)->state = WRK_E_DONE;
    consume(p, 1, &sk)->state = WRK_E_RUNNING;
    assert_true(wrk_part_batch(p, &off, md, sizeof md, &n));
    assert_int_equal(off, 1);
    assert_false(wrk_part_has_work(p)); /* one transaction at a time */
    wrk_part_entry(p, 1)->state = WRK_E_DONE; /* finishes meanwhile */
    wrk_part_batch_end(p, false, release);    /* aborted */
    assert_int_equal(wrk_part_entry(p, 0)->state, WRK_E_DONE);
    assert_int_equal(p->watermark, 0);
    assert_int_equal(p->lease, -1);
    assert_true(wrk_part_has_work(p));
    assert_true(wrk_part_batch(p, &off, md, sizeof md, &n));
    assert_int_equal(off, 2);
    wrk_part_batch_end(p, true, release);
    assert_int_equal(p->watermark, 2);
    wrk_part_free(p);
}

/* Jobs 10-12, then a commit marker (13): at the end (14) the position moves past the marker,
 * a commit carries 14 once the jobs are finished, and an idle partition has one commit to
 * make. Never while a job is unfinished below it, past where the fetch was set, or with no
 * position known (no record taken, nothing committed, the fetch left to librdkafka). */
static void test_end_past_markers(void **st)
{
    (void)st;
    char md[512];
    bool sk;
    wrk_part *p = wrk_part_new("t", 0, 10, NULL, 0);
    for (int64_t off = 10; off <= 12; off++) consume(p, off, &sk)->state = WRK_E_DONE;
    wrk_part_entry(p, 11)->state = WRK_E_RUNNING;
    assert_false(wrk_part_at_end(p, 13)); /* the end at the position: nothing to move */
    assert_true(wrk_part_at_end(p, 14));
    assert_int_equal(p->next, 14);
    assert_int_equal(wrk_part_commit_offset(p), 11); /* 11 still runs */
    wrk_part_entry(p, 11)->state = WRK_E_DONE;
    assert_int_equal(commit(p, true, md, sizeof md), 14);
    assert_int_equal(p->watermark, 14);
    assert_false(wrk_part_has_work(p)); /* the lease went 64 past 14 with it */
    assert_false(wrk_part_at_end(p, 14)); /* the same end again: no commit */
    assert_false(wrk_part_has_work(p));
    assert_true(wrk_part_at_end(p, 16)); /* a later transaction aborted (14, 15): one commit */
    assert_true(wrk_part_has_work(p));
    assert_int_equal(commit(p, true, md, sizeof md), 16);
    p->fetch_from = 30; /* probing ahead (wrk_lost.c): the end says nothing of 16-29 */
    assert_false(wrk_part_at_end(p, 40));
    assert_int_equal(p->next, 16);
    wrk_part_free(p);
    p = wrk_part_new("t", 0, -1, NULL, 0); /* nothing committed, nothing consumed */
    assert_false(wrk_part_at_end(p, 0)); /* an empty partition: nothing to commit */
    assert_false(wrk_part_has_work(p));
    /* librdkafka's own start (the worker's query failed), and its end with no record: only
     * aborted records or markers lie below it */
    assert_true(wrk_part_at_end(p, 5));
    assert_int_equal(p->next, 5);
    assert_true(wrk_part_has_work(p));
    assert_int_equal(commit(p, true, md, sizeof md), 5);
    assert_false(wrk_part_at_end(p, 5));
    assert_false(wrk_part_has_work(p));
    wrk_part_free(p);
    p = wrk_part_new("t", 0, -1, NULL, 0);
    consume(p, 3, &sk)->state = WRK_E_DONE; /* the fetch librdkafka started (earliest) */
    assert_true(wrk_part_at_end(p, 5));
    assert_int_equal(commit(p, true, md, sizeof md), 5);
    wrk_part_free(p);
    p = wrk_part_new("t", 0, -1, NULL, 0); /* nothing committed, the fetch set at the start */
    p->fetch_from = 7;
    assert_false(wrk_part_at_end(p, 7)); /* an empty partition */
    assert_int_equal(p->next, -1);
    assert_true(wrk_part_at_end(p, 9)); /* only an aborted transaction: 7, 8 */
    assert_int_equal(commit(p, true, md, sizeof md), 9);
    wrk_part_free(p);
}

/* A job starts at once only below this owner's committed lease; none starts on a hand-over. */
static void test_lease(void **st)
{
    (void)st;
    char md[512];
    bool sk;
    wrk_part *p = wrk_part_new("t", 0, 0, NULL, 0);
    wrk_entry *e = consume(p, 0, &sk);
    assert_int_equal(wrk_part_start_rule(p, e), WRK_START_WAIT); /* no lease yet */
    p->want_lease = true;
    assert_int_equal(commit(p, true, md, sizeof md), 0);
    assert_string_equal(md, "codeq1;h=65");
    assert_int_equal(wrk_part_start_rule(p, wrk_part_entry(p, 0)), WRK_START_NOW);
    e = consume(p, 65, &sk);
    assert_int_equal(wrk_part_start_rule(p, e), WRK_START_WAIT); /* at the lease */
    p->handoff = true;
    assert_int_equal(wrk_part_start_rule(p, wrk_part_entry(p, 0)), WRK_START_WAIT);
    assert_int_equal(commit(p, true, md, sizeof md), 0);
    assert_string_equal(md, "codeq1;h=0"); /* nothing more starts: no careful range */
    wrk_part_free(p);
}

/* After an owner died, what it may have started (below its lease) and what was started
 * before without finishing is careful: claimed, and started only once the claim is committed. */
static void test_careful_after_a_crash(void **st)
{
    (void)st;
    char md[512];
    bool sk;
    wrk_part *p = wrk_part_new("t", 0, 10, "codeq1;d=2;a=1:2;h=20", 21);
    wrk_entry *e = consume(p, 10, &sk);
    assert_false(e->suspect);
    assert_int_equal(wrk_part_start_rule(p, e), WRK_START_CLAIM); /* below the dead lease */
    e = consume(p, 11, &sk);
    assert_true(e->suspect);
    assert_int_equal(e->attempts, 2);
    assert_int_equal(wrk_part_start_rule(p, e), WRK_START_CLAIM);
    e->state = WRK_E_CLAIMED;
    e->attempts++;
    p->dirty = true;
    assert_int_equal(commit(p, true, md, sizeof md), 10);
    assert_string_equal(md, "codeq1;d=2;a=1:3;h=66");
    e = wrk_part_entry(p, 11);
    assert_true(e->claim_ok);
    assert_int_equal(wrk_part_start_rule(p, e), WRK_START_NOW);
    e = consume(p, 30, &sk); /* past the dead owner's lease: it never started this one */
    assert_int_equal(wrk_part_start_rule(p, e), WRK_START_NOW);
    wrk_part_free(p);
    /* metadata from before leases: every start was committed first, nothing is careful */
    p = wrk_part_new("t", 0, 10, "codeq1;d=2", 10);
    assert_int_equal(wrk_part_start_rule(p, consume(p, 10, &sk)), WRK_START_WAIT);
    wrk_part_free(p);
}

static void test_new_owner_skips_finished(void **st)
{
    (void)st;
    bool sk;
    char md[512];
    wrk_part *p = wrk_part_new("t", 3, 10, "codeq1;d=1,3;a=0:2", 18);
    wrk_entry *e = consume(p, 10, &sk);
    assert_non_null(e);
    assert_int_equal(e->attempts, 2);   /* started twice before: this is its third start */
    assert_null(consume(p, 11, &sk));  /* its result was committed by the previous owner */
    assert_true(sk);
    assert_non_null(consume(p, 12, &sk));
    assert_null(consume(p, 13, &sk));
    assert_true(sk);
    assert_null(consume(p, 9, &sk));   /* below the watermark: a redelivery */
    assert_true(sk);
    /* nothing finished yet: the metadata still carries what must not run again */
    wrk_part_metadata(p, -1, md, sizeof md);
    assert_string_equal(md, "codeq1;d=1,3;a=0:2");
    wrk_part_free(p);
}

static void test_unknown_start_and_garbage_metadata(void **st)
{
    (void)st;
    bool sk;
    wrk_part *p = wrk_part_new("t", 0, -1001, "someone else's;d=zz", 19);
    assert_int_equal(wrk_part_commit_offset(p), -1);
    assert_non_null(consume(p, 5, &sk));
    assert_int_equal(p->watermark, 5);
    assert_int_equal(wrk_part_commit_offset(p), 5);
    wrk_part_entry(p, 5)->state = WRK_E_DONE;
    assert_int_equal(wrk_part_commit_offset(p), 6);
    wrk_part_free(p);
}

static void test_bounded(void **st)
{
    (void)st;
    bool sk;
    wrk_part *p = wrk_part_new("t", 0, 0, NULL, 0);
    static rd_kafka_message_t many[WRK_PART_MAX_ENTRIES + 1];
    for (int i = 0; i < WRK_PART_MAX_ENTRIES; i++) {
        many[i].offset = i;
        assert_non_null(wrk_part_consumed(p, &many[i], &sk));
    }
    many[WRK_PART_MAX_ENTRIES].offset = WRK_PART_MAX_ENTRIES;
    assert_null(wrk_part_consumed(p, &many[WRK_PART_MAX_ENTRIES], &sk));
    assert_false(sk); /* full, not skipped: the caller must seek back and pause */
    /* the worst-case metadata fits Kafka's 4096-byte limit */
    char md[8192];
    for (size_t i = 1; i < p->n; i++) p->e[i].state = WRK_E_DONE;
    p->e[0].attempts = 3;
    assert_true(wrk_part_metadata(p, p->next + WRK_LEASE_AHEAD, md, sizeof md) < 4096);
    wrk_part_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_out_of_order_completion),
        cmocka_unit_test(test_commit_in_flight_and_abort),
        cmocka_unit_test(test_lease),
        cmocka_unit_test(test_end_past_markers),
        cmocka_unit_test(test_careful_after_a_crash),
        cmocka_unit_test(test_new_owner_skips_finished),
        cmocka_unit_test(test_unknown_start_and_garbage_metadata),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
