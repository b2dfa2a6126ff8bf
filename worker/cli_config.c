/* Where a worker's settings come from: flags > environment (CODEQ_*) > config file > defaults.
 * Rather than a second parser, the file and the environment are turned into flags placed
 * before the command line's ("--slots=4", "-Xsasl.mechanism=PLAIN"), so getopt reads one
 * list in which the last word wins and every value passes the same checks as a flag. Each
 * word remembers its source, so a bad value is reported as coming from CODEQ_SLOTS or from
 * line 3 of the file, and --print-config can say where each setting came from.
 *   file: `name = value` lines, names as the long flags (slots, brokers, ...), librdkafka
 *         properties as kafka.NAME; # starts a comment line
 *   env:  CODEQ_<FLAG> (CODEQ_COMMIT_INTERVAL_MS), CODEQ_KAFKA_<PROPERTY> (underscores to
 *         dots, lower case), CODEQ_KAFKA_<SECRET>_FILE; other CODEQ_* names are ignored
 *         (tests and scripts use the prefix too). CODEQ_CONFIG names the file. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "wrk_internal.h"

extern char **environ;

enum { CFG_MAX_ARGS = 512, CFG_LINE_MAX = 4096 };

static int add(cli_args *a, char *word, char *src)
{
    if (!word || !src || a->argc >= CFG_MAX_ARGS - 1) {
        fprintf(stderr, "codeq: config: too many settings or out of memory\n");
        return -1;
    }
    a->argv[a->argc] = word;
    a->value[a->argc] = false;
    a->src[a->argc++] = src;
    a->argv[a->argc] = NULL;
    return 0;
}

static char *fmt(const char *f, const char *a, const char *b)
{
    char *s;
    return asprintf(&s, f, a, b) < 0 ? NULL : s;
}

/* A long flag that takes a value and may come from the file or the environment. */
static const struct option *settable(const struct option *lo, const char *name)
{
    for (; lo->name; lo++)
        if (lo->has_arg == required_argument && strcmp(lo->name, name) == 0 &&
            strcmp(name, "config") != 0)
            return lo;
    return NULL;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static int add_setting(cli_args *a, const struct option *lo, const char *name, const char *value,
                       char *src)
{
    if (strncmp(name, "kafka.", 6) == 0 && name[6])
        return add(a, fmt("-X%s=%s", name + 6, value), src);
    if (!settable(lo, name)) {
        fprintf(stderr, "codeq: config: %s=%s (from %s): unknown setting\n", name, value, src);
        free(src);
        return -1;
    }
    return add(a, fmt("--%s=%s", name, value), src);
}

static int from_file(cli_args *a, const struct option *lo, const char *path)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen takes a directory */
        fclose(f);
        f = NULL;
        errno = EISDIR;
    }
    if (!f) {
        fprintf(stderr, "codeq: config: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[CFG_LINE_MAX], no[16];
    int rc = 0;
    for (int n = 1; rc == 0 && fgets(line, sizeof line, f); n++) {
        char *s = trim(line), *eq = strchr(s, '=');
        if (!*s || *s == '#') continue;
        snprintf(no, sizeof no, "%d", n);
        char *src = fmt("%s line %s", path, no);
        if (!eq) {
            fprintf(stderr, "codeq: config: %s: expected name = value\n", src ? src : path);
            free(src);
            rc = -1;
            break;
        }
        *eq = '\0';
        rc = add_setting(a, lo, trim(s), trim(eq + 1), src);
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "codeq: config: %s: %s\n", path, strerror(errno));
        rc = -1;
    }
    fclose(f);
    return rc;
}

/* CODEQ_KAFKA_SASL_PASSWORD -> sasl.password; *_FILE of a secret -> "@path". */
static int from_env_kafka(cli_args *a, const char *var, const char *rest, const char *value)
{
    char prop[256];
    size_t n = 0;
    for (; rest[n] && n < sizeof prop - 1; n++)
        prop[n] = rest[n] == '_' ? '.' : (char)tolower((unsigned char)rest[n]);
    prop[n] = '\0';
    bool file = n > 5 && strcmp(prop + n - 5, ".file") == 0;
    if (file) prop[n - 5] = '\0';
    if (file && !wrk_kafka_secret(prop)) {
        prop[n - 5] = '.'; /* not a secret: an ordinary property that ends in .file */
        file = false;
    }
    char plain[256];
    snprintf(plain, sizeof plain, "%.*s", (int)strlen(var) - 5, var);
    if (file && getenv(plain)) { /* one would win in silence, by the environment's order */
        fprintf(stderr, "codeq: config: %s and %s are both set: set only one\n", plain, var);
        return -1;
    }
    return add(a, fmt(file ? "-X%s=@%s" : "-X%s=%s", prop, value), strdup(var));
}

static int from_env(cli_args *a, const struct option *lo)
{
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "CODEQ_", 6) != 0 || !eq) continue;
        char var[256], name[256];
        size_t vl = (size_t)(eq - *e);
        if (vl >= sizeof var) continue;
        memcpy(var, *e, vl);
        var[vl] = '\0';
        if (strncmp(var, "CODEQ_KAFKA_", 12) == 0 && var[12]) {
            if (from_env_kafka(a, var, var + 12, eq + 1) < 0) return -1;
            continue;
        }
        size_t n = 0;
        for (const char *p = var + 6; *p; p++) name[n++] = *p == '_' ? '-' : (char)tolower(*p);
        name[n] = '\0';
        if (settable(lo, name) && add(a, fmt("--%s=%s", name, eq + 1), strdup(var)) < 0)
            return -1;
    }
    return 0;
}

/* getopt_long takes an unambiguous prefix of a long flag (--conf for --config). The command
 * line's flags are written out in full, so that --config is found however it was spelt and
 * every lookup by name (cli_args_source, --print-config) sees the flag getopt will. A prefix
 * that is ambiguous or unknown is left as it is, for getopt to refuse. */
static char *full_flag(const struct option *lo, char *w, const struct option **hit)
{
    const char *name = w + 2, *eq = strchr(name, '=');
    size_t n = eq ? (size_t)(eq - name) : strlen(name);
    *hit = NULL;
    for (const struct option *o = lo; o->name; o++) /* an exact name wins over any prefix */
        if (strncmp(o->name, name, n) == 0 && strlen(o->name) == n) return *hit = o, w;
    for (const struct option *o = lo; o->name; o++) {
        if (strncmp(o->name, name, n) != 0) continue;
        /* ambiguous unless both are one option (getopt's rule) */
        if (*hit && ((*hit)->has_arg != o->has_arg || (*hit)->flag != o->flag ||
                     (*hit)->val != o->val))
            return *hit = NULL, w;
        if (!*hit) *hit = o;
    }
    return *hit ? fmt("--%s%s", (*hit)->name, eq ? eq : "") : w;
}

/* The command line's words as getopt will read them: long flags in full; values (the word
 * after a flag that takes one), "--" and everything after it untouched, and marked values. */
static int from_command_line(cli_args *a, int argc, char **argv, const char *shortopts,
                             const struct option *lo)
{
    bool value = false, rest = false;
    for (int i = 1; i < argc; i++) {
        char *w = argv[i];
        bool is_value = value || rest;
        value = false;
        if (is_value || w[0] != '-' || !w[1]) {
            /* a value, or an argument that is not a flag */
        } else if (strcmp(w, "--") == 0) {
            rest = is_value = true;
        } else if (w[1] == '-') {
            const struct option *o;
            w = full_flag(lo, w, &o);
            value = o && o->has_arg == required_argument && !strchr(w, '=');
        } else { /* a cluster of short flags: the first that takes a value takes the rest */
            for (const char *c = w + 1; *c; c++) {
                const char *at = strchr(shortopts, *c);
                if (at && at[1] == ':') {
                    value = !c[1];
                    break;
                }
            }
        }
        if (add(a, w, "command line") < 0) return -1;
        a->value[a->argc - 1] = is_value;
    }
    return 0;
}

/* The index of the last word that sets --name (or -short_opt) to a value pred accepts (any,
 * without pred), with that value in *v (NULL: the flag has none); 0 when none does. */
static int last_set(const cli_args *a, const char *name, char short_opt,
                    bool (*pred)(const char *value, const void *arg), const void *arg,
                    const char **v)
{
    size_t n = strlen(name);
    int at = 0;
    *v = NULL;
    for (int i = 1; i < a->argc; i++) {
        const char *w = a->argv[i], *val;
        const char *next = i + 1 < a->argc && a->value[i + 1] ? a->argv[i + 1] : NULL;
        if (a->value[i])
            continue;
        if (strncmp(w, "--", 2) == 0 && strncmp(w + 2, name, n) == 0 &&
            (w[2 + n] == '=' || w[2 + n] == '\0'))
            val = w[2 + n] == '=' ? w + 3 + n : next;
        else if (short_opt && w[0] == '-' && w[1] == short_opt)
            val = w[2] ? w + 2 : next;
        else
            continue;
        if (!pred || (val && pred(val, arg))) at = i, *v = val;
    }
    return at;
}

/* The words live as long as the process: the configuration points into them. Held here so
 * that they stay reachable (LeakSanitizer) after the caller's cli_args is gone; the command
 * line's list too, which alone holds the flags written out in full when a build fails. */
static char **volatile kept_argv, **volatile kept_src, **volatile kept_cmd; /* stores kept */
static bool *volatile kept_value;

static bool cli_args_alloc(cli_args *a)
{
    a->argc = 0;
    a->argv = calloc(CFG_MAX_ARGS, sizeof *a->argv);
    a->src = calloc(CFG_MAX_ARGS, sizeof *a->src);
    a->value = calloc(CFG_MAX_ARGS, sizeof *a->value);
    return a->argv && a->src && a->value;
}

/* Settings from the file and the environment, then the command line's words (cmd). */
static int build(const cli_args *cmd, const struct option *lo, cli_args *a)
{
    const char *path = getenv("CODEQ_CONFIG"), *v;
    if (last_set(cmd, "config", 0, NULL, NULL, &v)) path = v;
    if (path && *path && from_file(a, lo, path) < 0) return -1;
    if (from_env(a, lo) < 0) return -1;
    for (int i = 1; i < cmd->argc; i++) {
        if (add(a, cmd->argv[i], cmd->src[i]) < 0) return -1;
        a->value[a->argc - 1] = cmd->value[i];
    }
    return 0;
}

int cli_args_build(int argc, char **argv, const char *shortopts, const struct option *lo,
                   cli_args *a)
{
    cli_args cmd;
    bool ok = cli_args_alloc(&cmd); /* both, whatever the first did: kept below */
    ok = cli_args_alloc(a) && ok;
    kept_cmd = cmd.argv;
    kept_argv = a->argv;
    kept_src = a->src;
    kept_value = a->value;
    int rc = !ok || add(&cmd, argv[0], "") < 0 ||
                     from_command_line(&cmd, argc, argv, shortopts, lo) < 0 ||
                     add(a, argv[0], "") < 0 || build(&cmd, lo, a) < 0
                 ? -1
                 : 0;
    free(cmd.src);
    free(cmd.value);
    return rc;
}

void cli_args_blame(const cli_args *a, int index)
{
    if (index <= 0 || index >= a->argc || strcmp(a->src[index], "command line") == 0) return;
    const char *w = a->argv[index];
    w += w[0] == '-' && w[1] == '-' ? 2 : w[0] == '-' && w[1] == 'X' ? 2 : 0;
    const char *eq = strchr(w, '=');
    int nl = eq ? (int)(eq - w) : (int)strlen(w);
    char name[256];
    snprintf(name, sizeof name, "%.*s", nl, w);
    fprintf(stderr, "codeq: config: %s=%s (from %s): rejected, see above\n", name,
            !eq ? "" : wrk_kafka_secret(name) ? "******" : eq + 1, a->src[index]);
}

const char *cli_args_source_if(const cli_args *a, const char *name, char short_opt,
                               bool (*pred)(const char *value, const void *arg), const void *arg)
{
    const char *v;
    int at = last_set(a, name, short_opt, pred, arg, &v);
    return at ? a->src[at] : NULL;
}

const char *cli_args_source(const cli_args *a, const char *name, char short_opt)
{
    return cli_args_source_if(a, name, short_opt, NULL, NULL);
}

/* Where the last -X NAME=... came from. The words were split at '=' by then
 * (wrk_kafka_opts_add keeps pointers into them), so a name ends at '=' or NUL. */
const char *cli_args_kafka_source(const cli_args *a, const char *name)
{
    size_t n = strlen(name);
    const char *src = NULL;
    for (int i = 1; i < a->argc; i++) {
        const char *w = a->argv[i], *from = a->src[i];
        if (a->value[i] || w[0] != '-' || w[1] != 'X') continue;
        if (!w[2] && i + 1 < a->argc) w = a->argv[++i];
        else w += 2;
        if (strncmp(w, name, n) == 0 && (w[n] == '=' || w[n] == '\0')) src = from;
    }
    return src;
}
