/* The dead-letter path (wrk_dlq.c) on librdkafka's in-memory mock cluster: a record that
 * goes to the dead-letter topic keeps its value, its key and its headers, and gets codeq's
 * reason and origin headers after them, so its owner can find it by key and replay it; one
 * without a key is keyed by where it is. One too large for the record budget is cut to fit,
 * the cut said with the original's size and sha256; after the broker refused one as too
 * large, the next is cut to 16 kB, refused otherwise or again, minimal, then given up
 * (wrk_dispatch.c). And wrk_publish_warm: the worker's own topics are known to a new producer
 * before its first record for them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "wrk_internal.h"
#include "wrk_worker.h"

#include <librdkafka/rdkafka_mock.h> /* after rdkafka.h */

static char errbuf[512];

static rd_kafka_t *client(rd_kafka_type_t type, const char *bootstrap)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, errbuf, sizeof errbuf),
                     RD_KAFKA_CONF_OK);
    rd_kafka_conf_set(conf, "log_level", "3", errbuf, sizeof errbuf);
    if (type == RD_KAFKA_CONSUMER)
        rd_kafka_conf_set(conf, "group.id", "test-dlq", errbuf, sizeof errbuf);
    else
        rd_kafka_conf_set_dr_msg_cb(conf, wrk_publish_dr_cb);
    rd_kafka_t *rk = rd_kafka_new(type, conf, errbuf, sizeof errbuf);
    assert_non_null(rk);
    return rk;
}

/* The one record at offset 0 of topic/0; the caller destroys it. */
static rd_kafka_message_t *read_first(rd_kafka_t *c, const char *topic)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, topic, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    assert_int_equal(rd_kafka_assign(c, l), 0);
    rd_kafka_topic_partition_list_destroy(l);
    for (int i = 0; i < 100; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
        if (m && !m->err)
            return m;
        if (m)
            rd_kafka_message_destroy(m);
    }
    fail_msg("no record on %s", topic);
    return NULL;
}

static const char *header(const rd_kafka_message_t *m, const char *name, char *buf, size_t n)
{
    rd_kafka_headers_t *h = NULL;
    const void *v;
    size_t len;
    if (rd_kafka_message_headers(m, &h) || rd_kafka_header_get_last(h, name, &v, &len))
        return NULL;
    snprintf(buf, n, "%.*s", (int)len, (const char *)v);
    return buf;
}

/* The value of m's last header `name` is want (NULL: m has no such header). */
static void expect_header(const rd_kafka_message_t *m, const char *name, const char *want)
{
    char buf[128];
    const char *v = header(m, name, buf, sizeof buf);
    if (!want) assert_null(v);
    else assert_string_equal(v ? v : "(absent)", want);
}

/* The consumer's error for the next round trip's record (0: none), as for a batch it could
 * not decompress: librdkafka then hands over the error text as the record's payload. */
static rd_kafka_resp_err_t g_record_err;

/* A mock cluster with jobs, dlq and audit topics, and the clients of one round trip. */
typedef struct {
    rd_kafka_t *mrk, *p, *c, *c2;
    rd_kafka_mock_cluster_t *mc;
} env;

/* Produces one record to jobs, consumes it, dead-letters it with the given record budget
 * (level: how far refusals cut it back) and returns the dead letter. */
static rd_kafka_message_t *round_trip(env *e, const void *key, size_t klen, const void *val,
                                      size_t vlen, rd_kafka_headers_t *h, size_t budget,
                                      wrk_dead_level level)
{
    e->mrk = client(RD_KAFKA_PRODUCER, "");
    e->mc = rd_kafka_mock_cluster_new(e->mrk, 1);
    assert_non_null(e->mc);
    const char *boot = rd_kafka_mock_cluster_bootstraps(e->mc);
    assert_int_equal(rd_kafka_mock_topic_create(e->mc, "jobs", 1, 1), 0);
    assert_int_equal(rd_kafka_mock_topic_create(e->mc, "dlq", 1, 1), 0);
    assert_int_equal(rd_kafka_mock_topic_create(e->mc, "audit", 1, 1), 0);
    e->p = client(RD_KAFKA_PRODUCER, boot);
    assert_int_equal(rd_kafka_producev(e->p, RD_KAFKA_V_TOPIC("jobs"), RD_KAFKA_V_KEY(key, klen),
                                       RD_KAFKA_V_VALUE((void *)val, vlen), RD_KAFKA_V_HEADERS(h),
                                       RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                     0);
    assert_int_equal(rd_kafka_flush(e->p, 10000), 0);
    e->c = client(RD_KAFKA_CONSUMER, boot);
    rd_kafka_message_t *m = read_first(e->c, "jobs");
    wrk_config cfg;
    memset(&cfg, 0, sizeof cfg);
    wrk_kafka_opts_default(&cfg.kafka);
    cfg.kafka.dlq_topic = "dlq";
    cfg.kafka.audit_topic = "audit";
    cfg.result_max_bytes = budget;
    wrk_outcome o = {.audit = json_array(), .dead_level = level};
    snprintf(o.dead_refused, sizeof o.dead_refused, "dlq refused it: Broker: Broker failed to "
             "validate record");
    wrk_delivery d = {0};
    char err[256];
    m->err = g_record_err;
    assert_int_equal(wrk_publish_dead_letter(e->p, &cfg, m, "job is not valid JSON", &o, &d, NULL,
                                             err, sizeof err),
                     0);
    m->err = RD_KAFKA_RESP_ERR_NO_ERROR;
    assert_int_equal(wrk_publish_wait(e->p, &d, 10000, err, sizeof err), 0);
    rd_kafka_message_destroy(m);
    json_decref(o.audit);
    e->c2 = client(RD_KAFKA_CONSUMER, boot);
    return read_first(e->c2, "dlq");
}

static void env_stop(env *e, rd_kafka_message_t *dl)
{
    rd_kafka_message_destroy(dl);
    rd_kafka_consumer_close(e->c);
    rd_kafka_consumer_close(e->c2);
    rd_kafka_destroy(e->c);
    rd_kafka_destroy(e->c2);
    rd_kafka_destroy(e->p);
    rd_kafka_mock_cluster_destroy(e->mc);
    rd_kafka_destroy(e->mrk);
}

static void test_dead_letter_keeps_key_and_headers(void **st)
{
    (void)st;
    /* The producer's record: not JSON, a binary key, two headers. */
    static const char key[] = {'k', 0, 'y', (char)0xff};
    rd_kafka_headers_t *h = rd_kafka_headers_new(2);
    rd_kafka_header_add(h, "trace-id", -1, "t-42", -1);
    rd_kafka_header_add(h, "owner", -1, "agent-7", -1);
    env e;
    rd_kafka_message_t *dl = round_trip(&e, key, sizeof key, "not json", 8, h, 0, WRK_DEAD_FULL);
    char buf[128];
    assert_int_equal(dl->len, 8);
    assert_memory_equal(dl->payload, "not json", 8);
    assert_int_equal(dl->key_len, sizeof key);
    assert_memory_equal(dl->key, key, sizeof key);
    assert_string_equal(header(dl, "trace-id", buf, sizeof buf), "t-42");
    assert_string_equal(header(dl, "owner", buf, sizeof buf), "agent-7");
    assert_string_equal(header(dl, "codeq.error", buf, sizeof buf), "job is not valid JSON");
    assert_string_equal(header(dl, "codeq.source.topic", buf, sizeof buf), "jobs");
    assert_string_equal(header(dl, "codeq.source.offset", buf, sizeof buf), "0");
    assert_null(header(dl, "codeq.value.truncated", buf, sizeof buf));
    env_stop(&e, dl);
}

/* A record the consumer could not decode: its payload is librdkafka's error text, not the
 * job, so the dead letter has no value and says so; where the job is, the source headers say. */
static void test_dead_letter_of_undecodable_record(void **st)
{
    (void)st;
    env e;
    g_record_err = RD_KAFKA_RESP_ERR__BAD_COMPRESSION;
    rd_kafka_message_t *dl = round_trip(&e, "k-1", 3, "Decompression failed", 20, NULL, 0,
                                        WRK_DEAD_FULL);
    g_record_err = RD_KAFKA_RESP_ERR_NO_ERROR;
    char buf[128];
    assert_null(dl->payload);
    assert_int_equal(dl->len, 0);
    assert_string_equal(header(dl, "codeq.value.unavailable", buf, sizeof buf), "true");
    assert_string_equal(header(dl, "codeq.source.offset", buf, sizeof buf), "0");
    assert_string_equal(header(dl, "codeq.error", buf, sizeof buf), "job is not valid JSON");
    env_stop(&e, dl);
    /* librdkafka's error has no key: the record's is not known, not absent */
    g_record_err = RD_KAFKA_RESP_ERR__BAD_COMPRESSION;
    dl = round_trip(&e, NULL, 0, "Decompression failed", 20, NULL, 0, WRK_DEAD_FULL);
    g_record_err = RD_KAFKA_RESP_ERR_NO_ERROR;
    expect_header(dl, "codeq.key.unavailable", "true");
    expect_header(dl, "codeq.key.absent", NULL);
    assert_memory_equal(dl->key, "jobs/0/0", dl->key_len);
    env_stop(&e, dl);
}

/* A record without a key: a compacted dead-letter topic refuses a record without one
 * (INVALID_RECORD), and the worker retried it forever. Its dead letter is keyed by where the
 * record is, and says the record had no key. */
static void test_dead_letter_without_key(void **st)
{
    (void)st;
    env e;
    rd_kafka_message_t *dl = round_trip(&e, NULL, 0, "garbage", 7, NULL, 0, WRK_DEAD_FULL);
    assert_int_equal(dl->key_len, strlen("jobs/0/0"));
    assert_memory_equal(dl->key, "jobs/0/0", dl->key_len);
    expect_header(dl, "codeq.key.absent", "true");
    assert_int_equal(dl->len, 7);
    assert_memory_equal(dl->payload, "garbage", 7);
    expect_header(dl, "codeq.refused", NULL);
    env_stop(&e, dl);
}

/* Refused for another reason than its size: a minimal dead letter, none of the record in it
 * but its sizes and hashes, keyed by where the record is, with the refusal in codeq.refused. */
static void test_minimal_dead_letter(void **st)
{
    (void)st;
    rd_kafka_headers_t *h = rd_kafka_headers_new(1);
    rd_kafka_header_add(h, "trace-id", -1, "t-42", -1);
    env e;
    rd_kafka_message_t *dl = round_trip(&e, "k-1", 3, "not json", 8, h, 0, WRK_DEAD_MINIMAL);
    char sha[65];
    assert_int_equal(dl->len, 0);
    assert_int_equal(dl->key_len, strlen("jobs/0/0"));
    assert_memory_equal(dl->key, "jobs/0/0", dl->key_len);
    const char *const want[][2] = {
        {"trace-id", NULL}, {"codeq.key.absent", NULL}, {"codeq.headers.dropped", "1 of 1"},
        {"codeq.key.size", "3"}, {"codeq.value.size", "8"}, {"codeq.source.offset", "0"},
        {"codeq.error", "job is not valid JSON"},
        {"codeq.refused", "dlq refused it: Broker: Broker failed to validate record"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        expect_header(dl, want[i][0], want[i][1]);
    wrk_sha256_hex("not json", 8, sha);
    expect_header(dl, "codeq.value.sha256", sha);
    env_stop(&e, dl);
}

/* A record the consumer could not decode: its bytes are not known, so its audit event has no
 * hash (it had librdkafka's error text's, shared by every record of such a batch). */
static void test_undecodable_has_no_hash(void **st)
{
    (void)st;
    wrk_config c;
    wrk_config_default(&c);
    c.worker_id = "w-test";
    wrk_source src = {"jobs", 0, 7};
    wrk_task *t = wrk_task_dead(&c, "codeq: worker: the record could not be consumed: x", NULL,
                                40, &src);
    wrk_outcome *o = wrk_task_finish(t);
    json_t *ev = json_array_get(o->audit, 0);
    assert_string_equal(json_string_value(json_object_get(ev, "event")), "dead_lettered");
    assert_true(json_is_null(json_object_get(ev, "code_sha256")));
    wrk_task_free(t);
    t = wrk_task_dead(&c, "job is not valid JSON", "garbage", 7, &src);
    o = wrk_task_finish(t);
    char sha[65];
    wrk_sha256_hex("garbage", 7, sha);
    assert_string_equal(
        json_string_value(json_object_get(json_array_get(o->audit, 0), "code_sha256")), sha);
    wrk_task_free(t);
}

/* The steps a refused dead letter takes: cut small (refused as too large), minimal, given up:
 * its audit event then says nothing was dead-lettered and where the record stays. */
static void test_refused_dead_letter_steps(void **st)
{
    (void)st;
    wrk_config c;
    char buf[256];
    wrk_config_default(&c);
    c.worker_id = "w-test";
    wrk_source src = {"jobs", 2, 41};
    wrk_task *t = wrk_task_dead(&c, "job is not valid JSON", "garbage", 7, &src);
    wrk_outcome *o = wrk_task_finish(t);
    assert_string_equal(wrk_task_name(t, buf, sizeof buf), "the dead letter of jobs [2] at 41");
    assert_non_null(wrk_task_unpublishable(t, "dlq refused it: too large", true));
    assert_int_equal(o->dead_level, WRK_DEAD_SMALL);
    assert_non_null(wrk_task_unpublishable(t, "dlq refused it: invalid record", false));
    assert_int_equal(o->dead_level, WRK_DEAD_MINIMAL);
    assert_string_equal(o->dead_refused, "dlq refused it: invalid record");
    assert_non_null(wrk_task_unpublishable(t, "dlq refused it: invalid record", false));
    assert_int_equal(o->dead_level, WRK_DEAD_GIVEN_UP);
    assert_null(wrk_task_unpublishable(t, "dlq refused it: invalid record", false));
    assert_int_equal(json_array_size(o->audit), 1);
    json_t *ev = json_array_get(o->audit, 0);
    assert_string_equal(json_string_value(json_object_get(ev, "event")), "dead_letter_refused");
    const char *reason = json_string_value(json_object_get(ev, "reason"));
    assert_non_null(strstr(reason, "job is not valid JSON; not dead-lettered"));
    assert_non_null(strstr(reason, "the record stays on jobs [2] at offset 41"));
    wrk_task_free(t);
    /* refused first for another reason than its size: straight to minimal */
    t = wrk_task_dead(&c, "job is not valid JSON", "garbage", 7, &src);
    assert_non_null(wrk_task_unpublishable(t, "dlq refused it: invalid record", false));
    assert_int_equal(wrk_task_finish(t)->dead_level, WRK_DEAD_MINIMAL);
    wrk_task_free(t);
}

/* Whose refusal a refused record is (wrk_commit.c): a dead letter steps down only for the
 * dead-letter topic's refusal of the record itself; a job's records for a record too large, or
 * for its own reply_to as a whole; one of the worker's own topics unknown or forbidden is no
 * job's (a review of a9b5994: a deleted dead-letter topic gave up every dead letter, and a
 * refused audit event gave up a dead letter the dead-letter topic never refused). */
static void test_whose_refusal(void **st)
{
    (void)st;
    wrk_config c;
    wrk_config_default(&c);
    c.worker_id = "w-test";
    const char *dlq = c.kafka.dlq_topic, *audit = c.kafka.audit_topic;
    const char *results = c.kafka.results_topic;
    wrk_source src = {"jobs", 2, 41};
    wrk_task *t = wrk_task_dead(&c, "job is not valid JSON", "garbage", 7, &src);
    assert_true(wrk_commit_jobs_refusal(&c, t, dlq, RD_KAFKA_RESP_ERR_INVALID_RECORD));
    assert_true(wrk_commit_jobs_refusal(&c, t, dlq, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE));
    assert_false(wrk_commit_jobs_refusal(&c, t, dlq, RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC));
    assert_false(wrk_commit_jobs_refusal(&c, t, dlq, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED));
    assert_false(wrk_commit_jobs_refusal(&c, t, audit, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE));
    assert_false(wrk_commit_jobs_refusal(&c, t, NULL, RD_KAFKA_RESP_ERR_INVALID_RECORD));
    wrk_task_free(t);
    const char *job = "{\"id\":\"a\",\"code\":\"x\",\"reply_to\":\"codeq.reply.t\","
                      "\"limits\":{\"pids\":1}}";
    t = wrk_task_start(&c, job, strlen(job), &src, NULL); /* invalid: answered, never run */
    assert_true(wrk_task_done(t));
    assert_string_equal(wrk_task_finish(t)->reply_to, "codeq.reply.t");
    assert_true(wrk_commit_jobs_refusal(&c, t, "codeq.reply.t",
                                        RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART));
    assert_false(wrk_commit_jobs_refusal(&c, t, results, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART));
    assert_true(wrk_commit_jobs_refusal(&c, t, results, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE));
    assert_false(wrk_commit_jobs_refusal(&c, t, audit, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED));
    wrk_task_free(t);
}

/* A 300 kB value with a small key and header, dead-lettered with the given budget. */
static void cut_case(size_t budget, wrk_dead_level level, size_t want_max)
{
    enum { N = 300000 };
    char *big = malloc(N);
    for (size_t i = 0; i < N; i++) big[i] = (char)('a' + i % 26);
    rd_kafka_headers_t *h = rd_kafka_headers_new(1);
    rd_kafka_header_add(h, "trace-id", -1, "t-9", -1);
    env e;
    rd_kafka_message_t *dl = round_trip(&e, "k-9", 3, big, N, h, budget, level);
    char buf[128], sha[65];
    size_t hbytes = 0, vl;
    rd_kafka_headers_t *dh = NULL;
    const char *name;
    const void *v;
    assert_int_equal(rd_kafka_message_headers(dl, &dh), 0);
    for (size_t i = 0; !rd_kafka_header_get_all(dh, i, &name, &v, &vl); i++)
        hbytes += strlen(name) + vl;
    assert_true(dl->len + dl->key_len + hbytes <= want_max);
    assert_true(dl->len > want_max / 2);
    assert_memory_equal(dl->payload, big, dl->len);
    assert_int_equal(dl->key_len, 3);
    assert_string_equal(header(dl, "trace-id", buf, sizeof buf), "t-9");
    assert_string_equal(header(dl, "codeq.value.truncated", buf, sizeof buf), "true");
    assert_string_equal(header(dl, "codeq.value.size", buf, sizeof buf), "300000");
    wrk_sha256_hex(big, N, sha);
    assert_string_equal(header(dl, "codeq.value.sha256", buf, sizeof buf), sha);
    assert_string_equal(header(dl, "codeq.error", buf, sizeof buf), "job is not valid JSON");
    assert_null(header(dl, "codeq.key.truncated", buf, sizeof buf));
    free(big);
    env_stop(&e, dl);
}

static void test_dead_letter_cut_to_budget(void **st)
{
    (void)st;
    cut_case(100000, WRK_DEAD_FULL, 100000);
}

static void test_dead_letter_refused_cut_small(void **st)
{
    (void)st;
    cut_case(997952, WRK_DEAD_SMALL, 16384);
    /* below 16 kB already (a topic of 8192 bytes): half of it, not the same record again */
    cut_case(12000, WRK_DEAD_SMALL, 6000);
}

/* Counts the partitioner's calls: librdkafka partitions a record inside producev only when it
 * already knows the topic's partitions; a record for a topic it has not met waits unpartitioned
 * for the next metadata (its topic scan: up to 1 s), and the partitioner is not called. */
static int partitioned;

static int32_t count_partitioner(const rd_kafka_topic_t *rkt, const void *key, size_t keylen,
                                 int32_t partitions, void *rkt_opaque, void *msg_opaque)
{
    (void)rkt, (void)key, (void)keylen, (void)rkt_opaque, (void)msg_opaque;
    partitioned++;
    return partitions > 0 ? 0 : RD_KAFKA_PARTITION_UA;
}

static void topics_config(wrk_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    wrk_kafka_opts_default(&cfg->kafka);
    cfg->kafka.results_topic = "results";
    cfg->kafka.audit_topic = "audit";
    cfg->kafka.dlq_topic = "dlq";
}

/* A new producer (warmed or not), then one keyed record (as all of the worker's are: keyless
 * ones are placed without the partitioner) to each of the worker's topics at once: how many
 * were partitioned inside producev. */
static int first_records_partitioned(const char *boot, bool warm)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers", boot, errbuf, sizeof errbuf),
                     RD_KAFKA_CONF_OK);
    rd_kafka_conf_set(conf, "log_level", "3", errbuf, sizeof errbuf);
    rd_kafka_topic_conf_t *tc = rd_kafka_topic_conf_new();
    rd_kafka_topic_conf_set_partitioner_cb(tc, count_partitioner);
    rd_kafka_conf_set_default_topic_conf(conf, tc);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errbuf, sizeof errbuf);
    assert_non_null(p);
    wrk_config cfg;
    topics_config(&cfg);
    char err[256];
    if (warm) assert_int_equal(wrk_publish_warm(p, &cfg, err, sizeof err), 0);
    partitioned = 0;
    const char *topics[] = {"results", "audit", "dlq"};
    for (int i = 0; i < 3; i++)
        assert_int_equal(rd_kafka_producev(p, RD_KAFKA_V_TOPIC(topics[i]),
                                           RD_KAFKA_V_KEY("job-1", 5), RD_KAFKA_V_VALUE("x", 1),
                                           RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                         0);
    int n = partitioned;
    assert_int_equal(rd_kafka_flush(p, 10000), 0);
    rd_kafka_destroy(p);
    return n;
}

static void test_warm_topics_known_before_first_record(void **st)
{
    (void)st;
    rd_kafka_t *mrk = client(RD_KAFKA_PRODUCER, "");
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(mrk, 1);
    assert_non_null(mc);
    const char *boot = rd_kafka_mock_cluster_bootstraps(mc);
    assert_int_equal(rd_kafka_mock_topic_create(mc, "results", 4, 1), 0);
    assert_int_equal(rd_kafka_mock_topic_create(mc, "audit", 4, 1), 0);
    assert_int_equal(rd_kafka_mock_topic_create(mc, "dlq", 1, 1), 0);
    /* the control: not warmed, none of the three can be partitioned yet */
    assert_int_equal(first_records_partitioned(boot, false), 0);
    assert_int_equal(first_records_partitioned(boot, true), 3);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(mrk);
}

/* No broker answers: an error naming the topics, in bounded time. */
static void test_warm_without_broker(void **st)
{
    (void)st;
    rd_kafka_t *p = client(RD_KAFKA_PRODUCER, "127.0.0.1:1");
    wrk_config cfg;
    topics_config(&cfg);
    char err[256] = "";
    assert_int_equal(wrk_publish_warm(p, &cfg, err, sizeof err), -1);
    print_message("%s\n", err);
    assert_non_null(strstr(err, "metadata of results, audit, dlq"));
    rd_kafka_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dead_letter_keeps_key_and_headers),
        cmocka_unit_test(test_dead_letter_of_undecodable_record),
        cmocka_unit_test(test_dead_letter_cut_to_budget),
        cmocka_unit_test(test_dead_letter_refused_cut_small),
        cmocka_unit_test(test_dead_letter_without_key),
        cmocka_unit_test(test_minimal_dead_letter),
        cmocka_unit_test(test_undecodable_has_no_hash),
        cmocka_unit_test(test_refused_dead_letter_steps),
        cmocka_unit_test(test_whose_refusal),
        cmocka_unit_test(test_warm_topics_known_before_first_record),
        cmocka_unit_test(test_warm_without_broker),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
