/* Metrics and health (wrk_metrics.h). One mutex guards one struct: the loop takes it for a
 * few counter updates per job and once per turn, the HTTP thread while it renders a scrape;
 * neither holds it long, and a plain struct is easier to read than a field-by-field set of
 * atomics. Only the loop-turn time is an atomic, so /healthz never waits on the loop.
 *
 * Durations come from the result's own timestamps (received_at, started_at, finished_at, ms):
 *   job duration      finished_at - received_at (validation, sandbox and collection)
 *   sandbox overhead  finished_at - started_at - usage.wall_ms: what isolation costs around
 *                     the program's own wall time (cgroup, namespaces, zygote fork, artifacts)
 *   queue wait        started_at (received_at if it never ran) - the record's Kafka timestamp
 * Consumer lag is the partition's high watermark as last fetched (librdkafka's cache, no
 * broker call) less the offset this worker committed; transaction markers count as one each. */
#include <float.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wrk_metrics.h"

enum { LC_MAX = 64, LAG_MAX = 256, LAG_EVERY_MS = 1000, STALL_HOOK_MAX = 1200 };

typedef struct {
    char *label[LC_MAX];
    uint64_t n[LC_MAX];
    size_t used;
} lcounter;

typedef struct {
    const char *name, *help;
    const double *le;
    size_t nle;
    uint64_t bucket[16]; /* per bucket, not cumulative; [nle] is +Inf */
    double sum;
    uint64_t count;
} histo;

static const double dur_le[] = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
static const double ovh_le[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5};
static const double wait_le[] = {0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800};

typedef struct {
    char topic[128];
    int32_t partition;
    int64_t lag;
} lag_entry;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    lcounter jobs, findings, rebalances;
    histo duration, overhead, wait;
    uint64_t dead_letters, dead_given_up, truncated, commits, aborts, jobs_committed;
    uint64_t seen_commits, seen_aborts, abort_streak;
    int running, slots, partitions;
    bool assigned_once, leaving, fatal, host_fault;
    char host_why[256];
    char start_why[400]; /* what the start is doing (wrk_metrics_starting) */
    /* what an idle member's watch (wrk_idle.c) last found of the jobs topic: its partitions,
     * 0 none (it does not exist), -1 the cluster could not be asked (idle_err); 1 not idle */
    int idle_topic;
    char idle_err[128], jobs_topic[256];
    lag_entry lag[LAG_MAX];
    size_t nlag;
    uint64_t next_lag_ms;
    int stall_ms, max_aborts, commit_ms;
    uint64_t commit_sent; /* the worker's commit_sent: monotonic ms, 0 none in flight */
} m = {
    .duration = {"codeq_job_duration_seconds", "Time from receiving a job to its result "
                 "(validation, sandbox, collection).", dur_le, sizeof dur_le / sizeof dur_le[0]},
    .overhead = {"codeq_job_sandbox_overhead_seconds", "Sandbox time around the program's own "
                 "wall time (finished - started - usage.wall_ms).", ovh_le,
                 sizeof ovh_le / sizeof ovh_le[0]},
    .wait = {"codeq_job_queue_wait_seconds", "Time from the record's Kafka timestamp to the "
             "job's start.", wait_le, sizeof wait_le / sizeof wait_le[0]},
    .stall_ms = 30000,
    .max_aborts = 5,
    .commit_ms = 120000,
    .idle_topic = 1,
};
static _Atomic uint64_t last_turn_ms; /* monotonic; 0 until the loop first turns */

/* Label sets are small (statuses, policy rules); past LC_MAX the rest count as "other". */
static void lc_add(lcounter *c, const char *label, uint64_t by)
{
    size_t i;
    for (i = 0; i < c->used; i++)
        if (strcmp(c->label[i], label) == 0) break;
    if (i == c->used) {
        char *copy = c->used < LC_MAX - 1 ? strdup(label) : NULL;
        if (!copy) {
            label = "other";
            for (i = 0; i < c->used && strcmp(c->label[i], label) != 0; i++) {}
            if (i == c->used && !(copy = strdup(label))) return;
        }
        if (copy) c->label[c->used++] = copy;
    }
    c->n[i] += by;
}

void wrk_metrics_init(const wrk_config *c)
{
    pthread_mutex_lock(&mu);
    if (c->health_stall_ms > 0) m.stall_ms = c->health_stall_ms;
    if (c->health_max_aborts > 0) m.max_aborts = c->health_max_aborts;
    if (c->health_commit_ms > 0) m.commit_ms = c->health_commit_ms;
    m.slots = c->slots;
    /* every status at 0 from the start: a rate() or an alert on one that has not happened yet
     * sees a series, not nothing */
    for (sbx_status s = SBX_OK; s <= SBX_SECCOMP; s++) lc_add(&m.jobs, sbx_status_name(s), 0);
    static const char *const worker_statuses[] = {"rejected", "invalid", "expired",
                                                  "dead_letter"};
    for (size_t i = 0; i < sizeof worker_statuses / sizeof worker_statuses[0]; i++)
        lc_add(&m.jobs, worker_statuses[i], 0);
    /* as the statuses: an alert on the first lost assignment (docs/operations.md) needs the
     * series at 0 before it */
    lc_add(&m.rebalances, "assign", 0);
    lc_add(&m.rebalances, "revoke", 0);
    lc_add(&m.rebalances, "lost", 0);
    m.idle_topic = 1;
    snprintf(m.jobs_topic, sizeof m.jobs_topic, "%s", c->kafka.jobs_topic);
    pthread_mutex_unlock(&mu);
}

void wrk_metrics_starting(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&mu);
    vsnprintf(m.start_why, sizeof m.start_why, fmt, ap);
    pthread_mutex_unlock(&mu);
    va_end(ap);
}

static void histo_add(histo *h, double v)
{
    size_t i = 0;
    while (i < h->nle && v > h->le[i]) i++;
    h->bucket[i]++;
    h->sum += v;
    h->count++;
}

static int64_t result_ms(const json_t *r, const char *key)
{
    const char *s = json_string_value(json_object_get(r, key));
    int64_t ms;
    return s && wrk_parse_time_ms(s, &ms) ? ms : -1;
}

static bool result_truncated(const json_t *r)
{
    return json_is_true(json_object_get(r, "stdout_truncated")) ||
           json_is_true(json_object_get(r, "stderr_truncated")) ||
           json_is_true(json_object_get(r, "artifacts_truncated"));
}

static void job_times(const json_t *r, int64_t record_ts_ms)
{
    int64_t rcv = result_ms(r, "received_at"), start = result_ms(r, "started_at"),
            end = result_ms(r, "finished_at");
    json_t *wall = json_object_get(json_object_get(r, "usage"), "wall_ms");
    if (rcv >= 0 && end >= rcv) histo_add(&m.duration, (double)(end - rcv) / 1000);
    if (start >= 0 && end >= start && json_is_integer(wall)) {
        int64_t o = end - start - (int64_t)json_integer_value(wall);
        histo_add(&m.overhead, (double)(o > 0 ? o : 0) / 1000);
    }
    int64_t began = start >= 0 ? start : rcv;
    if (record_ts_ms > 0 && began >= record_ts_ms)
        histo_add(&m.wait, (double)(began - record_ts_ms) / 1000);
}

void wrk_metrics_job(const wrk_outcome *o, bool dead_letter, int64_t record_ts_ms)
{
    const json_t *r = o ? o->result : NULL;
    pthread_mutex_lock(&mu);
    if (dead_letter) m.dead_letters++;
    if (r) {
        const char *status = json_string_value(json_object_get(r, "status"));
        lc_add(&m.jobs, status ? status : "unknown", 1);
        size_t i;
        json_t *f;
        json_array_foreach(json_object_get(r, "findings"), i, f) {
            const char *rule = json_string_value(json_object_get(f, "rule"));
            lc_add(&m.findings, rule ? rule : "unknown", 1);
        }
        if (result_truncated(r)) m.truncated++;
        job_times(r, record_ts_ms);
    } else if (dead_letter) {
        lc_add(&m.jobs, "dead_letter", 1);
    }
    pthread_mutex_unlock(&mu);
}

void wrk_metrics_rebalance(bool assign, bool lost)
{
    pthread_mutex_lock(&mu);
    lc_add(&m.rebalances, assign ? "assign" : lost ? "lost" : "revoke", 1);
    pthread_mutex_unlock(&mu);
}

/* Test hook, documented in docs/operations.md: never set in production. */
static void test_stall(void)
{
    static const char *path;
    static bool read;
    if (!read) {
        path = getenv("CODEQ_TEST_STALL_FILE");
        read = true;
    }
    for (int i = 0; path && i < STALL_HOOK_MAX && access(path, F_OK) == 0; i++) usleep(100000);
}

static void refresh_lag(const wrk_worker *w)
{
    m.nlag = 0;
    for (size_t i = 0; i < w->nparts && m.nlag < LAG_MAX; i++) {
        const wrk_part *p = w->parts[i];
        int64_t lo, hi;
        if (rd_kafka_get_watermark_offsets(w->k, p->topic, p->partition, &lo, &hi) ||
            hi < 0)
            continue;
        lag_entry *e = &m.lag[m.nlag++];
        snprintf(e->topic, sizeof e->topic, "%s", p->topic);
        e->partition = p->partition;
        int64_t done = p->watermark >= 0 ? p->watermark : lo;
        e->lag = hi > done ? hi - done : 0;
    }
}

void wrk_metrics_turn(const wrk_worker *w)
{
    test_stall();
    uint64_t now = wrk_now_ms();
    atomic_store(&last_turn_ms, now);
    pthread_mutex_lock(&mu);
    if (w->commits != m.seen_commits) m.abort_streak = 0;
    else m.abort_streak += w->aborts - m.seen_aborts;
    m.seen_commits = m.commits = w->commits;
    m.seen_aborts = m.aborts = w->aborts;
    m.jobs_committed = w->jobs_done;
    m.dead_given_up = w->dead_given_up;
    m.commit_sent = w->commit_sent;
    m.running = w->running;
    m.slots = w->c->slots;
    m.partitions = (int)w->nparts;
    m.assigned_once = w->assigned_once;
    m.leaving = w->leaving;
    m.fatal = w->fatal;
    m.host_fault = w->fault.active;
    if (m.host_fault) snprintf(m.host_why, sizeof m.host_why, "%s", w->fault.why);
    m.idle_topic = w->nparts || !w->idle.since ? 1 : w->idle.partitions;
    if (m.idle_topic < 0)
        snprintf(m.idle_err, sizeof m.idle_err, "%s", rd_kafka_err2str(w->idle.topic_err));
    if (now >= m.next_lag_ms) {
        m.next_lag_ms = now + LAG_EVERY_MS;
        refresh_lag(w);
    }
    pthread_mutex_unlock(&mu);
}

/* Label values may hold any byte a policy rule or topic name holds: escaped per the format. */
static void put_label(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') fputc('\\', f);
        if (*v == '\n') fputs("\\n", f);
        else fputc(*v, f);
    }
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The shortest decimal that reads back as v, as Prometheus' own clients write values
 * (%.17g wrote 0.005 as 0.0050000000000000001). */
static const char *shortest(char buf[32], double v)
{
    if (v != v) return "NaN";
    if (v > DBL_MAX || v < -DBL_MAX) return v > 0 ? "+Inf" : "-Inf";
    if (v == (double)(long long)v && v < 1e15 && v > -1e15) { /* a count: no exponent */
        snprintf(buf, 32, "%lld", (long long)v);
        return buf;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(buf, 32, "%.*g", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}

static void put_scalar(FILE *f, const char *name, const char *type, const char *help,
                       double v)
{
    char b[32];
    head(f, name, type, help);
    fprintf(f, "%s %s\n", name, shortest(b, v));
}

static void put_lcounter(FILE *f, const char *name, const char *label, const char *help,
                         const lcounter *c)
{
    head(f, name, "counter", help);
    for (size_t i = 0; i < c->used; i++) {
        fprintf(f, "%s{%s=\"", name, label);
        put_label(f, c->label[i]);
        fprintf(f, "\"} %llu\n", (unsigned long long)c->n[i]);
    }
}

static void put_histo(FILE *f, const histo *h)
{
    uint64_t cum = 0;
    head(f, h->name, "histogram", h->help);
    for (size_t i = 0; i <= h->nle; i++) {
        cum += h->bucket[i];
        if (i < h->nle) fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", h->name, h->le[i],
                                (unsigned long long)cum);
        else fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n", h->name, (unsigned long long)cum);
    }
    char b[32];
    fprintf(f, "%s_sum %s\n%s_count %llu\n", h->name, shortest(b, h->sum), h->name,
            (unsigned long long)h->count);
}

/* How long the batch in flight has been at the committer, in ms (0: none); under mu. */
static uint64_t commit_age_ms(uint64_t now)
{
    return m.commit_sent && now > m.commit_sent ? now - m.commit_sent : 0;
}

void wrk_metrics_write(FILE *f)
{
    uint64_t turn = atomic_load(&last_turn_ms);
    pthread_mutex_lock(&mu);
    put_lcounter(f, "codeq_jobs_total", "status",
                 "Jobs answered (counted at their commit), by the status published.", &m.jobs);
    put_scalar(f, "codeq_jobs_committed_total", "counter",
               "Jobs whose result was committed in a transaction.", (double)m.jobs_committed);
    put_histo(f, &m.duration);
    put_histo(f, &m.overhead);
    put_histo(f, &m.wait);
    put_scalar(f, "codeq_jobs_running", "gauge", "Jobs running in a sandbox now.", m.running);
    put_scalar(f, "codeq_host_fault", "gauge",
               "1 while the sandbox cannot run a trivial job here: no job starts.", m.host_fault);
    put_scalar(f, "codeq_slots_free", "gauge", "Slots free for another job.",
               m.slots > m.running ? m.slots - m.running : 0);
    put_scalar(f, "codeq_partitions_assigned", "gauge", "Jobs partitions assigned to this worker.",
               m.partitions);
    head(f, "codeq_consumer_lag", "gauge",
         "Records of an assigned partition not yet committed by this worker.");
    for (size_t i = 0; i < m.nlag; i++) {
        fputs("codeq_consumer_lag{topic=\"", f);
        put_label(f, m.lag[i].topic);
        fprintf(f, "\",partition=\"%d\"} %lld\n", (int)m.lag[i].partition,
                (long long)m.lag[i].lag);
    }
    put_scalar(f, "codeq_transactions_committed_total", "counter", "Transactions committed.",
               (double)m.commits);
    put_scalar(f, "codeq_transactions_aborted_total", "counter", "Transactions aborted.",
               (double)m.aborts);
    put_scalar(f, "codeq_transactions_aborted_in_a_row", "gauge",
               "Transactions aborted since the last commit.", (double)m.abort_streak);
    put_lcounter(f, "codeq_rebalances_total", "kind", "Rebalance callbacks: assign, revoke, lost.",
                 &m.rebalances);
    put_scalar(f, "codeq_zygote_starts_total", "counter",
               "Zygotes started (first start, recycling after max jobs or age, and restarts).",
               (double)sbx_zygote_starts());
    put_lcounter(f, "codeq_validator_findings_total", "rule",
                 "Validator findings in rejected jobs, by rule (those the result carries, "
                 "100 at most).",
                 &m.findings);
    put_scalar(f, "codeq_dead_letters_total", "counter", "Records sent to the dead-letter topic.",
               (double)m.dead_letters);
    put_scalar(f, "codeq_dead_letters_given_up_total", "counter",
               "Of those, records whose dead letter the topic refused even minimal: they stay "
               "only where they were (audit event dead_letter_refused).",
               (double)m.dead_given_up);
    put_scalar(f, "codeq_results_truncated_total", "counter",
               "Results whose output or artifacts were cut to fit a record or a limit.",
               (double)m.truncated);
    uint64_t now = wrk_now_ms();
    put_scalar(f, "codeq_commit_in_flight_seconds", "gauge",
               "Seconds the transaction in flight has been at the committer (0: none).",
               (double)commit_age_ms(now) / 1000);
    put_scalar(f, "codeq_main_loop_turn_age_seconds", "gauge",
               "Seconds since the main loop last turned.",
               turn ? (double)(now - turn) / 1000 : 0);
    pthread_mutex_unlock(&mu);
}

bool wrk_metrics_healthy(char *why, size_t whylen)
{
    uint64_t turn = atomic_load(&last_turn_ms), now = wrk_now_ms();
    bool ok = false;
    pthread_mutex_lock(&mu);
    if (m.fatal)
        snprintf(why, whylen, "fatal Kafka error: the worker is ending");
    else if (!turn)
        ok = snprintf(why, whylen, "starting: %s", m.start_why) > 0;
    else if (now - turn > (uint64_t)m.stall_ms)
        snprintf(why, whylen, "main loop has not turned for %llu ms (limit %d)",
                 (unsigned long long)(now - turn), m.stall_ms);
    else if (m.host_fault)
        snprintf(why, whylen, "the sandbox cannot run a trivial job here, no job starts: %s",
                 m.host_why);
    else if (commit_age_ms(now) > (uint64_t)m.commit_ms)
        snprintf(why, whylen, "a commit has been in flight for %llu ms (limit %d): the broker "
                 "does not finish it", (unsigned long long)commit_age_ms(now), m.commit_ms);
    else if (m.abort_streak >= (uint64_t)m.max_aborts)
        snprintf(why, whylen, "%llu transactions aborted in a row (limit %d)",
                 (unsigned long long)m.abort_streak, m.max_aborts);
    else
        ok = snprintf(why, whylen, "ok: main loop turned %llu ms ago",
                      (unsigned long long)(now - turn)) > 0;
    pthread_mutex_unlock(&mu);
    return ok;
}

/* Why an idle member may stay so (under mu): the reason is otherwise only in the log. */
static const char *idle_note(char *b, size_t n)
{
    if (m.idle_topic == 0)
        snprintf(b, n, ": the jobs topic %s does not exist on the cluster (codeq topics creates "
                 "it)", m.jobs_topic);
    else if (m.idle_topic < 0)
        snprintf(b, n, ": the cluster cannot be asked about the jobs topic %s: %s", m.jobs_topic,
                 m.idle_err);
    else
        b[0] = '\0';
    return b;
}

bool wrk_metrics_ready(char *why, size_t whylen)
{
    bool ok = false;
    char note[512];
    pthread_mutex_lock(&mu);
    if (!atomic_load(&last_turn_ms)) snprintf(why, whylen, "starting: %s", m.start_why);
    else if (m.fatal) snprintf(why, whylen, "fatal Kafka error: cannot produce");
    /* From the signal on, not from when the loop has let its running jobs finish: a stopping
     * worker takes no more jobs. */
    else if (m.leaving || wrk_stop_requested()) snprintf(why, whylen, "leaving the group");
    else if (m.host_fault) snprintf(why, whylen, "the sandbox cannot run jobs here: %s", m.host_why);
    else if (!m.assigned_once)
        snprintf(why, whylen, "waiting for the group's first assignment%s",
                 idle_note(note, sizeof note));
    else if (m.partitions) ok = snprintf(why, whylen, "ok: %d partition%s", m.partitions,
                                           wrk_s(m.partitions)) > 0;
    else
        ok = snprintf(why, whylen, "ok: idle in the group (no partitions)%s",
                      idle_note(note, sizeof note)) > 0;
    pthread_mutex_unlock(&mu);
    return ok;
}
