/* The audit hash chain: its canonical encoding, numbering across commits and aborts, and the
 * verifier's findings on altered, dropped, reordered, replayed and badly linked events. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_audit_chain.h"
#include "wrk_internal.h"

static json_t *event(const char *job, int n)
{
    return json_pack("{s:s, s:s, s:i, s:{s:f}}", "event", "finished", "job_id", job, "exit_code",
                     n, "usage", "cpu", 0.25 * n);
}

/* The hash covers the keys in byte order without white space, chain.hash left out. */
static void test_canonical_hash(void **state)
{
    (void)state;
    json_t *ev = json_pack("{s:i, s:s, s:{s:s, s:i, s:s}}", "b", 1, "a", "x/é", "chain", "writer",
                           "w", "seq", 0, "hash", "ignored");
    char got[65], want[65];
    const char *canon = "{\"a\":\"x/é\",\"b\":1,\"chain\":{\"seq\":0,\"writer\":\"w\"}}";
    wrk_sha256_hex(canon, strlen(canon), want);
    assert_int_equal(wrk_chain_hash(ev, got), 0);
    assert_string_equal(got, want);
    /* ev itself keeps its hash field */
    assert_string_equal(json_string_value(json_object_get(json_object_get(ev, "chain"), "hash")),
                        "ignored");
    /* a parse of the stored form hashes the same (what the verifier does) */
    char *stored = json_dumps(ev, JSON_COMPACT);
    json_t *back = json_loads(stored, 0, NULL);
    assert_int_equal(wrk_chain_hash(back, want), 0);
    assert_string_equal(got, want);
    free(stored);
    json_decref(back);
    json_decref(ev);
}

static const char *field(json_t *ev, const char *name)
{
    return json_string_value(json_object_get(json_object_get(ev, "chain"), name));
}

static json_int_t seq_of(json_t *ev)
{
    return json_integer_value(json_object_get(json_object_get(ev, "chain"), "seq"));
}

static void test_stamp_commit_abort(void **state)
{
    (void)state;
    wrk_chain ch;
    char epoch[64];
    wrk_chain_new_epoch(epoch);
    assert_int_equal(strlen(epoch), 29);
    wrk_chain_init(&ch, "codeq-g-i", epoch, "20261201T000000.000Z-00000000", "ab");
    json_t *e[6];
    for (int i = 0; i < 6; i++) e[i] = event("j", i);
    assert_int_equal(wrk_chain_stamp(&ch, e[0]), 0);
    assert_int_equal(seq_of(e[0]), 0);
    assert_string_equal(field(e[0], "prev"), "ab");
    assert_string_equal(field(e[0], "prev_epoch"), "20261201T000000.000Z-00000000");
    assert_int_equal(wrk_chain_stamp(&ch, e[1]), 0);
    assert_string_equal(field(e[1], "prev"), field(e[0], "hash"));
    assert_null(json_object_get(json_object_get(e[1], "chain"), "prev_epoch"));
    wrk_chain_commit(&ch);
    /* an aborted transaction: its numbers are given again */
    wrk_chain_rewind(&ch);
    assert_int_equal(wrk_chain_stamp(&ch, e[2]), 0);
    assert_int_equal(wrk_chain_stamp(&ch, e[3]), 0);
    assert_int_equal(seq_of(e[3]), 3);
    wrk_chain_rewind(&ch);
    assert_int_equal(wrk_chain_stamp(&ch, e[3]), 0); /* restamped in the next transaction */
    assert_int_equal(seq_of(e[3]), 2);
    assert_string_equal(field(e[3], "prev"), field(e[1], "hash"));
    /* a record that could not be produced gives its number back */
    assert_int_equal(wrk_chain_stamp(&ch, e[4]), 0);
    wrk_chain_unstamp(&ch);
    assert_int_equal(wrk_chain_stamp(&ch, e[5]), 0);
    assert_int_equal(seq_of(e[5]), 3);
    assert_string_equal(field(e[5], "prev"), field(e[3], "hash"));
    char h[65];
    assert_int_equal(wrk_chain_hash(e[5], h), 0);
    assert_string_equal(h, field(e[5], "hash"));
    for (int i = 0; i < 6; i++) json_decref(e[i]);
}

/* A stamped chain of n events of one epoch (and the chain head for a next epoch). */
static void make_chain(json_t **ev, int n, wrk_chain *ch, const char *epoch, const char *pe,
                       const char *ph)
{
    wrk_chain_init(ch, "codeq-g-i", epoch, pe, ph);
    for (int i = 0; i < n; i++) {
        ev[i] = event("j", i);
        assert_int_equal(wrk_chain_stamp(ch, ev[i]), 0);
    }
}

/* Feeds evs (in read order, partition of each in part) to a verifier; returns its output. */
static char *verify(json_t **evs, const int *order, const int *part, int n, bool partial,
                    int *problems)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    wrk_verifier *v = wrk_verifier_new(partial);
    int64_t off[4] = {0};
    *problems = 0;
    for (int i = 0; i < n; i++)
        *problems += wrk_verifier_add(v, "t", part[i], off[part[i]]++, evs[order[i]], out);
    *problems += wrk_verifier_check(v, out);
    wrk_verifier_free(v);
    fclose(out);
    return buf;
}

static void test_verifier(void **state)
{
    (void)state;
    wrk_chain ch;
    json_t *ev[6];
    int p, order[7] = {0, 1, 2, 3, 4, 5}, part[7] = {0, 1, 0, 1, 0, 1, 0};
    make_chain(ev, 6, &ch, "E1", NULL, NULL);
    char *out = verify(ev, order, part, 6, false, &p);
    assert_int_equal(p, 0);
    free(out);
    /* read side by side: the other partition's seqs come first, still fine */
    int side[6] = {1, 3, 5, 0, 2, 4}, sidep[6] = {1, 1, 1, 0, 0, 0};
    free(verify(ev, side, sidep, 6, false, &p));
    assert_int_equal(p, 0);
    /* dropped: seq 2 (partition 0, offset 1) missing */
    int drop[5] = {0, 1, 3, 4, 5}, dropp[5] = {0, 1, 1, 0, 1};
    out = verify(ev, drop, dropp, 5, false, &p);
    assert_int_equal(p, 1);
    assert_non_null(strstr(out, "seq 3: dropped: seq 2..2 missing"));
    free(out);
    /* and the same read from a later point (--since) is no gap at its start */
    int late[3] = {3, 4, 5}, latep[3] = {1, 0, 1};
    free(verify(ev, late, latep, 3, true, &p));
    assert_int_equal(p, 0);
    free(verify(ev, late, latep, 3, false, &p));
    assert_int_equal(p, 1);
    /* reordered within partition 0: seq 4 then seq 2 */
    int swap[6] = {0, 1, 4, 3, 2, 5};
    out = verify(ev, swap, part, 6, false, &p);
    assert_int_equal(p, 1);
    assert_non_null(strstr(out, "t/0@2: writer codeq-g-i epoch E1 seq 2: out of order"));
    free(out);
    /* replayed: seq 1 again at the end of partition 0 */
    int again[7] = {0, 1, 2, 3, 4, 5, 1};
    out = verify(ev, again, part, 7, false, &p);
    assert_true(p >= 1);
    assert_non_null(strstr(out, "t/0@3: writer codeq-g-i epoch E1 seq 1: replayed: the same event "
                                "was already read at t/1@0"));
    free(out);
    /* altered without the hash: named at once; with the hash recomputed: the link breaks */
    json_object_set_new(ev[3], "exit_code", json_integer(99));
    out = verify(ev, order, part, 6, false, &p);
    assert_int_equal(p, 1);
    assert_non_null(strstr(out, "t/1@1: writer codeq-g-i epoch E1 seq 3: altered"));
    free(out);
    char h[65];
    wrk_chain_hash(ev[3], h);
    json_object_set_new(json_object_get(ev[3], "chain"), "hash", json_string(h));
    out = verify(ev, order, part, 6, false, &p);
    assert_int_equal(p, 1);
    assert_non_null(strstr(out, "seq 4: broken link"));
    free(out);
    for (int i = 0; i < 6; i++) json_decref(ev[i]);
}

/* A new epoch names the last hash of the one before; naming an earlier one means the
 * previous epoch's tail was cut and the cut hidden, or the link altered. */
static void test_epoch_link(void **state)
{
    (void)state;
    wrk_chain a, b;
    json_t *ev[6];
    make_chain(ev, 3, &a, "E1", NULL, NULL);
    make_chain(ev + 3, 3, &b, "E2", "E1", field(ev[2], "hash"));
    int p, order[6] = {0, 1, 2, 3, 4, 5}, part[6] = {0, 0, 0, 0, 0, 0};
    free(verify(ev, order, part, 6, false, &p));
    assert_int_equal(p, 0);
    /* the new epoch names seq 1 of E1: seq 2 of E1 came after what it saw */
    for (int i = 3; i < 6; i++) json_decref(ev[i]);
    make_chain(ev + 3, 3, &b, "E2", "E1", field(ev[1], "hash"));
    char *out = verify(ev, order, part, 6, false, &p);
    assert_int_equal(p, 1);
    assert_non_null(strstr(out, "epoch E2 seq 0: epoch E1 has events (seq 2..2) after"));
    free(out);
    for (int i = 0; i < 6; i++) json_decref(ev[i]);
}

static void test_no_chain(void **state)
{
    (void)state;
    json_t *ev = event("j", 1);
    int p, order[1] = {0}, part[1] = {0};
    char *out = verify(&ev, order, part, 1, false, &p);
    assert_int_equal(p, 1);
    assert_non_null(strstr(out, "no valid chain fields (missing)"));
    free(out);
    json_decref(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical_hash),
        cmocka_unit_test(test_stamp_commit_abort),
        cmocka_unit_test(test_verifier),
        cmocka_unit_test(test_epoch_link),
        cmocka_unit_test(test_no_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
