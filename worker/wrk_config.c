/* Worker configuration defaults: one place that says what a worker does when told nothing. */
#include <stdio.h>
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
    /* Both modes pass the same abuse, bypass and benign suites (tests/CMakeLists.txt); zygote
     * saves the interpreter's start and imports on every job. */
    c->sandbox.isolation = "zygote";
    sbx_limits_default(&c->defaults);
    sbx_limits_max(&c->max);
    c->instance_id = host;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    c->slots = n > 0 ? (int)n : 1;
    c->max_attempts = 3;
    c->commit_interval_ms = 100;
    c->drain_ms = 10000;
    c->grace_ms = 20000;
    /* librdkafka's default message.max.bytes; a worker reads the real one at start. */
    c->result_max_bytes = WRK_RECORD_DEFAULT_MAX - WRK_RECORD_OVERHEAD;
    c->reply_prefix = "codeq.reply.";
    c->health_stall_ms = 30000;
    c->health_max_aborts = 5;
    c->health_commit_ms = 120000;
    c->host_fault_ms = 120000;
}

const char *wrk_config_guard(const wrk_config *c, size_t *len)
{
    return val_policy_guard(c->policy ? c->policy : val_policy_default(), len);
}

void wrk_config_finish(wrk_config *c)
{
    static char preload[4096];
    if (!c->sandbox.isolation || strcmp(c->sandbox.isolation, "zygote") != 0)
        return;
    size_t glen;
    const char *guard = wrk_config_guard(c, &glen);
    /* It travels as one argument: no NUL inside, and well under the kernel's 128 KiB per
     * argument. A bigger one is simply compiled by each job, as in exec mode. */
    if (guard && strlen(guard) == glen && glen < 100 * 1024)
        c->sandbox.zygote_prelude = guard;
    if (c->sandbox.zygote_preload)
        return;
    size_t at = 0, n = val_policy_nmodules(c->policy);
    for (size_t i = 0; i < n; i++) {
        /* "?": imported if installed; a job importing a missing one fails as it would anyway. */
        int k = snprintf(preload + at, sizeof preload - at, "%s?%s", at ? "," : "",
                         val_policy_module(c->policy, i));
        if (k < 0 || (size_t)k >= sizeof preload - at)
            break;
        at += (size_t)k;
    }
    preload[at] = '\0';
    c->sandbox.zygote_preload = preload;
}
