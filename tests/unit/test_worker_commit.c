/* The committer's transactional producer (wrk_commit.c), on librdkafka's in-memory mock
 * cluster: a transaction the coordinator turns away with CONCURRENT_TRANSACTIONS (the previous
 * one's markers not written yet) is asked again after the committer's short back-off, not
 * librdkafka's default 100 ms; an operator's -X retry.backoff.ms still wins. And the group
 * metadata a commit needs is still there while the consumer closes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wrk_internal.h"
#include "wrk_worker.h"

#include <librdkafka/rdkafka_mock.h> /* after rdkafka.h */

enum { TURNED_AWAY = 3 }; /* CONCURRENT_TRANSACTIONS answers before the coordinator accepts */
enum { API_ADD_OFFSETS_TO_TXN = 25 }; /* Kafka's API key (librdkafka's is not public) */

static void config(wrk_config *c, const char *brokers, const char *backoff)
{
    memset(c, 0, sizeof *c);
    wrk_kafka_opts_default(&c->kafka);
    c->kafka.brokers = brokers;
    c->group = "g";
    c->instance_id = "i";
    if (backoff) {
        c->kafka.props[0][0] = "retry.backoff.ms";
        c->kafka.props[0][1] = backoff;
        c->kafka.nprops = 1;
    }
}

static void backoff_of(const char *operator_value, char *out, size_t n)
{
    wrk_config c;
    char err[256];
    config(&c, "127.0.0.1:1", operator_value);
    rd_kafka_conf_t *conf = wrk_commit_conf(&c, err, sizeof err);
    assert_non_null(conf);
    assert_int_equal(rd_kafka_conf_get(conf, "retry.backoff.ms", out, &n), RD_KAFKA_CONF_OK);
    rd_kafka_conf_destroy(conf);
}

static void test_backoff_short_unless_operator_says(void **st)
{
    (void)st;
    char v[32];
    backoff_of(NULL, v, sizeof v);
    assert_string_equal(v, "10");
    backoff_of("250", v, sizeof v);
    assert_string_equal(v, "250");
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void ok(rd_kafka_error_t *e, const char *what)
{
    if (e) fail_msg("%s: %s", what, rd_kafka_error_string(e));
}

/* One transaction (a record and the group's offset) through a mock coordinator that turns
 * away its AddOffsetsToTxn TURNED_AWAY times; how long send_offsets_to_transaction took. */
static double turned_away_ms(const char *operator_backoff)
{
    char err[256];
    rd_kafka_conf_t *mconf = rd_kafka_conf_new();
    rd_kafka_conf_set(mconf, "log_level", "3", err, sizeof err);
    rd_kafka_t *mrk = rd_kafka_new(RD_KAFKA_PRODUCER, mconf, err, sizeof err);
    assert_non_null(mrk);
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(mrk, 1);
    assert_non_null(mc);
    assert_int_equal(rd_kafka_mock_topic_create(mc, "results", 1, 1), 0);
    assert_int_equal(rd_kafka_mock_topic_create(mc, "jobs", 1, 1), 0);

    wrk_config c;
    config(&c, rd_kafka_mock_cluster_bootstraps(mc), operator_backoff);
    rd_kafka_conf_t *conf = wrk_commit_conf(&c, err, sizeof err);
    assert_non_null(conf);
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    assert_non_null(p);
    ok(rd_kafka_init_transactions(p, 10000), "init_transactions");
    ok(rd_kafka_begin_transaction(p), "begin_transaction");
    assert_int_equal(rd_kafka_producev(p, RD_KAFKA_V_TOPIC("results"), RD_KAFKA_V_VALUE("r", 1),
                                       RD_KAFKA_V_END),
                     RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_resp_err_t errs[TURNED_AWAY];
    for (int i = 0; i < TURNED_AWAY; i++) errs[i] = RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS;
    rd_kafka_mock_push_request_errors_array(mc, API_ADD_OFFSETS_TO_TXN, TURNED_AWAY, errs);

    rd_kafka_topic_partition_list_t *offs = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(offs, "jobs", 0)->offset = 1;
    rd_kafka_consumer_group_metadata_t *g = rd_kafka_consumer_group_metadata_new("g");
    double t0 = now_ms();
    ok(rd_kafka_send_offsets_to_transaction(p, offs, g, 10000), "send_offsets_to_transaction");
    double took = now_ms() - t0;
    ok(rd_kafka_commit_transaction(p, 10000), "commit_transaction");
    rd_kafka_consumer_group_metadata_destroy(g);
    rd_kafka_topic_partition_list_destroy(offs);
    rd_kafka_destroy(p);
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(mrk);
    return took;
}

/* Three refusals cost at least three back-offs: >= 300 ms at librdkafka's default (the
 * control, set by -X as an operator would), well under it with the committer's own. */
/* librdkafka gives no group metadata once its consumer is closing, which is when the revoke
 * that rd_kafka_consumer_close runs makes the hand-over commit; the worker used to pass that
 * NULL on and destroy it, and died of SIGSEGV while stopping (kafka_chaos_sigterm, exit -11).
 * The committer keeps the last metadata the consumer gave and commits with it then. */
static void test_group_metadata_outlives_close(void **st)
{
    (void)st;
    char err[256];
    wrk_committer *cm = wrk_committer_new();
    assert_non_null(cm);
    assert_null(wrk_commit_group(cm, NULL));
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers", "127.0.0.1:1", err, sizeof err),
                     RD_KAFKA_CONF_OK);
    assert_int_equal(rd_kafka_conf_set(conf, "group.id", "g", err, sizeof err), RD_KAFKA_CONF_OK);
    assert_int_equal(rd_kafka_conf_set(conf, "log_level", "0", err, sizeof err), RD_KAFKA_CONF_OK);
    rd_kafka_t *k = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
    assert_non_null(k);
    rd_kafka_consumer_group_metadata_t *g = wrk_commit_group(cm, k);
    assert_non_null(g);
    rd_kafka_consumer_close(k);
    rd_kafka_consumer_group_metadata_t *none = rd_kafka_consumer_group_metadata(k);
    assert_null(none); /* what librdkafka does, and why the last one is kept */
    assert_ptr_equal(wrk_commit_group(cm, k), g);
    rd_kafka_destroy(k);
    wrk_committer_free(cm); /* frees the kept metadata */
}

static void test_turned_away_transaction_asks_again_soon(void **st)
{
    (void)st;
    double dflt = turned_away_ms("100"), ours = turned_away_ms(NULL);
    print_message("send_offsets after %d CONCURRENT_TRANSACTIONS: %.0f ms at 100 ms back-off, "
                  "%.0f ms with the committer's\n", TURNED_AWAY, dflt, ours);
    assert_true(dflt >= 100.0 * TURNED_AWAY);
    assert_true(ours < 100.0 * TURNED_AWAY / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff_short_unless_operator_says),
        cmocka_unit_test(test_turned_away_transaction_asks_again_soon),
        cmocka_unit_test(test_group_metadata_outlives_close),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
