/* Command-line helpers shared by the subcommands: kcat-style Kafka flags and file reading. */
#ifndef CODEQ_CLI_H
#define CODEQ_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "worker.h"

/* Option values for the shared Kafka flags; subcommands use values below 0x100 for theirs. */
enum {
    CLI_BROKERS = 'b',
    CLI_PROP = 'X',
    CLI_JOBS_TOPIC = 0x100,
    CLI_RESULTS_TOPIC,
    CLI_AUDIT_TOPIC,
    CLI_DLQ_TOPIC,
};

#define CLI_KAFKA_LONGOPTS                                          \
    {"brokers", required_argument, NULL, CLI_BROKERS},              \
    {"jobs-topic", required_argument, NULL, CLI_JOBS_TOPIC},        \
    {"results-topic", required_argument, NULL, CLI_RESULTS_TOPIC},  \
    {"audit-topic", required_argument, NULL, CLI_AUDIT_TOPIC},      \
    {"dlq-topic", required_argument, NULL, CLI_DLQ_TOPIC}

#define CLI_KAFKA_HELP                                                                  \
    "  -b, --brokers HOST:PORT   bootstrap servers (default 127.0.0.1:9092)\n"           \
    "  -X NAME=VALUE             librdkafka property, repeatable (as kcat -X)\n"        \
    "      --jobs-topic T        jobs topic (default codeq.jobs)\n"                     \
    "      --results-topic T     results topic (default codeq.results)\n"               \
    "      --audit-topic T       audit topic (default codeq.audit)\n"                   \
    "      --dlq-topic T         dead-letter topic (default codeq.jobs.dlq)\n"

/* Handles a shared Kafka option; returns 1 if it was one, 0 if not, -1 on a bad value. */
int cli_kafka_opt(int opt, char *arg, wrk_kafka_opts *o);
/* Reads a whole file ("-" is stdin) of at most max bytes, a job's limit; returns NULL with a
 * message on stderr (also for a larger file). */
char *cli_read_file(const char *cmd, const char *path, size_t max, size_t *len);
/* s (len bytes) as a JSON string, or NULL after "codeq: CMD: WHAT is not valid UTF-8" on
 * stderr: a job's text fields are JSON strings, and jansson refuses anything else. */
json_t *cli_json_text(const char *cmd, const char *what, const char *s, size_t len);
/* --limit-default / --limit-max NAME=VALUE[,NAME=VALUE...]: the operator's job limits (a list,
 * so that one CODEQ_LIMIT_MAX or config line sets several). A maximum may only be lowered
 * below the sandbox's own ceiling (sbx_limits_max). arg is left as it was (the caller's error
 * names it). Prints the error; -1 on bad input, nothing set. */
int cli_limit_opt(sbx_limits *l, bool is_max, const char *arg);
/* --isolation NAME: one of the sandbox's (sbx_isolations). Prints "codeq: CMD: ..."; -1 if
 * unknown. */
int cli_isolation_opt(sbx_config *c, const char *cmd, const char *arg);
/* The sandbox's paths and profile, checked as they are read (before Kafka or the host is
 * touched): --sandbox-profile one of sbx_profiles, --python an executable file, --work-root an
 * absolute path, --cgroup-parent a path under each hierarchy's root (no empty, '.' or '..'
 * part; a leading '/' says the same). flag is the option's name without "--". Prints
 * "codeq: CMD: --FLAG ..."; -1 on bad input. */
int cli_sandbox_opt(sbx_config *c, const char *cmd, const char *flag, const char *arg);
/* --zygote-start-ms N, at most 10 minutes: -1 with a message on bad input. */
int cli_zygote_start_opt(sbx_config *c, const char *arg);
/* --uid-base N / --uid-count N: the host uids jobs run as, uid_base .. uid_base + uid_count - 1
 * (sbx_user.c); -1 with a message on bad input. */
int cli_uid_opt(sbx_config *c, const char *flag, const char *arg);
/* After all flags: the range must end below (uid_t)-1 and hold `slots` jobs at once. Names of
 * accounts of the host's passwd inside the range go to warn (NUL-terminated, "" if none). */
int cli_uid_range_check(const char *cmd, const sbx_config *c, unsigned slots, char *warn,
                        size_t warnlen);
#define CLI_UID_HELP                                                                        \
    "      --uid-base N          first host uid (and gid) jobs run as (default 61000)\n"    \
    "      --uid-count N         uids in the range, at most 65536 (1000); every codeq\n"    \
    "                            process on a host agrees through /run/codeq, so workers\n" \
    "                            that do not share it need ranges of their own\n"
/* After all flags: defaults must lie within the maxima. */
int cli_limits_consistent(const sbx_limits *defaults, const sbx_limits *max);

#define CLI_LIMITS_HELP                                                                     \
    "      --limit-default NAME=V[,NAME=V...]  default job limits, e.g. wall_ms=10000\n"   \
    "                            (repeatable)\n"                                             \
    "      --limit-max NAME=V[,NAME=V...]  operator maxima a job may ask for, at most the\n" \
    "                            built-in ceilings (repeatable); names as in\n"             \
    "                            schemas/job.schema.json\n"

/* Parses a positive integer option or prints an error. */
int cli_uint(const char *name, const char *arg, unsigned *out);
/* After getopt's own line on an unknown flag or a bad value: where the options are, in one
 * line (not the whole usage, which buries the error). Returns 2, the usage exit code. */
int cli_see_help(const char *cmd);

/* Settings from the config file and the environment as flags before the command line's
 * (cli_config.c): flags > CODEQ_* environment > --config file > defaults. src[i] says where
 * argv[i] came from ("CODEQ_SLOTS", "FILE line 3", "command line"). The command line's
 * long flags are written out in full (--conf is --config), as getopt_long would read them
 * with the same shortopts and longopts. */
typedef struct {
    int argc;
    char **argv;
    char **src;
    bool *value; /* argv[i] is a flag's value, "--" or after it: never read as a flag */
} cli_args;
int cli_args_build(int argc, char **argv, const char *shortopts,
                   const struct option *longopts, cli_args *a);
/* After a flag at argv[index] was refused: says which setting and source it was. */
void cli_args_blame(const cli_args *a, int index);
/* Where the last value of --name (or -short_opt) came from; NULL: not given. */
const char *cli_args_source(const cli_args *a, const char *name, char short_opt);
/* The same, counting only the values pred(value, arg) accepts. */
const char *cli_args_source_if(const cli_args *a, const char *name, char short_opt,
                               bool (*pred)(const char *value, const void *arg), const void *arg);
/* Where the last -X NAME=... came from; NULL: not given. */
const char *cli_args_kafka_source(const cli_args *a, const char *name);

/* Prints j as one compact JSON line on stdout. On a terminal only ASCII goes out: JSON escapes
 * C0 controls itself, and C1 controls (U+009B is a CSI for some terminals) and DEL are written
 * as \u escapes too, so a job's text cannot act on the terminal; into a pipe or file the
 * bytes are jansson's, unchanged. */
void cli_print_json(const json_t *j);

#endif
