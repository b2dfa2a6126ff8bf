/* isolation_bench: per-job time of zygote mode vs exec mode vs the seed's approach (issue 5).
 *
 * Same jobs for each: a trivial one (`pass`) and one that imports numpy. Zygote and exec mode
 * are measured in-process through sbx_run (the worker's path minus the static validator), one
 * job at a time, start to result; the zygote is warmed by one job first (its spawn is a
 * once-per-worker cost). The seed's approach, subprocess.run([python3, -c, code]), is measured
 * from /usr/bin/python3 itself, as the seed ran it, with no confinement at all.
 * Rows: the bare sandbox in each mode ("exec", "zygote": numpy preloaded, as codeq's zygote
 * does for every installed module the policy allows); the same with the runtime guard of the
 * "data" policy as the job's prelude, which is what a codeq worker runs by default ("+guard");
 * and two diagnostics: the zygote without preload, and under the no-cgroup profile.
 * Prints a table (median, p95, ratios to the seed and to exec mode) and writes JSON.
 *
 *   build/isolation_bench [-n 100] [-o bench/results/isolation.json]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "sandbox.h"
#include "validator.h"

static const struct {
    const char *name, *code;
} jobs[] = {
    {"trivial", "pass\n"},
    {"numpy", "import numpy\n"},
};
enum { NJOBS = 2 };

static const char *g_prelude; /* the guard rows' prelude, NULL for the bare sandbox */
static size_t g_prelude_len;

typedef struct {
    const char *mode;
    double med[NJOBS], p95[NJOBS];
} row;

static int one(const sbx_config *c, const char *code, double *ms)
{
    sbx_job j = {.code = code, .code_len = strlen(code), .job_id = "bench",
                 .prelude = g_prelude, .prelude_len = g_prelude_len};
    sbx_limits_default(&j.limits);
    sbx_result r;
    double t0 = bench_now_ms();
    sbx_run(c, &j, &r);
    *ms = bench_now_ms() - t0;
    int ok = r.status == SBX_OK;
    if (!ok)
        fprintf(stderr, "isolation_bench: job ended %s: %s %.300s\n", sbx_status_name(r.status),
                r.message, r.err.data);
    sbx_result_free(&r);
    return ok ? 0 : -1;
}

static int bench_sandbox(row *rw, const sbx_config *c, int n)
{
    double *t = calloc((size_t)n, sizeof *t), warm;
    if (!t)
        return -1;
    for (int k = 0; k < NJOBS; k++) {
        if (one(c, jobs[k].code, &warm) < 0)
            goto fail;
        for (int i = 0; i < n; i++)
            if (one(c, jobs[k].code, &t[i]) < 0)
                goto fail;
        bench_median_p95(t, n, &rw->med[k], &rw->p95[k]);
    }
    free(t);
    return 0;
fail:
    free(t);
    return -1;
}

/* The seed: subprocess.run from /usr/bin/python3, timed there; one line of times per job. */
static int bench_seed(row *rw, int n)
{
    for (int k = 0; k < NJOBS; k++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c 'import subprocess, time\n"
                 "code = %s\n"
                 "for i in range(%d + 1):\n"
                 "    t = time.perf_counter()\n"
                 "    subprocess.run([\"/usr/bin/python3\", \"-c\", code], timeout=10, check=True)\n"
                 "    print((time.perf_counter() - t) * 1000) if i else None\n'",
                 k == 0 ? "\"pass\"" : "\"import numpy\"",
                 n);
        FILE *f = popen(cmd, "r");
        if (!f)
            return -1;
        double *t = calloc((size_t)n, sizeof *t);
        int got = 0;
        while (t && got < n && fscanf(f, "%lf", &t[got]) == 1)
            got++;
        int rc = pclose(f);
        if (!t || got != n || rc != 0) {
            free(t);
            fprintf(stderr, "isolation_bench: seed run failed (%d of %d times)\n", got, n);
            return -1;
        }
        bench_median_p95(t, n, &rw->med[k], &rw->p95[k]);
        free(t);
    }
    return 0;
}

static void report(const row *rows, int nrows, int n, const char *out)
{
    const row *seed = &rows[0], *exec = &rows[1];
    printf("%-22s %-13s %9s %9s %9s %9s\n", "mode", "job", "median ms", "p95 ms", "x seed",
           "x exec");
    for (int r = 0; r < nrows; r++)
        for (int k = 0; k < NJOBS; k++)
            printf("%-22s %-13s %9.2f %9.2f %8.1fx %8.1fx\n", rows[r].mode, jobs[k].name,
                   rows[r].med[k], rows[r].p95[k], seed->med[k] / rows[r].med[k],
                   exec->med[k] / rows[r].med[k]);
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return;
    }
    double load[3] = {0};
    getloadavg(load, 3);
    fprintf(f, "{\n  \"jobs_per_cell\": %d,\n  \"loadavg_1m_at_end\": %.2f,\n  \"rows\": [\n", n,
            load[0]);
    for (int r = 0; r < nrows; r++)
        for (int k = 0; k < NJOBS; k++)
            fprintf(f,
                    "    {\"mode\": \"%s\", \"job\": \"%s\", \"median_ms\": %.3f, \"p95_ms\": %.3f, "
                    "\"speedup_vs_seed\": %.2f, \"speedup_vs_exec\": %.2f}%s\n",
                    rows[r].mode, jobs[k].name, rows[r].med[k], rows[r].p95[k],
                    seed->med[k] / rows[r].med[k], exec->med[k] / rows[r].med[k],
                    r == nrows - 1 && k == NJOBS - 1 ? "" : ",");
    fprintf(f, "  ]\n}\n");
    fclose(f);
    printf("wrote %s\n", out);
}

int main(int argc, char **argv)
{
    int n = 100, opt;
    const char *out = CODEQ_BENCH_RESULTS;
    while ((opt = getopt(argc, argv, "n:o:")) != -1) {
        if (opt == 'o')
            out = optarg;
        else if (opt != 'n' || (n = atoi(optarg)) < 2 || n > 100000) {
            fprintf(stderr, "usage: isolation_bench [-n N] [-o FILE]\n");
            return 2;
        }
    }
    enum { NROWS = 7 };
    row rows[NROWS] = {{.mode = "seed subprocess.run"}, {.mode = "exec"}, {.mode = "zygote"},
                       {.mode = "exec+guard"}, {.mode = "zygote+guard"},
                       {.mode = "zygote no-preload"}, {.mode = "zygote no-cgroup"}};
    char err[256];
    val_policy *data = val_policy_load("data", err, sizeof err);
    if (!data) {
        fprintf(stderr, "isolation_bench: %s\n", err);
        return 1;
    }
    sbx_config c;
    sbx_config_default(&c);
    if (bench_seed(&rows[0], n) < 0 || bench_sandbox(&rows[1], &c, n) < 0)
        return 1;
    c.isolation = "zygote";
    c.zygote_preload = "numpy";
    if (bench_sandbox(&rows[2], &c, n) < 0)
        return 1;
    g_prelude = val_policy_guard(data, &g_prelude_len);
    c.isolation = "exec";
    if (bench_sandbox(&rows[3], &c, n) < 0)
        return 1;
    c.isolation = "zygote";
    c.zygote_prelude = g_prelude; /* as the worker sets it (worker/wrk_config.c) */
    if (bench_sandbox(&rows[4], &c, n) < 0)
        return 1;
    g_prelude = NULL;
    c.zygote_prelude = NULL;
    c.zygote_preload = NULL; /* diagnostic: numpy imported by each job */
    if (bench_sandbox(&rows[5], &c, n) < 0)
        return 1;
    c.zygote_preload = "numpy";
    c.profile = "no-cgroup"; /* diagnostic only: what the per-job cgroup costs */
    if (bench_sandbox(&rows[6], &c, n) < 0)
        return 1;
    sbx_zygote_shutdown();
    report(rows, NROWS, n, out);
    val_policy_free(data);
    return 0;
}
