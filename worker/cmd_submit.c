/* codeq submit: produce one job per file and wait for each result by id.
 * The results consumer is assigned at the end of every results partition BEFORE the jobs are
 * produced, so no result can slip past it and no consumer group or commit is involved.
 * With --reply-to it reads the reply topic and the results topic both: a worker answers a
 * job there that it may not answer on its reply_to (a topic it may not write, a result too
 * large for it). Results are read with read_committed, as every codeq reader should. The
 * whole command, Kafka's set-up included, ends within its --timeout, but for the wait for
 * the broker to acknowledge the jobs it sent (up to 30 s more). */
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cli.h"
#include "wrk_internal.h"

static const char submit_help[] =
    "usage: codeq submit [OPTIONS] FILE.py...\n\n"
    "Submit each file as a job and print each result (one JSON object per line) as it\n"
    "arrives. Exit 0 when every result arrived (whatever its status), 1 if any is missing\n"
    "at the timeout or Kafka failed, 2 on a bad option or a file that cannot be sent (one\n"
    "that cannot be read, or is not UTF-8 text): then no job is sent.\n\n"
    CLI_KAFKA_HELP
    "  -t, --timeout S           seconds the command waits for Kafka and the results\n"
    "                            (default 60); the broker's acknowledgment of the jobs\n"
    "                            sent is waited for up to 30 s more\n"
    "      --stdin FILE          standard input for every job\n"
    "      --reply-to TOPIC      ask for results on TOPIC instead of the results topic (an\n"
    "                            existing topic the worker may write; a result the worker\n"
    "                            answers on the results topic instead is read there)\n"
    "  -h, --help                this help\n";

typedef struct {
    char **ids;
    bool *seen;
    int n, missing;
} pending;

static uint64_t deadline; /* the --timeout's end */

/* Milliseconds one Kafka call may wait: up to cap, never past the deadline. */
static int wait_ms(int cap)
{
    uint64_t now = wrk_now_ms();
    uint64_t left = now < deadline ? deadline - now : 1;
    return left < (uint64_t)cap ? (int)left : cap;
}

/* A topic created a moment ago may not have a leader yet: retry what the broker says is
 * transient, for up to 15 s. */
static rd_kafka_resp_err_t watermark_high(rd_kafka_t *k, const char *topic, int32_t p,
                                          int64_t *hi)
{
    int64_t lo;
    rd_kafka_resp_err_t e;
    uint64_t until = wrk_now_ms() + (uint64_t)wait_ms(15000);
    while ((e = rd_kafka_query_watermark_offsets(k, topic, p, &lo, hi, wait_ms(5000))) &&
           (e == RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION ||
            e == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
            e == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || e == RD_KAFKA_RESP_ERR__TRANSPORT) &&
           wrk_now_ms() < until)
        usleep(200 * 1000);
    return e;
}

/* The topic's metadata, or NULL with why: a topic that does not exist is refused here, not
 * created by the first produce on a broker that creates topics on use (a misspelt
 * --jobs-topic would get a topic no worker reads, and the job no answer). A reply topic is the
 * client's to create: no worker creates one. */
static const rd_kafka_metadata_t *topic_metadata(rd_kafka_t *k, const char *what,
                                                 const char *topic, char *err, size_t errlen)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t e = wrk_kafka_topic_metadata(k, topic, wait_ms(10000), &md);
    if (!e && md->topic_cnt == 1 && !md->topics[0].err) return md;
    if (!e && md->topic_cnt != 1) e = RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC; /* no answer for it */
    bool unknown = !e && md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    snprintf(err, errlen, "codeq: submit: %s %s: %s%s", what, topic,
             rd_kafka_err2str(e ? e : md->topics[0].err),
             !unknown ? ""
             : strcmp(what, "reply topic") == 0
                 ? " (create it first, e.g. kafka-topics.sh --create --topic NAME; the worker "
                   "answers on topics starting with its --reply-topic-prefix, codeq.reply. by "
                   "default)"
                 : " (codeq topics creates codeq's topics)");
    if (md) rd_kafka_metadata_destroy(md);
    return NULL;
}

/* Adds the end of every partition of `topic` to l: all of them, or none and -1. */
static int add_ends(rd_kafka_t *k, const char *what, const char *topic,
                    rd_kafka_topic_partition_list_t *l, char *err, size_t errlen)
{
    const rd_kafka_metadata_t *md = topic_metadata(k, what, topic, err, errlen);
    if (!md) return -1;
    int rc = 0, had = l->cnt;
    for (int i = 0; rc == 0 && i < md->topics[0].partition_cnt; i++) {
        int64_t hi;
        int32_t p = md->topics[0].partitions[i].id;
        rd_kafka_resp_err_t e = watermark_high(k, topic, p, &hi);
        if (e) {
            snprintf(err, errlen, "codeq: submit: offsets of %s [%d]: %s", topic, p,
                     rd_kafka_err2str(e));
            rc = -1;
        } else {
            rd_kafka_topic_partition_list_add(l, topic, p)->offset = hi;
        }
    }
    rd_kafka_metadata_destroy(md);
    while (rc < 0 && l->cnt > had)
        rd_kafka_topic_partition_list_del_by_idx(l, l->cnt - 1);
    return rc;
}

/* With --reply-to, the results topic is read too where it can be: a client kept from reading
 * it (its reply topic is its own) is told what it may miss, and goes on. */
static void also_results(rd_kafka_t *k, const wrk_kafka_opts *o,
                         rd_kafka_topic_partition_list_t *l)
{
    char err[512];
    if (add_ends(k, "results topic", o->results_topic, l, err, sizeof err) < 0)
        fprintf(stderr, "%s; an answer the worker gives there instead of the reply topic (a "
                "reply_to it may not write) will not be seen\n", err);
}

static rd_kafka_t *results_reader(const wrk_kafka_opts *o, const char *reply_to, char *err,
                                  size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(o, err, errlen);
    if (!conf || wrk_kafka_set(conf, "isolation.level", "read_committed", err, errlen) < 0 ||
        wrk_kafka_set(conf, "group.id", "codeq-submit", err, errlen) < 0 ||
        wrk_kafka_set(conf, "enable.auto.commit", "false", err, errlen) < 0)
        return NULL;
    rd_kafka_t *k = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!k) {
        snprintf(err, errlen, "codeq: submit: consumer: %s", kerr);
        return NULL;
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
    rd_kafka_resp_err_t e;
    /* --reply-to the results topic itself is that topic once: a partition assigned twice is
     * refused */
    bool both = reply_to && strcmp(reply_to, o->results_topic) != 0;
    if ((reply_to && add_ends(k, "reply topic", reply_to, l, err, errlen) < 0) ||
        (!reply_to && add_ends(k, "results topic", o->results_topic, l, err, errlen) < 0))
        goto fail;
    if (both) also_results(k, o, l);
    if ((e = rd_kafka_assign(k, l))) {
        snprintf(err, errlen, "codeq: submit: assign: %s", rd_kafka_err2str(e));
        goto fail;
    }
    rd_kafka_topic_partition_list_destroy(l);
    return k;
fail:
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(k);
    return NULL;
}

static char *new_id(const char *path)
{
    unsigned char r[6];
    char base[4096], part[200], *id = malloc(256);
    if (!id) return NULL;
    if (getrandom(r, sizeof r, 0) != sizeof r) memset(r, 0, sizeof r);
    snprintf(base, sizeof base, "%s", path);
    /* a valid id whatever the file's name holds (control characters, bytes not UTF-8) */
    wrk_id_part(basename(base), 180, part, sizeof part);
    snprintf(id, 256, "%s-%02x%02x%02x%02x%02x%02x", part, r[0], r[1], r[2], r[3], r[4], r[5]);
    return id;
}

/* The value of an -X property the operator gave (the last one, as librdkafka applies them). */
static const char *operator_prop(const wrk_kafka_opts *o, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < o->nprops; i++)
        if (strcmp(o->props[i][0], name) == 0) v = o->props[i][1];
    return v;
}

/* The largest record the producer may send (-X message.max.bytes, else librdkafka's default):
 * a program is read up to that. A larger one could not be sent; one above the job's code limit
 * is sent, and the worker answers it invalid, as it answers any client's. */
static size_t producer_max(const wrk_kafka_opts *o)
{
    const char *v = operator_prop(o, "message.max.bytes");
    return v ? strtoull(v, NULL, 10) : WRK_RECORD_DEFAULT_MAX;
}

/* A program as a job's code: read and checked before anything is sent, so that one bad file
 * among many sends none. */
static json_t *read_program(const char *path, size_t max)
{
    size_t len;
    char *code = cli_read_file("submit", path, max, &len);
    json_t *c = code ? cli_json_text("submit", path, code, len) : NULL;
    free(code);
    return c;
}

/* The jobs topic's max.message.bytes bounds a record batch, and librdkafka batches up to 1 MB:
 * under that, jobs that each fit were refused together. The producer batches at most the
 * topic's limit, unless -X batch.size says otherwise. */
static int fit_batches(rd_kafka_conf_t *conf, const wrk_kafka_opts *o, char *err, size_t errlen)
{
    char v[32];
    int w = wait_ms(6000) - 1000; /* the read waits up to a second past its request's timeout */
    size_t max = operator_prop(o, "batch.size") || w < 1
                     ? 0 : wrk_kafka_topic_max_bytes(o, o->jobs_topic, w);
    if (!max || max >= WRK_RECORD_DEFAULT_MAX) return 0;
    snprintf(v, sizeof v, "%zu", max);
    return wrk_kafka_set(conf, "batch.size", v, err, errlen);
}

static int produce_jobs(const wrk_kafka_opts *o, char **files, json_t **codes, pending *pd,
                        json_t *in, json_t *reply_to)
{
    char err[512], kerr[256];
    wrk_delivery d = {0};
    rd_kafka_conf_t *conf = wrk_kafka_conf(o, err, sizeof err);
    if (!conf || wrk_kafka_set(conf, "enable.idempotence", "true", err, sizeof err) < 0 ||
        wrk_kafka_set(conf, "allow.auto.create.topics", "false", err, sizeof err) < 0 ||
        fit_batches(conf, o, err, sizeof err) < 0)
        goto fail;
    rd_kafka_conf_set_dr_msg_cb(conf, wrk_publish_dr_cb);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, kerr, sizeof kerr);
    if (!p) {
        snprintf(err, sizeof err, "codeq: submit: producer: %s", kerr);
        goto fail;
    }
    const rd_kafka_metadata_t *md = topic_metadata(p, "jobs topic", o->jobs_topic, err, sizeof err);
    if (!md) {
        rd_kafka_destroy(p);
        goto fail;
    }
    rd_kafka_metadata_destroy(md);
    int rc = 0;
    for (int i = 0; i < pd->n && rc == 0; i++) {
        pd->ids[i] = new_id(files[i]);
        json_t *job = pd->ids[i] ? json_pack("{s:s, s:O}", "id", pd->ids[i], "code", codes[i])
                                 : NULL;
        if (job && in) json_object_set(job, "stdin", in);
        if (job && reply_to) json_object_set(job, "reply_to", reply_to);
        char *s = job ? json_dumps(job, JSON_COMPACT) : NULL;
        json_decref(job);
        if (!s) {
            fprintf(stderr, "codeq: submit: %s: out of memory\n", files[i]);
            rc = -1;
            break;
        }
        rd_kafka_resp_err_t e = rd_kafka_producev(
            p, RD_KAFKA_V_TOPIC(o->jobs_topic), RD_KAFKA_V_KEY(pd->ids[i], strlen(pd->ids[i])),
            RD_KAFKA_V_VALUE(s, strlen(s)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_FREE),
            RD_KAFKA_V_OPAQUE(&d), RD_KAFKA_V_END);
        if (e) {
            free(s);
            snprintf(err, sizeof err, "codeq: submit: produce: %s", rd_kafka_err2str(e));
            fprintf(stderr, "%s\n", err);
            rc = -1;
        } else {
            d.outstanding++;
        }
    }
    /* Not bound by --timeout: jobs being sent are waited for until the broker has them (or
     * refused them), never left sent or not, unknown; -t 1 means "do not wait for results". */
    if (rc == 0 && wrk_publish_wait(p, &d, 30000, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        rc = -1;
    }
    rd_kafka_destroy(p);
    return rc;
fail:
    fprintf(stderr, "%s\n", err);
    return -1;
}

static void collect(rd_kafka_t *k, pending *pd)
{
    while (pd->missing > 0 && wrk_now_ms() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(k, 200);
        if (!m) continue;
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                fprintf(stderr, "codeq: submit: %s\n", rd_kafka_message_errstr(m));
        } else {
            /* a job's output may hold NUL characters: its result is still JSON */
            json_t *r = json_loadb(m->payload, m->len, JSON_ALLOW_NUL, NULL);
            const char *id = json_string_value(json_object_get(r, "id"));
            for (int i = 0; id && i < pd->n; i++) {
                if (pd->seen[i] || strcmp(pd->ids[i], id) != 0) continue;
                pd->seen[i] = true;
                pd->missing--;
                if (isatty(STDOUT_FILENO)) {
                    cli_print_json(r); /* escaped for the terminal */
                } else {
                    fwrite(m->payload, 1, m->len, stdout);
                    putchar('\n');
                }
                fflush(stdout);
                fprintf(stderr, "codeq: submit: %s: %s\n", id,
                        json_string_value(json_object_get(r, "status")));
                break;
            }
            json_decref(r);
        }
        rd_kafka_message_destroy(m);
    }
}

int cmd_submit(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_KAFKA_LONGOPTS,
        {"timeout", required_argument, NULL, 't'},
        {"stdin", required_argument, NULL, 's'},
        {"reply-to", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    wrk_kafka_opts o;
    unsigned timeout = 60;
    const char *stdin_path = NULL, *reply_to = NULL;
    char err[512], *in = NULL;
    size_t inlen = 0;
    int opt;
    wrk_kafka_opts_default(&o);
    while ((opt = getopt_long(argc, argv, "b:X:t:h", longopts, NULL)) != -1) {
        int k = cli_kafka_opt(opt, optarg, &o);
        if (k < 0) return 2;
        if (k > 0) continue;
        switch (opt) {
        case 't': if (cli_uint("timeout", optarg, &timeout) < 0) return 2; break;
        case 's': stdin_path = optarg; break;
        case 'r': reply_to = optarg; break;
        case 'h': fputs(submit_help, stdout); return 0;
        default: fputs(submit_help, stderr); return 2;
        }
    }
    if (optind >= argc) {
        fputs(submit_help, stderr);
        return 2;
    }
    if (stdin_path && !(in = cli_read_file("submit", stdin_path, WRK_JOB_MAX_STDIN, &inlen))) return 2;
    /* Every job carries them as JSON strings: made once, refused here if they cannot be. */
    json_t *jin = in ? cli_json_text("submit", "--stdin FILE", in, inlen) : NULL;
    json_t *jreply = reply_to ? cli_json_text("submit", "--reply-to", reply_to, strlen(reply_to))
                              : NULL;
    bool refused = (in && !jin) || (reply_to && !jreply);
    free(in);
    if (refused) {
        json_decref(jin);
        json_decref(jreply);
        return 2;
    }
    pending pd = {.n = argc - optind, .missing = argc - optind};
    pd.ids = calloc((size_t)pd.n, sizeof *pd.ids);
    pd.seen = calloc((size_t)pd.n, sizeof *pd.seen);
    json_t **codes = calloc((size_t)pd.n, sizeof *codes);
    int unread = 0;
    size_t max = producer_max(&o);
    for (int i = 0; codes && i < pd.n; i++) unread += !(codes[i] = read_program(argv[optind + i], max));
    rd_kafka_t *k = NULL;
    int rc = 1;
    deadline = wrk_now_ms() + (uint64_t)timeout * 1000;
    if (!pd.ids || !pd.seen || !codes) {
        fprintf(stderr, "codeq: submit: out of memory\n");
    } else if (unread) {
        fprintf(stderr, "codeq: submit: %d of %d files could not be sent as jobs; nothing was sent\n",
                unread, pd.n);
        rc = 2;
    } else if (!(k = results_reader(&o, reply_to, err, sizeof err))) {
        fprintf(stderr, "%s\n", err);
    } else if (produce_jobs(&o, argv + optind, codes, &pd, jin, jreply) == 0) {
        fprintf(stderr, "codeq: submit: %d jobs sent to %s; waiting up to %.1f s\n", pd.n,
                o.jobs_topic, (double)wait_ms(INT32_MAX) / 1000);
        collect(k, &pd);
        for (int i = 0; i < pd.n; i++)
            if (!pd.seen[i]) fprintf(stderr, "codeq: submit: %s: no result\n", pd.ids[i]);
        rc = pd.missing ? 1 : 0;
    }
    if (k) {
        rd_kafka_consumer_close(k);
        rd_kafka_destroy(k);
    }
    for (int i = 0; i < pd.n; i++) {
        if (pd.ids) free(pd.ids[i]);
        if (codes) json_decref(codes[i]);
    }
    free(codes);
    free(pd.ids);
    free(pd.seen);
    json_decref(jin);
    json_decref(jreply);
    return rc;
}
