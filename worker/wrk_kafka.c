/* Kafka plumbing shared by worker, submit, topics and broker: configuration with kcat-style
 * -X pass-through, and topic creation through the Admin API. Every librdkafka error is
 * returned with the call that failed, never logged and dropped. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wrk_internal.h"

void wrk_kafka_opts_default(wrk_kafka_opts *o)
{
    memset(o, 0, sizeof *o);
    o->brokers = "127.0.0.1:9092";
    o->jobs_topic = "codeq.jobs";
    o->results_topic = "codeq.results";
    o->audit_topic = "codeq.audit";
    o->dlq_topic = "codeq.jobs.dlq";
}

bool wrk_kafka_secret(const char *name)
{
    return strstr(name, "password") || strstr(name, "secret") ||
           !strcmp(name, "ssl.key.pem") || !strcmp(name, "sasl.oauthbearer.config");
}

/* Secrets read from files live as long as the process (the options point to them); held
 * here so that they stay reachable. volatile: the stores must not be optimised away. */
static char *volatile secrets_kept[WRK_MAX_KAFKA_PROPS];
static int nsecrets_kept;

/* A secret kept out of argv, the environment and the config file: "@/run/secrets/x". */
static char *secret_file(const char *name, const char *path, char *err, size_t errlen)
{
    char buf[65536];
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "codeq: config: %s=@%s: %s", name, path, strerror(errno));
        return NULL;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    bool more = fgetc(f) != EOF, bad = ferror(f);
    fclose(f);
    if (bad || more) {
        snprintf(err, errlen, "codeq: config: %s=@%s: %s", name, path,
                 bad ? "read failed" : "larger than 64 KiB");
        return NULL;
    }
    buf[n] = '\0';
    if (n && buf[n - 1] == '\n') buf[--n] = '\0';
    if (n && buf[n - 1] == '\r') buf[--n] = '\0';
    char *s = strdup(buf);
    explicit_bzero(buf, sizeof buf);
    if (!s) snprintf(err, errlen, "codeq: config: %s: out of memory", name);
    else if (nsecrets_kept < WRK_MAX_KAFKA_PROPS) secrets_kept[nsecrets_kept++] = s;
    return s;
}

int wrk_kafka_opts_add(wrk_kafka_opts *o, char *nv, char *err, size_t errlen)
{
    char *eq = strchr(nv, '=');
    if (!eq || eq == nv) {
        snprintf(err, errlen, "codeq: -X expects name=value, got '%s'", nv);
        return -1;
    }
    if (o->nprops >= WRK_MAX_KAFKA_PROPS) {
        snprintf(err, errlen, "codeq: at most %d -X properties", WRK_MAX_KAFKA_PROPS);
        return -1;
    }
    *eq = '\0';
    o->props[o->nprops][0] = nv;
    o->props[o->nprops][1] = eq + 1;
    if (eq[1] == '@' && wrk_kafka_secret(nv) &&
        !(o->props[o->nprops][1] = secret_file(nv, eq + 2, err, errlen))) {
        *eq = '=';
        return -1;
    }
    o->nprops++;
    return 0;
}

int wrk_kafka_set_all(rd_kafka_conf_t *conf, const char *const (*kv)[2], size_t n, char *err,
                      size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (wrk_kafka_set(conf, kv[i][0], kv[i][1], err, errlen) < 0) return -1;
    return 0;
}

int wrk_kafka_set(rd_kafka_conf_t *conf, const char *name, const char *value, char *err,
                  size_t errlen)
{
    char kerr[256];
    if (rd_kafka_conf_set(conf, name, value, kerr, sizeof kerr) != RD_KAFKA_CONF_OK) {
        snprintf(err, errlen, "codeq: kafka: %s=%s: %s", name,
                 wrk_kafka_secret(name) ? "******" : value, kerr);
        return -1;
    }
    return 0;
}

rd_kafka_conf_t *wrk_kafka_conf(const wrk_kafka_opts *o, char *err, size_t errlen)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (wrk_kafka_set(conf, "bootstrap.servers", o->brokers, err, errlen) < 0) goto fail;
    if (wrk_kafka_set(conf, "client.id", "codeq", err, errlen) < 0) goto fail;
    if (wrk_log_owns_kafka()) rd_kafka_conf_set_log_cb(conf, wrk_log_kafka);
    for (int i = 0; i < o->nprops; i++)
        if (wrk_kafka_set(conf, o->props[i][0], o->props[i][1], err, errlen) < 0) goto fail;
    return conf;
fail:
    rd_kafka_conf_destroy(conf);
    return NULL;
}

static int create_result(rd_kafka_event_t *ev, char *err, size_t errlen)
{
    size_t n = 0;
    const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
    /* A request that failed as a whole (no broker reached in the timeout) is a result with no
     * topics in it and the error on the event: not a success with nothing to report. */
    if (!res || rd_kafka_event_error(ev)) {
        snprintf(err, errlen, "codeq: topics: CreateTopics: %s", rd_kafka_event_error_string(ev));
        return -1;
    }
    const rd_kafka_topic_result_t **tr = rd_kafka_CreateTopics_result_topics(res, &n);
    for (size_t i = 0; i < n; i++) {
        rd_kafka_resp_err_t e = rd_kafka_topic_result_error(tr[i]);
        /* the broker's own words name a refused setting ("Unknown topic config name: x") */
        const char *why = rd_kafka_topic_result_error_string(tr[i]);
        if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
            snprintf(err, errlen, "codeq: topics: create %s: %s%s%s",
                     rd_kafka_topic_result_name(tr[i]), rd_kafka_err2str(e), why ? ": " : "",
                     why ? why : "");
            return -1;
        }
    }
    return 0;
}

/* True when every partition of every named topic has a leader, so clients can use them. */
static bool topics_ready(rd_kafka_t *rk, const char *const *names, int n)
{
    const rd_kafka_metadata_t *md;
    if (rd_kafka_metadata(rk, 1, NULL, &md, 5000)) return false;
    int ready = 0;
    for (int i = 0; i < md->topic_cnt; i++) {
        const rd_kafka_metadata_topic_t *t = &md->topics[i];
        bool ok = !t->err && t->partition_cnt > 0;
        for (int p = 0; ok && p < t->partition_cnt; p++)
            ok = !t->partitions[p].err && t->partitions[p].leader >= 0;
        for (int j = 0; ok && j < n; j++)
            if (!strcmp(t->topic, names[j])) ready++;
    }
    rd_kafka_metadata_destroy(md);
    return ready == n;
}

/* A short-lived producer handle for Admin API calls, with the shared -X props. */
static rd_kafka_t *admin_handle(const wrk_kafka_opts *o, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(o, err, errlen);
    if (!conf) return NULL;
    /* its metadata requests name topics it only asks about (a producer's default would have a
     * broker that auto-creates topics create them) */
    if (wrk_kafka_set(conf, "allow.auto.create.topics", "false", err, errlen) < 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, kerr, sizeof kerr);
    if (!rk) snprintf(err, errlen, "codeq: kafka: rd_kafka_new: %s", kerr);
    return rk;
}

rd_kafka_resp_err_t wrk_kafka_topic_metadata(rd_kafka_t *rk, const char *topic, int wait_ms,
                                             const rd_kafka_metadata_t **md)
{
    *md = NULL;
    rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
    if (!t) return rd_kafka_last_error() ? rd_kafka_last_error() : RD_KAFKA_RESP_ERR__FAIL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, t, md, wait_ms);
    rd_kafka_topic_destroy(t);
    return e;
}

bool wrk_kafka_settling(rd_kafka_resp_err_t e)
{
    return e == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
           e == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
           e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || e == RD_KAFKA_RESP_ERR__TRANSPORT;
}

rd_kafka_resp_err_t wrk_kafka_watermarks(rd_kafka_t *k, const char *topic, int32_t p,
                                         int64_t *lo, int64_t *hi, int budget_ms)
{
    uint64_t until = wrk_now_ms() + (uint64_t)(budget_ms > 0 ? budget_ms : 1);
    for (;;) {
        uint64_t now = wrk_now_ms(), left = now < until ? until - now : 1;
        rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(
            k, topic, p, lo, hi, left < 5000 ? (int)left : 5000);
        if (!wrk_kafka_settling(e) || wrk_now_ms() >= until) return e;
        usleep(200 * 1000);
    }
}

/* Whether the cluster's controller is one of its brokers, from md, the answer rk got a moment
 * ago (the broker list comes with any). librdkafka sends DescribeConfigs and CreateTopics to
 * the controller, and its mock cluster (`codeq broker`) names controller 0 while its brokers
 * are 1..n, so such a request waited out its whole timeout: 10 s of every worker's start, 5 s
 * of every `codeq submit`. True when it cannot be told (no answer, no controller named): the
 * request then waits, as before. *id: the controller that answer named. */
static bool controller_listed(rd_kafka_t *rk, const rd_kafka_metadata_t *md, int32_t *id)
{
    *id = -1;
    if (!md) return true;
    *id = rd_kafka_controllerid(rk, 0); /* updated from md's response before it returned */
    bool listed = *id < 0;
    for (int i = 0; i < md->broker_cnt; i++) listed |= md->brokers[i].id == *id;
    return listed;
}

/* How many partitions `topic` has: 0 when the cluster says it has no such topic (or one being
 * made, no partition listed yet: its creation then finds it there), -1 with err when the
 * cluster did not answer in wait_ms or refused. A topic whose leaders are not elected yet
 * (made a moment ago) exists: topics_ready waits for them. *controller: -1, or the controller
 * the answer named when it is none of the cluster's brokers (controller_listed). */
static int topic_partitions(rd_kafka_t *rk, const wrk_kafka_opts *o, const char *topic,
                            int wait_ms, int32_t *controller, char *err, size_t errlen)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t e = wrk_kafka_topic_metadata(rk, topic, wait_ms, &md);
    int32_t id;
    *controller = controller_listed(rk, md, &id) ? -1 : id;
    int n = -1;
    if (e)
        snprintf(err, errlen, "codeq: topics: the cluster at %s did not answer: %s (waited up "
                 "to %d s)", o->brokers, rd_kafka_err2str(e), wait_ms / 1000);
    else if (md->topic_cnt != 1)
        snprintf(err, errlen, "codeq: topics: %s: the cluster's answer did not name it", topic);
    else if (md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
             md->topics[0].partition_cnt == 0)
        n = 0;
    else if (md->topics[0].err && md->topics[0].err != RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
        snprintf(err, errlen, "codeq: topics: %s: %s", topic, rd_kafka_err2str(md->topics[0].err));
    else
        n = md->topics[0].partition_cnt;
    if (md) rd_kafka_metadata_destroy(md);
    return n;
}

/* Those of names[] the cluster lacks, into missing[] (their count); each it has is said on
 * stderr, with what of the request it did not get: a topic's partitions and settings are the
 * operator's to change (kafka-topics.sh --alter), never changed here behind their back. */
static int find_missing(rd_kafka_t *rk, const wrk_kafka_opts *o, const char *const *names,
                        const wrk_topic_request *req, const char **missing,
                        int32_t *controller, char *err, size_t errlen)
{
    int nmissing = 0;
    for (int i = 0; i < 4; i++) {
        int have = topic_partitions(rk, o, names[i], 10000, controller, err, errlen);
        if (have < 0) return -1;
        if (have == 0) {
            missing[nmissing++] = names[i];
            continue;
        }
        char asked[96] = "";
        if (req->partitions_given && have != req->partitions)
            snprintf(asked, sizeof asked, "; not changed to %d partition%s", req->partitions,
                     wrk_s(req->partitions));
        if (req->ncfg)
            snprintf(asked + strlen(asked), sizeof asked - strlen(asked),
                     "; --config not applied to it");
        fprintf(stderr, "codeq: topics: %s exists with %d partition%s: left as it is%s\n",
                names[i], have, wrk_s(have), asked);
    }
    return nmissing;
}

/* librdkafka sends CreateTopics to the controller, which the mock cluster names but does not
 * have (see controller_listed): the request would wait 30 s and fail without saying why.
 * id: the controller find_missing's answers named when it is none of the brokers, or -1. */
static int check_controller(int32_t id, const char *topic, char *err, size_t errlen)
{
    if (id < 0) return 0;
    snprintf(err, errlen, "codeq: topics: cannot create %s: the cluster names broker %d as its "
             "controller, which is none of its brokers (the development broker, `codeq broker`, "
             "makes its topics when it starts: give it the names there)", topic, (int)id);
    return -1;
}

static int create_missing(rd_kafka_t *rk, const char **missing, int n,
                          const wrk_topic_request *req, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_NewTopic_t *nt[4];
    for (int i = 0; i < n; i++) {
        /* librdkafka refuses some requests itself (partitions above 100000) */
        if (!(nt[i] = rd_kafka_NewTopic_new(missing[i], req->partitions, -1, kerr, sizeof kerr))) {
            snprintf(err, errlen, "codeq: topics: create %s: %s", missing[i], kerr);
            rd_kafka_NewTopic_destroy_array(nt, (size_t)i);
            return -1;
        }
        for (int j = 0; j < req->ncfg; j++)
            rd_kafka_NewTopic_set_config(nt[i], req->cfg[j][0], req->cfg[j][1]);
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(ao, 30000, kerr, sizeof kerr);
    rd_kafka_CreateTopics(rk, nt, (size_t)n, ao, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 35000);
    int rc = ev ? create_result(ev, err, errlen) : -1;
    if (!ev) snprintf(err, errlen, "codeq: topics: CreateTopics: no answer in 35 s");
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_NewTopic_destroy_array(nt, (size_t)n);
    rd_kafka_queue_destroy(q);
    return rc;
}

int wrk_kafka_create_topics(const wrk_kafka_opts *o, const wrk_topic_request *req, char *err,
                            size_t errlen)
{
    const char *names[] = {o->jobs_topic, o->results_topic, o->audit_topic, o->dlq_topic};
    const char *missing[4];
    rd_kafka_t *rk = admin_handle(o, err, errlen);
    if (!rk) return -1;
    int32_t controller = -1;
    int n = find_missing(rk, o, names, req, missing, &controller, err, errlen);
    int rc = n < 0 ? -1 : 0;
    if (n > 0 && (check_controller(controller, missing[0], err, errlen) < 0 ||
                  create_missing(rk, missing, n, req, err, errlen) < 0))
        rc = -1;
    uint64_t deadline = wrk_now_ms() + 30000;
    while (rc == 0 && !topics_ready(rk, names, 4)) {
        if (wrk_now_ms() > deadline) {
            snprintf(err, errlen, "codeq: topics: topics created but without leaders after 30 s");
            rc = -1;
        }
        usleep(200 * 1000);
    }
    rd_kafka_destroy(rk);
    return rc;
}

/* Reads the configurations of up to 8 topics in one DescribeConfigs (through rk, waiting
 * about wait_ms in all) and hands each entry that has a value to visit; what went wrong, if
 * anything, in note. */
typedef void config_visit(const char *name, const char *value, void *arg);
typedef struct {
    char *note, *missing; /* what went wrong; the first topic the cluster says it has not */
    size_t notelen, missinglen;
} describe_out;
static void describe_topics(rd_kafka_t *rk, const char *const *topics, int n, int wait_ms,
                            config_visit *visit, void *arg, const describe_out *out)
{
    char *note = out->note;
    size_t notelen = out->notelen;
    char kerr[256];
    int32_t id;
    uint64_t deadline = wrk_now_ms() + (uint64_t)wait_ms;
    const rd_kafka_metadata_t *md = NULL;
    wrk_kafka_topic_metadata(rk, topics[0], wait_ms, &md);
    bool listed = controller_listed(rk, md, &id);
    if (md) rd_kafka_metadata_destroy(md);
    if (!listed) {
        snprintf(note, notelen, "topic configurations not read (the cluster names broker %d as "
                 "its controller, which is none of its brokers: librdkafka's mock cluster, "
                 "`codeq broker`, does so)", (int)id);
        return;
    }
    uint64_t now = wrk_now_ms();
    wait_ms = now < deadline ? (int)(deadline - now) : 1;
    rd_kafka_ConfigResource_t *res[8];
    n = n > 8 ? 8 : n;
    for (int i = 0; i < n; i++) res[i] = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topics[i]);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
    rd_kafka_AdminOptions_set_request_timeout(ao, wait_ms, kerr, sizeof kerr);
    rd_kafka_DescribeConfigs(rk, res, (size_t)n, ao, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, wait_ms + 1000);
    const rd_kafka_DescribeConfigs_result_t *r =
        ev && !rd_kafka_event_error(ev) ? rd_kafka_event_DescribeConfigs_result(ev) : NULL;
    if (!r) /* a request that timed out comes as a result with an error, and no resources */
        snprintf(note, notelen, "topic configurations not read (%s)",
                 ev ? rd_kafka_event_error_string(ev) : "no answer");
    size_t cnt = 0;
    const rd_kafka_ConfigResource_t **rr = r ? rd_kafka_DescribeConfigs_result_resources(r, &cnt) : NULL;
    for (size_t i = 0; i < cnt; i++) {
        rd_kafka_resp_err_t re = rd_kafka_ConfigResource_error(rr[i]);
        if (re) {
            snprintf(note, notelen, "topic %s: %s", rd_kafka_ConfigResource_name(rr[i]),
                     rd_kafka_ConfigResource_error_string(rr[i]));
            if (re == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART && out->missing && !out->missing[0])
                snprintf(out->missing, out->missinglen, "%s", rd_kafka_ConfigResource_name(rr[i]));
            continue;
        }
        size_t ne = 0;
        const rd_kafka_ConfigEntry_t **ents = rd_kafka_ConfigResource_configs(rr[i], &ne);
        for (size_t j = 0; j < ne; j++) {
            const char *v = rd_kafka_ConfigEntry_value(ents[j]);
            if (v) visit(rd_kafka_ConfigEntry_name(ents[j]), v, arg);
        }
    }
    if (ev) rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
    for (int i = 0; i < n; i++) rd_kafka_ConfigResource_destroy(res[i]);
}

static void least_max_message(const char *name, const char *value, void *arg)
{
    size_t *least = arg, m = strcmp(name, "max.message.bytes") ? 0 : strtoull(value, NULL, 10);
    if (m && (!*least || m < *least)) *least = m;
}

static int64_t config_ms(const char *v)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    return *v && !*end && x >= 0 ? (int64_t)x : -1;
}

static void topic_limit(const char *name, const char *v, void *arg)
{
    wrk_topic_limits *out = arg;
    if (!strcmp(name, "max.message.bytes"))
        out->max_bytes = strtoull(v, NULL, 10);
    else if (!strcmp(name, "message.timestamp.type"))
        out->create_time = !strcmp(v, "CreateTime");
    else if (!strcmp(name, "message.timestamp.before.max.ms"))
        out->before_ms = config_ms(v);
    else if (!strcmp(name, "message.timestamp.after.max.ms"))
        out->after_ms = config_ms(v);
}

void wrk_kafka_topic_limits(rd_kafka_t *rk, const char *topic, int wait_ms,
                            wrk_topic_limits *out)
{
    char note[300];
    *out = (wrk_topic_limits){0, false, -1, -1};
    describe_topics(rk, &topic, 1, wait_ms, topic_limit, out,
                    &(describe_out){note, NULL, sizeof note, 0});
}

size_t wrk_kafka_topic_max_bytes(const wrk_kafka_opts *o, const char *topic, int wait_ms)
{
    char err[256], note[300];
    size_t least = 0;
    rd_kafka_t *rk = admin_handle(o, err, sizeof err);
    if (!rk) return 0;
    describe_topics(rk, &topic, 1, wait_ms, least_max_message, &least,
                    &(describe_out){note, NULL, sizeof note, 0});
    rd_kafka_destroy(rk);
    return least;
}

int wrk_kafka_record_budget(const wrk_kafka_opts *o, size_t *budget, char *note, size_t notelen,
                            char *err, size_t errlen)
{
    char v[32];
    size_t vlen = sizeof v;
    note[0] = '\0';
    rd_kafka_t *rk = admin_handle(o, err, errlen);
    if (!rk) return -1;
    size_t producer = WRK_RECORD_DEFAULT_MAX;
    if (rd_kafka_conf_get(rd_kafka_conf(rk), "message.max.bytes", v, &vlen) == RD_KAFKA_CONF_OK)
        producer = strtoull(v, NULL, 10);
    const char *const topics[] = {o->results_topic, o->audit_topic, o->dlq_topic};
    size_t topic = 0;
    char missing[256] = "";
    describe_topics(rk, topics, 3, 10000, least_max_message, &topic,
                    &(describe_out){note, missing, notelen, sizeof missing});
    rd_kafka_destroy(rk);
    if (missing[0]) { /* every job's records would be refused: each commit aborts, for good */
        snprintf(err, errlen, "codeq: kafka: topic %s does not exist on the cluster; create the "
                 "worker's topics with `codeq topics` (or name the right ones: --results-topic, "
                 "--audit-topic, --dlq-topic)", missing);
        return -2;
    }
    size_t least = topic && topic < producer ? topic : producer;
    if (least < WRK_RECORD_MIN) {
        snprintf(err, errlen, "codeq: kafka: records of at most %zu bytes (message.max.bytes / "
                 "max.message.bytes) cannot carry a result and its audit events: at least %d",
                 least, WRK_RECORD_MIN);
        return -1;
    }
    *budget = least - WRK_RECORD_OVERHEAD;
    return 0;
}
