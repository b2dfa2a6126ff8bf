/* sandbox_bench: per-job overhead of the sandbox — wall time of a trivial job, start to finish.
 *
 * Runs `pass` N times through sbx_run (the worker's path minus the validator) for each profile
 * asked for and prints median, p90 and max in milliseconds. The interpreter's own start-up
 * (about 20 ms of /usr/bin/python3 -I) is part of every figure; the sandbox's share is the
 * difference between profiles or versions. Single-threaded, one job at a time.
 *
 *   build/sandbox_bench [-n 50] [PROFILE...]      default profiles: full no-cgroup no-seccomp
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "sandbox.h"

static int bench(const char *profile, int n)
{
    sbx_config c;
    sbx_config_default(&c);
#ifndef SBX_BENCH_NO_PROFILE
    c.profile = profile;
#endif
    sbx_job j = {.code = "pass\n", .code_len = 5, .job_id = "bench"};
    sbx_limits_default(&j.limits);
    double *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return 1;
    for (int i = 0; i < n; i++) {
        sbx_result r;
        double t0 = bench_now_ms();
        sbx_run(&c, &j, &r);
        t[i] = bench_now_ms() - t0;
        if (r.status != SBX_OK) {
            fprintf(stderr, "sandbox_bench: %s: job ended %s: %s\n", profile,
                    sbx_status_name(r.status), r.message);
            sbx_result_free(&r);
            free(t);
            return 1;
        }
        sbx_result_free(&r);
    }
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    printf("%-12s n=%d median %.1f ms  p90 %.1f ms  max %.1f ms\n", profile, n, t[n / 2],
           t[(n * 9) / 10], t[n - 1]);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 50, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt != 'n' || (n = atoi(optarg)) < 1 || n > 100000) {
            fprintf(stderr, "usage: sandbox_bench [-n N] [PROFILE...]\n");
            return 2;
        }
    }
    static const char *const def[] = {"full", "no-cgroup", "no-seccomp"};
    int rc = 0;
    if (optind == argc)
        for (int i = 0; i < 3; i++)
            rc |= bench(def[i], n);
    for (int i = optind; i < argc; i++)
        rc |= bench(argv[i], n);
    return rc;
}
