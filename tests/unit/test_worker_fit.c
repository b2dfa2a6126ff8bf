/* test_worker_fit: wrk_result_fit and wrk_event_fit (worker/wrk_fit.c) — a result and an audit
 * event always fit their record budget, say what they left out, and keep what they can. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

static size_t size_of(const json_t *r)
{
    return json_dumpb(r, NULL, 0, JSON_COMPACT);
}

/* n bytes of c and a NUL, for the caller to free. */
static char *filled(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

/* A result as a run leaves it: streams of `out` and `err` bytes of c, artifacts of the sizes. */
static json_t *result_with(size_t out, size_t err, char c, const size_t *arts, size_t narts)
{
    json_t *r = wrk_result_new("j-1", "ok", "w", "2026-12-01T00:00:00.000Z", NULL);
    char *buf = filled(c, out + err);
    bool lossy = false;
    json_object_set_new(r, "stdout", wrk_json_bytes(buf, out, &lossy));
    if (lossy) json_object_set_new(r, "stdout_base64", wrk_json_base64(buf, out));
    json_object_set_new(r, "stdout_bytes", json_integer((json_int_t)out));
    json_object_set_new(r, "stderr", wrk_json_bytes(buf, err, &lossy));
    json_object_set_new(r, "stderr_bytes", json_integer((json_int_t)err));
    json_t *a = json_array();
    for (size_t i = 0; i < narts; i++) {
        char *data = filled((char)('a' + (int)i), arts[i]);
        char path[24]; /* "f" and any size_t */
        snprintf(path, sizeof path, "f%zu", i);
        json_array_append_new(a, json_pack("{s:s, s:I, s:s}", "path", path, "bytes",
                                           (json_int_t)arts[i], "content", data));
        free(data);
    }
    json_object_set_new(r, "artifacts", a);
    json_object_set_new(r, "artifacts_truncated", json_false());
    free(buf);
    return r;
}

static void test_fits_unchanged(void **st)
{
    (void)st;
    json_t *r = result_with(100, 100, 'x', NULL, 0);
    char *before = json_dumps(r, JSON_COMPACT);
    assert_int_equal(wrk_result_fit(r, 100000), 0);
    char *after = json_dumps(r, JSON_COMPACT);
    assert_string_equal(before, after);
    free(before);
    free(after);
    json_decref(r);
}

static void test_streams_cut(void **st)
{
    (void)st;
    json_t *r = result_with(600000, 300000, 'x', NULL, 0);
    assert_int_equal(wrk_result_fit(r, 500000), 1);
    assert_true(size_of(r) <= 500000);
    assert_true(json_is_true(json_object_get(r, "stdout_truncated")));
    assert_int_equal(json_integer_value(json_object_get(r, "stdout_bytes")), 600000);
    assert_true(json_string_length(json_object_get(r, "stdout")) > 100000); /* kept what fits */
    assert_string_equal(json_string_value(json_object_get(r, "status")), "ok");
    json_decref(r);
}

/* Not UTF-8: carried as text and base64, both cut from the same bytes. */
static void test_binary_stream_cut(void **st)
{
    (void)st;
    json_t *r = result_with(400000, 0, '\xff', NULL, 0);
    assert_non_null(json_object_get(r, "stdout_base64"));
    assert_int_equal(wrk_result_fit(r, 300000), 1);
    assert_true(size_of(r) <= 300000);
    const char *b64 = json_string_value(json_object_get(r, "stdout_base64"));
    assert_non_null(b64);
    char *raw;
    long n = wrk_base64_decode(b64, strlen(b64), SIZE_MAX, &raw);
    assert_true(n > 0 && n < 400000);
    assert_true((unsigned char)raw[0] == 0xff && (unsigned char)raw[n - 1] == 0xff);
    free(raw);
    json_decref(r);
}

/* Text output holding a NUL byte is cut from all its bytes, not from those before the NUL
 * (which read past the copy: found by fuzz/fuzz_result). */
static void test_text_with_nul_cut(void **st)
{
    (void)st;
    size_t n = 200000;
    char *buf = malloc(n);
    memset(buf, 'y', n);
    memcpy(buf, "ab", 3); /* "ab\0yyyy..." */
    json_t *r = wrk_result_new("j-1", "ok", "w", "2026-12-01T00:00:00.000Z", NULL);
    bool lossy = true;
    json_object_set_new(r, "stdout", wrk_json_bytes(buf, n, &lossy));
    assert_false(lossy);
    assert_int_equal(wrk_result_fit(r, 60000), 1);
    assert_true(size_of(r) <= 60000);
    json_t *out = json_object_get(r, "stdout");
    assert_true(json_string_length(out) > 3);
    assert_null(json_object_get(r, "stdout_base64"));
    assert_memory_equal(json_string_value(out), buf, json_string_length(out));
    free(buf);
    json_decref(r);
}

/* Control characters encode to six bytes each (\u0001): the result is cut by what it encodes
 * to, not by its length, and keeps the most that halving can, the same cuts as measuring the
 * whole encoding every round: 2 MiB halved four times is 128 KiB, 786 KB encoded, 1.57 MB for
 * the two streams; halved once more each, 64 KiB apiece, they fit. */
static void test_control_characters_cut(void **st)
{
    (void)st;
    json_t *r = result_with(2u << 20, 2u << 20, '\x01', NULL, 0);
    assert_int_equal(wrk_result_fit(r, 1000000), 1);
    assert_true(size_of(r) <= 1000000);
    assert_int_equal(json_string_length(json_object_get(r, "stdout")), 64u << 10);
    assert_int_equal(json_string_length(json_object_get(r, "stderr")), 64u << 10);
    assert_true(json_is_true(json_object_get(r, "stderr_truncated")));
    assert_int_equal(json_integer_value(json_object_get(r, "stdout_bytes")), 2u << 20);
    json_decref(r);
}

/* Two-byte escapes and six-byte ones in one result: the cuts are those an encoding after
 * every halving would make (the fit measures escapes without encoding; counting a newline
 * as six bytes, or NUL as one, would cut more, or less, than this). */
static void test_escapes_measured(void **st)
{
    (void)st;
    json_t *r = result_with(0, 0, 'x', NULL, 0);
    char *buf = malloc(2u << 20);
    bool lossy = false;
    memset(buf, '\n', 2u << 20);
    json_object_set_new(r, "stdout", wrk_json_bytes(buf, 2u << 20, &lossy));
    memset(buf, '\0', 2u << 20);
    json_object_set_new(r, "stderr", wrk_json_bytes(buf, 2u << 20, &lossy));
    free(buf);
    assert_false(lossy);
    assert_int_equal(wrk_result_fit(r, 1000000), 1);
    assert_true(size_of(r) <= 1000000);
    assert_int_equal(json_string_length(json_object_get(r, "stdout")), 64u << 10);
    assert_int_equal(json_string_length(json_object_get(r, "stderr")), 128u << 10);
    json_decref(r);
}

static void test_artifacts_largest_first(void **st)
{
    (void)st;
    const size_t arts[] = {1000, 700000, 300000};
    json_t *r = result_with(10, 10, 'x', arts, 3);
    assert_int_equal(wrk_result_fit(r, 500000), 1);
    assert_true(size_of(r) <= 500000);
    json_t *a = json_object_get(r, "artifacts");
    assert_int_equal(json_array_size(a), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "path")), "f0");
    assert_string_equal(json_string_value(json_object_get(json_array_get(a, 1), "path")), "f2");
    assert_true(json_is_true(json_object_get(r, "artifacts_truncated")));
    json_decref(r);
}

/* Nothing of the run is left to cut: the job's own metadata is too large. */
static void test_replaced_when_metadata_too_large(void **st)
{
    (void)st;
    char *big = filled('m', 300000);
    json_t *r = result_with(10, 10, 'x', NULL, 0);
    json_object_set_new(r, "metadata", json_pack("{s:s}", "blob", big));
    free(big);
    assert_int_equal(wrk_result_fit(r, 100000), -1);
    assert_true(size_of(r) <= 100000);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "internal_error");
    assert_non_null(strstr(json_string_value(json_object_get(r, "message")), "metadata"));
    assert_true(json_is_null(json_object_get(r, "metadata")));
    json_decref(r);
}

/* A rejected job's result or event: n findings of eval(0), as the strict policy reports them,
 * and findings_total when the validator found more (total > n). */
static json_t *with_findings(json_t *o, size_t n, size_t total)
{
    json_t *f = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(f, json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i}", "rule",
                                           "call-denied", "severity", "error", "message",
                                           "call to eval() is not allowed", "line", (int)i + 1,
                                           "col", 1, "end_line", (int)i + 1, "end_col", 8));
    json_object_set_new(o, "findings", f);
    if (total > n) json_object_set_new(o, "findings_total", json_integer((json_int_t)total));
    return o;
}

static json_t *rejected(size_t n, size_t total)
{
    json_t *r = result_with(0, 0, 'x', NULL, 0);
    json_object_set_new(r, "status", json_string("rejected"));
    return with_findings(r, n, total);
}

/* 100 findings are 13 kB: on topics of 8192 bytes (a budget of 6144) the result keeps the
 * first ones that fit, and findings_total says how many there were. It used to be replaced by
 * an internal_error that still carried them all, refused by the broker forever. */
static void test_findings_cut(void **st)
{
    (void)st;
    json_t *r = rejected(100, 200);
    assert_true(size_of(r) > 6144);
    assert_int_equal(wrk_result_fit(r, 6144), 1);
    assert_true(size_of(r) <= 6144);
    json_t *f = json_object_get(r, "findings");
    assert_string_equal(json_string_value(json_object_get(r, "status")), "rejected");
    assert_true(json_array_size(f) >= 30 && json_array_size(f) < 100);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(f, 0), "line")), 1);
    assert_int_equal(json_integer_value(json_object_get(r, "findings_total")), 200);
    assert_true(size_of(r) + 130 > 6144); /* the most that fit: a finding is 125 bytes */
    json_decref(r);
    /* 100 found, all carried before the cut: findings_total appears */
    r = rejected(100, 100);
    assert_int_equal(wrk_result_fit(r, 6144), 1);
    assert_true(size_of(r) <= 6144);
    assert_int_equal(json_integer_value(json_object_get(r, "findings_total")), 100);
    json_decref(r);
}

/* Nothing of the run is left to cut: the job's own metadata is too large. The short
 * internal_error carries no findings, and its message names the part that did not fit. */
static void test_replaced_without_findings(void **st)
{
    (void)st;
    json_t *r = rejected(100, 200);
    json_object_set_new(r, "metadata", json_pack("{s:s}", "note", "0123456789abcdef"));
    char *big = filled('m', 20000);
    json_object_set_new(json_object_get(r, "metadata"), "blob", json_string(big));
    free(big);
    assert_int_equal(wrk_result_fit(r, 6144), -1);
    assert_true(size_of(r) <= 6144);
    assert_string_equal(json_string_value(json_object_get(r, "status")), "internal_error");
    assert_int_equal(json_array_size(json_object_get(r, "findings")), 0);
    assert_null(json_object_get(r, "findings_total"));
    const char *msg = json_string_value(json_object_get(r, "message"));
    assert_non_null(strstr(msg, "its largest part, metadata, takes 200"));
    json_decref(r);
}

/* The rejected audit event is held to the budget less the chain the commit adds to it. */
static void test_event_findings_cut(void **st)
{
    (void)st;
    json_t *ev = with_findings(json_pack("{s:s, s:s, s:s}", "event", "rejected", "job_id", "j-1",
                                         "status", "rejected"), 100, 0);
    assert_int_equal(wrk_event_fit(ev, 0), 0);
    assert_int_equal(wrk_event_fit(ev, 6144), 1);
    assert_true(size_of(ev) <= 6144 - wrk_chain_room());
    assert_true(json_array_size(json_object_get(ev, "findings")) >= 30);
    assert_int_equal(json_integer_value(json_object_get(ev, "findings_total")), 100);
    assert_int_equal(wrk_event_fit(ev, 6144), 0); /* fits now: left as it is */
    json_decref(ev);
}

/* An event without findings whose reason and code take more than the budget: the code left
 * out, the reason cut with "...": every event a job can cause fits (a review of a9b5994: one
 * that could not, on topics of a few kB, held every commit). */
static void test_event_reason_and_code_cut(void **st)
{
    (void)st;
    char *long_text = filled('r', 4000);
    long_text[1999] = '"'; /* an escape in the part cut */
    json_t *ev = json_pack("{s:s, s:s, s:s, s:s}", "event", "received", "job_id", "j-1", "reason",
                           long_text, "code", long_text);
    free(long_text);
    assert_int_equal(wrk_event_fit(ev, 3000), 1);
    assert_true(size_of(ev) <= 3000);
    assert_null(json_object_get(ev, "code"));
    assert_string_equal(json_string_value(json_object_get(ev, "code_omitted")),
                        "too large for one audit record");
    const char *reason = json_string_value(json_object_get(ev, "reason"));
    size_t n = strlen(reason);
    assert_true(n > 2000 && strcmp(reason + n - 3, "...") == 0);
    json_decref(ev);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fits_unchanged),
        cmocka_unit_test(test_streams_cut),
        cmocka_unit_test(test_binary_stream_cut),
        cmocka_unit_test(test_text_with_nul_cut),
        cmocka_unit_test(test_control_characters_cut),
        cmocka_unit_test(test_escapes_measured),
        cmocka_unit_test(test_artifacts_largest_first),
        cmocka_unit_test(test_replaced_when_metadata_too_large),
        cmocka_unit_test(test_findings_cut),
        cmocka_unit_test(test_replaced_without_findings),
        cmocka_unit_test(test_event_findings_cut),
        cmocka_unit_test(test_event_reason_and_code_cut),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
