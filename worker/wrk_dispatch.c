/* Dispatch: the one path every job takes, shared by `codeq run` and the Kafka worker.
 * decode -> deadline -> validate -> limits -> sandbox, each step able to end the job with its
 * own status, each leaving an audit event. It never fails as a whole: a problem becomes a
 * result status (`invalid`, `rejected`, `expired`, `internal_error`) or, when there is no id
 * to answer to, a dead-letter verdict for the caller.
 *
 * A job is a wrk_task so that the worker can run many at once: wrk_task_start() does every
 * step up to starting the sandbox and returns; the caller drives the sandbox with poll(2)
 * through wrk_task_proc(); wrk_task_finish() turns the sandbox's report into the result.
 * wrk_execute() is the same thing synchronously, for `codeq run`.
 * A job's records are held to the record budget when it finishes (wrk_fit.c); those the broker
 * refuses all the same are cut back a step at a time (wrk_task_unpublishable), down to a short
 * internal_error, or for a dead letter down to none, never tried again unchanged. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"

struct wrk_task {
    const wrk_config *c;
    wrk_source src;
    char topic[256];
    wrk_job job;
    wrk_outcome out;
    json_t *r;          /* the result being built; moved into out on finish */
    bool dead;
    char why[512];
    sbx_proc *proc;     /* NULL unless the program is running */
    val_code code_obj;  /* the program compiled from the parse validate() checked; may be empty */
    uint64_t token;     /* names the job in delivery reports (wrk_task_token) */
    bool unpublishable; /* its records could not be produced: answered internal_error */
    bool sbx_internal;  /* the sandbox failed (internal_error) ... */
    bool sbx_unstarted; /* ... before the job's code ran */
    char sbx_why[256];
};

static uint64_t wrk_task_tokens;

/* What a received event holds besides its code text, with margin: source, chain, profile. */
#define WRK_AUDIT_EVENT_ROOM 4096

static void dead_letter(wrk_task *t, const char *buf, size_t len);

static void audit_add(wrk_task *t, const char *event, json_t *extra)
{
    const char *sha = t->job.code_sha256[0] ? t->job.code_sha256 : NULL;
    json_t *e = wrk_audit_event(event, t->job.id, t->c->worker_id, sha, &t->src);
    if (extra) {
        json_object_update(e, extra);
        json_decref(extra);
    }
    json_array_append_new(t->out.audit, e);
}

/* Ends the job without running it (or after the validator failed): status and reason. */
static void end_early(wrk_task *t, const char *status, const char *event, const char *why)
{
    json_object_set_new(t->r, "status", json_string(status));
    json_object_set_new(t->r, "message", wrk_json_text(why));
    audit_add(t, event, json_pack("{s:s, s:o}", "status", status, "reason", wrk_json_text(why)));
}

/* codeq failed, not the job. The whole text names the host (the work root, cgroup and
 * interpreter paths): it is the audit event's reason and, through it, the worker's log, both
 * the operator's. The result goes to whoever sent the job: there each absolute path is
 * elided, unless the caller is the operator (`codeq run`). */
static void set_internal_message(wrk_task *t, const char *why)
{
    char shown[sizeof ((sbx_result *)0)->message + 64];
    if (!t->c->internal_paths) wrk_elide_paths(why, shown, sizeof shown);
    json_object_set_new(t->r, "message", wrk_json_text(t->c->internal_paths ? why : shown));
}

static void end_internal(wrk_task *t, const char *why)
{
    end_early(t, "internal_error", "finished", why);
    set_internal_message(t, why);
}

/* Validation ends the job when the program has findings or the validator itself failed. A
 * program that passes keeps the code object compiled from the same parse, for the sandbox to
 * run instead of parsing the source again (when its isolation runs code objects at all). */
static bool validate(wrk_task *t)
{
    char err[256] = "";
    val_report rep = {0};
    sbx_job probe = {0};
    probe.prelude = wrk_config_guard(t->c, &probe.prelude_len);
    const char *name = sbx_code_obj_filename(&t->c->sandbox, &probe);
    if (val_init(err, sizeof err) < 0 ||
        val_check_compile(t->c->policy, t->job.code, t->job.code_len, name, &rep, &t->code_obj,
                          err, sizeof err) < 0) {
        end_internal(t, err);
        return false;
    }
    if (rep.count == 0) {
        val_report_free(&rep);
        return true;
    }
    char msg[320];
    snprintf(msg, sizeof msg, "rejected by policy: %zu finding%s, first: %s at line %d",
             rep.count, rep.count == 1 ? "" : "s", rep.items[0].rule, rep.items[0].line);
    json_object_set_new(t->r, "status", json_string("rejected"));
    json_object_set_new(t->r, "findings", wrk_findings_json(&rep, WRK_FINDINGS_MAX));
    json_object_set_new(t->r, "message", wrk_json_text(msg));
    json_t *ev = json_pack("{s:s, s:O}", "status", "rejected", "findings",
                           json_object_get(t->r, "findings"));
    if (rep.count > WRK_FINDINGS_MAX) {
        json_object_set_new(t->r, "findings_total", json_integer((json_int_t)rep.count));
        json_object_set_new(ev, "findings_total", json_integer((json_int_t)rep.count));
    }
    audit_add(t, "rejected", ev);
    val_report_free(&rep);
    return false;
}

static void start_sandbox(wrk_task *t)
{
    char now[32];
    sbx_job sj = {
        .code = t->job.code, .code_len = t->job.code_len,
        .stdin_data = t->job.stdin_data, .stdin_len = t->job.stdin_len,
        .limits = t->job.limits, .job_id = t->job.id,
        .files = t->job.files, .nfiles = t->job.nfiles,
        .code_obj = t->code_obj.data, .code_obj_len = t->code_obj.len,
    };
    sj.prelude = wrk_config_guard(t->c, &sj.prelude_len); /* the validator's policy, at run time */
    wrk_now_iso(now);
    json_object_set_new(t->r, "started_at", json_string(now));
    audit_add(t, "started", json_pack("{s:s}", "isolation",
                                      t->c->sandbox.isolation ? t->c->sandbox.isolation : "exec"));
    t->proc = sbx_start(&t->c->sandbox, &sj);
    val_code_free(&t->code_obj); /* sbx_start handed it on or copied it */
    if (!t->proc) end_internal(t, "codeq: sandbox: out of memory");
}

/* --audit-code full: the code text in the received event, unless with it the event would not
 * fit one record (it would then hold back every commit); code_sha256 is there either way. */
static json_t *audit_code(const wrk_task *t)
{
    if (!t->c->audit_code_full || !t->job.code) return NULL;
    json_t *code = json_stringn(t->job.code, t->job.code_len);
    char *enc = code ? json_dumps(code, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    size_t budget = t->c->result_max_bytes, room = WRK_AUDIT_EVENT_ROOM;
    bool fits = enc && (!budget || (budget > room && strlen(enc) <= budget - room));
    free(enc);
    if (fits) return json_pack("{s:o}", "code", code);
    json_decref(code);
    return json_pack("{s:s}", "code_omitted", "too large for one audit record");
}

static bool decode(wrk_task *t, const char *buf, size_t len)
{
    char received[32];
    wrk_now_iso(received);
    if (wrk_job_decode(buf, len, t->c, &t->job, t->why, sizeof t->why) == 0) {
        t->r = wrk_result_new(t->job.id, "ok", t->c->worker_id, received, t->job.metadata);
        json_object_set_new(t->r, "code_sha256", json_string(t->job.code_sha256));
        if (t->job.reply_to) t->out.reply_to = strdup(t->job.reply_to);
        audit_add(t, "received", audit_code(t));
        return true;
    }
    if (!t->job.id) {
        dead_letter(t, buf, len);
        return false;
    }
    t->r = wrk_result_new(t->job.id, "invalid", t->c->worker_id, received, t->job.metadata);
    json_object_set_new(t->r, "message", wrk_json_text(t->why));
    if (t->job.reply_to) t->out.reply_to = strdup(t->job.reply_to);
    if (t->job.code_sha256[0])
        json_object_set_new(t->r, "code_sha256", json_string(t->job.code_sha256));
    audit_add(t, "received", NULL);
    audit_add(t, "invalid",
              json_pack("{s:s, s:o}", "status", "invalid", "reason", wrk_json_text(t->why)));
    return false;
}

static wrk_task *task_new(const wrk_config *c, const wrk_source *src)
{
    wrk_task *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->c = c;
    t->token = ++wrk_task_tokens;
    t->out.audit = json_array();
    if (src) {
        t->src = *src;
        if (src->topic) {
            snprintf(t->topic, sizeof t->topic, "%s", src->topic);
            t->src.topic = t->topic;
        }
    }
    return t;
}

/* buf NULL: the record's bytes are not known (it could not be decoded): no hash, rather than
 * one of something else. */
static void dead_letter(wrk_task *t, const char *buf, size_t len)
{
    char sha[65] = "";
    if (buf) wrk_sha256_hex(buf, len, sha);
    t->dead = true;
    json_t *e = wrk_audit_event("dead_lettered", NULL, t->c->worker_id, sha, &t->src);
    json_object_set_new(e, "reason", wrk_json_text(t->why));
    json_array_append_new(t->out.audit, e);
}

wrk_task *wrk_task_dead(const wrk_config *c, const char *why, const char *buf, size_t len,
                        const wrk_source *src)
{
    wrk_task *t = task_new(c, src);
    if (!t) return NULL;
    snprintf(t->why, sizeof t->why, "%s", why);
    dead_letter(t, buf, len);
    return t;
}

wrk_task *wrk_task_start(const wrk_config *c, const char *buf, size_t len, const wrk_source *src,
                         const char *refuse)
{
    wrk_task *t = task_new(c, src);
    if (!t) return NULL;
    if (!decode(t, buf, len)) return t;
    if (refuse) {
        end_early(t, "internal_error", "finished", refuse);
        return t;
    }
    if (t->job.deadline_ms && wrk_now_epoch_ms() > t->job.deadline_ms) {
        end_early(t, "expired", "expired", "the job's deadline passed before it could start");
        return t;
    }
    if (validate(t)) start_sandbox(t);
    return t;
}

json_t *wrk_task_abandoned_event(const wrk_task *t, const char *why)
{
    if (!t->job.id || t->dead) return NULL;
    const char *sha = t->job.code_sha256[0] ? t->job.code_sha256 : NULL;
    json_t *e = wrk_audit_event("abandoned", t->job.id, t->c->worker_id, sha, &t->src);
    json_t *at = t->r ? json_object_get(t->r, "started_at") : NULL;
    if (json_is_string(at)) json_object_set(e, "started_at", at);
    json_object_set_new(e, "reason", wrk_json_text(why));
    return e;
}

sbx_proc *wrk_task_proc(const wrk_task *t)
{
    return t->proc;
}

bool wrk_task_done(const wrk_task *t)
{
    return !t->proc || sbx_done(t->proc);
}

void wrk_task_kill(wrk_task *t, const char *why)
{
    if (t->proc && !sbx_done(t->proc)) sbx_kill(t->proc, why);
}

static void collect(wrk_task *t)
{
    sbx_result s;
    sbx_finish(t->proc, &s);
    t->proc = NULL;
    t->sbx_internal = s.status == SBX_INTERNAL;
    t->sbx_unstarted = t->sbx_internal && s.unstarted;
    snprintf(t->sbx_why, sizeof t->sbx_why, "%s", s.message);
    wrk_result_set_run(t->r, &s, &t->job.limits);
    json_t *ev = json_pack("{s:s, s:O, s:O, s:O, s:b}", "status", sbx_status_name(s.status),
                           "exit_code", json_object_get(t->r, "exit_code"), "signal",
                           json_object_get(t->r, "signal"), "usage",
                           json_object_get(t->r, "usage"), "code_obj", s.code_obj_used);
    if (t->sbx_internal) {
        json_object_set_new(ev, "reason", wrk_json_text(s.message));
        set_internal_message(t, s.message);
    }
    audit_add(t, "finished", ev);
    sbx_result_free(&s);
}

bool wrk_task_sandbox_failed(wrk_task *t, bool *unstarted, const char **why)
{
    if (t->proc) collect(t);
    *unstarted = t->sbx_unstarted;
    *why = t->sbx_why;
    return t->sbx_internal;
}

const char *wrk_task_job_id(const wrk_task *t)
{
    return t->job.id;
}

/* Every terminal audit event (finished, rejected, invalid, expired) gives way to the one that
 * says what really happened, so the trail ends once, with the status the job was answered.
 * Every one: a job whose result did not fit had two, and the one kept was refused forever. */
static void drop_terminal_events(json_t *audit)
{
    size_t i = json_array_size(audit);
    while (i-- > 0) {
        const char *ev = json_string_value(json_object_get(json_array_get(audit, i), "event"));
        if (ev && strcmp(ev, "received") && strcmp(ev, "started")) json_array_remove(audit, i);
    }
}

/* The result and every audit event held to the record budget (wrk_fit.c). */
static void fit_records(wrk_task *t)
{
    size_t i;
    json_t *ev;
    if (wrk_result_fit(t->r, t->c->result_max_bytes) < 0) {
        drop_terminal_events(t->out.audit);
        audit_add(t, "finished", json_pack("{s:s, s:s}", "status", "internal_error", "reason",
                                           json_string_value(json_object_get(t->r, "message"))));
    }
    json_array_foreach(t->out.audit, i, ev) wrk_event_fit(ev, t->c->result_max_bytes);
}

wrk_outcome *wrk_task_finish(wrk_task *t)
{
    if (t->proc) collect(t);
    if (t->r && !t->out.result) {
        fit_records(t);
        t->out.result = t->r;
        t->out.status = json_string_value(json_object_get(t->r, "status"));
        t->r = NULL;
    }
    return &t->out;
}

uint64_t wrk_task_token(const wrk_task *t)
{
    return t->token;
}

const char *wrk_task_name(const wrk_task *t, char *buf, size_t n)
{
    if (t->dead)
        snprintf(buf, n, "the dead letter of %s [%d] at %lld", t->src.topic ? t->src.topic : "-",
                 t->src.partition, t->src.offset);
    else
        snprintf(buf, n, "job %s", t->job.id ? t->job.id : "-");
    return buf;
}

/* The job's code (--audit-code full) left out of its audit events; false if none had it. */
static bool omit_code(json_t *audit)
{
    size_t i;
    json_t *ev;
    bool cut = false;
    json_array_foreach(audit, i, ev) {
        if (!json_object_get(ev, "code")) continue;
        json_object_del(ev, "code");
        json_object_set_new(ev, "code_omitted", json_string("its record was refused with it"));
        cut = true;
    }
    return cut;
}

/* The answer that can always be published: a short internal_error on the results topic. */
static void answer_internal_error(wrk_task *t, wrk_outcome *o, const char *why)
{
    const json_t *old = o->result;
    char msg[600];
    snprintf(msg, sizeof msg, "codeq: worker: the %s result could not be published%s%s: %s",
             json_string_value(json_object_get(old, "status")), o->reply_to ? " to " : "",
             o->reply_to ? o->reply_to : "", why);
    json_t *r = wrk_result_new(json_string_value(json_object_get(old, "id")), "internal_error",
                               t->c->worker_id,
                               json_string_value(json_object_get(old, "received_at")), NULL);
    json_object_set_new(r, "message", wrk_json_text(msg));
    json_object_set(r, "code_sha256", json_object_get(old, "code_sha256"));
    json_object_set(r, "started_at", json_object_get(old, "started_at"));
    json_decref(o->result);
    o->result = r;
    o->status = "internal_error";
    free(o->reply_to); /* the small answer goes where codeq's results always can */
    o->reply_to = NULL;
    drop_terminal_events(o->audit);
    audit_add(t, "finished",
              json_pack("{s:s, s:o}", "status", "internal_error", "reason", wrk_json_text(msg)));
}

/* Its dead_lettered event becomes dead_letter_refused: nothing went to the dead-letter topic,
 * and the record is still where the event's source says. */
static void give_up_dead_letter(wrk_task *t, const char *why)
{
    char reason[1200];
    size_t i;
    json_t *ev;
    snprintf(reason, sizeof reason, "%s; not dead-lettered: even a minimal dead letter was "
             "refused (%s); the record stays on %s [%d] at offset %lld", t->why, why,
             t->src.topic ? t->src.topic : "-", t->src.partition, t->src.offset);
    json_array_foreach(t->out.audit, i, ev) {
        if (strcmp(json_string_value(json_object_get(ev, "event")), "dead_lettered")) continue;
        json_object_set_new(ev, "event", json_string("dead_letter_refused"));
        json_object_set_new(ev, "reason", wrk_json_text(reason));
    }
}

/* A dead letter refused as too large was cut to the budget read at start (the topic's limit
 * was lowered since): the next is cut to what any topic takes. Refused otherwise (a compacted
 * topic and a record without a key, say) or again: one that holds none of the record. Refused
 * even so: given up, rather than holding every commit of the worker's partitions. */
static const char *dead_refused(wrk_task *t, wrk_outcome *o, const char *why, bool too_large)
{
    if (o->dead_level == WRK_DEAD_FULL && too_large) {
        o->dead_level = WRK_DEAD_SMALL;
        return "cutting it to what any topic takes";
    }
    if (o->dead_level < WRK_DEAD_MINIMAL) {
        o->dead_level = WRK_DEAD_MINIMAL;
        snprintf(o->dead_refused, sizeof o->dead_refused, "%s", why);
        return "sending a minimal dead letter instead";
    }
    if (o->dead_level == WRK_DEAD_GIVEN_UP) return NULL;
    o->dead_level = WRK_DEAD_GIVEN_UP;
    give_up_dead_letter(t, why);
    return "giving it up: the record stays on its topic, said in its audit event";
}

const char *wrk_task_unpublishable(wrk_task *t, const char *why, bool too_large)
{
    wrk_outcome *o = wrk_task_finish(t);
    if (t->dead) return dead_refused(t, o, why, too_large);
    if (!o->result) return NULL;
    if (t->unpublishable) /* the answer was already the short one */
        return omit_code(o->audit) ? "producing its audit events without the code" : NULL;
    t->unpublishable = true;
    answer_internal_error(t, o, why);
    return "answering internal_error";
}

bool wrk_task_dead_letter(const wrk_task *t, const char **why)
{
    *why = t->why;
    return t->dead;
}

void wrk_task_free(wrk_task *t)
{
    if (!t) return;
    if (t->proc) {
        sbx_result s;
        sbx_kill(t->proc, "codeq: worker: job abandoned");
        sbx_finish(t->proc, &s);
        sbx_result_free(&s);
    }
    json_decref(t->r);
    val_code_free(&t->code_obj);
    wrk_outcome_free(&t->out);
    wrk_job_free(&t->job);
    free(t);
}

void wrk_execute(const wrk_config *c, const char *buf, size_t len, const wrk_source *src,
                 wrk_outcome *out, bool *dead_letter, char *why, size_t whylen)
{
    const char *reason;
    memset(out, 0, sizeof *out);
    wrk_task *t = wrk_task_start(c, buf, len, src, NULL);
    if (!t) {
        *dead_letter = false;
        out->audit = json_array();
        out->result = wrk_result_new("unknown", "internal_error", c->worker_id, "", NULL);
        return;
    }
    while (!wrk_task_done(t)) {
        struct pollfd fds[8];
        int n = sbx_pollfds(t->proc, fds, 8);
        poll(fds, (nfds_t)n, sbx_timeout_ms(t->proc));
        sbx_service(t->proc);
    }
    *out = *wrk_task_finish(t);
    memset(&t->out, 0, sizeof t->out); /* moved to the caller */
    *dead_letter = wrk_task_dead_letter(t, &reason);
    snprintf(why, whylen, "%s", reason);
    wrk_task_free(t);
}

void wrk_outcome_free(wrk_outcome *o)
{
    json_decref(o->result);
    json_decref(o->audit);
    free(o->reply_to);
    memset(o, 0, sizeof *o);
}
