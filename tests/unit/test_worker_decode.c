/* Decode and message-shape units: every malformed job has a precise reason, and the bytes
 * helpers carry any output safely into JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wrk_internal.h"

static wrk_config cfg;

static int decode(const char *s, wrk_job *j, char *why)
{
    return wrk_job_decode(s, strlen(s), &cfg, j, why, 256);
}

static void test_valid_job(void **st)
{
    (void)st;
    wrk_job j;
    char why[256] = "";
    assert_int_equal(decode("{\"id\":\"a1\",\"code\":\"print(1)\",\"stdin\":\"x\","
                            "\"limits\":{\"wall_ms\":1000},\"metadata\":{\"k\":[1,2]},"
                            "\"reply_to\":\"codeq.reply.my\"}", &j, why), 0);
    assert_string_equal(j.id, "a1");
    assert_int_equal(j.code_len, 8);
    assert_int_equal(j.limits.wall_ms, 1000);
    assert_int_equal(j.limits.memory_mb, cfg.defaults.memory_mb);
    assert_string_equal(j.reply_to, "codeq.reply.my");
    assert_non_null(j.metadata);
    assert_int_equal(j.deadline_ms, 0);
    /* sha256("print(1)") */
    assert_string_equal(j.code_sha256,
                        "d287bb7f9d15abdc5b6e98536263815744b6ef21c8f3c839fc434ca70d8efe99");
    wrk_job_free(&j);
}

static void expect_fail(const char *s, bool has_id, const char *reason_part)
{
    wrk_job j;
    char why[256] = "";
    assert_int_equal(decode(s, &j, why), -1);
    if (has_id) assert_non_null(j.id); else assert_null(j.id);
    if (!strstr(why, reason_part)) fail_msg("reason '%s' lacks '%s'", why, reason_part);
    wrk_job_free(&j);
}

static void test_dead_letter_cases(void **st)
{
    (void)st;
    expect_fail("not json", false, "not valid JSON");
    expect_fail("[1,2]", false, "JSON object");
    expect_fail("{\"code\":\"x\"}", false, "job id");
    expect_fail("{\"id\":\"\",\"code\":\"x\"}", false, "job id");
    expect_fail("{\"id\":\"a\\nb\",\"code\":\"x\"}", false, "control");
    expect_fail("{\"id\":7,\"code\":\"x\"}", false, "job id");
    /* Not valid JSON, though deeper than jansson's limit: the re-read finds no end to it. */
    char open_only[2200] = "{\"id\":\"a\",\"metadata\":";
    memset(open_only + strlen(open_only), '[', 2100);
    expect_fail(open_only, false, "maximum parsing depth");
}

/* Valid JSON that jansson's strict read refuses: a key given twice, nesting beyond 2048
 * levels. Its id is read once more and it is answered, not dead-lettered. */
static void test_reread_for_id(void **st)
{
    (void)st;
    wrk_job j;
    char why[256] = "";
    /* The last value counts, as Python, JavaScript and Go read it; the id too. */
    assert_int_equal(decode("{\"id\":\"a\",\"id\":\"b\",\"code\":\"x\"}", &j, why), -1);
    assert_string_equal(j.id, "b");
    if (!strstr(why, "has a key twice: '\"id\"' (line 1, column 14)")) fail_msg("reason %s", why);
    wrk_job_free(&j);
    /* Named however long (jansson quotes 20 characters at most), escaped quotes and all, cut
     * at 80 bytes on a character's boundary, its control characters shown escaped. */
    assert_int_equal(decode("{\"id\":\"a\",\"code\":\"x\",\"metadata\":{"
                            "\"a \\\"quoted\\\" key of more than twenty\":1,"
                            "\"a \\\"quoted\\\" key of more than twenty\" :2}}", &j, why), -1);
    if (!strstr(why, "twice: '\"a \\\"quoted\\\" key of more than twenty\"' (line 1,"))
        fail_msg("reason %s", why);
    wrk_job_free(&j);
    char key[128] = "\"", rec[400];
    memset(key + 1, 'k', 78);
    strcpy(key + 79, "\xc3\xa9\\u001bend\""); /* an e-acute across the cut at byte 80 */
    snprintf(rec, sizeof rec, "{\"id\":\"c\",\"code\":\"x\",\"metadata\":{%s:1,%s:2}}", key, key);
    assert_int_equal(decode(rec, &j, why), -1);
    key[79] = '\0';
    char want[160];
    snprintf(want, sizeof want, "twice: '%s...' (line 1, column", key);
    if (!strstr(why, want)) fail_msg("reason %s", why);
    wrk_job_free(&j);
    /* an escaped quote far into a long key is inside it, not its start */
    static char big[2600];
    char lk[1200] = "\"";
    memset(lk + 1, 'A', 1100);
    strcpy(lk + 1101, "\\\"id\"");
    snprintf(big, sizeof big, "{\"id\":\"f\",\"code\":\"x\",\"metadata\":{%s:1,%s:2}}", lk, lk);
    assert_int_equal(decode(big, &j, why), -1);
    if (!strstr(why, "twice: '\"AAAAAAAAAA") || strstr(why, "'\"id\"'")) fail_msg("reason %s", why);
    wrk_job_free(&j);
    /* DEL and C1 characters are valid in a JSON string as they are: shown escaped */
    assert_int_equal(decode("{\"id\":\"e\",\"code\":\"x\",\"\xc2\x9b" "2J\x7f\":1,"
                            "\"\xc2\x9b" "2J\x7f\":2}", &j, why), -1);
    if (!strstr(why, "twice: '\"\\u009b2J\\x7f\"'")) fail_msg("reason %s", why);
    wrk_job_free(&j);
    assert_int_equal(decode("{\"id\":\"d\",\"code\":\"x\",\"reply_to\":\"codeq.reply.a\","
                            "\"metadata\":{\"k\":1,\"k\":2}}", &j, why), -1);
    assert_string_equal(j.id, "d");
    assert_string_equal(j.reply_to, "codeq.reply.a");
    assert_null(j.metadata); /* where the re-read read otherwise: not echoed */
    wrk_job_free(&j);
    /* Mixed with a number beyond a double: the first error is the reason. */
    expect_fail("{\"metadata\":[1e999,{\"k\":1,\"k\":2}],\"id\":\"b\",\"code\":\"x\"}", true,
                "does not fit in 64 bits");
    /* Values nested deeper than 2048 levels, in one place or nine, brackets in strings inside
     * them and a string with an escaped quote: answered, after one re-read. */
    static char deep[9 * 4200 + 200];
    for (int n = 1; n <= 9; n += 8) {
        size_t k = (size_t)snprintf(deep, sizeof deep, "{\"metadata\":[");
        for (int d = 0; d < n; d++) {
            if (d) deep[k++] = ',';
            for (int i = 0; i < 2050; i++) deep[k++] = i == 2049 ? '{' : '[';
            k += (size_t)snprintf(deep + k, sizeof deep - k, "\"]}\\\"[\":\"{[\"}");
            for (int i = 0; i < 2049; i++) deep[k++] = ']';
        }
        snprintf(deep + k, sizeof deep - k, "],\"id\":\"n\",\"code\":\"x\"}");
        assert_int_equal(decode(deep, &j, why), -1);
        if (!j.id) fail_msg("depth %d: no id, reason '%s'", n, why);
        assert_string_equal(j.id, "n");
        if (!strstr(why, "deeper than 2048 levels (line 1, column 2060)"))
            fail_msg("depth %d: reason '%s'", n, why);
        wrk_job_free(&j);
    }
}

static void test_invalid_cases(void **st)
{
    (void)st;
    expect_fail("{\"id\":\"a\"}", true, "code is required: the program, a string");
    expect_fail("{\"id\":\"a\",\"code\":1}", true, "code must be a string");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limit\":{}}", true, "unknown field 'limit'");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall\":1}}", true, "unknown limit 'wall'");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall_ms\":0}}", true, "positive integer");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall_ms\":\"5\"}}", true, "positive integer");
    /* a number with a fraction is not an integer; one without is (below) */
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall_ms\":2500.5}}", true, "positive integer");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall_ms\":0.0}}", true, "positive integer");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall_ms\":-1e3}}", true, "positive integer");
    /* Whole but too large for any limit: said as the operator's maximum is. */
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall_ms\":4294967296.0}}", true,
                "limits.wall_ms above maximum 60000");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall_ms\":9223372036854775807}}",
                true, "limits.wall_ms above maximum 60000");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"cpu_ms\":1e300}}", true,
                "limits.cpu_ms above maximum 60000");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"wall_ms\":4294967296.5}}", true,
                "positive integer");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"memory_mb\":99999}}", true, "memory_mb");
    /* Below these the interpreter cannot start: the client's mistake, answered invalid. */
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"open_files\":6}}", true,
                "limits.open_files 6 below minimum 16");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"pids\":1}}", true,
                "limits.pids 1 below minimum 2");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"stdin\":5}", true, "stdin");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"bad topic!\"}", true, "reply_to");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"codeq.audit\"}", true, "own topic");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"codeq.jobs\"}", true, "own topic");
    /* Outside the operator's prefix: another service's topic. */
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"billing.events\"}", true,
                "not allowed");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":{}}", true, "files must be an array");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":[{\"path\":\"a\"}]}", true, "files[0] must be");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content\":\"1\","
                "\"content_base64\":\"MQ==\"}]}", true, "files[0] must be");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content_base64\":\"!!\"}]}",
                true, "not valid base64");
    /* Padding beyond two '=' (or '=' inside) is not base64: a run of '=' once wrote before the
     * decoded buffer (found by fuzz/fuzz_decode). */
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content_base64\":"
                "\"AP8B============================================\"}]}", true, "not valid base64");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content_base64\":"
                "\"YQ==YQ==\"}]}", true, "not valid base64");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":[{\"path\":\"a\",\"content_base64\":"
                "\" YQ=\"}]}", true, "not valid base64");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":[{\"path\":\"../a\",\"content\":\"1\"}]}",
                true, "files[0].path");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"deadline\":\"tomorrow\"}", true, "deadline");
    /* a file and a file inside it: answered invalid, not an internal error at staging */
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"files\":[{\"path\":\"d\",\"content\":\"1\"},"
                "{\"path\":\"d/e\",\"content\":\"2\"}]}", true, "both a file and a directory");
}

/* Kafka's internal topics ("__" names) are refused whatever the prefix allows: with
 * --reply-topic-prefix "" a job naming __consumer_offsets made every transaction of its worker
 * fail in AddPartitionsToTxn (TOPIC_AUTHORIZATION_FAILED), abort, and go again with it, forever:
 * no result was committed. */
static void test_reply_to_internal_topic(void **st)
{
    (void)st;
    const char *saved = cfg.reply_prefix;
    cfg.reply_prefix = "";
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"__consumer_offsets\"}", true,
                "internal topic");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"__transaction_state\"}", true,
                "internal topic");
    /* Names Kafka refuses although their characters are allowed: the job ran, then its
     * result could not be published. */
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\".\"}", true, "Kafka topic name");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"..\"}", true, "Kafka topic name");
    wrk_job j;
    char why[256] = "";
    assert_int_equal(decode("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"_single.ok\"}", &j, why), 0);
    wrk_job_free(&j);
    cfg.reply_prefix = "__";
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"__consumer_offsets\"}", true,
                "internal topic");
    cfg.reply_prefix = saved;
}

/* The job's tmpfs holds its files, main.py and the runtime guard, each in whole pages: a job
 * whose files fit only without the other two is invalid here, not an ENOSPC at staging. */
/* An invalid job is answered where its author listens, with what it asked to have echoed:
 * reply_to and metadata are taken before any other field can fail. */
static void test_invalid_keeps_reply_to_and_metadata(void **st)
{
    (void)st;
    static const char *const jobs[] = {
        "{\"id\":\"e\",\"code\":\"x\",\"bogus\":1,\"reply_to\":\"codeq.reply.a\",\"metadata\":{\"t\":1}}",
        "{\"bogus\":1,\"id\":\"e\",\"metadata\":{\"t\":1},\"reply_to\":\"codeq.reply.a\"}",
        "{\"id\":\"e\",\"code\":1,\"reply_to\":\"codeq.reply.a\",\"metadata\":{\"t\":1}}",
        "{\"id\":\"e\",\"code\":\"x\",\"limits\":{\"wall\":1},\"reply_to\":\"codeq.reply.a\","
        "\"metadata\":{\"t\":1}}",
    };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        wrk_job j;
        char why[256] = "";
        assert_int_equal(decode(jobs[i], &j, why), -1);
        assert_non_null(j.reply_to);
        assert_string_equal(j.reply_to, "codeq.reply.a");
        assert_non_null(j.metadata);
        wrk_job_free(&j);
    }
    /* Metadata too deep is not echoed, but the answer still goes to the reply_to. */
    char deep[512];
    int n = snprintf(deep, sizeof deep, "{\"id\":\"d\",\"code\":\"x\",\"reply_to\":\"codeq.reply.a\","
                     "\"metadata\":");
    for (int k = 0; k < 70; k++) deep[n++] = '[';
    for (int k = 0; k < 70; k++) deep[n++] = ']';
    snprintf(deep + n, sizeof deep - (size_t)n, "}");
    wrk_job j;
    char why[256] = "";
    assert_int_equal(decode(deep, &j, why), -1);
    assert_non_null(strstr(why, "nested deeper"));
    assert_non_null(j.reply_to);
    assert_null(j.metadata);
    wrk_job_free(&j);
    /* A reply_to that is not allowed: answered on the results topic, its metadata echoed. */
    assert_int_equal(decode("{\"id\":\"r\",\"code\":\"x\",\"reply_to\":\"billing.events\","
                            "\"metadata\":{\"t\":1}}", &j, why), -1);
    assert_non_null(strstr(why, "reply_to"));
    assert_null(j.reply_to);
    assert_non_null(j.metadata);
    wrk_job_free(&j);
    /* A number past 64 bits: answered on the reply_to, its metadata not echoed. */
    const char *big = "{\"id\":\"b\",\"code\":\"x\",\"reply_to\":\"codeq.reply.a\","
                      "\"metadata\":{\"n\":123456789012345678901234567890}}";
    assert_int_equal(decode(big, &j, why), -1);
    assert_non_null(strstr(why, "does not fit"));
    assert_non_null(j.reply_to);
    assert_null(j.metadata);
    wrk_job_free(&j);
}

static void test_files_fill_tmpfs(void **st)
{
    (void)st;
    size_t guard_len = 0, page = (size_t)sysconf(_SC_PAGESIZE);
    wrk_config_guard(&cfg, &guard_len);
    assert_true(guard_len > 0);
    size_t left = 256 - 1 - (guard_len + page - 1) / page; /* 1 MiB's pages, less code, guard */
    static char job[(1 << 20) + 256];
    for (int more = 0; more <= 1; more++) {
        size_t len = left * page + (size_t)more;
        int at = snprintf(job, sizeof job, "{\"id\":\"t\",\"code\":\"x\",\"limits\":"
                          "{\"tmpfs_mb\":1},\"files\":[{\"path\":\"f\",\"content\":\"");
        memset(job + at, 'a', len);
        snprintf(job + at + len, sizeof job - (size_t)at - len, "\"}]}");
        wrk_job j;
        char why[256] = "";
        int rc = wrk_job_decode(job, strlen(job), &cfg, &j, why, sizeof why);
        if (more) {
            assert_int_equal(rc, -1);
            assert_non_null(strstr(why, "files: above limits.tmpfs_mb 1: "));
        } else {
            if (rc) fail_msg("%s", why);
            assert_int_equal(j.files[0].len, len);
        }
        wrk_job_free(&j);
    }
}

/* JSON Schema's integer is any number without a fraction: 2500.0 (Python's timeout * 1000)
 * and 1e3 are valid limits by schemas/job.schema.json, so the worker reads them too (it
 * answered them `invalid` before). */
static void test_integral_reals_are_integers(void **st)
{
    (void)st;
    wrk_job j;
    char why[256] = "";
    assert_int_equal(decode("{\"id\":\"r\",\"code\":\"x\",\"limits\":{\"wall_ms\":2500.0,"
                            "\"cpu_ms\":1e3,\"memory_mb\":64}}", &j, why), 0);
    assert_int_equal(j.limits.wall_ms, 2500);
    assert_int_equal(j.limits.cpu_ms, 1000);
    assert_int_equal(j.limits.memory_mb, 64);
    wrk_job_free(&j);
}

static void test_files_and_deadline(void **st)
{
    (void)st;
    wrk_job j;
    char why[256] = "";
    assert_int_equal(decode("{\"id\":\"f\",\"code\":\"x\",\"deadline\":\"2026-11-30T05:45:29.250Z\","
                            "\"files\":[{\"path\":\"in/a.txt\",\"content\":\"hi\"},"
                            "{\"path\":\"b.bin\",\"content_base64\":\"Yf8Aeg==\"}]}", &j, why), 0);
    assert_int_equal(j.deadline_ms, 1796017529250LL);
    assert_int_equal(j.nfiles, 2);
    assert_string_equal(j.files[0].path, "in/a.txt");
    assert_int_equal(j.files[0].len, 2);
    assert_int_equal(j.files[1].len, 4);
    assert_memory_equal(j.files[1].data, "a\xff\x00z", 4);
    wrk_job_free(&j);
}

/* The id's 256 are characters, as the schema's maxLength and the client count them: 256 "é"
 * (512 bytes) are an id, 257 of them or 257 ASCII characters are not. */
static void test_id_length_in_characters(void **st)
{
    (void)st;
    char buf[2048], why[256];
    for (int n = 256; n <= 257; n++)
        for (int wide = 0; wide <= 1; wide++) {
            size_t k = (size_t)snprintf(buf, sizeof buf, "{\"code\":\"x\",\"id\":\"");
            for (int i = 0; i < n; i++)
                k += (size_t)snprintf(buf + k, sizeof buf - k, "%s", wide ? "\xc3\xa9" : "a");
            snprintf(buf + k, sizeof buf - k, "\"}");
            wrk_job j;
            int rc = decode(buf, &j, why);
            if (rc != (n == 256 ? 0 : -1))
                fail_msg("id of %d %s characters: rc %d (%s)", n, wide ? "two-byte" : "ASCII",
                         rc, why);
            wrk_job_free(&j);
        }
}

static int64_t deadline_of(const char *when)
{
    char buf[256], why[256] = "";
    snprintf(buf, sizeof buf, "{\"id\":\"d\",\"code\":\"x\",\"deadline\":\"%s\"}", when);
    wrk_job j;
    int rc = decode(buf, &j, why);
    int64_t ms = j.deadline_ms;
    wrk_job_free(&j);
    if (rc == 0) return ms;
    if (!strstr(why, "RFC 3339")) fail_msg("deadline %s: reason '%s'", when, why);
    return INT64_MIN;
}

/* RFC 3339 as JSON Schema's date-time has it: any offset (Python's isoformat() writes
 * +00:00), either case of T and Z, any number of fraction digits; a time no calendar has is
 * refused, not moved to another day. */
static void test_deadline_forms(void **st)
{
    (void)st;
    const int64_t at = 1796017529250LL; /* 2026-11-30T05:45:29.250Z */
    assert_int_equal(deadline_of("2026-11-30T05:45:29.250Z"), at);
    assert_int_equal(deadline_of("2026-11-30t05:45:29.25z"), at);
    assert_int_equal(deadline_of("2026-11-30T05:45:29.250999+00:00"), at);
    assert_int_equal(deadline_of("2026-11-30T06:45:29.250+01:00"), at);
    assert_int_equal(deadline_of("2026-11-29T23:15:29.250-06:30"), at);
    assert_int_equal(deadline_of("2026-11-30T05:45:29-00:00"), at - 250);
    assert_int_equal(deadline_of("2024-02-29T00:00:00Z"), 1709164800000LL);
    assert_int_equal(deadline_of("2016-12-31T23:59:60Z"), 1483228800000LL); /* leap second */
    assert_int_equal(deadline_of("1969-12-31T23:59:59Z"), -1000);     /* long expired */
    assert_int_equal(deadline_of("1970-01-01T00:00:00Z"), -1);        /* 0 would say none */
    const char *bad[] = {
        "2026-11-30T05:45:29", "2026-11-30T05:45:29.Z", "2026-11-30 05:45:29Z",
        "2026-1-30T05:45:29Z", "2026-11-30T5:45:29Z", " 2026-11-30T05:45:29Z",
        "2026-11-30T05:45:29Z ", "2026-11-30T05:45:29+0100", "2026-11-30T05:45:29+01",
        "2026-11-30T05:45:29+24:00", "2026-11-30T05:45:29+01:60", "2026-02-29T00:00:00Z",
        "2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-00-10T00:00:00Z",
        "2026-11-31T00:00:00Z", "2026-11-30T24:00:00Z", "2026-11-30T05:60:00Z",
        "2026-11-30T05:45:61Z", "2026-11-30", "2026", "", "+2026-11-30T05:45:29Z",
        "2026-11-30T05:45:29ZZ", "1900-02-29T00:00:00Z",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (deadline_of(bad[i]) != INT64_MIN) fail_msg("deadline '%s' was accepted", bad[i]);
}

/* \u0000 is valid JSON: bytes (stdin, file contents) keep it, a job with it in its code is
 * answered `invalid` (its id is read), and a name holding it is refused, not cut short. */
static void test_nul_characters(void **st)
{
    (void)st;
    wrk_job j;
    char why[256] = "";
    assert_int_equal(decode("{\"id\":\"n\",\"code\":\"x\",\"stdin\":\"a\\u0000b\","
                            "\"metadata\":{\"k\":\"\\u0000\"},"
                            "\"files\":[{\"path\":\"f\",\"content\":\"\\u0000z\"}]}", &j, why), 0);
    assert_int_equal(j.stdin_len, 3);
    assert_memory_equal(j.stdin_data, "a\0b", 3);
    assert_int_equal(j.files[0].len, 2);
    assert_memory_equal(j.files[0].data, "\0z", 2);
    wrk_job_free(&j);
    expect_fail("{\"id\":\"n\",\"code\":\"print(1)\\u0000import os\"}", true, "NUL");
    expect_fail("{\"id\":\"n\",\"code\":\"x\",\"reply_to\":\"codeq.reply.a\\u0000b\"}", true,
                "reply_to");
    expect_fail("{\"id\":\"n\",\"code\":\"x\",\"deadline\":\"2026-11-30T05:45:29.250Z\\u0000\"}",
                true, "deadline");
    expect_fail("{\"id\":\"n\",\"code\":\"x\",\"files\":[{\"path\":\"a\\u0000/../../b\","
                "\"content\":\"1\"}]}", true, "files[0].path contains a NUL");
    expect_fail("{\"id\":\"a\\u0000b\",\"code\":\"x\"}", false, "job id");
}

/* metadata comes back in the result, where clients parse it: 64 levels of nesting at most
 * (Python's json gives up near 1000; jansson reads 2048). */
static void test_metadata_depth(void **st)
{
    (void)st;
    char buf[512];
    for (int depth = 64; depth <= 65; depth++) {
        int n = snprintf(buf, sizeof buf, "{\"id\":\"m\",\"code\":\"x\",\"metadata\":");
        for (int i = 0; i < depth; i++) buf[n++] = '[';
        for (int i = 0; i < depth; i++) buf[n++] = ']';
        snprintf(buf + n, sizeof buf - (size_t)n, "}");
        if (depth == 64) {
            wrk_job j;
            char why[256] = "";
            assert_int_equal(decode(buf, &j, why), 0);
            wrk_job_free(&j);
        } else {
            expect_fail(buf, true, "metadata is nested deeper than 64 levels");
        }
    }
}

/* A number beyond 64 bits is valid JSON: the job is answered (its id is read), not
 * dead-lettered; without an id it can only be dead-lettered. */
static void test_big_numbers(void **st)
{
    (void)st;
    expect_fail("{\"id\":\"b\",\"code\":\"x\",\"metadata\":{\"n\":123456789012345678901234567890}}",
                true, "does not fit in 64 bits (line 1");
    expect_fail("{\"id\":\"b\",\"code\":\"x\",\"limits\":{\"wall_ms\":99999999999999999999}}",
                true, "does not fit in 64 bits");
    expect_fail("{\"code\":\"x\",\"n\":99999999999999999999}", false, "job id");
    /* Beyond a double too (these were dead-lettered), one or many, anywhere in the job. */
    expect_fail("{\"id\":\"b\",\"code\":\"x\",\"metadata\":1e309}", true,
                "does not fit in 64 bits (line 1, column 37)");
    expect_fail("{\"id\":\"b\",\"code\":\"x\",\"limits\":{\"wall_ms\":-1e309},"
                "\"metadata\":[1e999,2,123456789012345678901234567890]}", true, "does not fit");
    expect_fail("{\"metadata\":1e309,\"id\":\"b\",\"code\":\"x\"}", true, "does not fit");
    /* Each costs a parse of the whole record: 8 are answered, 9 are dead-lettered with
     * jansson's own words. */
    for (int n = 8; n <= 9; n++) {
        char many[512] = "{\"id\":\"b\",\"code\":\"x\",\"metadata\":[1e309";
        for (int i = 1; i < n; i++)
            strcat(many, ",1e309");
        strcat(many, "]}");
        expect_fail(many, n == 8, n == 8 ? "does not fit" : "real number overflow");
    }
}

static void test_json_bytes(void **st)
{
    (void)st;
    bool lossy;
    json_t *j = wrk_json_bytes("ok \xc3\xa9", 5, &lossy);
    assert_false(lossy);
    assert_string_equal(json_string_value(j), "ok \xc3\xa9");
    json_decref(j);
    j = wrk_json_bytes("a\xff\x00z", 4, &lossy);
    assert_true(lossy);
    assert_int_equal(json_string_length(j), 1 + 3 + 1 + 1);
    assert_memory_equal(json_string_value(j), "a\xef\xbf\xbd\0z", 6);
    json_decref(j);
    /* overlong encoding and a UTF-16 surrogate are not valid UTF-8 */
    j = wrk_json_bytes("\xc0\xaf\xed\xa0\x80", 5, &lossy);
    assert_true(lossy);
    json_decref(j);
    j = wrk_json_base64("a\xff\x00z", 4);
    assert_string_equal(json_string_value(j), "Yf8Aeg==");
    json_decref(j);
}

/* A job id made from a file's name is inert on a terminal: C0, DEL and C1 (U+009B is CSI)
 * each become one '_', other characters stay whole, and the cut never splits one. */
static void test_id_part_controls(void **st)
{
    (void)st;
    char out[32];
    wrk_id_part("a\x1b[31m\x7f\xc2\x9b" "2J\xc2\xa0\xc3\xa9", 200, out, sizeof out);
    assert_string_equal(out, "a_[31m__2J\xc2\xa0\xc3\xa9");
    wrk_id_part("\xc2\x9b\xc2\x9b\xc2\x9b", 2, out, sizeof out);
    assert_string_equal(out, "__");
    wrk_id_part("x\xc2", 200, out, sizeof out); /* a cut character: one byte, '_' */
    assert_string_equal(out, "x_");
    size_t len;
    assert_int_equal(wrk_hidden_at((const unsigned char *)"\xc2\x80", 2, &len), 0x80);
    assert_int_equal(len, 2);
    assert_int_equal(wrk_hidden_at((const unsigned char *)"\xc2\x9f", 2, &len), 0x9f);
    assert_int_equal(wrk_hidden_at((const unsigned char *)"\xc2\xa0", 2, &len), 0);
    assert_int_equal(wrk_hidden_at((const unsigned char *)"\xc2\x9b", 1, &len), 0);
    /* a file named to read backwards ("txt.exe" shown as "exe.txt") is named inert too */
    wrk_id_part("a\xe2\x80\xaetxt.py", 200, out, sizeof out);
    assert_string_equal(out, "a_txt.py");
}

/* The format characters that reorder or hide text are hidden; joiners, other punctuation of
 * the same blocks and the characters around them are not. */
static void test_hidden_format_chars(void **st)
{
    (void)st;
    static const struct { const char *s; unsigned cp; size_t len; } cases[] = {
        {"\xd8\x9c", 0x61c, 2},     {"\xe2\x80\x8b", 0x200b, 3}, {"\xe2\x80\x8e", 0x200e, 3},
        {"\xe2\x80\x8f", 0x200f, 3}, {"\xe2\x80\xa8", 0x2028, 3}, {"\xe2\x80\xa9", 0x2029, 3},
        {"\xe2\x80\xaa", 0x202a, 3}, {"\xe2\x80\xae", 0x202e, 3}, {"\xe2\x81\xa0", 0x2060, 3},
        {"\xe2\x81\xa4", 0x2064, 3}, {"\xe2\x81\xa6", 0x2066, 3}, {"\xe2\x81\xa9", 0x2069, 3},
        {"\xef\xbb\xbf", 0xfeff, 3}, {"\xc2\xad", 0xad, 2},       {"\xe1\xa0\x8e", 0x180e, 3},
        {"\xe2\x81\xaa", 0x206a, 3}, {"\xe2\x81\xaf", 0x206f, 3}, {"\xef\xbf\xb9", 0xfff9, 3},
        {"\xef\xbf\xbb", 0xfffb, 3}, {"\xf3\xa0\x80\x80", 0xe0000, 4},
        {"\xf3\xa0\x81\x81", 0xe0041, 4}, {"\xf3\xa0\x81\xbf", 0xe007f, 4},
        /* kept: ZWNJ, ZWJ, en dash, U+2065 (unassigned), U+FE0F (emoji presentation), U+FFFC,
         * U+E0080, Arabic letter, a cut one, one not UTF-8 (an overlong U+200E) */
        {"\xe2\x80\x8c", 0, 0},      {"\xe2\x80\x8d", 0, 0},      {"\xe2\x80\x93", 0, 0},
        {"\xe2\x81\xa5", 0, 0},      {"\xef\xb8\x8f", 0, 0},      {"\xef\xbf\xbc", 0, 0},
        {"\xf3\xa0\x82\x80", 0, 0}, {"\xd8\xa7", 0, 0},           {"\xe2\x80", 0, 0},
        {"\xf0\x82\x80\x8e", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len = 99;
        unsigned cp = wrk_hidden_at((const unsigned char *)cases[i].s, strlen(cases[i].s), &len);
        if (cp != cases[i].cp || len != cases[i].len)
            fail_msg("case %zu: U+%04X len %zu, want U+%04X len %zu", i, cp, len, cases[i].cp,
                     cases[i].len);
    }
    char out[64];
    static const char s[] = "id \xe2\x80\xaeyp.exe\xe2\x80\xac ok \xe2\x80\x8d";
    assert_int_equal(wrk_escape(s, sizeof s - 1, false, out, sizeof out), sizeof s - 1);
    assert_string_equal(out, "id \\u202eyp.exe\\u202c ok \xe2\x80\x8d");
}

/* What a record that is no job is told: in words its sender can act on, with the record's own
 * control characters shown escaped (the reason reaches logs, headers and the audit trail). */
static void test_not_a_job(void **st)
{
    (void)st;
    wrk_job j;
    char why[256] = "";
    assert_int_equal(wrk_job_decode("", 0, &cfg, &j, why, sizeof why), -1);
    assert_string_equal(why, "job is empty: the record has no value");
    wrk_job_free(&j);
    /* valid JSON, but not an object: said so, not "not valid JSON" */
    expect_fail("\"abc\"", false, "job must be a JSON object");
    expect_fail("null", false, "job must be a JSON object");
    expect_fail("42", false, "job must be a JSON object");
    /* jansson stops at a NUL byte and blames the end of the text */
    static const char nul[] = "{\"id\":\"a\",\"code\":\"print(1)\"}\0{\"id\":\"b\"}";
    assert_int_equal(wrk_job_decode(nul, sizeof nul - 1, &cfg, &j, why, sizeof why), -1);
    if (!strstr(why, "holds a NUL byte (at byte 28;")) fail_msg("%s", why);
    wrk_job_free(&j);
    expect_fail("\x1b[31mRED", false, "near '\\x1b'");
    /* a NUL after what the parser stopped at is not the reason */
    static const char early[] = "{\"id\": x}\0zz";
    assert_int_equal(wrk_job_decode(early, sizeof early - 1, &cfg, &j, why, sizeof why), -1);
    if (strstr(why, "NUL") || !strstr(why, "invalid token")) fail_msg("%s", why);
    wrk_job_free(&j);
    /* a name the job chose, quoted in its answer */
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"\\u001b]0;t\\u0007\":1}", true,
                "unknown field '\\x1b]0;t\\x07'");
    expect_fail("{\"id\":\"a\",\"code\":\"x\",\"limits\":{\"\\u009b2J\":1}}", true,
                "unknown limit '\\u009b2J'");
    assert_int_equal(decode("\xc2\x9b" "31m", &j, why), -1);
    assert_null(strchr(why, '\x1b'));
    assert_null(strstr(why, "\xc2\x9b"));
    assert_non_null(strstr(why, "\\u009b"));
    wrk_job_free(&j);
}

static void test_escape(void **st)
{
    (void)st;
    char out[64];
    static const char s[] = "a\x1b[2J\n\t\x7f\xc2\x9b\xc2\xa0\0z";
    assert_int_equal(wrk_escape(s, sizeof s - 1, false, out, sizeof out), sizeof s - 1);
    assert_string_equal(out, "a\\x1b[2J\\x0a\\x09\\x7f\\u009b\xc2\xa0\\x00z");
    assert_int_equal(wrk_escape(s, sizeof s - 1, true, out, sizeof out), sizeof s - 1);
    assert_string_equal(out, "a\\x1b[2J\n\t\\x7f\\u009b\xc2\xa0\\x00z");
    /* never cut inside an escape: what does not fit is left for the next call */
    assert_int_equal(wrk_escape(s, sizeof s - 1, false, out, 5), 1);
    assert_string_equal(out, "a");
}

/* One wrk_log line in the given format, as it reaches stderr; its length. */
static size_t log_line(const char *format, const char *id, char *buf, size_t n)
{
    char err[128];
    assert_int_equal(wrk_log_setup(format, NULL, err, sizeof err), 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    int saved = dup(STDERR_FILENO);
    fflush(stderr);
    dup2(fileno(f), STDERR_FILENO);
    wrk_log("job %s: ok", id);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(f);
    size_t len = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[len] = '\0';
    return len;
}

/* The log shows what a job id or a record put in a message; it writes no control character
 * to the terminal or file that reads it. */
static void test_log_escapes(void **st)
{
    (void)st;
    char buf[512];
    size_t n = log_line("text", "inj\xc2\x9b" "31mX\x1b]0;t\x07", buf, sizeof buf);
    assert_non_null(strstr(buf, "codeq: job inj\\u009b31mX\\x1b]0;t\\x07: ok\n"));
    size_t hl;
    for (size_t i = 0; i + 1 < n; i++)
        if ((unsigned char)buf[i] < 0x20 ||
            wrk_hidden_at((const unsigned char *)buf + i, n - i, &hl))
            fail_msg("a control character at byte %zu of the log line: %s", i, buf);
    /* the JSON log: ASCII only, C1 and U+2028 escaped as JSON escapes them */
    n = log_line("json", "inj\xc2\x9b" "31m\xe2\x80\xa8\xc3\xa9", buf, sizeof buf);
    if (!strstr(buf, "job inj\\u009B31m\\u2028\\u00E9: ok")) fail_msg("%s", buf);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] >= 0x80) fail_msg("a byte 0x%02x in the JSON log: %s",
                                                    (unsigned char)buf[i], buf);
}

/* A job refused for a field other than its code still names the code it carried (the hash
 * was taken only after every check before the code's own had passed: null). */
static void test_refused_keeps_code_hash(void **st)
{
    (void)st;
    const char *const jobs[] = {
        "{\"id\":\"a\",\"code\":\"print(1)\",\"limit\":{}}",
        "{\"id\":\"a\",\"code\":\"print(1)\",\"reply_to\":\"codeq.jobs\"}",
        "{\"id\":\"a\",\"code\":\"print(1)\",\"stdin\":\"x\",\"stdin\":\"y\"}",
        "{\"id\":\"a\",\"code\":\"print(1)\",\"limits\":{\"wall_ms\":0}}",
    };
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        wrk_job j;
        char why[256] = "";
        assert_int_equal(decode(jobs[i], &j, why), -1);
        if (strcmp(j.code_sha256,
                   "d287bb7f9d15abdc5b6e98536263815744b6ef21c8f3c839fc434ca70d8efe99"))
            fail_msg("%s (%s): code_sha256 '%s'", jobs[i], why, j.code_sha256);
        wrk_job_free(&j);
    }
}

static void test_sha256(void **st)
{
    (void)st;
    char h[65];
    wrk_sha256_hex("abc", 3, h);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

int main(void)
{
    wrk_config_default(&cfg);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_job),
        cmocka_unit_test(test_dead_letter_cases),
        cmocka_unit_test(test_reread_for_id),
        cmocka_unit_test(test_invalid_cases),
        cmocka_unit_test(test_reply_to_internal_topic),
        cmocka_unit_test(test_files_and_deadline),
        cmocka_unit_test(test_files_fill_tmpfs),
        cmocka_unit_test(test_integral_reals_are_integers),
        cmocka_unit_test(test_deadline_forms),
        cmocka_unit_test(test_id_length_in_characters),
        cmocka_unit_test(test_nul_characters),
        cmocka_unit_test(test_big_numbers),
        cmocka_unit_test(test_metadata_depth),
        cmocka_unit_test(test_invalid_keeps_reply_to_and_metadata),
        cmocka_unit_test(test_json_bytes),
        cmocka_unit_test(test_id_part_controls),
        cmocka_unit_test(test_hidden_format_chars),
        cmocka_unit_test(test_not_a_job),
        cmocka_unit_test(test_escape),
        cmocka_unit_test(test_log_escapes),
        cmocka_unit_test(test_sha256),
        cmocka_unit_test(test_refused_keeps_code_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
