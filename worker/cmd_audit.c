/* codeq audit: read the audit trail (read_committed), print it, verify its hash chains
 * (wrk_audit_chain.h). No consumer group: every partition is assigned from the beginning (or
 * --since) and, without --follow, read up to the end offsets found at start. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "wrk_audit_chain.h"
#include "wrk_internal.h"

static const char audit_help[] =
    "usage: codeq audit [OPTIONS]\n\n"
    "Print the audit trail (isolation.level=read_committed) from the beginning, one line per\n"
    "event: time, worker, job, event and its key facts. Without --follow, stop at the end\n"
    "offsets found at start. Events come partition by partition, each partition in its order;\n"
    "all events of one job are in one partition (keyed by job id), in the order they happened.\n\n"
    CLI_KAFKA_HELP
    "  -f, --follow              keep reading new events\n"
    "  -j, --job ID              print only the events of job ID\n"
    "  -s, --since TIME          events stamped at or after TIME: 2026-12-01T21:00:00Z\n"
    "                            (RFC 3339) or Unix ms\n"
    "      --verify              check every hash chain instead of printing the events:\n"
    "                            hashes, prev links, seq gaps (dropped), duplicates\n"
    "                            (replayed), order within a partition (reordered), links\n"
    "                            between a worker's epochs; each break is named as\n"
    "                            TOPIC/PARTITION@OFFSET: writer W epoch E seq N: what\n"
    "      --json                one JSON object per line (the events as stored)\n"
    "  -h, --help                this help\n"
    "Exit 0; 1 when --verify found a break, or --job (without --follow) found no event; 2 on\n"
    "bad usage; 3 when the broker or the topic cannot be read.\n";

#define MD_TIMEOUT_MS 10000
#define END_WAIT_MS 60000
#define FOLLOW_CHECK_MS 1000 /* an open transaction holds read_committed back at most this long */

typedef struct {
    const char *job, *since;
    bool follow, verify, json;
} audit_opts;

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Job-controlled text (a job id, a reason) goes to a terminal too: controls become '?', the
 * hidden ones (C1, bidi overrides and the like: wrk_hidden_at) as well as C0 and DEL: U+009B
 * is CSI, which some terminals take as ESC [ (as `codeq run` does, issue 11). */
static void put_clean(const char *s, size_t max)
{
    size_t n = 0;
    for (; s && *s && n < max; s++, n++) {
        unsigned char c = (unsigned char)*s;
        size_t hl;
        if (wrk_hidden_at((const unsigned char *)s, strnlen(s, 4), &hl)) {
            putchar('?');
            s += hl - 1;
        } else {
            putchar(c < 0x20 || c == 0x7f ? '?' : c);
        }
    }
    if (s && *s) fputs("...", stdout);
}

static void put_fact(json_t *ev, const char *name, const char *label, size_t max)
{
    json_t *v = json_object_get(ev, name);
    if (!v || json_is_null(v)) return;
    printf(" %s=", label);
    if (json_is_string(v)) put_clean(json_string_value(v), max);
    else if (json_is_integer(v)) printf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_array(v)) printf("%zu", json_array_size(v));
    else if (json_is_boolean(v)) fputs(json_is_true(v) ? "true" : "false", stdout);
}

static void print_line(json_t *ev)
{
    const char *f[] = {"time", "worker", "job_id", "event"};
    for (size_t i = 0; i < 4; i++) {
        const char *s = json_string_value(json_object_get(ev, f[i]));
        if (i) putchar(' ');
        put_clean(s ? s : "-", 200);
    }
    put_fact(ev, "status", "status", 40);
    put_fact(ev, "exit_code", "exit", 0);
    put_fact(ev, "signal", "signal", 20);
    put_fact(ev, "isolation", "isolation", 20);
    put_fact(ev, "findings", "findings", 0);
    put_fact(ev, "starts_before", "starts_before", 0); /* rerun */
    put_fact(ev, "started_at", "started", 30);          /* abandoned */
    put_fact(ev, "code_sha256", "code", 12); /* enough to tell codes apart by eye */
    put_fact(ev, "reason", "reason", 120);
    json_t *c = json_object_get(ev, "chain");
    if (c) {
        printf(" seq=%" JSON_INTEGER_FORMAT "@", json_integer_value(json_object_get(c, "seq")));
        put_clean(json_string_value(json_object_get(c, "epoch")), 64);
    }
    putchar('\n');
}

/* Unix ms or an RFC 3339 time (a time before 1970 is the log's start); -1 if neither. */
static int64_t parse_since(const char *s)
{
    char *end;
    errno = 0;
    long long ms = strtoll(s, &end, 10);
    if (*s && !*end) return ms >= 0 && errno != ERANGE ? ms : -1; /* digits past 2^63 too */
    int64_t at;
    return wrk_parse_time_ms(s, &at) ? (at < 0 ? 0 : at) : -1;
}

static rd_kafka_t *new_reader(const wrk_kafka_opts *o, char *err, size_t errlen)
{
    char kerr[256];
    rd_kafka_conf_t *conf = wrk_kafka_conf(o, err, errlen);
    if (!conf) return NULL;
    /* No group is joined (partitions are assigned), so nothing is ever committed. */
    const char *const kv[][2] = {{"group.id", "codeq-audit-reader"},
                                 {"enable.auto.commit", "false"},
                                 {"isolation.level", "read_committed"},
                                 {"enable.partition.eof", "true"},
                                 {"auto.offset.reset", "earliest"}};
    if (wrk_kafka_set_all(conf, kv, sizeof kv / sizeof kv[0], err, errlen) < 0) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_t *k = rd_kafka_new(RD_KAFKA_CONSUMER, conf, kerr, sizeof kerr);
    if (!k) snprintf(err, errlen, "codeq: audit: consumer: %s", kerr);
    return k;
}

/* The topic's partitions, or -1 with a message naming the broker or the topic. */
static int partitions(rd_kafka_t *k, const wrk_kafka_opts *o, char *err, size_t errlen)
{
    const rd_kafka_metadata_t *md = NULL;
    rd_kafka_resp_err_t e = wrk_kafka_topic_metadata(k, o->audit_topic, MD_TIMEOUT_MS, &md);
    if (e) {
        snprintf(err, errlen, "codeq: audit: cannot reach the broker at %s: %s", o->brokers,
                 rd_kafka_err2str(e));
        return -1;
    }
    int n = -1;
    if (md->topic_cnt != 1 || md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
        md->topics[0].partition_cnt == 0)
        snprintf(err, errlen, "codeq: audit: topic %s does not exist on %s", o->audit_topic,
                 o->brokers);
    else if (md->topics[0].err)
        snprintf(err, errlen, "codeq: audit: topic %s: %s", o->audit_topic,
                 rd_kafka_err2str(md->topics[0].err));
    else n = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
    return n;
}

/* Assigns every partition at its start (the beginning, or the first offset at --since) and
 * records its end offset now. A read_committed handle's watermark is the last stable offset:
 * a transaction still open then lies wholly beyond the ends (so it is not read in part, which
 * would show as a gap), one committed before lies wholly before them. */
static int assign_all(rd_kafka_t *k, const char *topic, int np, int64_t since, int64_t *end,
                      char *err, size_t errlen)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(np);
    rd_kafka_resp_err_t e = 0;
    for (int p = 0; p < np && !e; p++) {
        int64_t lo;
        /* a topic just made (codeq topics) answers NOT_LEADER for a moment */
        e = wrk_kafka_watermarks(k, topic, p, &lo, &end[p], 15000);
        rd_kafka_topic_partition_list_add(l, topic, p)->offset = since >= 0 ? since : lo;
    }
    /* the search by time answers NOT_LEADER too while a new topic settles */
    for (uint64_t until = wrk_now_ms() + 15000; !e && since >= 0;) {
        e = rd_kafka_offsets_for_times(k, l, MD_TIMEOUT_MS);
        if (!wrk_kafka_settling(e) || wrk_now_ms() >= until) break;
        for (int p = 0; p < np; p++) l->elems[p].offset = since; /* the call set them */
        usleep(200 * 1000);
        e = 0;
    }
    if (!e && since >= 0) {
        for (int p = 0; p < np && !e; p++) /* nothing at or after TIME: start at the end */
            if (l->elems[p].offset < 0) l->elems[p].offset = end[p];
    }
    if (!e) e = rd_kafka_assign(k, l);
    if (e) snprintf(err, errlen, "codeq: audit: offsets of %s: %s", topic, rd_kafka_err2str(e));
    for (int p = 0; p < np && !e; p++) /* the partition is read to its end when it starts there */
        if (l->elems[p].offset >= end[p]) end[p] = -1;
    rd_kafka_topic_partition_list_destroy(l);
    return e ? -1 : 0;
}

typedef struct {
    const audit_opts *o;
    int64_t since; /* ms, -1 none */
    wrk_verifier *v;
    int problems;
    size_t shown;
} reading;

static void one_event(reading *r, const rd_kafka_message_t *m)
{
    const char *topic = rd_kafka_topic_name(m->rkt);
    json_error_t je;
    json_t *ev = json_loadb(m->payload, m->len, JSON_ALLOW_NUL, &je);
    if (!json_is_object(ev)) {
        printf("%s/%d@%" PRId64 ": not a JSON object: %s\n", topic, (int)m->partition,
               (int64_t)m->offset, je.text);
        r->problems += r->o->verify;
        json_decref(ev);
        return;
    }
    if (r->v) r->problems += wrk_verifier_add(r->v, topic, m->partition, m->offset, ev, stdout);
    const char *job = json_string_value(json_object_get(ev, "job_id"));
    bool shown = !r->o->job || (job && !strcmp(job, r->o->job));
    /* The search by time finds records by when they were committed, with the job's answer:
     * a long job's received and started events, stamped before --since, come with it. */
    int64_t at;
    const char *when = json_string_value(json_object_get(ev, "time"));
    if (shown && r->since >= 0 && when && wrk_parse_time_ms(when, &at) && at < r->since)
        shown = false;
    if (shown && !r->o->verify) {
        r->shown++;
        if (r->o->json) cli_print_json(ev);
        else print_line(ev);
    }
    json_decref(ev);
}

/* Reads until every partition reached its end offset (or for ever with --follow). */
static int read_all(rd_kafka_t *k, int np, int64_t *end, reading *r, char *err, size_t errlen)
{
    int left = 0;
    for (int p = 0; p < np; p++) left += end[p] >= 0;
    bool *at_eof = calloc((size_t)np, sizeof *at_eof);
    if (!at_eof) return -1;
    int eofs = 0, rc = 0;
    bool checked = false;
    uint64_t quiet_since = wrk_now_ms();
    while (!stop && (r->o->follow || left > 0)) {
        if (!r->o->follow && wrk_now_ms() - quiet_since > END_WAIT_MS) {
            snprintf(err, errlen, "codeq: audit: %d partition%s did not reach %s end offset "
                     "in %d s (an open transaction holds read_committed back)", left,
                     wrk_s(left), left == 1 ? "its" : "their", END_WAIT_MS / 1000);
            rc = -1;
            break;
        }
        rd_kafka_message_t *m = rd_kafka_consumer_poll(k, 200);
        /* --follow --verify: the whole-chain checks (gaps, links) run once every partition is
         * read to its end and nothing came for a second: a transaction's commit markers are
         * written partition by partition, and a check between two would see half of it. */
        if (r->o->follow && r->v && !checked && eofs == np &&
            wrk_now_ms() - quiet_since >= FOLLOW_CHECK_MS) {
            r->problems += wrk_verifier_check(r->v, stdout);
            checked = true;
            if (r->problems) break;
        }
        if (!m) continue;
        int p = m->partition;
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (p < np && end[p] >= 0 && m->offset >= end[p]) end[p] = -1, left--;
            if (p < np && !at_eof[p]) at_eof[p] = true, eofs++;
        } else if (m->err) {
            snprintf(err, errlen, "codeq: audit: reading %s: %s",
                     m->rkt ? rd_kafka_topic_name(m->rkt) : "?", rd_kafka_message_errstr(m));
            rc = -1;
        } else {
            quiet_since = wrk_now_ms();
            checked = false;
            if (p < np && at_eof[p]) at_eof[p] = false, eofs--;
            one_event(r, m);
            if (p < np && end[p] >= 0 && m->offset + 1 >= end[p]) end[p] = -1, left--;
        }
        rd_kafka_message_destroy(m);
        if (rc < 0 || (r->o->follow && r->problems)) break;
        if (r->o->follow) fflush(stdout); /* a reader of a pipe sees each event as it comes */
    }
    free(at_eof);
    return rc;
}

static int audit_main(const wrk_kafka_opts *ko, const audit_opts *o)
{
    char err[512] = "";
    int64_t since = -1;
    if (o->since && (since = parse_since(o->since)) < 0) {
        fprintf(stderr, "codeq: audit: --since %s: expected 2026-12-01T21:00:00Z or Unix ms\n",
                o->since);
        return 2;
    }
    rd_kafka_t *k = new_reader(ko, err, sizeof err);
    if (!k) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }
    int np = partitions(k, ko, err, sizeof err), rc = 3;
    int64_t *end = np > 0 ? calloc((size_t)np, sizeof *end) : NULL;
    reading r = {.o = o, .since = since};
    if (o->verify && !(r.v = wrk_verifier_new(since >= 0))) np = -1;
    if (np > 0 && end && assign_all(k, ko->audit_topic, np, since, end, err, sizeof err) == 0 &&
        read_all(k, np, end, &r, err, sizeof err) == 0)
        rc = 0;
    if (rc) fprintf(stderr, "%s\n", err[0] ? err : "codeq: audit: out of memory");
    if (rc == 0 && r.v) {
        /* --follow ran these checks whenever it was up to date; what it read since, or up to
         * a break found on the way, is not all there is: no gap is judged on it */
        if (!o->follow) r.problems += wrk_verifier_check(r.v, stdout);
        size_t chains, events;
        wrk_verifier_counts(r.v, &chains, &events);
        printf("codeq: audit: %s: %zu event%s in %zu chain%s: %s%d problem%s\n",
               ko->audit_topic, events, wrk_s((long long)events), chains,
               wrk_s((long long)chains), r.problems ? "" : "intact, ", r.problems,
               wrk_s(r.problems));
    }
    if (rc == 0 && r.problems) rc = 1;
    if (rc == 0 && o->job && !o->verify && !o->follow && !r.shown) {
        fprintf(stderr, "codeq: audit: no event of job %s on %s%s%s\n", o->job, ko->audit_topic,
                o->since ? " since " : "", o->since ? o->since : "");
        rc = 1;
    }
    wrk_verifier_free(r.v);
    free(end);
    rd_kafka_consumer_close(k);
    rd_kafka_destroy(k);
    return rc;
}

int cmd_audit(int argc, char **argv)
{
    enum { OPT_VERIFY = 0x300, OPT_JSON };
    static const struct option longopts[] = {
        CLI_KAFKA_LONGOPTS,
        {"follow", no_argument, NULL, 'f'},
        {"job", required_argument, NULL, 'j'},
        {"since", required_argument, NULL, 's'},
        {"verify", no_argument, NULL, OPT_VERIFY},
        {"json", no_argument, NULL, OPT_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    wrk_kafka_opts ko;
    audit_opts o = {0};
    int opt;
    wrk_kafka_opts_default(&ko);
    while ((opt = getopt_long(argc, argv, "b:X:fj:s:h", longopts, NULL)) != -1) {
        int k = cli_kafka_opt(opt, optarg, &ko);
        if (k < 0) return 2;
        if (k > 0) continue;
        switch (opt) {
        case 'f': o.follow = true; break;
        case 'j': o.job = optarg; break;
        case 's': o.since = optarg; break;
        case OPT_VERIFY: o.verify = true; break;
        case OPT_JSON: o.json = true; break;
        case 'h': fputs(audit_help, stdout); return 0;
        default: return cli_see_help("audit");
        }
    }
    if (optind != argc) {
        fprintf(stderr, "codeq: audit: unexpected argument '%s' (--help for the options)\n",
                argv[optind]);
        return 2;
    }
    if (o.verify && (o.job || o.json)) { /* they were taken and did nothing */
        fprintf(stderr, "codeq: audit: --verify checks every chain and prints its findings: it "
                "takes no %s\n", o.job ? "--job" : "--json");
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    return audit_main(&ko, &o);
}
