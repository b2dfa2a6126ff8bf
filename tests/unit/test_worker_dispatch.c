/* Dispatch units: what a job's sender and the operator each learn when codeq itself fails.
 * A result goes to whoever sent the job, so an internal error's host paths are elided there;
 * the audit event (the operator's) keeps the sandbox's whole text, and `codeq run`, whose
 * caller is the operator, shows it whole in the result too. Runs real sandboxes (root). */
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elide_paths),
        cmocka_unit_test(test_cut_reason_kept),
        cmocka_unit_test(test_internal_error_paths_elided),
        cmocka_unit_test(test_internal_error_whole_for_operator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
