/* Lost records (wrk_lost.c): the search for the end of a record batch that cannot be decoded,
 * driven against a model of the partition. A probe inside the batch [base, last] proves every
 * offset up to it; one past it says only that the batch ends below. Every record of the batch
 * must be entered exactly once, none past it, in a number of probes that grows with the log
 * of the batch's length plus one per room-full of entries. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>

#include "wrk_worker.h"

#define ROOM (WRK_PART_PAUSE_AT)

/* Steps through a batch of [base, last] followed by `after` records, as wrk_lost_take does:
 * the first error enters base; each probe at `at` either enters (hi, at] or sets the bound. */
static long search(int64_t base, int64_t last, int64_t after, bool end_known)
{
    int64_t hi = base, bound = -1, step = wrk_lost_step(base, base), entered = 1;
    int64_t end = end_known ? last + 1 + after : -1;
    long probes = 0;
    for (;;) {
        int64_t at = wrk_lost_next(hi, bound, step, ROOM, end);
        assert_true(at > hi);
        assert_true(at - hi <= ROOM);                  /* never more than the room for entries */
        /* never past the partition's end, but for the next record itself */
        assert_true(end < 0 || at < end || at == hi + 1);
        if (at == hi + 1 && at > last) break;           /* the next record is past the batch */
        probes++;
        assert_true(probes < 100000);
        if (at <= last) {
            entered += at - hi;
            if (bound < 0) step = wrk_lost_step(hi + 1, at);
            hi = at;
        } else {
            bound = at;
        }
    }
    assert_int_equal(hi, last);
    assert_int_equal(entered, last - base + 1);
    return probes;
}

static void test_search_covers_the_batch(void **st)
{
    (void)st;
    static const int64_t lens[] = {1, 2, 3, 7, 64, 179, 180, 181, 1000, 2000, 15000, 1000000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        int64_t n = lens[i];
        long probes = search(100, 100 + n - 1, 5, true);
        /* doubling to the room, one per room-full, halving at the end */
        long log2n = 0;
        while ((1LL << log2n) <= n) log2n++;
        long bound = (long)(n / (ROOM / 2)) + 2 * log2n + 4;
        if (probes > bound)
            fail_msg("a batch of %lld records took %ld probes, want at most %ld", (long long)n,
                     probes, bound);
        /* the batch is the partition's last data: the end caps the probes */
        search(100, 100 + n - 1, 0, true);
    }
}

/* A step is twice what the last reached, never more than a table of entries: it grew without
 * bound before (doubling after every capped step overflowed int64_t after 63 steps, and the
 * search fell back to one record per fetch). */
static void test_step_stays_bounded(void **st)
{
    (void)st;
    assert_int_equal(wrk_lost_step(10, 10), 2);
    assert_int_equal(wrk_lost_step(11, 12), 4);
    assert_int_equal(wrk_lost_step(0, 1000000), WRK_PART_MAX_ENTRIES);
    long probes = search(0, 10000000 - 1, 5, true);
    assert_true(probes < 10000000 / (ROOM / 2));
}

/* Without the partition's end, one record at a time: no probe can go past what exists. */
static void test_end_unknown(void **st)
{
    (void)st;
    assert_int_equal(wrk_lost_next(50, -1, 64, ROOM, -1), 51);
    assert_int_equal(search(0, 20, 3, false), 20);
}

static void test_bisects_below_the_bound(void **st)
{
    (void)st;
    assert_int_equal(wrk_lost_next(100, 164, 64, ROOM, 1000), 132);
    assert_int_equal(wrk_lost_next(100, 101, 64, ROOM, 1000), 101); /* the end is known */
    assert_int_equal(wrk_lost_next(100, -1, 64, ROOM, 1000), 164);
    assert_int_equal(wrk_lost_next(100, -1, 64, 10, 1000), 110);    /* little room */
    assert_int_equal(wrk_lost_next(100, -1, 64, 0, 1000), 101);     /* none: one record */
    assert_int_equal(wrk_lost_next(100, -1, 64, ROOM, 120), 119);   /* the partition ends */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_covers_the_batch),
        cmocka_unit_test(test_step_stays_bounded),
        cmocka_unit_test(test_end_unknown),
        cmocka_unit_test(test_bisects_below_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
