/* codeq: one executable, subcommands for every role (worker, local run, submit, dev broker). */
#include <stdio.h>
#include <string.h>

#include "worker.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *help;
} cmds[] = {
    {"worker", cmd_worker, "consume jobs from Kafka, run them, publish results and audit events"},
    {"run", cmd_run, "run one program locally through the same validate + sandbox path"},
    {"submit", cmd_submit, "submit programs as jobs and wait for their results"},
    {"validate", cmd_validate, "check programs against the validator policy"},
    {"broker", cmd_broker, "start an in-memory development broker (librdkafka mock cluster)"},
    {"topics", cmd_topics, "create codeq's topics on a broker"},
    {"audit", cmd_audit, "print the audit trail and verify its hash chains"},
};

static int usage(FILE *f)
{
    fprintf(f, "usage: codeq COMMAND [OPTIONS]\n\n"
               "Run untrusted Python jobs from Kafka in a sandbox.\n\ncommands:\n");
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        fprintf(f, "  %-9s %s\n", cmds[i].name, cmds[i].help);
    fprintf(f, "\n'codeq COMMAND --help' describes each command's options.\n");
    return f == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc < 2) return usage(stderr);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))
        return usage(stdout);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        if (strcmp(argv[1], cmds[i].name) != 0) continue;
        /* getopt names argv[0] in its messages: "codeq: run: unrecognized option", as every
         * other message of the command begins */
        char name[32];
        snprintf(name, sizeof name, "codeq: %s", cmds[i].name);
        argv[1] = name;
        return cmds[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "codeq: unknown command '%s'\n", argv[1]);
    return usage(stderr);
}
