/* Dispatch: the one path every job takes, shared by `codeq run` and the Kafka worker.
 * decode -> validate -> limits -> sandbox, each step able to end the job with its own status,
 * each leaving an audit event. It never fails as a whole: a problem becomes a result status
 * (`invalid`, `rejected`, `internal_error`) or, when there is no id to answer to, a
 * dead-letter verdict for the caller. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

static void audit_add(wrk_outcome *out, const char *event, const char *id, const wrk_config *c,
                      const char *sha, const wrk_source *src, json_t *extra)
{
    json_t *e = wrk_audit_event(event, id, c->worker_id, sha, src);
    if (extra) {
        json_object_update(e, extra);
        json_decref(extra);
    }
    json_array_append_new(out->audit, e);
}

static void finish(wrk_outcome *out, json_t *result)
{
    out->result = result;
    out->status = json_string_value(json_object_get(result, "status"));
}

static void run_validated(const wrk_config *c, const wrk_job *job, const wrk_source *src,
                          json_t *r, wrk_outcome *out)
{
    char now[32];
    sbx_result s;
    sbx_job sj = {
        .code = job->code, .code_len = job->code_len,
        .stdin_data = job->stdin_data, .stdin_len = job->stdin_len,
        .limits = job->limits, .job_id = job->id,
    };
    wrk_now_iso(now);
    json_object_set_new(r, "started_at", json_string(now));
    audit_add(out, "started", job->id, c, job->code_sha256, src,
              json_pack("{s:s}", "isolation", "exec"));
    sbx_run(&c->sandbox, &sj, &s);
    wrk_result_set_run(r, &s, &job->limits);
    audit_add(out, "finished", job->id, c, job->code_sha256, src,
              json_pack("{s:s, s:O, s:O, s:O}", "status", sbx_status_name(s.status),
                        "exit_code", json_object_get(r, "exit_code"), "signal",
                        json_object_get(r, "signal"), "usage", json_object_get(r, "usage")));
    sbx_result_free(&s);
}

/* Validation ends the job when the program has findings or the validator itself failed. */
static bool validate(const wrk_config *c, const wrk_job *job, const wrk_source *src, json_t *r,
                     wrk_outcome *out)
{
    char err[256] = "";
    val_report rep = {0};
    if (val_init(err, sizeof err) < 0 || val_check(job->code, job->code_len, &rep, err,
                                                   sizeof err) < 0) {
        json_object_set_new(r, "status", json_string("internal_error"));
        json_object_set_new(r, "message", json_string(err));
        audit_add(out, "finished", job->id, c, job->code_sha256, src,
                  json_pack("{s:s, s:s}", "status", "internal_error", "reason", err));
        return false;
    }
    if (rep.count == 0) {
        val_report_free(&rep);
        return true;
    }
    json_object_set_new(r, "status", json_string("rejected"));
    json_object_set_new(r, "findings", wrk_findings_json(&rep));
    char msg[320];
    snprintf(msg, sizeof msg, "rejected by policy: %zu finding%s, first: %s at line %d",
             rep.count, rep.count == 1 ? "" : "s", rep.items[0].rule, rep.items[0].line);
    json_object_set_new(r, "message", json_string(msg));
    audit_add(out, "rejected", job->id, c, job->code_sha256, src,
              json_pack("{s:s, s:O}", "status", "rejected", "findings",
                        json_object_get(r, "findings")));
    val_report_free(&rep);
    return false;
}

void wrk_execute(const wrk_config *c, const char *buf, size_t len, const wrk_source *src,
                 wrk_outcome *out, bool *dead_letter, char *why, size_t whylen)
{
    char received[32];
    wrk_job job;
    memset(out, 0, sizeof *out);
    out->audit = json_array();
    *dead_letter = false;
    wrk_now_iso(received);
    if (wrk_job_decode(buf, len, c, &job, why, whylen) < 0) {
        if (!job.id) {
            char sha[65];
            wrk_sha256_hex(buf, len, sha);
            *dead_letter = true;
            audit_add(out, "dead_lettered", NULL, c, sha, src, json_pack("{s:s}", "reason", why));
            wrk_job_free(&job);
            return;
        }
        json_t *r = wrk_result_new(job.id, "invalid", c->worker_id, received, job.metadata);
        json_object_set_new(r, "message", json_string(why));
        if (job.code_sha256[0]) json_object_set_new(r, "code_sha256", json_string(job.code_sha256));
        audit_add(out, "received", job.id, c, job.code_sha256, src, NULL);
        audit_add(out, "invalid", job.id, c, job.code_sha256, src,
                  json_pack("{s:s, s:s}", "status", "invalid", "reason", why));
        finish(out, r);
        wrk_job_free(&job);
        return;
    }
    json_t *r = wrk_result_new(job.id, "ok", c->worker_id, received, job.metadata);
    json_object_set_new(r, "code_sha256", json_string(job.code_sha256));
    if (job.reply_to) out->reply_to = strdup(job.reply_to);
    audit_add(out, "received", job.id, c, job.code_sha256, src, NULL);
    if (validate(c, &job, src, r, out)) run_validated(c, &job, src, r, out);
    finish(out, r);
    wrk_job_free(&job);
}

void wrk_outcome_free(wrk_outcome *o)
{
    json_decref(o->result);
    json_decref(o->audit);
    free(o->reply_to);
    memset(o, 0, sizeof *o);
}
