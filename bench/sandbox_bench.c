/* sandbox_bench: per-job overhead of the sandbox — wall time and CPU of a trivial job.
 *
 * Runs one program (default `pass`) N times through sbx_run (the worker's path minus the
 * validator) for each profile asked for and prints median, p90 and max wall time in
 * milliseconds, and the CPU and minor page faults per job of this process and of every
 * process the sandbox started for it (-z: the zygote and its per-job processes, read from
 * /proc/<zygote>/stat, reaped children included). Exec mode's figure includes the interpreter's own start-up (about 20 ms
 * of /usr/bin/python3 -I); in zygote mode (-z) a trivial job's time is the sandbox's own.
 * Kernel work done in kworkers (e.g. a network namespace's deferred cleanup) is not in the
 * CPU column. Single-threaded, one job at a time.
 *
 *   build/sandbox_bench [-n 50] [-z] [-c CODE] [-p PRELOAD] [-g POLICY] [PROFILE...]
 *       default profiles: full no-cgroup no-seccomp; -z: zygote mode; -p: the zygote's preload
 *       (comma-separated modules, e.g. numpy; default none); -g: run every job under POLICY's
 *       runtime guard as the worker does (strict, data or a file), and in zygote mode preload
 *       the policy's modules unless -p says otherwise: the worker's own per-job path
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "worker.h"

static const char *guard; /* -g: the policy's runtime guard, every job's prelude */
static size_t guard_len;

/* What a process tree has used: CPU seconds and minor page faults (most of a zygote job's
 * faults are copy-on-write ones; their count moves far less between runs than CPU time does,
 * so an A/B of a change to what a job's processes touch reads better in faults). */
typedef struct {
    double cpu_s, minflt;
} tree_use;

/* pid and its reaped children (minflt cminflt utime stime cutime cstime); zero if gone. */
static tree_use proc_use(long pid)
{
    tree_use u = {0};
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return u;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *s = strrchr(buf, ')');
    double t[6] = {0};
    /* after ")": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime.. */
    if (s && sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %lf %lf %*u %*u %lf %lf %lf %lf", &t[0],
                    &t[1], &t[2], &t[3], &t[4], &t[5]) == 6) {
        u.minflt = t[0] + t[1];
        u.cpu_s = (t[2] + t[3] + t[4] + t[5]) / (double)sysconf(_SC_CLK_TCK);
    }
    return u;
}

static double tv_s(struct timeval a, struct timeval b)
{
    return (double)(a.tv_sec + b.tv_sec) + (double)(a.tv_usec + b.tv_usec) / 1e6;
}

/* This process (children reaped by us included) and its live children (the zygotes, which
 * reap their per-job processes themselves). */
static tree_use tree_use_now(void)
{
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    getrusage(RUSAGE_CHILDREN, &b);
    tree_use u = {.cpu_s = tv_s(a.ru_utime, a.ru_stime) + tv_s(b.ru_utime, b.ru_stime),
                  .minflt = (double)(a.ru_minflt + b.ru_minflt)};
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/task/%ld/children", (long)getpid(), (long)getpid());
    FILE *f = fopen(path, "r");
    long pid;
    while (f && fscanf(f, "%ld", &pid) == 1) {
        tree_use c = proc_use(pid);
        u.cpu_s += c.cpu_s;
        u.minflt += c.minflt;
    }
    if (f)
        fclose(f);
    return u;
}

static int bench(const sbx_config *base, const char *profile, const char *code, int n)
{
    sbx_config c = *base;
#ifndef SBX_BENCH_NO_PROFILE
    c.profile = profile;
#endif
    sbx_job j = {.code = code, .code_len = strlen(code), .job_id = "bench",
                 .prelude = guard, .prelude_len = guard_len};
    sbx_limits_default(&j.limits);
    double *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return 1;
    tree_use use0 = {0};
    for (int i = -1; i < n; i++) { /* i = -1: warm-up (a zygote's spawn), not counted */
        sbx_result r;
        double t0 = bench_now_ms();
        sbx_run(&c, &j, &r);
        if (i >= 0)
            t[i] = bench_now_ms() - t0;
        else
            use0 = tree_use_now();
        if (r.status != SBX_OK) {
            fprintf(stderr, "sandbox_bench: %s: job ended %s: %s\n", profile,
                    sbx_status_name(r.status), r.message);
            sbx_result_free(&r);
            free(t);
            return 1;
        }
        sbx_result_free(&r);
    }
    tree_use use1 = tree_use_now();
    double cpu_ms = (use1.cpu_s - use0.cpu_s) * 1e3 / n, faults = (use1.minflt - use0.minflt) / n;
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    printf("%-12s %s n=%d median %.2f ms  p90 %.2f ms  max %.1f ms  cpu/job %.2f ms  "
           "faults/job %.0f\n",
           profile, c.isolation ? c.isolation : "exec", n, t[n / 2], t[(n * 9) / 10], t[n - 1],
           cpu_ms, faults);
    free(t);
    return 0;
}

/* The worker's own set-up (wrk_config_finish): the guard as every job's prelude, prepared
 * once by the zygote, and unless -p, the policy's modules preloaded. */
static int use_policy(sbx_config *c, const char *name)
{
    char err[256];
    val_policy *p = val_policy_load(name, err, sizeof err); /* kept for the run */
    if (!p) {
        fprintf(stderr, "sandbox_bench: %s\n", err);
        return -1;
    }
    static wrk_config w;
    wrk_config_default(&w);
    w.sandbox = *c;
    w.policy = p;
    wrk_config_finish(&w);
    *c = w.sandbox;
    guard = val_policy_guard(p, &guard_len);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 50, opt;
    const char *code = "pass\n";
    sbx_config c;
    sbx_config_default(&c);
    const char *policy = NULL;
    while ((opt = getopt(argc, argv, "n:zc:p:g:")) != -1) {
        if (opt == 'p')
            c.zygote_preload = optarg;
        else if (opt == 'g')
            policy = optarg;
        else if (opt == 'z')
            c.isolation = "zygote";
        else if (opt == 'c')
            code = optarg;
        else if (opt != 'n' || (n = atoi(optarg)) < 1 || n > 100000) {
            fprintf(stderr, "usage: sandbox_bench [-n N] [-z] [-c CODE] [-p PRELOAD] [-g POLICY] "
                    "[PROFILE...]\n");
            return 2;
        }
    }
    if (policy && use_policy(&c, policy) < 0)
        return 2;
    static const char *const def[] = {"full", "no-cgroup", "no-seccomp"};
    int rc = 0;
    if (optind == argc)
        for (int i = 0; i < 3; i++)
            rc |= bench(&c, def[i], code, n);
    for (int i = optind; i < argc; i++)
        rc |= bench(&c, argv[i], code, n);
    sbx_zygote_shutdown();
    return rc;
}
