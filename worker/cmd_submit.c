/* codeq submit: produce one job per file and wait for each result by id.
 * The results consumer is assigned at the end of every results partition BEFORE the jobs are
 * produced, so no result can slip past it and no consumer group or commit is involved.
 * With --reply-to it reads the reply topic and the results topic both: a worker answers a
 * job there that it may not answer on its reply_to (a topic it may not write, a result too
 * large for it). Results are read with read_committed, as every codeq reader should. The
 * whole command, Kafka's set-up included, ends within its --timeout, but for the read of the
 * jobs topic's size limit (at least 2 s) and the wait for the broker to acknowledge the jobs
 * it sent (up to 30 s more). */
#include <libgen.h>
#include <poll.h>
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
    "arrives. Exit 0 when every result arrived (whatever its status); 1 if any is missing\n"
    "at the timeout, a job the broker refused (each named, the others still awaited) or\n"
    "Kafka failed; 2 on a bad option or a file that cannot be sent (one that cannot be read,\n"
    "is not UTF-8 text, holds more than a job's 262144 bytes of code, or makes a record\n"
    "larger than the producer or the jobs topic takes, when the broker says its limit):\n"
    "then no job is sent. Ctrl-C (or SIGTERM) ends the wait, listing the jobs sent without\n"
    "a result (exit 130, 143); a second one ends the command at once.\n\n"
    CLI_KAFKA_HELP
    "  -t, --timeout S           seconds the command waits for Kafka and the results\n"
    "                            (default 60); the jobs topic's size limit is read for\n"
    "                            at least 2 s, and the broker's acknowledgment of the\n"
    "                            jobs sent is waited for up to 30 s more\n"
    "      --stdin FILE          standard input for every job\n"
    "      --reply-to TOPIC      ask for results on TOPIC instead of the results topic (an\n"
    "                            existing topic the worker may write, not the jobs, audit\n"
    "                            or dead-letter topic; a result the worker answers on the\n"
    "                            results topic instead is read there)\n"
    "  -h, --help                this help\n";

/* What became of a job's record. */
enum { UNSENT, QUEUED, SENT, REFUSED };

typedef struct {
    char *id, *record; /* the record's value, until it is produced */
    size_t len;
    int fate;
    rd_kafka_resp_err_t err; /* REFUSED: why */
    bool seen;               /* its result was read */
} sub_job;

typedef struct {
    sub_job *j;
    int n, missing;
} pending;

static uint64_t deadline; /* the --timeout's end */
static const char *brokers; /* -b, for what says the cluster did not answer */
/* Ctrl-C or SIGTERM: the waits end, and what was sent without an answer is listed (the
 * command used to die at once, naming none). */
static volatile sig_atomic_t interrupted; /* the signal's number */

static void on_signal(int sig)
{
    interrupted = sig;
    signal(sig, SIG_DFL); /* a second one ends the command at once */
}

/* Milliseconds one Kafka call may wait: up to cap, never past the deadline. */
static int wait_ms(int cap)
{
    uint64_t now = wrk_now_ms();
    uint64_t left = now < deadline ? deadline - now : 1;
    return left < (uint64_t)cap ? (int)left : cap;
}


/* The topic's metadata (*t in *md), or NULL with why: a topic that does not exist is refused
 * here, not created by the first produce on a broker that creates topics on use (a misspelt
 * --jobs-topic would get a topic no worker reads, and the job no answer). A reply topic is the
 * client's to create: no worker creates one. The cluster is asked for every topic, not for
 * this one by name: librdkafka's mock cluster (codeq broker) creates any topic named in a
 * metadata request, whatever the client's allow.auto.create.topics. A client lists every topic
 * it may describe, and writing or reading one implies describing it. */
static const rd_kafka_metadata_t *topic_metadata(rd_kafka_t *k, const char *what,
                                                 const char *topic,
                                                 const rd_kafka_metadata_topic_t **t, char *err,
                                                 size_t errlen)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t e = rd_kafka_metadata(k, 1, NULL, &md, wait_ms(10000));
    *t = NULL;
    for (int i = 0; !e && i < md->topic_cnt && !*t; i++)
        if (strcmp(md->topics[i].topic, topic) == 0) *t = &md->topics[i];
    if (*t && !(*t)->err) return md;
    if (e) { /* no answer at all: not the topic's fault */
        snprintf(err, errlen, "codeq: submit: cannot reach the broker at %s: %s (asking for the "
                 "%s %s)", brokers, rd_kafka_err2str(e), what, topic);
        if (md) rd_kafka_metadata_destroy(md);
        return NULL;
    }
    rd_kafka_resp_err_t why = *t ? (*t)->err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    bool unknown = why == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    snprintf(err, errlen, "codeq: submit: %s %s: %s%s", what, topic, rd_kafka_err2str(why),
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
    const rd_kafka_metadata_topic_t *t;
    const rd_kafka_metadata_t *md = topic_metadata(k, what, topic, &t, err, errlen);
    if (!md) return -1;
    int rc = 0, had = l->cnt;
    for (int i = 0; rc == 0 && i < t->partition_cnt; i++) {
        int64_t lo, hi;
        int32_t p = t->partitions[i].id;
        rd_kafka_resp_err_t e = wrk_kafka_watermarks(k, topic, p, &lo, &hi, wait_ms(15000));
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

/* The largest record the producer may send (-X message.max.bytes, else librdkafka's default). */
static size_t producer_max(const wrk_kafka_opts *o)
{
    const char *v = operator_prop(o, "message.max.bytes");
    char *end;
    unsigned long long n = v ? strtoull(v, &end, 10) : 0;
    /* a value that is not a number is librdkafka's to refuse, when the producer is made */
    return v && *v && !*end && n > 0 ? (size_t)n : WRK_RECORD_DEFAULT_MAX;
}

/* Whether the producer compresses: the jobs topic's limit then bounds a compressed batch,
 * which a record's own size does not tell. */
static bool compressed(const wrk_kafka_opts *o)
{
    const char *v = operator_prop(o, "compression.type");
    if (!v) v = operator_prop(o, "compression.codec");
    return v && strcmp(v, "none") != 0;
}

/* A job sent alone: one record in its batch, no headers. The batch's header (61 bytes) and
 * the record's varints (at most 36) take this much beside key and value; the worker's
 * WRK_RECORD_OVERHEAD (2048) also covers a result's headers, and refused jobs the topic takes
 * (a 100-byte job on a topic of max.message.bytes 1000 was "up to 0"). */
enum { SUBMIT_FRAMING = 128 };

/* Whether job j's record (key and value) fits a limit of `limit` bytes, less the record's
 * framing; if not, says so for `file`: `who` takes at most what (its `setting`). */
static bool fits(const sub_job *j, const char *file, size_t limit, const char *who,
                 const char *setting)
{
    size_t size = j->len + strlen(j->id);
    if (size + SUBMIT_FRAMING <= limit) return true;
    fprintf(stderr, "codeq: submit: %s: its job is a record of %zu bytes; %s takes records of "
            "up to %zu (%s %zu, less %d for the record's framing)\n", file, size, who,
            limit > SUBMIT_FRAMING ? limit - SUBMIT_FRAMING : 0, setting, limit, SUBMIT_FRAMING);
    return false;
}

/* Each file's job record (id, code, stdin, reply_to), made and checked before anything is
 * sent, so that one bad file among many sends none: a program that cannot be read, is not
 * UTF-8, or holds more code than a job may (the worker would answer it invalid), or a record
 * larger than the producer sends. Returns the number refused. */
static int make_records(const wrk_kafka_opts *o, char **files, pending *pd, json_t *in,
                        json_t *reply_to)
{
    size_t max = producer_max(o);
    int refused = 0;
    for (int i = 0; i < pd->n; i++) {
        sub_job *j = &pd->j[i];
        size_t len;
        char *code = cli_read_file("submit", files[i], WRK_JOB_MAX_CODE, &len);
        json_t *c = code ? cli_json_text("submit", files[i], code, len) : NULL;
        free(code);
        j->id = c ? new_id(files[i]) : NULL;
        json_t *job = j->id ? json_pack("{s:s, s:o}", "id", j->id, "code", c) : NULL;
        if (!j->id) json_decref(c);
        if (job && in) json_object_set(job, "stdin", in);
        if (job && reply_to) json_object_set(job, "reply_to", reply_to);
        j->record = job ? json_dumps(job, JSON_COMPACT) : NULL;
        json_decref(job);
        j->len = j->record ? strlen(j->record) : 0;
        if (c && !j->record) fprintf(stderr, "codeq: submit: %s: out of memory\n", files[i]);
        refused += !j->record || !fits(j, files[i], max, "the producer", "message.max.bytes");
    }
    return refused;
}

/* Jobs larger than the jobs topic's max.message.bytes would be refused by the broker one by
 * one, after the others were sent: they are refused here, before any is. Returns how many. */
static int over_topic(const wrk_kafka_opts *o, char **files, const pending *pd, size_t limit)
{
    char who[300];
    snprintf(who, sizeof who, "the jobs topic %s", o->jobs_topic);
    int over = 0;
    for (int i = 0; limit && !compressed(o) && i < pd->n; i++)
        over += !fits(&pd->j[i], files[i], limit, who, "max.message.bytes");
    return over;
}

/* The jobs topic's max.message.bytes bounds a record batch, and librdkafka batches up to 1 MB:
 * under that, jobs that each fit were refused together. The producer batches at most the
 * topic's limit, unless -X batch.size says otherwise. */
static int fit_batches(rd_kafka_conf_t *conf, const wrk_kafka_opts *o, size_t limit, char *err,
                       size_t errlen)
{
    char v[32];
    if (operator_prop(o, "batch.size") || !limit || limit >= WRK_RECORD_DEFAULT_MAX) return 0;
    snprintf(v, sizeof v, "%zu", limit);
    return wrk_kafka_set(conf, "batch.size", v, err, errlen);
}

/* The broker's answer for one job's record. */
static void sent_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    sub_job *j = m->_private;
    j->fate = m->err ? REFUSED : SENT;
    j->err = m->err;
}

static rd_kafka_t *jobs_producer(const wrk_kafka_opts *o, size_t limit, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(o, err, errlen);
    if (!conf || wrk_kafka_set(conf, "enable.idempotence", "true", err, errlen) < 0 ||
        wrk_kafka_set(conf, "allow.auto.create.topics", "false", err, errlen) < 0 ||
        fit_batches(conf, o, limit, err, errlen) < 0) {
        if (conf) rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, sent_cb);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, kerr, sizeof kerr);
    if (!p) snprintf(err, errlen, "codeq: submit: producer: %s", kerr);
    return p;
}

/* Tests only: the set-up held open (CODEQ_TEST_SUBMIT_HOLD_MS, at most 10 s) so that an
 * interrupt lands in it, where one was held until set-up ended and every job then queued. */
static void test_hold(void)
{
    const char *hold = getenv("CODEQ_TEST_SUBMIT_HOLD_MS");
    uint64_t until = wrk_now_ms() + (hold ? strtoul(hold, NULL, 10) % 10001 : 0);
    while (wrk_now_ms() < until && !interrupted) poll(NULL, 0, 20);
}

static int count(const pending *pd, int fate)
{
    int n = 0;
    for (int i = 0; i < pd->n; i++) n += pd->j[i].fate == fate;
    return n;
}

/* Sends every job, then waits until the broker has them or refused them (not bound by
 * --timeout: never left sent or not, unknown; -t 1 means "do not wait for results"). A job the
 * broker refuses, or one not sent after a refusal, is named; those sent are still awaited.
 * Returns 0 when every job was sent, 2 when none was because one would not fit the topic,
 * else 1. */
static int produce_jobs(rd_kafka_t *k, const wrk_kafka_opts *o, char **files, pending *pd)
{
    char err[512];
    /* first: the read of the topic's limit names it (and the mock cluster would make it) */
    const rd_kafka_metadata_topic_t *t;
    const rd_kafka_metadata_t *md = topic_metadata(k, "jobs topic", o->jobs_topic, &t, err,
                                                   sizeof err);
    if (!md) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    rd_kafka_metadata_destroy(md);
    /* Its own budget, not what --timeout leaves: with -t 1 nothing was left, and the check
     * that no job is sent unless all fit lapsed. The read waits up to a second past it. */
    int w = wait_ms(6000) - 1000;
    size_t limit = wrk_kafka_topic_max_bytes(o, o->jobs_topic, w < 2000 ? 2000 : w);
    test_hold();
    if (interrupted) return 0; /* nothing was sent */
    if (over_topic(o, files, pd, limit)) {
        fprintf(stderr, "codeq: submit: nothing was sent\n");
        return 2;
    }
    rd_kafka_t *p = jobs_producer(o, limit, err, sizeof err);
    if (!p) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    uint64_t until = wrk_now_ms() + 30000;
    for (int i = 0; i < pd->n && !interrupted; i++) {
        sub_job *j = &pd->j[i];
        rd_kafka_resp_err_t e;
        while ((e = rd_kafka_producev(
                    p, RD_KAFKA_V_TOPIC(o->jobs_topic), RD_KAFKA_V_KEY(j->id, strlen(j->id)),
                    RD_KAFKA_V_VALUE(j->record, j->len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_FREE),
                    RD_KAFKA_V_OPAQUE(j), RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL &&
               wrk_now_ms() < until && !interrupted)
            rd_kafka_poll(p, 100); /* room comes as the broker acknowledges */
        if (e) { /* the rest stay unsent */
            j->fate = REFUSED;
            j->err = e;
            break;
        }
        j->record = NULL; /* librdkafka's now */
        j->fate = QUEUED;
    }
    while (count(pd, QUEUED) > 0 && wrk_now_ms() < until && !interrupted) rd_kafka_poll(p, 50);
    /* What never left this process is not sent: its delivery report says so (purged). What
     * is in flight may have reached the broker. */
    rd_kafka_purge(p, RD_KAFKA_PURGE_F_QUEUE);
    rd_kafka_poll(p, 0);
    for (int i = 0; i < pd->n; i++) {
        sub_job *j = &pd->j[i];
        if (j->fate == REFUSED)
            fprintf(stderr, "codeq: submit: %s (job %s): not sent: %s\n", files[i], j->id,
                    j->err != RD_KAFKA_RESP_ERR__PURGE_QUEUE ? rd_kafka_err2str(j->err)
                    : interrupted ? "interrupted"
                                  : "the broker did not take it within 30 s");
        else if (j->fate == UNSENT)
            fprintf(stderr, "codeq: submit: %s (job %s): not sent: %s\n", files[i], j->id,
                    interrupted ? "interrupted" : "a job before it was refused");
        else if (j->fate == QUEUED)
            fprintf(stderr, "codeq: submit: %s (job %s): the broker did not acknowledge it%s: it "
                    "may have been sent%s\n", files[i], j->id,
                    interrupted ? " before the interruption" : " within 30 s",
                    interrupted ? "" : "; its result is awaited");
    }
    rd_kafka_destroy(p);
    return count(pd, REFUSED) || count(pd, UNSENT) ? 1 : 0;
}

/* A record on the topics read is the answer of a job sent here when it is a result (a status)
 * with its id: anything else there (a job, when the reply topic is also some producer's) is
 * not. */
static sub_job *answered(pending *pd, const json_t *r)
{
    const char *id = json_string_value(json_object_get(r, "id"));
    if (!id || !json_is_string(json_object_get(r, "status"))) return NULL;
    for (int i = 0; i < pd->n; i++) {
        sub_job *j = &pd->j[i];
        if (!j->seen && (j->fate == SENT || j->fate == QUEUED) && strcmp(j->id, id) == 0)
            return j;
    }
    return NULL;
}

static void collect(rd_kafka_t *k, pending *pd)
{
    while (pd->missing > 0 && wrk_now_ms() < deadline && !interrupted) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(k, 200);
        if (!m) continue;
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                fprintf(stderr, "codeq: submit: %s\n", rd_kafka_message_errstr(m));
        } else {
            /* a job's output may hold NUL characters: its result is still JSON */
            json_t *r = json_loadb(m->payload, m->len, JSON_ALLOW_NUL, NULL);
            sub_job *j = answered(pd, r);
            if (j) {
                j->seen = true;
                pd->missing--;
                if (isatty(STDOUT_FILENO)) {
                    cli_print_json(r); /* escaped for the terminal */
                } else {
                    fwrite(m->payload, 1, m->len, stdout);
                    putchar('\n');
                }
                fflush(stdout);
                fprintf(stderr, "codeq: submit: %s: %s\n", j->id,
                        json_string_value(json_object_get(r, "status")));
            }
            json_decref(r);
        }
        rd_kafka_message_destroy(m);
    }
}

/* A reply topic that is one of codeq's own gets no answer there: the worker refuses it (the
 * job is answered invalid on the results topic), and on the jobs topic the job itself would
 * be read back. */
static bool own_topic(const wrk_kafka_opts *o, const char *reply_to)
{
    const char *own[] = {o->jobs_topic, o->audit_topic, o->dlq_topic};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        if (strcmp(reply_to, own[i]) != 0) continue;
        fprintf(stderr, "codeq: submit: --reply-to %s is codeq's %s topic: name a topic of "
                "your own (a worker answers on topics starting with its "
                "--reply-topic-prefix, codeq.reply. by default), or leave --reply-to out for "
                "the results topic\n", reply_to,
                i == 0 ? "jobs" : i == 1 ? "audit" : "dead-letter");
        return true;
    }
    return false;
}

/* Sends the jobs and reads their results; the exit code. */
static int submit(const wrk_kafka_opts *o, char **files, pending *pd, const char *reply_to)
{
    char err[512];
    rd_kafka_t *k = results_reader(o, reply_to, err, sizeof err);
    if (!k) {
        fprintf(stderr, "%s\n", err);
        return interrupted ? 128 + interrupted : 1;
    }
    int rc = interrupted ? 0 : produce_jobs(k, o, files, pd);
    pd->missing = count(pd, SENT) + count(pd, QUEUED);
    if (pd->missing > 0 && !interrupted) {
        fprintf(stderr, "codeq: submit: %d job%s sent to %s; waiting up to %.1f s\n",
                pd->missing, pd->missing == 1 ? "" : "s", o->jobs_topic,
                (double)wait_ms(INT32_MAX) / 1000);
        collect(k, pd);
    }
    for (int i = 0; i < pd->n; i++)
        if ((pd->j[i].fate == SENT || pd->j[i].fate == QUEUED) && !pd->j[i].seen)
            fprintf(stderr, "codeq: submit: %s: no result\n", pd->j[i].id);
    if (pd->missing && rc == 0) rc = 1;
    if (interrupted && !pd->missing && !count(pd, SENT) && !count(pd, QUEUED))
        fprintf(stderr, "codeq: submit: interrupted; nothing was sent\n");
    else if (interrupted)
        fprintf(stderr, "codeq: submit: interrupted; %d job%s sent without a result read here "
                "(they stay for the workers: codeq audit --job ID follows one)\n", pd->missing,
                pd->missing == 1 ? "" : "s");
    if (interrupted) rc = 128 + interrupted;
    rd_kafka_consumer_close(k);
    rd_kafka_destroy(k);
    return rc;
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
    char *in = NULL;
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
        default: return cli_see_help("submit");
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "codeq: submit: no program given: name one or more FILE.py\n");
        return 2;
    }
    if (reply_to && own_topic(&o, reply_to)) return 2;
    if (stdin_path && !(in = cli_read_file("submit", stdin_path, WRK_JOB_MAX_STDIN, &inlen))) return 2;
    /* Every job carries them as JSON strings: made once, refused here if they cannot be. */
    json_t *jin = in ? cli_json_text("submit", stdin_path, in, inlen) : NULL;
    json_t *jreply = reply_to ? cli_json_text("submit", "--reply-to", reply_to, strlen(reply_to))
                              : NULL;
    bool refused = (in && !jin) || (reply_to && !jreply);
    free(in);
    pending pd = {.n = argc - optind};
    pd.j = refused ? NULL : calloc((size_t)pd.n, sizeof *pd.j);
    int rc = 2, bad;
    deadline = wrk_now_ms() + (uint64_t)timeout * 1000;
    brokers = o.brokers;
    if (!refused && !pd.j) {
        fprintf(stderr, "codeq: submit: out of memory\n");
        rc = 1;
    } else if (pd.j && (bad = make_records(&o, argv + optind, &pd, jin, jreply)) > 0) {
        fprintf(stderr, "codeq: submit: %d of %d file%s could not be sent as jobs; nothing was "
                "sent\n", bad, pd.n, pd.n == 1 ? "" : "s");
    } else if (pd.j) {
        /* from here on: the files are read (a read from a terminal is not held up) */
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        rc = submit(&o, argv + optind, &pd, reply_to);
    }
    for (int i = 0; pd.j && i < pd.n; i++) {
        free(pd.j[i].id);
        free(pd.j[i].record);
    }
    free(pd.j);
    json_decref(jin);
    json_decref(jreply);
    return rc;
}
