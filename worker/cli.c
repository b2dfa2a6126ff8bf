/* Shared command-line plumbing, so every subcommand spells Kafka flags the same way. */
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "wrk_internal.h"

int cli_kafka_opt(int opt, char *arg, wrk_kafka_opts *o)
{
    char err[256];
    static const char *const flag[] = {"jobs-topic", "results-topic", "audit-topic",
                                        "dlq-topic"};
    /* a name Kafka refuses would only be found at the first request: a worker would wait
     * for partitions of a topic that can never exist */
    if (opt >= CLI_JOBS_TOPIC && opt <= CLI_DLQ_TOPIC && !wrk_topic_name_ok(arg)) {
        fprintf(stderr, "codeq: --%s '%s' is not a Kafka topic name: ASCII letters, digits, "
                "'.', '_' and '-', at most 249 characters\n", flag[opt - CLI_JOBS_TOPIC], arg);
        return -1;
    }
    switch (opt) {
    case CLI_BROKERS: o->brokers = arg; return 1;
    case CLI_JOBS_TOPIC: o->jobs_topic = arg; return 1;
    case CLI_RESULTS_TOPIC: o->results_topic = arg; return 1;
    case CLI_AUDIT_TOPIC: o->audit_topic = arg; return 1;
    case CLI_DLQ_TOPIC: o->dlq_topic = arg; return 1;
    case CLI_PROP:
        if (wrk_kafka_opts_add(o, arg, err, sizeof err) < 0) {
            fprintf(stderr, "%s\n", err);
            return -1;
        }
        return 1;
    default: return 0;
    }
}

char *cli_read_file(const char *cmd, const char *path, size_t max, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "codeq: %s: %s: %s\n", cmd, path, strerror(errno));
        return NULL;
    }
    /* Never more than max + 1 bytes: the +1 tells a file of max bytes from a larger one (or
     * from /dev/zero, which would otherwise be read until memory runs out). */
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    for (size_t r; buf && n <= max;) {
        size_t want = cap - n < max + 1 - n ? cap - n : max + 1 - n;
        if ((r = fread(buf + n, 1, want, f)) == 0) break;
        n += r;
        if (n == cap && n <= max) {
            size_t grow = cap * 2 < max + 1 ? cap * 2 : max + 1;
            char *nb = realloc(buf, grow + 1);
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap = grow;
        }
    }
    int bad = ferror(f), e = errno; /* a directory opens, and its read fails: EISDIR */
    if (f != stdin) fclose(f);
    if (buf && !bad && n > max) {
        fprintf(stderr, "codeq: %s: %s: larger than %zu bytes, the most a job takes\n", cmd, path,
                max);
        free(buf);
        return NULL;
    }
    if (!buf || bad) {
        fprintf(stderr, "codeq: %s: %s: %s\n", cmd, path, bad ? strerror(e) : "out of memory");
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int cli_zygote_start_opt(sbx_config *c, const char *arg)
{
    unsigned v;
    if (cli_uint("zygote-start-ms", arg, &v) < 0) return -1;
    if (v > 600000) {
        fprintf(stderr, "codeq: --zygote-start-ms %u is above 600000 (10 minutes)\n", v);
        return -1;
    }
    c->zygote_start_ms = v;
    return 0;
}

int cli_uid_opt(sbx_config *c, const char *flag, const char *arg)
{
    unsigned v;
    if (cli_uint(flag, arg, &v) < 0) return -1;
    bool count = !strcmp(flag, "uid-count");
    if (count && v > 65536) {
        fprintf(stderr, "codeq: --uid-count %u is above 65536\n", v);
        return -1;
    }
    *(count ? &c->uid_count : &c->uid_base) = v;
    return 0;
}

/* A range that overlaps the host's accounts is allowed (a container's passwd may list
 * anything) but said: a job sharing a uid with a host process shares its RLIMIT_NPROC count. */
static void uid_accounts(unsigned first, unsigned last, char *warn, size_t len)
{
    size_t n = 0;
    warn[0] = '\0';
    setpwent();
    for (struct passwd *pw; (pw = getpwent());) {
        if (pw->pw_uid < first || pw->pw_uid > last) continue;
        int w = snprintf(warn + n, len - n, "%s%s (%u)", n ? ", " : "", pw->pw_name,
                         (unsigned)pw->pw_uid);
        if (w < 0 || (size_t)w >= len - n) break;
        n += (size_t)w;
    }
    endpwent();
}

int cli_uid_range_check(const char *cmd, const sbx_config *c, unsigned slots, char *warn,
                        size_t warnlen)
{
    unsigned long last = (unsigned long)c->uid_base + c->uid_count - 1;
    if (last >= 0xFFFFFFFFul) { /* (uid_t)-1 means "unchanged" to setresuid */
        fprintf(stderr, "codeq: %s: --uid-base %u --uid-count %u ends at %lu, past the last "
                "uid 4294967294\n", cmd, c->uid_base, c->uid_count, last);
        return -1;
    }
    if (c->uid_count < slots) {
        fprintf(stderr, "codeq: %s: --uid-count %u is below --slots %u: each running job needs "
                "a uid of its own\n", cmd, c->uid_count, slots);
        return -1;
    }
    uid_accounts(c->uid_base, (unsigned)last, warn, warnlen);
    return 0;
}

int cli_see_help(const char *cmd)
{
    fprintf(stderr, "codeq: %s: see `codeq %s --help` for the options\n", cmd, cmd);
    return 2;
}

int cli_uint(const char *name, const char *arg, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(arg, &end, 10);
    if (errno || *end || end == arg || v == 0 || v > 0xFFFFFFFFul) {
        fprintf(stderr, "codeq: --%s expects a positive integer, got '%s'\n", name, arg);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

int cli_isolation_opt(sbx_config *c, const char *cmd, const char *arg)
{
    for (const char *const *k = sbx_isolations; *k; k++)
        if (strcmp(arg, *k) == 0) {
            c->isolation = *k;
            return 0;
        }
    fprintf(stderr, "codeq: %s: --isolation: exec or zygote, not '%s'\n", cmd, arg);
    return -1;
}

static bool cgroup_path_ok(const char *p)
{
    if (*p == '/') p++;
    if (!*p) return false;
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        s += n + (s[n] == '/');
        if (s[-1] == '/' && !*s) return false; /* a trailing '/' leaves an empty part */
    }
    return true;
}

int cli_sandbox_opt(sbx_config *c, const char *cmd, const char *flag, const char *arg)
{
    struct stat st;
    if (!strcmp(flag, "sandbox-profile")) {
        for (const char *const *k = sbx_profiles; *k; k++)
            if (!strcmp(arg, *k)) {
                c->profile = *k;
                wrk_result_profile(*k);
                return 0;
            }
        fprintf(stderr, "codeq: %s: --sandbox-profile: full, no-cgroup or no-seccomp, not '%s'\n",
                cmd, arg);
    } else if (!strcmp(flag, "python")) {
        if (arg[0] == '/' && stat(arg, &st) == 0 && S_ISREG(st.st_mode) && access(arg, X_OK) == 0) {
            c->python = arg;
            return 0;
        }
        fprintf(stderr, "codeq: %s: --python %s: not an executable file given by its absolute "
                "path\n", cmd, arg);
    } else if (!strcmp(flag, "work-root")) {
        if (arg[0] == '/') {
            c->work_root = arg;
            return 0;
        }
        fprintf(stderr, "codeq: %s: --work-root '%s': must be an absolute path\n", cmd, arg);
    } else if (!strcmp(flag, "cgroup-parent")) {
        if (cgroup_path_ok(arg)) {
            c->cgroup_parent = arg;
            return 0;
        }
        fprintf(stderr, "codeq: %s: --cgroup-parent '%s': a path under each cgroup hierarchy's "
                "root, like codeq or system.slice/codeq, without empty, '.' or '..' parts\n",
                cmd, arg);
    } else {
        fprintf(stderr, "codeq: %s: --%s: not a sandbox option\n", cmd, flag);
    }
    return -1;
}

/* One NAME=VALUE of a limit list (len bytes at item) into *l. */
static int limit_item(sbx_limits *l, bool is_max, const char *item, size_t len)
{
    char buf[128], *eq;
    unsigned v;
    sbx_limits ceiling;
    const char *flag = is_max ? "limit-max" : "limit-default";
    if (len >= sizeof buf) { /* cut, zeros and spaces left out could read as another number */
        fprintf(stderr, "codeq: --%s: '%.40s...' is too long for NAME=VALUE\n", flag, item);
        return -1;
    }
    snprintf(buf, sizeof buf, "%.*s", (int)len, item);
    if (!(eq = strchr(buf, '='))) {
        fprintf(stderr, "codeq: --%s expects NAME=VALUE[,NAME=VALUE...], got '%s'\n", flag, buf);
        return -1;
    }
    *eq = '\0';
    uint32_t *field = wrk_limit_field(l, buf);
    if (!field) {
        fprintf(stderr, "codeq: --%s: unknown limit '%s'\n", flag, buf);
        return -1;
    }
    char named[160];
    snprintf(named, sizeof named, "%s %s", flag, buf); /* "--limit-default wall_ms expects" */
    if (cli_uint(named, eq + 1, &v) < 0) return -1;
    sbx_limits_max(&ceiling);
    if (is_max && v > *wrk_limit_field(&ceiling, buf)) {
        fprintf(stderr, "codeq: --limit-max %s=%u is above the sandbox's ceiling %u\n", buf, v,
                *wrk_limit_field(&ceiling, buf));
        return -1;
    }
    *field = v;
    return 0;
}

int cli_limit_opt(sbx_limits *l, bool is_max, const char *arg)
{
    sbx_limits next = *l;
    for (const char *s = arg;; s++) {
        size_t n = strcspn(s, ",");
        if (limit_item(&next, is_max, s, n) < 0) return -1;
        s += n;
        if (!*s) break;
    }
    *l = next;
    return 0;
}

int cli_limits_consistent(const sbx_limits *defaults, const sbx_limits *max)
{
    char why[256];
    if (sbx_limits_check(defaults, max, why, sizeof why) == 0) return 0;
    fprintf(stderr, "codeq: default job limits: %s\n", why);
    return -1;
}

void cli_print_json(const json_t *j)
{
    if (!isatty(STDOUT_FILENO)) {
        json_dumpf(j, stdout, JSON_COMPACT);
        putchar('\n');
        return;
    }
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
    for (const char *c = s; c && *c; c++) /* DEL: only inside strings, where \u007f is valid */
        *c == 0x7f ? (void)fputs("\\u007f", stdout) : (void)putchar(*c);
    putchar('\n');
    free(s);
}

json_t *cli_json_text(const char *cmd, const char *what, const char *s, size_t len)
{
    json_t *j = json_stringn(s, len);
    if (!j) fprintf(stderr, "codeq: %s: %s is not valid UTF-8\n", cmd, what);
    return j;
}
