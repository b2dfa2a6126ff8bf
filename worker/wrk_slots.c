/* Slots: up to `slots` jobs run at once, drawn from every assigned partition in turn.
 * A job starts at once when it lies below its partition's committed lease (wrk_offsets.h):
 * no transaction on its way in. Its start is recorded by the next commit that runs while it
 * does. A careful job (one a dead owner may have started, or one started before without
 * finishing) is first CLAIMED: its attempt count goes into the next commit, and it starts only
 * once that commit succeeded. So a job that crashes its worker again and again is on record,
 * and after max_attempts starts it is answered `internal_error` instead of being run again
 * (a poison pill cannot crash-loop the group). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_metrics.h"
#include "wrk_worker.h"

#define POLL_MAX 256

void wrk_entry_release(wrk_entry *e)
{
    if (e->task) wrk_task_free(e->task);
    if (e->msg && e->view) wrk_lost_view_free(e->msg);
    else if (e->msg) rd_kafka_message_destroy(e->msg);
    e->task = NULL;
    e->msg = NULL;
    e->view = false;
}

size_t wrk_slots_count(const wrk_worker *w, wrk_estate s, const wrk_part *only)
{
    size_t n = 0;
    for (size_t i = 0; i < w->nparts; i++)
        if (!only || w->parts[i] == only) n += wrk_part_count(w->parts[i], s);
    return n;
}

/* Oldest entry of p waiting for a slot, or NULL. */
static wrk_entry *first_pending(wrk_part *p)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->e[i].state == WRK_E_PENDING) return &p->e[i];
    return NULL;
}

static void start_one(wrk_worker *w, wrk_part *p, wrk_entry *e)
{
    char refuse[200];
    const char *why = NULL;
    wrk_source src = {p->topic, (int)p->partition, (long long)e->offset};
    if (e->attempts > w->c->max_attempts) {
        snprintf(refuse, sizeof refuse,
                 "codeq: worker: job started %d times without finishing (its worker died each "
                 "time); not run again",
                 e->attempts - 1);
        why = refuse;
    }
    const char *buf = e->msg->payload ? e->msg->payload : "";
    char dead[400] = "";
    if (e->msg->err == RD_KAFKA_RESP_ERR__BAD_COMPRESSION && w->record_max)
        /* librdkafka says "Invalid compressed data" also of a batch that merely expands past
         * its bound; the sender needs both causes, and to know the batch went whole. */
        snprintf(dead, sizeof dead, "codeq: worker: the record could not be consumed: %s (its "
                 "record batch is corrupt or expands beyond receive.message.max.bytes, %zu "
                 "bytes: each of its records is dead-lettered, without key or value)",
                 rd_kafka_message_errstr(e->msg), w->record_max);
    else if (e->msg->err)
        snprintf(dead, sizeof dead, "codeq: worker: the record could not be consumed: %s",
                 rd_kafka_message_errstr(e->msg));
    else if (w->record_max && e->msg->len > w->record_max)
        /* librdkafka 2.0 bounds only zstd's expansion by receive.message.max.bytes; a gzip,
         * lz4 or snappy record past it arrives whole. Refused as a zstd one is, unparsed. */
        snprintf(dead, sizeof dead, "codeq: worker: the record expands to %zu bytes, beyond "
                 "receive.message.max.bytes (%zu)", e->msg->len, w->record_max);
    /* librdkafka's error text is the payload of a record it could not decode, not the record */
    e->task = dead[0] ? wrk_task_dead(w->c, dead, e->msg->err ? NULL : buf, e->msg->len, &src)
                      : wrk_task_start(w->c, buf, e->msg->len, &src, why);
    if (!e->task) {
        wrk_worker_fatal(w, "codeq: worker: out of memory starting a job");
        return;
    }
    e->state = WRK_E_RUNNING;
    w->running++;
}

/* Claimed jobs whose claim is now committed start first: they hold a slot already. */
static void start_claimed(wrk_worker *w)
{
    for (size_t i = 0; i < w->nparts && !w->fatal; i++) {
        wrk_part *p = w->parts[i];
        for (size_t j = 0; j < p->n && !w->fatal; j++)
            if (p->e[j].state == WRK_E_CLAIMED && p->e[j].claim_ok) start_one(w, p, &p->e[j]);
    }
}

/* A claim comes before the job is decoded (by its task): its id is read here, for the log
 * line that names it; "" if the record has none (it will be answered invalid or dead-lettered).
 * Reruns are rare, so the extra parse is too. */
static void claimed_id(const wrk_worker *w, const wrk_entry *e, char *out, size_t n,
                       char sha[65])
{
    wrk_job job;
    char why[256];
    out[0] = sha[0] = '\0';
    if (e->msg->err || !e->msg->payload || (w->record_max && e->msg->len > w->record_max)) return;
    wrk_job_decode(e->msg->payload, e->msg->len, w->c, &job, why, sizeof why);
    if (job.id) snprintf(out, n, "%s", job.id);
    memcpy(sha, job.code_sha256, 65);
    wrk_job_free(&job);
}

/* The audit trail's record of starts that answered nothing (the worker died in them, or let
 * them go): counted in the partition's commits, said when a worker claims the job again, in
 * the commit of its claim (a claim given back before the start adds an abandoned event). */
/* An audit event of a claimed entry (no task yet: id and sha read from its record). */
static json_t *claim_event(const wrk_worker *w, const wrk_part *p, const wrk_entry *e,
                           const char *event, const char *id, const char *sha, const char *why)
{
    wrk_source src = {p->topic, (int)p->partition, (long long)e->offset};
    json_t *ev = wrk_audit_event(event, id, w->c->worker_id, sha[0] ? sha : NULL, &src);
    json_object_set_new(ev, "reason", json_string(why));
    return ev;
}

static void audit_rerun(wrk_worker *w, const wrk_part *p, const wrk_entry *e, const char *id,
                        const char *sha)
{
    json_t *ev = claim_event(w, p, e, "rerun", id, sha,
        e->attempts > w->c->max_attempts
            ? "started before without finishing, as many times as --max-attempts allows: "
              "claimed to be answered internal_error, not run again"
            : "started before without finishing (its worker died or let it go): claimed to "
              "run again");
    json_object_set_new(ev, "starts_before", json_integer(e->attempts - 1));
    wrk_commit_later(w, ev);
}

void wrk_slots_unclaim(wrk_worker *w, const wrk_part *p, wrk_entry *e)
{
    char id[1100] = "", sha[65] = "";
    if (e->suspect) claimed_id(w, e, id, sizeof id, sha);
    if (id[0]) /* the claim said rerun (say_rerun): the trail says it did not happen here */
        wrk_commit_later(w, claim_event(w, p, e, "abandoned", id, sha,
                                        "claimed, then given back before it started as its "
                                        "partition went (a stop, a revoke or the partition "
                                        "lost): it runs at the partition's next owner"));
    e->attempts--; /* not started here: this claim is no start */
    e->claim_ok = e->claim_sent = false;
}

/* A job that runs again where it may have run before, and one stopped here to run again at
 * the partition's next owner: said, as an operator reading the logs after a crash expects. */
static void say_rerun(wrk_worker *w, const wrk_part *p, const wrk_entry *e, bool stopped)
{
    char claimed[1100], sha[65] = "";
    const char *id = e->task ? wrk_task_job_id(e->task) : NULL;
    if (!id) {
        claimed_id(w, e, claimed, sizeof claimed, sha);
        id = claimed[0] ? claimed : NULL;
    }
    if (!stopped && e->suspect && id) audit_rerun(w, p, e, id, sha);
    wrk_log_ctx ctx = {id, p->topic, p->partition, e->offset};
    char what[1500];
    snprintf(what, sizeof what, "worker %s: the job%s%s%s at %s [%d] offset %lld",
             w->c->worker_id, id ? " '" : "", id ? id : "", id ? "'" : "", p->topic,
             (int)p->partition, (long long)e->offset);
    if (stopped)
        wrk_logx(WRK_LOG_WARN, "job_abandoned", &ctx, "%s was stopped unfinished as the "
                 "partition goes: it runs again at its next owner", what);
    else if (e->suspect && e->attempts > w->c->max_attempts)
        wrk_logx(WRK_LOG_WARN, "job_rerun", &ctx, "%s was started %d times before without "
                 "finishing: it is not run again, but answered internal_error", what,
                 e->attempts - 1);
    else if (e->suspect)
        wrk_logx(WRK_LOG_WARN, "job_rerun", &ctx, "%s was started %d time%s before without "
                 "finishing (its worker died or let it go): it runs again once this start is "
                 "committed (start %d of at most %d)", what, e->attempts - 1,
                 e->attempts == 2 ? "" : "s", e->attempts, w->c->max_attempts);
    else /* in the read-ahead of an owner that did not finish: started there or not */
        wrk_logx(WRK_LOG_INFO, "job_rerun", &ctx, "%s was unfinished at the partition's "
                 "previous owner and may have run there: it runs again once its start is "
                 "committed", what);
}

/* Gives p's oldest pending job the free slot; false if it cannot have it now. */
static bool fill_one(wrk_worker *w, wrk_part *p)
{
    wrk_entry *e = first_pending(p);
    if (!e || p->handoff) return false;
    switch (wrk_part_start_rule(p, e)) {
    case WRK_START_NOW:
        e->attempts++;
        p->dirty = true; /* the next commit records the start */
        start_one(w, p, e);
        return true;
    case WRK_START_CLAIM:
        e->state = WRK_E_CLAIMED;
        e->attempts++;
        p->dirty = true;
        say_rerun(w, p, e, false);
        return true;
    case WRK_START_WAIT:
        p->want_lease = true;
        return false;
    }
    return false;
}

void wrk_slots_fill(wrk_worker *w)
{
    /* a stop asked for (a signal, or giving up on the host: both start a grace period)
     * starts nothing more, wherever the loop is: a revoke's drain it interrupted returns to
     * the loop's turn */
    if (wrk_fault_holding(w) || wrk_stop_grace_end()) return;
    start_claimed(w);
    int busy = w->running + (int)wrk_slots_count(w, WRK_E_CLAIMED, NULL);
    bool progress = true;
    while (busy < w->c->slots && progress && w->nparts && !w->fatal) {
        progress = false;
        for (size_t k = 0; k < w->nparts && busy < w->c->slots; k++)
            if (fill_one(w, w->parts[(w->rr + k) % w->nparts])) {
                busy++;
                progress = true;
            }
        w->rr++;
    }
}

/* Why the job ended so, as its last audit event says: the operator's whole text. */
static const char *last_reason(const wrk_outcome *o)
{
    size_t n = json_array_size(o->audit);
    return n ? json_string_value(json_object_get(json_array_get(o->audit, n - 1), "reason"))
             : NULL;
}

static void finish(wrk_worker *w, wrk_part *p, wrk_entry *e)
{
    const char *why;
    if (wrk_fault_rerun(w, e)) return;
    wrk_outcome *o = wrk_task_finish(e->task);
    const char *reason = o->status && !strcmp(o->status, "internal_error") ? last_reason(o) : NULL;
    wrk_log_ctx ctx = {json_string_value(json_object_get(o->result, "id")), p->topic,
                       p->partition, e->offset};
    if (wrk_task_dead_letter(e->task, &why))
        wrk_logx(WRK_LOG_WARN, "dead_lettered", &ctx,
                 "worker: %s [%d] offset %lld dead-lettered: %s", p->topic, (int)p->partition,
                 (long long)e->offset, why);
    else if (reason)
        wrk_logx(WRK_LOG_WARN, "job_finished", &ctx, "worker: job %s: %s: %s", ctx.job_id,
                 o->status, reason);
    else
        wrk_logx(WRK_LOG_INFO, "job_finished", &ctx, "worker: job %s: %s", ctx.job_id, o->status);
    e->state = WRK_E_DONE;
    p->dirty = true;
    w->running--;
}

void wrk_slots_service(wrk_worker *w, int timeout_ms)
{
    struct pollfd fds[POLL_MAX];
    int n = 0, wait = timeout_ms;
    for (size_t i = 0; i < w->nparts; i++)
        for (size_t j = 0; j < w->parts[i]->n; j++) {
            wrk_entry *e = &w->parts[i]->e[j];
            if (e->state != WRK_E_RUNNING) continue;
            sbx_proc *sp = wrk_task_proc(e->task);
            if (!sp || wrk_task_done(e->task)) {
                wait = 0; /* finished without running (rejected, invalid, ...) */
                continue;
            }
            n += sbx_pollfds(sp, fds + n, POLL_MAX - n > 8 ? 8 : 0);
            int t = sbx_timeout_ms(sp);
            if (t < wait) wait = t;
        }
    if (n > 0 || wait > 0) poll(fds, (nfds_t)n, wait);
    for (size_t i = 0; i < w->nparts; i++)
        for (size_t j = 0; j < w->parts[i]->n; j++) {
            wrk_entry *e = &w->parts[i]->e[j];
            if (e->state != WRK_E_RUNNING) continue;
            sbx_proc *sp = wrk_task_proc(e->task);
            if (sp) sbx_service(sp);
            if (wrk_task_done(e->task)) finish(w, w->parts[i], e);
        }
}

void wrk_slots_abandon(wrk_worker *w, wrk_part *p)
{
    for (size_t j = 0; j < p->n; j++) {
        wrk_entry *e = &p->e[j];
        if (e->state == WRK_E_RUNNING) {
            w->running--;
            say_rerun(w, p, e, true);
            wrk_commit_later(w, wrk_task_abandoned_event(
                e->task, "stopped unfinished by its worker as its partition went (a stop's "
                "grace or a revoke's drain ran out, or the partition lost): it runs again at "
                "the partition's next owner"));
            /* stopped by us, not by the job: this start does not count against it */
            e->attempts--;
            e->claim_ok = e->claim_sent = false;
        } else if (e->state == WRK_E_CLAIMED) {
            wrk_slots_unclaim(w, p, e);
        }
        if (e->state == WRK_E_RUNNING || e->state == WRK_E_CLAIMED) {
            wrk_entry_release(e);
            e->state = WRK_E_KNOWN;
        } else if (e->state == WRK_E_PENDING) {
            wrk_entry_release(e);
            e->state = WRK_E_KNOWN;
        }
    }
}
