/* The dead-letter path (wrk_publish.c) on librdkafka's in-memory mock cluster: a record that
 * goes to the dead-letter topic keeps its value, its key and its headers, and gets codeq's
 * reason and origin headers after them, so its owner can find it by key and replay it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "wrk_internal.h"

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

static void test_dead_letter_keeps_key_and_headers(void **st)
{
    (void)st;
    rd_kafka_t *mrk = client(RD_KAFKA_PRODUCER, "");
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(mrk, 1);
    assert_non_null(mc);
    const char *boot = rd_kafka_mock_cluster_bootstraps(mc);
    assert_int_equal(rd_kafka_mock_topic_create(mc, "jobs", 1, 1), 0);
    assert_int_equal(rd_kafka_mock_topic_create(mc, "dlq", 1, 1), 0);
    assert_int_equal(rd_kafka_mock_topic_create(mc, "audit", 1, 1), 0);

    /* The producer's record: not JSON, a binary key, two headers. */
    rd_kafka_t *p = client(RD_KAFKA_PRODUCER, boot);
    static const char key[] = {'k', 0, 'y', (char)0xff};
    rd_kafka_headers_t *h = rd_kafka_headers_new(2);
    rd_kafka_header_add(h, "trace-id", -1, "t-42", -1);
    rd_kafka_header_add(h, "owner", -1, "agent-7", -1);
    assert_int_equal(rd_kafka_producev(p, RD_KAFKA_V_TOPIC("jobs"), RD_KAFKA_V_KEY(key, sizeof key),
                                       RD_KAFKA_V_VALUE("not json", 8), RD_KAFKA_V_HEADERS(h),
                                       RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                     0);
    assert_int_equal(rd_kafka_flush(p, 10000), 0);

    rd_kafka_t *c = client(RD_KAFKA_CONSUMER, boot);
    rd_kafka_message_t *m = read_first(c, "jobs");
    wrk_config cfg;
    memset(&cfg, 0, sizeof cfg);
    wrk_kafka_opts_default(&cfg.kafka);
    cfg.kafka.dlq_topic = "dlq";
    cfg.kafka.audit_topic = "audit";
    wrk_outcome o = {.audit = json_array()};
    wrk_delivery d = {0};
    char err[256];
    assert_int_equal(wrk_publish_dead_letter(p, &cfg, m, "job is not valid JSON", &o, &d, NULL, err,
                                             sizeof err),
                     0);
    assert_int_equal(wrk_publish_wait(p, &d, 10000, err, sizeof err), 0);
    rd_kafka_message_destroy(m);
    json_decref(o.audit);

    rd_kafka_t *c2 = client(RD_KAFKA_CONSUMER, boot);
    rd_kafka_message_t *dl = read_first(c2, "dlq");
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
    rd_kafka_message_destroy(dl);

    rd_kafka_consumer_close(c);
    rd_kafka_consumer_close(c2);
    rd_kafka_destroy(c);
    rd_kafka_destroy(c2);
    rd_kafka_destroy(p);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(mrk);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dead_letter_keeps_key_and_headers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
