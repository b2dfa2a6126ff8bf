/* codeq worker: flag parsing and start-up checks; the loop itself is wrk_consume.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "wrk_internal.h"

static const char worker_help[] =
    "usage: codeq worker [OPTIONS]\n\n"
    "Join the consumer group, run jobs from the jobs topic, publish each result (keyed by job\n"
    "id) to the results topic or the job's reply_to, and audit events to the audit topic.\n"
    "At-least-once: a job's offset is committed after its records are acknowledged.\n"
    "SIGTERM/SIGINT: finish the running job, publish, commit, leave the group.\n\n"
    CLI_KAFKA_HELP
    "  -g, --group G             consumer group (default codeq-workers)\n"
    "      --worker-id ID        name in results and audit events (default HOST-PID)\n"
    "      --python PATH         interpreter for jobs (default /usr/bin/python3)\n"
    "      --work-root DIR       parent of per-job working directories (default /tmp/codeq)\n"
    "  -h, --help                this help\n";

int cmd_worker(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_KAFKA_LONGOPTS,
        {"group", required_argument, NULL, 'g'},
        {"worker-id", required_argument, NULL, 'w'},
        {"python", required_argument, NULL, 'p'},
        {"work-root", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    wrk_config c;
    char err[256], host[200], wid[256];
    int opt;
    wrk_config_default(&c);
    if (gethostname(host, sizeof host) < 0) strcpy(host, "codeq");
    host[sizeof host - 1] = '\0';
    snprintf(wid, sizeof wid, "%s-%d", host, (int)getpid());
    c.worker_id = wid;
    while ((opt = getopt_long(argc, argv, "b:X:g:h", longopts, NULL)) != -1) {
        int k = cli_kafka_opt(opt, optarg, &c.kafka);
        if (k < 0) return 2;
        if (k > 0) continue;
        switch (opt) {
        case 'g': c.group = optarg; break;
        case 'w': c.worker_id = optarg; break;
        case 'p': c.sandbox.python = optarg; break;
        case 'r': c.sandbox.work_root = optarg; break;
        case 'h': fputs(worker_help, stdout); return 0;
        default: fputs(worker_help, stderr); return 2;
        }
    }
    if (optind != argc) {
        fputs(worker_help, stderr);
        return 2;
    }
    /* Fail at start-up, not on the first job: the validator must be usable. */
    if (val_init(err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    return wrk_worker_loop(&c);
}
