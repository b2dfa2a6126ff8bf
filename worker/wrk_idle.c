/* Idle: a member with no partitions while its group's jobs wait and nobody commits any.
 * Normal when the group has more members than partitions, as long as the others make
 * progress; not when nobody does — this member may have silently dropped out of the group (a
 * consumer that lost its membership in a long outage and never rejoined), or the partitions
 * may sit with a member that is gone but not yet noticed. Checked only while idle, every
 * CHECK_MS, with one metadata request, one committed-offsets request and one watermark query
 * per partition. After IDLE_MS without partitions and without the group's committed offsets
 * moving while records wait, the member leaves and rejoins the group (a rebalance hands it
 * what no live member holds), and says so; rejoins back off (1, 2, 4 ... 30 min) so that a
 * backlog held by members busy with long jobs costs at most an occasional rebalance. The
 * status report of an idle worker (wrk_idle_report) says what the last check found, so being
 * idle costs one metadata request per check, not one more per report. */
#include <stdio.h>

#include "wrk_worker.h"

#define IDLE_MS 30000
#define CHECK_MS 5000
#define REJOIN_FIRST_MS 60000u
#define REJOIN_MAX_MS 1800000u

/* The jobs topic's partitions on the cluster: 0 when it does not exist, -1 when the cluster
 * cannot be asked or will not say (err says why: an authorization failure is not absence). */
static int topic_partitions(wrk_worker *w, rd_kafka_resp_err_t *err)
{
    const rd_kafka_metadata_t *md = NULL;
    *err = wrk_kafka_topic_metadata(w->k, w->c->kafka.jobs_topic, 2000, &md);
    int n = -1;
    if (!*err && md->topic_cnt < 1) n = 0;
    else if (!*err && md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) n = 0;
    else if (!*err && md->topics[0].err) *err = md->topics[0].err;
    else if (!*err) n = md->topics[0].partition_cnt;
    if (md) rd_kafka_metadata_destroy(md);
    return n;
}

/* Records waiting in the n partitions of the jobs topic for the group, and the sum of its
 * committed offsets. */
static int backlog(wrk_worker *w, int n, int64_t *waiting, int64_t *committed)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(n);
    for (int i = 0; i < n; i++) rd_kafka_topic_partition_list_add(l, w->c->kafka.jobs_topic, i);
    int rc = rd_kafka_committed(w->k, l, 5000) ? -1 : 0;
    *waiting = *committed = 0;
    for (int i = 0; i < l->cnt && rc == 0; i++) {
        int64_t lo, hi, at = l->elems[i].offset;
        if (rd_kafka_query_watermark_offsets(w->k, w->c->kafka.jobs_topic, i, &lo, &hi, 2000)) {
            rc = -1;
            break;
        }
        if (at < lo) at = lo; /* nothing committed, or below what the log still holds */
        if (hi > at) *waiting += hi - at;
        *committed += at;
    }
    rd_kafka_topic_partition_list_destroy(l);
    return rc;
}

static void rejoin(wrk_worker *w, int64_t waiting, uint64_t idle_ms, uint64_t still_ms)
{
    wrk_idle *s = &w->idle;
    wrk_logx(WRK_LOG_WARN, "group_stuck", NULL,
             "worker %s: no partitions for %llu s while group %s has %lld records waiting on %s "
             "and committed none for %llu s: leaving and rejoining the group",
             w->c->worker_id, (unsigned long long)(idle_ms / 1000), w->c->group,
             (long long)waiting, w->c->kafka.jobs_topic, (unsigned long long)(still_ms / 1000));
    char err[256];
    rd_kafka_resp_err_t e = rd_kafka_unsubscribe(w->k);
    if (e || wrk_subscribe(w, err, sizeof err) < 0)
        wrk_logx(WRK_LOG_ERROR, "group_rejoin_error", NULL, "worker %s: rejoining: %s",
                 w->c->worker_id, e ? rd_kafka_err2str(e) : err);
    s->rejoins++;
    s->rejoin_after = wrk_now_ms() + s->backoff_ms;
    s->backoff_ms = s->backoff_ms * 2 > REJOIN_MAX_MS ? REJOIN_MAX_MS : s->backoff_ms * 2;
}

void wrk_idle_watch(wrk_worker *w)
{
    wrk_idle *s = &w->idle;
    uint64_t now = wrk_now_ms();
    if (w->nparts) {
        s->since = 0;
        s->backoff_ms = REJOIN_FIRST_MS;
        return;
    }
    if (!s->since) {
        s->since = now;
        s->have = false;
        s->next_check = 0; /* at once: wrk_idle_report speaks from this check */
        if (!s->backoff_ms) s->backoff_ms = REJOIN_FIRST_MS;
    }
    if (now < s->next_check) return;
    s->next_check = now + CHECK_MS;
    int64_t waiting, committed;
    s->partitions = topic_partitions(w, &s->topic_err);
    if (s->partitions <= 0 || backlog(w, s->partitions, &waiting, &committed) < 0)
        return; /* no topic, or the cluster unreachable: not ours to fix (wrk_idle_report says) */
    if (!s->have || committed != s->committed || waiting == 0) {
        s->have = true;
        s->committed = committed;
        s->moved_at = now;
        return;
    }
    if (now - s->since >= IDLE_MS && now - s->moved_at >= IDLE_MS && now >= s->rejoin_after) {
        rejoin(w, waiting, now - s->since, now - s->moved_at);
        s->moved_at = now;
    }
}

void wrk_idle_report(const wrk_worker *w)
{
    const wrk_idle *s = &w->idle;
    const char *id = w->c->worker_id, *topic = w->c->kafka.jobs_topic;
    if (s->partitions < 0)
        wrk_logx(WRK_LOG_WARN, "no_partitions", NULL,
                 "worker %s: no partitions; the cluster cannot be asked about %s: %s", id, topic,
                 rd_kafka_err2str(s->topic_err));
    else if (s->partitions == 0)
        wrk_logx(WRK_LOG_WARN, "no_partitions", NULL,
                 "worker %s: no partitions: the jobs topic %s does not exist on the cluster "
                 "(deleted, or the broker came back empty?); create it with `codeq topics`",
                 id, topic);
    else
        wrk_logx(WRK_LOG_INFO, "no_partitions", NULL,
                 "worker %s: no partitions: %s has %d, none assigned to this member of group %s "
                 "(other members hold them, or the group is rebalancing)",
                 id, topic, s->partitions, w->c->group);
}
