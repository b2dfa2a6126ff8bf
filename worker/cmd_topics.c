/* codeq topics: create codeq's topics on a real broker (operators, tests). */
#include <string.h>

#include "cli.h"
#include "wrk_internal.h"

static const char topics_help[] =
    "usage: codeq topics [OPTIONS]\n\n"
    "Create those of the jobs, results, audit and dead-letter topics the cluster does not\n"
    "have. A topic it has is left as it is (its partitions and settings are not changed) and\n"
    "said on stderr. Exit 0 when all four exist, 1 if the cluster did not answer or refused\n"
    "one (a setting it does not take is named), 2 on a bad option.\n\n"
    CLI_KAFKA_HELP
    "  -p, --partitions N        partitions per topic (default 4)\n"
    "  -c, --config NAME=VALUE   topic configuration for the topics created, repeatable\n"
    "                            (e.g. max.message.bytes=2097152)\n"
    "  -h, --help                this help\n";

int cmd_topics(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_KAFKA_LONGOPTS,
        {"partitions", required_argument, NULL, 'p'},
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    wrk_kafka_opts o;
    unsigned parts = 4;
    bool parts_given = false;
    const char *cfg[16][2];
    int ncfg = 0;
    char err[512];
    int opt;
    wrk_kafka_opts_default(&o);
    while ((opt = getopt_long(argc, argv, "b:X:p:c:h", longopts, NULL)) != -1) {
        int k = cli_kafka_opt(opt, optarg, &o);
        if (k < 0) return 2;
        if (k > 0) continue;
        if (opt == 'p') {
            if (cli_uint("partitions", optarg, &parts) < 0) return 2;
            parts_given = true;
        } else if (opt == 'c') {
            char *eq = strchr(optarg, '=');
            if (!eq || eq == optarg || ncfg == 16) {
                fprintf(stderr, "codeq: topics: --config expects NAME=VALUE (at most 16)\n");
                return 2;
            }
            *eq = '\0';
            cfg[ncfg][0] = optarg;
            cfg[ncfg++][1] = eq + 1;
        } else if (opt == 'h') {
            fputs(topics_help, stdout);
            return 0;
        } else {
            return cli_see_help("topics");
        }
    }
    wrk_topic_request req = {.partitions = (int)parts, .partitions_given = parts_given,
                             .cfg = (const char *const(*)[2])cfg, .ncfg = ncfg};
    if (wrk_kafka_create_topics(&o, &req, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    printf("%s %s %s %s\n", o.jobs_topic, o.results_topic, o.audit_topic, o.dlq_topic);
    return 0;
}
