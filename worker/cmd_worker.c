/* codeq worker: flag parsing and start-up checks; the loop itself is wrk_consume.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "wrk_internal.h"
#include "wrk_metrics.h"

static const char worker_help[] =
    "usage: codeq worker [OPTIONS]\n\n"
    "Join the consumer group, run jobs from the jobs topic, publish each result (keyed by job\n"
    "id) to the results topic or the job's reply_to, and audit events to the audit topic.\n"
    "Exactly-once: results, audit events and consumed offsets are committed in one Kafka\n"
    "transaction; read results with isolation.level=read_committed.\n"
    "SIGTERM/SIGINT: stop taking jobs, let running ones finish within the grace period,\n"
    "commit, leave the group; the process ends within the grace period + 25 s, whatever\n"
    "Kafka does.\n"
    "Exit 0 after a stop; 1 when it cannot start (no broker within 5 min, a results, audit\n"
    "or dead-letter topic missing, the --http port in use); 2 on a bad setting; 3 on a fatal\n"
    "Kafka error (restart the worker), or when the stop could not finish with Kafka in that\n"
    "time (what was not committed runs again); 4 when the host cannot run jobs\n"
    "(--host-fault-ms).\n\n"
    CLI_KAFKA_HELP
    CLI_LIMITS_HELP
    "  -g, --group G             consumer group (default codeq-workers)\n"
    "      --instance-id ID      stable name of this instance, unique among live workers;\n"
    "                            the transactional.id is built from it (default: hostname)\n"
    "      --worker-id ID        name in results and audit events, 1-200 bytes of UTF-8\n"
    "                            without control characters (default INSTANCE-PID)\n"
    "      --slots N             jobs run at once (default: CPU count)\n"
    "      --max-attempts N      starts of a job that keeps killing its worker before it is\n"
    "                            answered internal_error (default 3)\n"
    "      --commit-interval-ms N  longest a finished result waits to be committed (100)\n"
    "      --drain-ms N          on partition revoke, time for running jobs to finish (10000;\n"
    "                            at least 10 s below the consumer's max.poll.interval.ms)\n"
    "      --grace-ms N          on SIGTERM, time for running jobs to finish (20000)\n"
    "      --policy FILE|NAME    validator policy: a JSON file (schemas/policy.schema.json)\n"
    "                            or a built-in profile, strict (default) or data\n"
    "      --python PATH         interpreter for jobs in exec mode (default /usr/bin/python3);\n"
    "                            a zygote runs the libpython codeq is built with (3.11)\n"
    "                            and only reports PATH as sys.executable; a guarded job\n"
    "                            in exec mode needs that version too (_codeq_seal.so)\n"
    "      --work-root DIR       parent of per-job working directories (default /tmp/codeq)\n"
    "      --cgroup-parent NAME  parent of the job cgroups (default codeq); workers in\n"
    "                            different pid namespaces on one host need their own\n"
    "      --sandbox-profile P   full (default), or on purpose a weaker no-cgroup or\n"
    "                            no-seccomp; stated in every result and audit event\n"
    CLI_UID_HELP
    "      --isolation M         zygote (default): forked from a warm interpreter, no\n"
    "                            execve (docs/zygote.md); exec: a fresh one per job\n"
    "      --zygote-preload L    zygote mode: modules (comma-separated) imported once\n"
    "                            (default: every installed module the policy allows)\n"
    "      --zygote-start-ms N   zygote mode: longest a zygote's start may take (10000)\n"
    "      --reply-topic-prefix P  a job's reply_to must be the results topic or start\n"
    "                            with P, else it is invalid (default codeq.reply.; \"\" allows\n"
    "                            any topic but codeq's own and Kafka's internal __ ones)\n"
    "      --heartbeat-file F    touch F every 2 s while the main loop turns (a liveness\n"
    "                            probe checks its age); removed on exit\n"
    "      --http ADDR:PORT      serve /metrics (Prometheus), /healthz and /readyz there, e.g.\n"
    "                            127.0.0.1:9100 or [::]:9100 (default: off; docs/operations.md)\n"
    "      --health-stall-ms N   /healthz fails when the main loop has not turned for N ms\n"
    "                            (30000)\n"
    "      --health-max-aborts N /healthz fails after N transactions aborted in a row (5)\n"
    "      --health-commit-ms N  /healthz fails when one commit has been in flight for N ms:\n"
    "                            the broker does not finish it (120000)\n"
    "      --host-fault-ms N     when the sandbox cannot run even a trivial job here (a full\n"
    "                            work root, cgroups gone), jobs wait and none is answered for\n"
    "                            it; after N ms of that the worker stops, exit 4 (120000)\n"
    "      --audit-code M        what the audit trail keeps of a job's code: hash (default:\n"
    "                            code_sha256 only) or full (the received event also holds\n"
    "                            the code text, when it fits one record)\n"
    "      --log-format F        json (default): one JSON object per line on stderr (time,\n"
    "                            level, event, message, job_id, topic, partition, offset);\n"
    "                            text: one line for people\n"
    "      --log-level L         debug, info (default), warn or error\n"
    "      --config FILE         settings as `name = value` lines (names as these flags,\n"
    "                            librdkafka's as kafka.NAME); also CODEQ_CONFIG\n"
    "      --print-config        print the effective settings and their sources (secrets\n"
    "                            masked) and exit\n"
    "Precedence: flags > environment > config file > defaults. Every setting's flag NAME\n"
    "(not --print-config, --help) can be set as CODEQ_NAME (upper case, - as _:\n"
    "CODEQ_COMMIT_INTERVAL_MS) and in the file, every -X property as\n"
    "CODEQ_KAFKA_PROPERTY (. as _: CODEQ_KAFKA_SASL_MECHANISM). A secret (a property whose\n"
    "name holds password or secret) can be read from a file: -X sasl.password=@FILE or\n"
    "CODEQ_KAFKA_SASL_PASSWORD_FILE=FILE. See docs/operations.md.\n"
    "  -h, --help                this help\n";

enum { OPT_SLOTS = 0x200, OPT_ATTEMPTS, OPT_INTERVAL, OPT_DRAIN, OPT_GRACE, OPT_INSTANCE,
       OPT_LIMIT_DEFAULT, OPT_LIMIT_MAX, OPT_HEARTBEAT, OPT_REPLY_PREFIX, OPT_HTTP, OPT_STALL,
       OPT_MAX_ABORTS, OPT_COMMIT_AGE, OPT_HOST_FAULT, OPT_AUDIT_CODE, OPT_LOG_FORMAT, OPT_LOG_LEVEL, OPT_CONFIG,
       OPT_PRINT_CONFIG, OPT_UID_BASE, OPT_UID_COUNT };

/* Settings kept only to be shown by --print-config (the rest is in wrk_config). */
typedef struct {
    const char *worker_id, *policy, *log_format, *log_level;
} shown;

/* Each -X property once, with its last value (the one librdkafka ends up with). */
static void print_kafka(const wrk_kafka_opts *k, const cli_args *a)
{
    for (int i = 0; i < k->nprops; i++) {
        const char *name = k->props[i][0];
        bool later = false;
        for (int j = i + 1; j < k->nprops && !later; j++) later = !strcmp(k->props[j][0], name);
        if (later) continue;
        const char *src = cli_args_kafka_source(a, name);
        printf("kafka.%s=%s  # %s\n", name, wrk_kafka_secret(name) ? "******" : k->props[i][1],
               src ? src : "?");
    }
}

/* A revoke's drain runs inside the rebalance callback, where the consumer is not polled: a
 * drain as long as max.poll.interval.ms (the group's rebalance timeout) has the group evict
 * the worker in it, and the jobs it starts meanwhile on partitions it no longer owns run
 * twice. DRAIN_ROOM_MS is left for the hand-over commit and the rest of the rebalance. */
enum { DRAIN_ROOM_MS = 10000 };
static int check_drain(const wrk_config *c, rd_kafka_conf_t *conf, const cli_args *a)
{
    char v[32];
    size_t n = sizeof v;
    long poll_ms = rd_kafka_conf_get(conf, "max.poll.interval.ms", v, &n) == RD_KAFKA_CONF_OK
                       ? strtol(v, NULL, 10)
                       : 300000;
    if ((long)c->drain_ms + DRAIN_ROOM_MS <= poll_ms) return 0;
    const char *src = cli_args_source(a, "drain-ms", 0),
               *psrc = cli_args_kafka_source(a, "max.poll.interval.ms");
    fprintf(stderr, "codeq: config: drain-ms=%d (from %s) must be at least %d ms below the "
            "consumer's max.poll.interval.ms, %ld (from %s): a longer drain has the group "
            "evict the worker in it\n", c->drain_ms, src ? src : "default", DRAIN_ROOM_MS,
            poll_ms, psrc ? psrc : "librdkafka's default");
    return -1;
}

/* Every -X property is known to librdkafka and takes its value, checked now so that the
 * message can say where a bad one came from (later, handles are built far from the flags);
 * and the drain fits the consumer's poll interval. */
/* librdkafka properties an -X would override after codeq's own, that codeq's identity or
 * exactly-once rests on: the group (the log, --print-config and the transactional id would
 * name another), the transactional id (workers sharing one fence each other), what the
 * consumer reads and commits. What replaces each, if anything. */
static const char *owned_property(const char *name)
{
    static const char *const owned[][2] = {
        {"group.id", "set --group"},
        {"transactional.id", "set --instance-id: the transactional id is codeq-GROUP-INSTANCE"},
        {"isolation.level", "the worker reads read_committed, as exactly-once needs"},
        {"enable.auto.commit", "offsets are committed in the worker's transactions only"},
        {"enable.auto.offset.store", "offsets are committed in the worker's transactions only"},
        {"enable.idempotence", "the transactional producer is idempotent"},
    };
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; i++)
        if (strcmp(name, owned[i][0]) == 0) return owned[i][1];
    return NULL;
}

static int check_kafka(const wrk_config *c, const cli_args *a)
{
    char kerr[256];
    const wrk_kafka_opts *k = &c->kafka;
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    int rc = 0;
    for (int i = 0; rc == 0 && i < k->nprops; i++) {
        const char *name = k->props[i][0], *src = cli_args_kafka_source(a, name);
        const char *owned = owned_property(name);
        rd_kafka_conf_res_t res = owned ? RD_KAFKA_CONF_INVALID
                                        : rd_kafka_conf_set(conf, name, k->props[i][1], kerr,
                                                            sizeof kerr);
        if (res == RD_KAFKA_CONF_OK) continue;
        if (owned) snprintf(kerr, sizeof kerr, "codeq sets it: %s", owned);
        /* a name librdkafka does not know may be a secret's, misspelt */
        bool mask = wrk_kafka_secret(name) || res == RD_KAFKA_CONF_UNKNOWN;
        fprintf(stderr, "codeq: config: kafka.%s=%s (from %s): %s\n", name,
                mask ? "******" : k->props[i][1], src ? src : "?", kerr);
        rc = -1;
    }
    if (rc == 0) rc = check_drain(c, conf, a);
    rd_kafka_conf_destroy(conf);
    return rc;
}

/* codeq's four topics are four: a results (audit, dead-letter) topic that is the jobs topic
 * makes the worker read its own answers as jobs, each answered invalid under the real job's
 * id, for ever (thousands a second); two output topics in one mix what their readers take. */
static int check_topics(const wrk_kafka_opts *k, const cli_args *a)
{
    const struct { const char *name, *v; } t[] = {
        {"jobs-topic", k->jobs_topic}, {"results-topic", k->results_topic},
        {"audit-topic", k->audit_topic}, {"dlq-topic", k->dlq_topic}};
    for (int i = 1; i < 4; i++)
        for (int j = 0; j < i; j++) {
            if (strcmp(t[i].v, t[j].v) != 0) continue;
            /* the one the operator set is named, the other is what it collides with */
            const char *src = cli_args_source(a, t[i].name, 0);
            int set = src ? i : j, other = src ? j : i;
            if (!src) src = cli_args_source(a, t[j].name, 0);
            fprintf(stderr, "codeq: config: %s=%s (from %s) is also the %s: the jobs, results, "
                    "audit and dead-letter topics must be four topics\n", t[set].name,
                    t[set].v, src ? src : "default", t[other].name);
            return -1;
        }
    return 0;
}

/* Whether the limit list `list` (NAME=V[,NAME=V...]) sets `limit`. */
static bool list_sets(const char *list, const void *limit)
{
    size_t n = strlen(limit);
    for (const char *s = list; *s; s += strcspn(s, ","), s += *s == ',')
        if (strncmp(s, limit, n) == 0 && s[n] == '=') return true;
    return false;
}

/* The effective configuration, each setting with where it came from; secrets masked. */
static void print_config(const wrk_config *c, const cli_args *a, const shown *s)
{
    char n[12][16];
    const unsigned num[12] = {c->slots, c->max_attempts, c->commit_interval_ms, c->drain_ms,
                        c->grace_ms, c->sandbox.zygote_start_ms ? (int)c->sandbox.zygote_start_ms
                                                                : 10000,
                        c->health_stall_ms, c->health_max_aborts, c->host_fault_ms,
                        c->sandbox.uid_base, c->sandbox.uid_count, c->health_commit_ms};
    for (int i = 0; i < 12; i++) snprintf(n[i], sizeof n[i], "%u", num[i]);
    const struct { const char *name; char opt; const char *v; } rows[] = {
        {"brokers", 'b', c->kafka.brokers}, {"jobs-topic", 0, c->kafka.jobs_topic},
        {"results-topic", 0, c->kafka.results_topic}, {"audit-topic", 0, c->kafka.audit_topic},
        {"dlq-topic", 0, c->kafka.dlq_topic}, {"group", 'g', c->group},
        {"instance-id", 0, c->instance_id},
        {"worker-id", 0, s->worker_id ? s->worker_id : "(INSTANCE-PID)"},
        {"slots", 0, n[0]}, {"max-attempts", 0, n[1]}, {"commit-interval-ms", 0, n[2]},
        {"drain-ms", 0, n[3]}, {"grace-ms", 0, n[4]},
        {"policy", 0, s->policy ? s->policy : "strict"},
        {"python", 0, c->sandbox.python}, {"work-root", 0, c->sandbox.work_root},
        {"cgroup-parent", 0, c->sandbox.cgroup_parent},
        {"sandbox-profile", 0, c->sandbox.profile ? c->sandbox.profile : "full"},
        {"uid-base", 0, n[9]}, {"uid-count", 0, n[10]},
        {"isolation", 0, c->sandbox.isolation},
        {"zygote-preload", 0, c->sandbox.zygote_preload ? c->sandbox.zygote_preload
                                                        : "(the policy's modules)"},
        {"zygote-start-ms", 0, n[5]},
        {"heartbeat-file", 0, c->heartbeat_path ? c->heartbeat_path : "(none)"},
        {"reply-topic-prefix", 0, c->reply_prefix},
        {"http", 0, c->http_addr ? c->http_addr : "(off)"},
        {"health-stall-ms", 0, n[6]}, {"health-max-aborts", 0, n[7]},
        {"health-commit-ms", 0, n[11]},
        {"host-fault-ms", 0, n[8]},
        {"audit-code", 0, c->audit_code_full ? "full" : "hash"},
        {"log-format", 0, s->log_format}, {"log-level", 0, s->log_level ? s->log_level : "info"},
    };
    printf("# codeq worker: effective configuration (flags > CODEQ_* environment > --config "
           "file > defaults)\n");
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *src = cli_args_source(a, rows[i].name, rows[i].opt);
        printf("%s=%s  # %s\n", rows[i].name, rows[i].v ? rows[i].v : "(built-in)",
               src ? src : "default");
    }
    print_kafka(&c->kafka, a);
    for (size_t i = 0; wrk_limit_name(i); i++) {
        sbx_limits l[2] = {c->defaults, c->max};
        const char *name = wrk_limit_name(i);
        const char *ds = cli_args_source_if(a, "limit-default", 0, list_sets, name),
                   *ms = cli_args_source_if(a, "limit-max", 0, list_sets, name);
        printf("limit-default.%s=%u  limit-max.%s=%u  # %s, %s\n", name,
               *wrk_limit_field(&l[0], name), name, *wrk_limit_field(&l[1], name),
               ds ? ds : "default", ms ? ms : "default");
    }
}

static int number(int opt, const char *arg, wrk_config *c)
{
    static const struct {
        int opt;
        const char *name;
        size_t off;
    } nums[] = {
        {OPT_SLOTS, "slots", offsetof(wrk_config, slots)},
        {OPT_ATTEMPTS, "max-attempts", offsetof(wrk_config, max_attempts)},
        {OPT_INTERVAL, "commit-interval-ms", offsetof(wrk_config, commit_interval_ms)},
        {OPT_DRAIN, "drain-ms", offsetof(wrk_config, drain_ms)},
        {OPT_GRACE, "grace-ms", offsetof(wrk_config, grace_ms)},
        {OPT_STALL, "health-stall-ms", offsetof(wrk_config, health_stall_ms)},
        {OPT_MAX_ABORTS, "health-max-aborts", offsetof(wrk_config, health_max_aborts)},
        {OPT_COMMIT_AGE, "health-commit-ms", offsetof(wrk_config, health_commit_ms)},
        {OPT_HOST_FAULT, "host-fault-ms", offsetof(wrk_config, host_fault_ms)},
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        unsigned v;
        if (nums[i].opt != opt) continue;
        if (cli_uint(nums[i].name, arg, &v) < 0 || v > 3600000) return -1;
        *(int *)((char *)c + nums[i].off) = (int)v;
        return 1;
    }
    return 0;
}

/* Output and artifacts a job may ask for cannot be more than one record carries: the built-in
 * maxima (16 MiB) and defaults are lowered to the record budget, and a --limit-max above it is
 * refused, naming both figures. The result is still shrunk to fit (wrk_fit.c) when stdout,
 * stderr and artifacts together are too large. */
static int fit_limits(wrk_config *c)
{
    char note[300], err[640];
    size_t budget;
    int rc = wrk_kafka_record_budget(&c->kafka, &budget, note, sizeof note, err, sizeof err);
    if (rc < 0) {
        wrk_logx(WRK_LOG_ERROR, rc == -2 ? "start_failed" : "config_error", NULL, "%s", err);
        return rc;
    }
    if (note[0])
        wrk_logx(WRK_LOG_WARN, "record_budget", NULL,
                 "worker: record size: %s; using the producer's message.max.bytes", note);
    c->result_max_bytes = budget;
    sbx_limits builtin, builtin_def;
    sbx_limits_max(&builtin);
    sbx_limits_default(&builtin_def);
    struct { const char *name; uint32_t *max, *def, built, built_def; } l[] = {
        {"output_bytes", &c->max.output_bytes, &c->defaults.output_bytes, builtin.output_bytes,
         builtin_def.output_bytes},
        {"artifact_bytes", &c->max.artifact_bytes, &c->defaults.artifact_bytes,
         builtin.artifact_bytes, builtin_def.artifact_bytes},
    };
    for (size_t i = 0; i < sizeof l / sizeof l[0]; i++) {
        /* The operator's own figure is refused, not lowered behind their back; only the
         * built-in ones are lowered (said in the record_budget line below). */
        bool def_over = *l[i].def > budget && *l[i].def != l[i].built_def;
        if (def_over || (*l[i].max > budget && *l[i].max != l[i].built)) {
            wrk_logx(WRK_LOG_ERROR, "config_error", NULL,
                     "codeq: --limit-%s %s=%u: a result record carries at most %zu bytes "
                     "(message.max.bytes / max.message.bytes); raise those or lower the limit",
                     def_over ? "default" : "max", l[i].name, def_over ? *l[i].def : *l[i].max,
                     budget);
            return -1;
        }
        if (*l[i].max > budget) *l[i].max = (uint32_t)budget;
        if (*l[i].def > *l[i].max) *l[i].def = *l[i].max;
    }
    wrk_logx(WRK_LOG_INFO, "record_budget", NULL,
             "worker: results fit in %zu bytes: output_bytes at most %u, artifact_bytes at most %u",
            budget, c->max.output_bytes, c->max.artifact_bytes);
    return 0;
}

/* How jobs reach their cgroups, said once: on cgroup v2 a job's init moved there after its
 * clone waits for an RCU grace period (10-20 ms) unless the hierarchy is mounted with
 * favordynmods, so an operator whose runtime refuses clone3 should hear of it. */
static void log_cgroup_path(const sbx_host *h)
{
    if (h->cgroup_version == 2 && !h->cgroup_born)
        wrk_logx(WRK_LOG_WARN, "cgroup_attach", NULL,
                 "codeq: worker: cgroup v2, but clone3(CLONE_INTO_CGROUP) is refused here (a "
                 "kernel before 5.7, or a seccomp profile that denies clone3): each job's "
                 "init is moved into its cgroup after its clone, one RCU grace period per job "
                 "unless the cgroup2 mount has favordynmods");
    else if (h->cgroup_version)
        wrk_logx(WRK_LOG_INFO, "cgroup_path", NULL, "codeq: worker: cgroup v%d, %s",
                 h->cgroup_version, h->cgroup_born ? "each job's init cloned into its cgroup"
                                                   : "each job's init joins its cgroup itself");
}

/* policy: the one loaded with --policy, owned by the caller (freed after the loop). */
/* Every result and audit event names the worker, so its id (the instance id and a pid by
 * default) must be JSON text as a job's id is: made from it unchanged by wrk_id_part. */
static int check_worker_id(const char *id, const char *name, const cli_args *a)
{
    char part[256];
    wrk_id_part(id, 200, part, sizeof part);
    if (*id && strlen(id) <= 200 && !strcmp(part, id)) return 0;
    const char *src = cli_args_source(a, name, 0);
    fprintf(stderr, "codeq: worker: --%s (from %s) must be 1-200 bytes of UTF-8 without control "
            "characters: every result and audit event carries it\n", name, src ? src : "default");
    return -1;
}

/* The start after the HTTP endpoint is up, then the loop; its exit code. */
static int start_and_run(wrk_config *c)
{
    char err[1024];
    c->started_ms = wrk_now_ms();
    wrk_metrics_starting("reading the topics' configuration from %s", c->kafka.brokers);
    int fit = fit_limits(c);
    if (fit < 0) return fit == -2 ? 1 : 2; /* a missing topic: it cannot start; a bad setting */
    wrk_config_finish(c);
    /* One zygote per slot starts now and comes up while the validator, the self-check (which
     * takes one) and the consumer's join run. Not fatal here: the self-check, or the job that
     * needs a zygote, fails with the reason. */
    if (sbx_zygote_prestart(&c->sandbox, (unsigned)c->slots, err, sizeof err) < 0)
        wrk_logx(WRK_LOG_WARN, "zygote_prestart", NULL, "%s", err);
    /* Fail at start-up, not on the first job: the validator must be usable. */
    wrk_metrics_starting("loading the validator and its policy");
    val_report warm = {0};
    if (val_init(err, sizeof err) < 0 ||
        val_check_policy(c->policy, "", 0, &warm, err, sizeof err) < 0) {
        /* The empty check builds the policy's module tables now, not on the first job. */
        wrk_logx(WRK_LOG_ERROR, "start_failed", NULL, "%s", err);
        return 1;
    }
    val_report_free(&warm);
    /* Fail closed: a sandbox layer this host cannot give would fail every job. */
    wrk_metrics_starting("checking that this host gives every sandbox layer (a trivial job)");
    sbx_host host;
    if (sbx_selfcheck(&c->sandbox, &host, err, sizeof err) < 0) {
        wrk_logx(WRK_LOG_ERROR, "start_failed", NULL, "%s", err);
        return 1;
    }
    log_cgroup_path(&host);
    /* A worker SIGKILLed before it could remove its jobs' cgroups left them behind. */
    int swept = sbx_cgroup_sweep(&c->sandbox);
    if (swept > 0)
        wrk_logx(WRK_LOG_WARN, "cgroups_swept", NULL,
                 "codeq: worker: removed %d job cgroups left behind under %s", swept,
                 c->sandbox.cgroup_parent);
    /* ... and their staging directories, with the jobs' code (those no live process holds). */
    swept = sbx_workdir_sweep(&c->sandbox);
    if (swept > 0)
        wrk_logx(WRK_LOG_WARN, "workdirs_swept", NULL,
                 "codeq: worker: removed %d job staging directories left behind under %s", swept,
                 c->sandbox.work_root);
    if (c->sandbox.profile && strcmp(c->sandbox.profile, "full") != 0)
        wrk_logx(WRK_LOG_WARN, "weak_profile", NULL,
                 "codeq: worker: sandbox profile %s, weaker than full, chosen on purpose",
                 c->sandbox.profile);
    int rc = 0;
    if (wrk_stop_requested()) /* stopped while starting: it holds no partition, no job */
        wrk_logx(WRK_LOG_INFO, "worker_leaving", NULL,
                 "worker %s: stopped during start-up, before joining group %s", c->worker_id,
                 c->group);
    else
        rc = wrk_worker_loop(c);
    return rc;
}

static int worker_main(int argc, char **argv, val_policy **policy)
{
    static const struct option longopts[] = {
        CLI_KAFKA_LONGOPTS,
        {"group", required_argument, NULL, 'g'},
        {"instance-id", required_argument, NULL, OPT_INSTANCE},
        {"limit-default", required_argument, NULL, OPT_LIMIT_DEFAULT},
        {"limit-max", required_argument, NULL, OPT_LIMIT_MAX},
        {"worker-id", required_argument, NULL, 'w'},
        {"slots", required_argument, NULL, OPT_SLOTS},
        {"max-attempts", required_argument, NULL, OPT_ATTEMPTS},
        {"commit-interval-ms", required_argument, NULL, OPT_INTERVAL},
        {"drain-ms", required_argument, NULL, OPT_DRAIN},
        {"grace-ms", required_argument, NULL, OPT_GRACE},
        {"python", required_argument, NULL, 'p'},
        {"policy", required_argument, NULL, 'P'},
        {"work-root", required_argument, NULL, 'r'},
        {"cgroup-parent", required_argument, NULL, 'C'},
        {"sandbox-profile", required_argument, NULL, 'S'},
        {"uid-base", required_argument, NULL, OPT_UID_BASE},
        {"uid-count", required_argument, NULL, OPT_UID_COUNT},
        {"isolation", required_argument, NULL, 'I'},
        {"zygote-preload", required_argument, NULL, 'L'},
        {"zygote-start-ms", required_argument, NULL, 'Z'},
        {"heartbeat-file", required_argument, NULL, OPT_HEARTBEAT},
        {"reply-topic-prefix", required_argument, NULL, OPT_REPLY_PREFIX},
        {"http", required_argument, NULL, OPT_HTTP},
        {"audit-code", required_argument, NULL, OPT_AUDIT_CODE},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
        {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
        {"health-stall-ms", required_argument, NULL, OPT_STALL},
        {"health-max-aborts", required_argument, NULL, OPT_MAX_ABORTS},
        {"health-commit-ms", required_argument, NULL, OPT_COMMIT_AGE},
        {"host-fault-ms", required_argument, NULL, OPT_HOST_FAULT},
        {"config", required_argument, NULL, OPT_CONFIG},
        {"print-config", no_argument, NULL, OPT_PRINT_CONFIG},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    wrk_config c;
    char err[256], wid[256];
    shown s = {.log_format = "json"};
    bool print = false;
    int opt;
    cli_args a;
    wrk_config_default(&c);
    /* flags > CODEQ_* environment > --config file > defaults: one list, the last word wins */
    static const char shortopts[] = "b:X:g:h";
    if (cli_args_build(argc, argv, shortopts, longopts, &a) < 0) return 2;
    while ((opt = getopt_long(a.argc, a.argv, shortopts, longopts, NULL)) != -1) {
        int k = cli_kafka_opt(opt, optarg, &c.kafka);
        if (k == 0) k = number(opt, optarg, &c);
        if (k < 0) goto bad;
        if (k > 0) continue;
        switch (opt) {
        case 'g':
            if (!*optarg) { /* librdkafka would refuse it only at the subscribe */
                fprintf(stderr, "codeq: worker: --group is empty: name the consumer group the "
                        "workers share\n");
                goto bad;
            }
            c.group = optarg;
            break;
        case OPT_INSTANCE: c.instance_id = optarg; break;
        case OPT_LIMIT_DEFAULT:
        case OPT_LIMIT_MAX:
            if (cli_limit_opt(opt == OPT_LIMIT_MAX ? &c.max : &c.defaults, opt == OPT_LIMIT_MAX,
                              optarg) < 0)
                goto bad;
            break;
        case 'w': s.worker_id = optarg; break;
        case OPT_HEARTBEAT: c.heartbeat_path = optarg; break;
        case OPT_REPLY_PREFIX: c.reply_prefix = optarg; break;
        case OPT_HTTP:
            if (wrk_http_check(optarg, err, sizeof err) < 0) {
                fprintf(stderr, "%s\n", err);
                goto bad;
            }
            c.http_addr = optarg;
            break;
        case OPT_AUDIT_CODE:
            if (strcmp(optarg, "full") && strcmp(optarg, "hash")) {
                fprintf(stderr, "codeq: worker: --audit-code %s: expected full or hash\n", optarg);
                goto bad;
            }
            c.audit_code_full = !strcmp(optarg, "full");
            break;
        case OPT_LOG_FORMAT: s.log_format = optarg; break;
        case OPT_LOG_LEVEL: s.log_level = optarg; break;
        case OPT_CONFIG: break; /* read by cli_args_build */
        case OPT_PRINT_CONFIG: print = true; break;
        case 'p':
            if (cli_sandbox_opt(&c.sandbox, "worker", "python", optarg) < 0) goto bad;
            break;
        case 'P':
            /* Loaded once for the process; a bad policy stops the worker before any job. */
            val_policy_free(*policy);
            if (!(*policy = val_policy_load(optarg, err, sizeof err))) {
                fprintf(stderr, "%s\n", err);
                goto bad;
            }
            c.policy = *policy;
            s.policy = optarg;
            break;
        case 'r':
            if (cli_sandbox_opt(&c.sandbox, "worker", "work-root", optarg) < 0) goto bad;
            break;
        case 'C':
            if (cli_sandbox_opt(&c.sandbox, "worker", "cgroup-parent", optarg) < 0) goto bad;
            break;
        case OPT_UID_BASE:
        case OPT_UID_COUNT:
            if (cli_uid_opt(&c.sandbox, opt == OPT_UID_BASE ? "uid-base" : "uid-count",
                            optarg) < 0)
                goto bad;
            break;
        case 'I':
            if (cli_isolation_opt(&c.sandbox, "worker", optarg) < 0) goto bad;
            break;
        case 'L': c.sandbox.zygote_preload = optarg; break;
        case 'Z':
            if (cli_zygote_start_opt(&c.sandbox, optarg) < 0) goto bad;
            break;
        case 'S':
            if (cli_sandbox_opt(&c.sandbox, "worker", "sandbox-profile", optarg) < 0) goto bad;
            break;
        case 'h': fputs(worker_help, stdout); return 0;
        default: return cli_see_help("worker");
        }
    }
    if (optind != a.argc) {
        fprintf(stderr, "codeq: worker: unexpected argument '%s' (--help for the options)\n",
                a.argv[optind]);
        return 2;
    }
    if (wrk_log_setup(s.log_format, s.log_level, err, sizeof err) < 0) {
        const char *src =
            cli_args_source(&a, strstr(err, "log-level") ? "log-level" : "log-format", 0);
        fprintf(stderr, "%s (from %s)\n", err, src ? src : "?");
        return 2;
    }
    if (cli_limits_consistent(&c.defaults, &c.max) < 0 || check_kafka(&c, &a) < 0 ||
        check_topics(&c.kafka, &a) < 0)
        return 2;
    char accounts[256];
    if (cli_uid_range_check("worker", &c.sandbox, (unsigned)c.slots, accounts,
                            sizeof accounts) < 0)
        return 2;
    if (check_worker_id(s.worker_id ? s.worker_id : c.instance_id,
                        s.worker_id ? "worker-id" : "instance-id", &a) < 0)
        return 2;
    if (print) {
        print_config(&c, &a, &s);
        return 0;
    }
    if (accounts[0])
        wrk_logx(WRK_LOG_WARN, "uid_range", NULL,
                 "codeq: worker: job uids %u-%u include accounts of this host: %s; their "
                 "processes and the jobs share one RLIMIT_NPROC count", c.sandbox.uid_base,
                 c.sandbox.uid_base + c.sandbox.uid_count - 1, accounts);
    snprintf(wid, sizeof wid, "%s-%d", c.instance_id, (int)getpid());
    c.worker_id = s.worker_id ? s.worker_id : wid;
    /* Before the first call to Kafka (fit_limits asks the broker): as pid 1 of a container,
     * a process without a handler never even sees SIGTERM. */
    if (wrk_stop_install(&c, err, sizeof err) < 0) {
        wrk_logx(WRK_LOG_ERROR, "start_failed", NULL, "%s", err);
        return 1;
    }
    /* Served from here on, so that probes see a start that waits (a broker that does not
     * answer, a slow self-check) say what it waits for. */
    wrk_metrics_init(&c);
    if (wrk_http_start(c.http_addr, err, sizeof err) < 0) { /* a port in use: not a bad setting */
        wrk_logx(WRK_LOG_ERROR, "start_failed", NULL, "%s", err);
        return 1;
    }
    int rc = start_and_run(&c);
    wrk_stop_step("the HTTP server's stop");
    wrk_http_stop();
    wrk_stop_step("the zygotes' shutdown");
    sbx_zygote_shutdown(); /* zygote mode: no zygote outlives the worker's loop */
    return rc;
bad:
    cli_args_blame(&a, optind - 1);
    return 2;
}

int cmd_worker(int argc, char **argv)
{
    val_policy *policy = NULL;
    int rc = worker_main(argc, argv, &policy);
    val_policy_free(policy);
    return rc;
}
