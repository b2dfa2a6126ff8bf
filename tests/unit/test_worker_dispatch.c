/* Dispatch units: what a job's sender and the operator each learn when codeq itself fails.
 * A result goes to whoever sent the job, so an internal error's host paths are elided there;
 * the audit event (the operator's) keeps the sandbox's whole text, and `codeq run`, whose
 * caller is the operator, shows it whole in the result too. Runs real sandboxes (root).
 * And a job's records always fit its record budget, cut back a step each time the broker
 * refuses them, until nothing is left to cut. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "wrk_internal.h"

static const char JOB[] = "{\"id\":\"d1\",\"code\":\"print(1)\"}";

/* One job through wrk_execute with an interpreter that does not exist: the sandbox fails at
 * its execve, after every layer is up, with the path in its text. */
static void run_failing(bool operator_view, wrk_outcome *o)
{
    wrk_config c;
    wrk_config_default(&c);
    c.worker_id = "w-test";
    c.sandbox.isolation = "exec";
    c.sandbox.python = "/nonexistent/codeq-test/python3";
    c.internal_paths = operator_view;
    bool dead;
    char why[256];
    wrk_execute(&c, JOB, strlen(JOB), NULL, o, &dead, why, sizeof why);
    assert_false(dead);
}

static const char *finished_reason(const wrk_outcome *o)
{
    size_t n = json_array_size(o->audit);
    assert_true(n > 0);
    const json_t *last = json_array_get(o->audit, n - 1);
    assert_string_equal(json_string_value(json_object_get(last, "event")), "finished");
    assert_string_equal(json_string_value(json_object_get(last, "status")), "internal_error");
    return json_string_value(json_object_get(last, "reason"));
}

static void test_internal_error_paths_elided(void **st)
{
    (void)st;
    wrk_outcome o;
    run_failing(false, &o);
    const char *msg = json_string_value(json_object_get(o.result, "message"));
    assert_string_equal(json_string_value(json_object_get(o.result, "status")), "internal_error");
    assert_string_equal(msg, "codeq: sandbox: execve(<host path>): No such file or directory");
    const char *reason = finished_reason(&o);
    assert_non_null(reason);
    assert_string_equal(reason,
                        "codeq: sandbox: execve(/nonexistent/codeq-test/python3): No such file "
                        "or directory");
    wrk_outcome_free(&o);
}

static void test_internal_error_whole_for_operator(void **st)
{
    (void)st;
    wrk_outcome o;
    run_failing(true, &o);
    assert_string_equal(json_string_value(json_object_get(o.result, "message")),
                        "codeq: sandbox: execve(/nonexistent/codeq-test/python3): No such file "
                        "or directory");
    assert_string_equal(finished_reason(&o),
                        json_string_value(json_object_get(o.result, "message")));
    wrk_outcome_free(&o);
}

/* A reason cut to its buffer inside a character (here the job's own UTF-8 path names) is
 * still the result's message and the audit event's reason: it used to vanish (json_string
 * refuses a cut character), leaving an `invalid` with an empty message and an audit event
 * without status or reason. */
static void test_cut_reason_kept(void **st)
{
    (void)st;
    char name[256] = "", job[1024];
    for (int i = 0; i < 125; i++) strcat(name, "\xc3\xa9"); /* 125 × é: 250 bytes */
    snprintf(job, sizeof job, "{\"id\":\"cut\",\"code\":\"print(1)\",\"files\":["
             "{\"path\":\"%s\",\"content\":\"1\"},{\"path\":\"%s/bb\",\"content\":\"2\"}]}",
             name, name);
    wrk_config c;
    wrk_config_default(&c);
    wrk_outcome o;
    bool dead;
    char why[256];
    wrk_execute(&c, job, strlen(job), NULL, &o, &dead, why, sizeof why);
    assert_false(dead);
    assert_string_equal(json_string_value(json_object_get(o.result, "status")), "invalid");
    const char *msg = json_string_value(json_object_get(o.result, "message"));
    assert_non_null(msg);
    assert_non_null(strstr(msg, "files[1].path: '"));
    const json_t *ev = json_array_get(o.audit, json_array_size(o.audit) - 1);
    assert_string_equal(json_string_value(json_object_get(ev, "event")), "invalid");
    assert_string_equal(json_string_value(json_object_get(ev, "status")), "invalid");
    assert_string_equal(json_string_value(json_object_get(ev, "reason")), msg);
    wrk_outcome_free(&o);
}

static void test_elide_paths(void **st)
{
    (void)st;
    const struct {
        const char *in, *want;
        size_t n;
    } cases[] = {
        {"codeq: sandbox: open(/tmp/codeq/job-7-x/in/d/e): Not a directory",
         "codeq: sandbox: open(<host path>): Not a directory", 1},
        {"mount(overlay, lowerdir=/usr,upperdir=/tmp/w/u): Busy",
         "mount(overlay, lowerdir=<host path>,upperdir=<host path>): Busy", 2},
        {"/sys/fs/cgroup/memory/codeq/job-1", "<host path>", 1},
        {"cgroup create codeq/job-17: Permission denied",
         "cgroup create codeq/job-17: Permission denied", 0},
        {"files[0].path: 'd/e' and 'a/b/c'", "files[0].path: 'd/e' and 'a/b/c'", 0},
        {"zygote 12: \"/usr/bin/python3\" [/dev/shm] x", "zygote 12: \"<host path>\" [<host path>] x", 2},
        {"", "", 0},
    };
    char out[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(wrk_elide_paths(cases[i].in, out, sizeof out), cases[i].n);
        assert_string_equal(out, cases[i].want);
    }
    /* cut to the buffer, always terminated */
    assert_int_equal(wrk_elide_paths("open(/a/b): x", out, 8), 1);
    assert_string_equal(out, "open(<h");
}

/* A rejected job (`lines` lines of eval(0)) under a record budget of 6144 (topics of
 * max.message.bytes 8192), finished. */
typedef struct {
    wrk_config c;
    wrk_task *t;
    wrk_outcome *o;
    char trail[256];
} rejected;

static void rejected_run(rejected *x, const char *metadata, int lines)
{
    static char job[200 * 12 + 40000];
    int n = snprintf(job, sizeof job, "{\"id\":\"many\",%s\"code\":\"", metadata);
    for (int i = 0; i < lines && i < 200; i++)
        n += snprintf(job + n, sizeof job - (size_t)n, "eval(0)\\n");
    snprintf(job + n, sizeof job - (size_t)n, "\"}");
    wrk_config_default(&x->c);
    x->c.worker_id = "w-test";
    x->c.result_max_bytes = 6144;
    x->t = wrk_task_start(&x->c, job, strlen(job), NULL, NULL);
    assert_non_null(x->t);
    assert_true(wrk_task_done(x->t));
    x->o = wrk_task_finish(x->t);
}

static size_t encoded(const json_t *j)
{
    return json_dumpb(j, NULL, 0, JSON_COMPACT);
}

/* The events of x's outcome, by name, in order ("received,rejected"). */
static const char *trail(rejected *x)
{
    size_t i, at = 0;
    json_t *ev;
    x->trail[0] = '\0';
    json_array_foreach(x->o->audit, i, ev)
        at += (size_t)snprintf(x->trail + at, sizeof x->trail - at, "%s%s", i ? "," : "",
                               json_string_value(json_object_get(ev, "event")));
    return x->trail;
}

static const char *status(const rejected *x)
{
    return json_string_value(json_object_get(x->o->result, "status"));
}

/* 200 findings of eval(0), 100 carried: the result and the rejected event keep the findings
 * that fit in the budget, findings_total 200; each record fits. The result used to become an
 * internal_error still carrying them all, and the event was never checked: on topics of 8192
 * bytes the broker refused them, every transaction aborted, and no later job was answered. */
static void test_rejected_fits_small_budget(void **st)
{
    (void)st;
    rejected x;
    rejected_run(&x, "", 200);
    assert_string_equal(status(&x), "rejected");
    assert_true(encoded(x.o->result) <= 6144);
    size_t kept = json_array_size(json_object_get(x.o->result, "findings"));
    assert_true(kept >= 30 && kept < 100);
    assert_int_equal(json_integer_value(json_object_get(x.o->result, "findings_total")), 200);
    assert_string_equal(trail(&x), "received,rejected");
    json_t *ev = json_array_get(x.o->audit, 1);
    assert_true(encoded(ev) <= 6144 - wrk_chain_room());
    assert_true(json_array_size(json_object_get(ev, "findings")) >= 30);
    assert_int_equal(json_integer_value(json_object_get(ev, "findings_total")), 200);
    wrk_task_free(x.t);
}

/* 60 findings, all carried by the validator: the result and its rejected event cut them each
 * for itself, each saying there were 60. They hold one array: cut in place by the result's
 * fit, the event lost findings without a findings_total (a red-team review of a9b5994). */
static void test_result_and_event_cut_apart(void **st)
{
    (void)st;
    rejected x;
    rejected_run(&x, "", 60);
    json_t *rf = json_object_get(x.o->result, "findings");
    json_t *ev = json_array_get(x.o->audit, 1);
    json_t *ef = json_object_get(ev, "findings");
    assert_true(json_array_size(rf) > 0 && json_array_size(rf) < 60);
    assert_int_equal(json_integer_value(json_object_get(x.o->result, "findings_total")), 60);
    assert_true(json_array_size(ef) > 0 && json_array_size(ef) < 60);
    assert_int_equal(json_integer_value(json_object_get(ev, "findings_total")), 60);
    assert_true(rf != ef);
    assert_true(encoded(x.o->result) <= 6144 && encoded(ev) <= 6144 - wrk_chain_room());
    wrk_task_free(x.t);
}

/* Metadata too large for any result: a short internal_error that says so, no findings, and
 * one terminal event (the rejected one, whose findings are cut all the same, gives way). */
static void test_replaced_result_ends_trail_once(void **st)
{
    (void)st;
    rejected x;
    char meta[12100];
    memset(meta, 'm', sizeof meta);
    memcpy(meta, "\"metadata\":\"", 12);
    memcpy(meta + sizeof meta - 3, "\",", 3); /* ends the string, and a NUL */
    rejected_run(&x, meta, 200);
    assert_string_equal(status(&x), "internal_error");
    assert_non_null(strstr(json_string_value(json_object_get(x.o->result, "message")), "metadata"));
    assert_int_equal(json_array_size(json_object_get(x.o->result, "findings")), 0);
    assert_true(encoded(x.o->result) <= 6144);
    assert_string_equal(trail(&x), "received,finished");
    wrk_task_free(x.t);
}

/* Refused by the broker all the same: a short internal_error with one terminal event, then
 * audit events without the code, then nothing left to cut. */
static void test_refused_records_cut_back(void **st)
{
    (void)st;
    rejected x;
    const char *why = "audit refused it: too large";
    rejected_run(&x, "", 200);
    /* as --audit-code full puts it there */
    json_object_set_new(json_array_get(x.o->audit, 0), "code", json_string("eval(0)"));
    assert_string_equal(wrk_task_unpublishable(x.t, why, true), "answering internal_error");
    assert_string_equal(status(&x), "internal_error");
    assert_string_equal(trail(&x), "received,finished");
    assert_non_null(wrk_task_unpublishable(x.t, why, true));
    assert_null(json_object_get(json_array_get(x.o->audit, 0), "code"));
    assert_non_null(json_object_get(json_array_get(x.o->audit, 0), "code_omitted"));
    assert_null(wrk_task_unpublishable(x.t, why, true));
    assert_string_equal(wrk_task_name(x.t, x.trail, sizeof x.trail), "job many");
    wrk_task_free(x.t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elide_paths),
        cmocka_unit_test(test_cut_reason_kept),
        cmocka_unit_test(test_internal_error_paths_elided),
        cmocka_unit_test(test_internal_error_whole_for_operator),
        cmocka_unit_test(test_rejected_fits_small_budget),
        cmocka_unit_test(test_result_and_event_cut_apart),
        cmocka_unit_test(test_replaced_result_ends_trail_once),
        cmocka_unit_test(test_refused_records_cut_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
