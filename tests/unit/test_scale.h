/* test_scale.h: CODEQ_TEST_TIME_SCALE for the sandbox's unit tests.
 * How much slower than this host a process runs (the cgroup v2 guest under software
 * emulation, tests/cgroup2/, which CI runs beside the host's tests). Tests scale by it the
 * times a job must do work within and the slack a bound allows beyond a limit; limits that
 * only bound a job meant to time out stay as they are. */
#ifndef CODEQ_TEST_SCALE_H
#define CODEQ_TEST_SCALE_H

#include <stdint.h>
#include <stdlib.h>

#include "sandbox.h"

static inline uint32_t time_scale(void)
{
    const char *s = getenv("CODEQ_TEST_TIME_SCALE");
    long v = s ? strtol(s, NULL, 10) : 1;
    return v >= 1 && v <= 100 ? (uint32_t)v : 1;
}

/* A job's time limit scaled, within the maximum a job may be given (sbx_limits_max). */
static inline uint32_t scaled_ms(uint32_t ms, uint32_t max_ms)
{
    uint32_t k = time_scale();
    return ms * k < max_ms ? ms * k : max_ms;
}

/* The default limits for a job that must finish: its wall and CPU time scaled (within the
 * maximum), so that under emulation it still ends by its own doing (a memory bomb touching
 * 50 MB, an interpreter starting) and not at the deadline. On the host: the defaults. */
static inline void scaled_limits_default(sbx_limits *l)
{
    sbx_limits max;
    sbx_limits_default(l);
    sbx_limits_max(&max);
    l->wall_ms = scaled_ms(l->wall_ms, max.wall_ms);
    l->cpu_ms = scaled_ms(l->cpu_ms, max.cpu_ms);
}

#endif
