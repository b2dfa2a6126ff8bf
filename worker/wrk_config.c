/* Worker configuration defaults: one place that says what a worker does when told nothing. */
#include <string.h>
#include <unistd.h>

#include "wrk_internal.h"

void wrk_config_default(wrk_config *c)
{
    static char host[256];
    memset(c, 0, sizeof *c);
    wrk_kafka_opts_default(&c->kafka);
    c->group = "codeq-workers";
    if (!host[0] && gethostname(host, sizeof host - 1) < 0) strcpy(host, "codeq");
    c->worker_id = host;
    sbx_config_default(&c->sandbox);
    sbx_limits_default(&c->defaults);
    sbx_limits_max(&c->max);
    c->instance_id = host;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->slots = n > 0 ? (int)n : 1;
    c->max_attempts = 3;
    c->commit_interval_ms = 100;
    c->drain_ms = 10000;
    c->grace_ms = 20000;
}
