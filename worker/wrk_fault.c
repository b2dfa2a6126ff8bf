/* Fault: a job's own failure, or the worker's machinery's.
 * A job whose sandbox ended internal_error is answered only if a trivial job (the sandbox
 * self-check, sbx_selfcheck) still runs here. If it does not, the host is at fault (a full
 * work root, cgroups gone, a broken zygote binary): the job goes back to wait, no job starts,
 * /healthz says why, and the self-check is tried again with backoff (1 s doubling to 10 s).
 * When it passes, jobs run again and are answered as usual; when the host stays broken for
 * --host-fault-ms, the worker stops (exit 4) so that the group hands its partitions, with
 * the jobs they hold, to workers that can run them.
 * A job that never started (sbx_result.unstarted) while the host passes the self-check met a
 * passing fault of the machinery (a zygote that was stopped): it runs again, at most
 * RERUNS_MAX times, before it is answered. */
#include <stdio.h>

#include "wrk_worker.h"

#define RERUNS_MAX 2
#define BACKOFF_FIRST_MS 1000u
#define BACKOFF_MAX_MS 10000u

/* The job waits again for a slot; this start was ours to lose, not the job's. */
static void put_back(wrk_worker *w, wrk_entry *e)
{
    wrk_task_free(e->task);
    e->task = NULL;
    e->state = WRK_E_PENDING;
    e->attempts--;
    w->running--;
    w->fault.requeued++;
}

static void enter(wrk_worker *w, const char *job_id, const char *job_why, const char *probe)
{
    uint64_t now = wrk_now_ms();
    w->fault.active = true;
    w->fault.since = now;
    w->fault.backoff_ms = BACKOFF_FIRST_MS;
    w->fault.next_probe = now + BACKOFF_FIRST_MS;
    snprintf(w->fault.why, sizeof w->fault.why, "%s", probe);
    wrk_logx(WRK_LOG_ERROR, "host_fault", NULL,
             "worker %s: the sandbox cannot run a trivial job on this host: %s; job %s (%s) "
             "waits, and no job starts until the self-check passes (for at most %d ms)",
             w->c->worker_id, probe, job_id ? job_id : "?", job_why, w->c->host_fault_ms);
}

bool wrk_fault_rerun(wrk_worker *w, wrk_entry *e)
{
    bool unstarted;
    const char *why, *id = wrk_task_job_id(e->task);
    if (!wrk_task_sandbox_failed(e->task, &unstarted, &why)) return false;
    if (!w->fault.active) {
        char probe[256];
        if (sbx_selfcheck(&w->c->sandbox, NULL, probe, sizeof probe) < 0) {
            enter(w, id, why, probe);
        } else if (!unstarted || e->reruns >= RERUNS_MAX) {
            return false; /* the host runs jobs: this failure is the job's own */
        } else {
            e->reruns++;
            wrk_logx(WRK_LOG_WARN, "job_rerun", NULL,
                     "worker %s: job %s: the sandbox failed before it started (%s) and the "
                     "self-check passes: it runs again (%d of %d)",
                     w->c->worker_id, id ? id : "?", why, e->reruns, RERUNS_MAX);
        }
    }
    put_back(w, e);
    return true;
}

bool wrk_fault_holding(const wrk_worker *w)
{
    return w->fault.active;
}

void wrk_fault_tick(wrk_worker *w)
{
    wrk_fault *f = &w->fault;
    uint64_t now = wrk_now_ms();
    if (!f->active || now < f->next_probe) return;
    char probe[256];
    if (sbx_selfcheck(&w->c->sandbox, NULL, probe, sizeof probe) == 0) {
        f->active = false;
        wrk_logx(WRK_LOG_INFO, "host_recovered", NULL,
                 "worker %s: the sandbox runs jobs again after %llu ms; the waiting jobs start",
                 w->c->worker_id, (unsigned long long)(now - f->since));
        return;
    }
    snprintf(f->why, sizeof f->why, "%s", probe);
    if (now - f->since >= (uint64_t)w->c->host_fault_ms) {
        w->gave_up = true;
        wrk_logx(WRK_LOG_ERROR, "host_fault_gave_up", NULL,
                 "worker %s: the sandbox still cannot run a trivial job after %llu ms (%s): "
                 "stopping (exit 4) so that the group gives this worker's partitions to others",
                 w->c->worker_id, (unsigned long long)(now - f->since), probe);
        return;
    }
    f->backoff_ms = f->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : f->backoff_ms * 2;
    f->next_probe = now + f->backoff_ms;
    wrk_logx(WRK_LOG_WARN, "host_fault", NULL,
             "worker %s: self-check still fails (%s); next try in %u ms", w->c->worker_id, probe,
             f->backoff_ms);
}
