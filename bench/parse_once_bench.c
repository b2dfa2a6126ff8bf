/* parse_once_bench: what running the validator's code object instead of the source saves
 * (issue 12, "parse once"), for one program (default bench/programs/agent100.py, 100 lines).
 *
 * Two parts:
 * - in process, pinned to one CPU, in the embedded libpython3.11 (the zygote's interpreter):
 *   thread CPU per operation of what a job did before (compile of the source, as the runtime
 *   guard does) and does now (marshal.loads of the object), and what the worker adds
 *   (val_check_compile against val_check_policy, verdict cache off), and a verdict-cache hit
 *   that hands back the kept object against compiling on a hit (at least a compile of the
 *   source: a hit has no tree);
 * - end to end: the worker's zygote configuration (wrk_config_finish: the guard compiled once,
 *   the policy's modules preloaded), the program with its guard, jobs with and without the
 *   object alternating; median and p95 wall per job and the mean of the job's cgroup CPU.
 *
 *   build/parse_once_bench [-n 200] [-i 2000] [PROGRAM.py]
 */
#include "val_internal.h" /* first: it includes Python.h */

#include <marshal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "sandbox.h"
#include "validator.h"
#include "worker.h"

static double thread_cpu_us(void) { return bench_clock_us(CLOCK_THREAD_CPUTIME_ID); }

/* Mean thread-CPU microseconds of one call of what `step` does, over n calls. */
typedef int (*step_fn)(void *arg);

static double per_call_us(step_fn step, void *arg, int n)
{
    for (int i = 0; i < n / 10 + 1; i++)
        if (step(arg) < 0)
            return -1;
    double t0 = thread_cpu_us();
    for (int i = 0; i < n; i++)
        if (step(arg) < 0)
            return -1;
    return (thread_cpu_us() - t0) / n;
}

typedef struct {
    const char *src;
    size_t len;
    val_code obj;
} prog;

/* The end of a step: what it made is dropped; a failure is printed. */
static int step_done(PyObject *made, PyGILState_STATE g)
{
    if (!made)
        PyErr_Print();
    Py_XDECREF(made);
    PyGILState_Release(g);
    return made ? 0 : -1;
}

static int step_compile_source(void *arg)
{
    prog *p = arg;
    PyGILState_STATE g = PyGILState_Ensure();
    return step_done(Py_CompileStringExFlags(p->src, "main.py", Py_file_input, NULL, -1), g);
}

static int step_marshal_loads(void *arg)
{
    prog *p = arg;
    PyGILState_STATE g = PyGILState_Ensure();
    return step_done(PyMarshal_ReadObjectFromString(p->obj.data + VAL_CODE_MAGIC_LEN,
                                                    (Py_ssize_t)(p->obj.len - VAL_CODE_MAGIC_LEN)),
                     g);
}

static int check(prog *p, const char *filename)
{
    val_report r = {0};
    val_code c = {0};
    char err[256];
    int rc = val_check_compile(NULL, p->src, p->len, filename, &r, filename ? &c : NULL, err,
                               sizeof err);
    if (rc < 0 || r.count || (filename && !c.data)) {
        fprintf(stderr, "parse_once_bench: check: %s\n", rc < 0 ? err : "findings or no object");
        rc = -1;
    }
    val_report_free(&r);
    val_code_free(&c);
    return rc;
}

static int step_check(void *arg) { return check(arg, NULL); }
static int step_check_compile(void *arg) { return check(arg, "main.py"); }

static void in_process(prog *p, int n)
{
    bench_pin(0);
    val_cache_enable(0);
    double src = per_call_us(step_compile_source, p, n);
    double loads = per_call_us(step_marshal_loads, p, n);
    double chk = per_call_us(step_check, p, n);
    double chk_obj = per_call_us(step_check_compile, p, n);
    val_cache_enable(1);
    double hit = per_call_us(step_check_compile, p, n);
    printf("in process, thread CPU per call (n=%d, CPU 0):\n", n);
    printf("  job, before: compile(source)           %8.1f us\n", src);
    printf("  job, now:    marshal.loads(object)      %8.1f us   (saves %.1f us)\n", loads,
           src - loads);
    printf("  worker: val_check_policy, cache off     %8.1f us\n", chk);
    printf("  worker: val_check_compile, cache off    %8.1f us   (adds %.1f us: compile of the "
           "tree + marshal.dumps)\n", chk_obj, chk_obj - chk);
    printf("  worker: val_check_compile, cache hit    %8.1f us   (compiling on a hit instead "
           "would cost at least compile(source): %.1f us)\n", hit, src);
    printf("  object: %zu bytes for %zu bytes of source\n", p->obj.len, p->len);
}

typedef struct {
    double wall[2], cpu_ms[2];
} sample;

static int end_to_end(prog *p, int n)
{
    wrk_config wc;
    wrk_config_default(&wc);
    wrk_config_finish(&wc);
    sbx_job j = {.code = p->src, .code_len = p->len, .job_id = "parse-once-bench"};
    sbx_limits_default(&j.limits);
    j.prelude = val_policy_guard(val_policy_default(), &j.prelude_len);
    const char *name = sbx_code_obj_filename(&wc.sandbox, &j);
    val_code obj = {0};
    val_report rep = {0};
    char err[256];
    if (!name || val_check_compile(NULL, p->src, p->len, name, &rep, &obj, err, sizeof err) < 0 ||
        !obj.data) {
        fprintf(stderr, "parse_once_bench: no code object for %s\n", name ? name : "(exec)");
        return 1;
    }
    val_report_free(&rep);
    double *wall[2] = {calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double))};
    double cpu[2] = {0, 0};
    int used[2] = {0, 0};
    for (int i = 0; i < 2 * n + 4; i++) {
        int with = i % 2; /* alternate, so both see the same machine load */
        j.code_obj = with ? obj.data : NULL;
        j.code_obj_len = with ? obj.len : 0;
        sbx_result r;
        double t0 = bench_now_ms();
        sbx_run(&wc.sandbox, &j, &r);
        double t = bench_now_ms() - t0;
        if (r.status != SBX_OK) {
            fprintf(stderr, "parse_once_bench: job ended %s: %s %.300s\n",
                    sbx_status_name(r.status), r.message, r.err.data);
            sbx_result_free(&r);
            return 1;
        }
        if (i >= 4) { /* the first jobs start the zygotes */
            wall[with][(i - 4) / 2] = t;
            cpu[with] += (double)r.cpu_ms;
            used[with] += r.code_obj_used;
        }
        sbx_result_free(&r);
    }
    printf("end to end, zygote with the worker's configuration and the strict guard (n=%d each, "
           "alternating):\n", n);
    double med[2], p95[2];
    for (int w = 0; w < 2; w++) {
        bench_median_p95(wall[w], n, &med[w], &p95[w]);
        printf("  %-20s wall median %6.2f ms  p95 %6.2f ms  cgroup CPU mean %5.2f ms  "
               "ran the object %d/%d\n", w ? "with the object" : "source (before)", med[w],
               p95[w], cpu[w] / n, used[w], n);
        free(wall[w]);
    }
    printf("  saved per job: wall median %.2f ms, cgroup CPU mean %.2f ms\n", med[0] - med[1],
           (cpu[0] - cpu[1]) / n);
    val_code_free(&obj);
    sbx_zygote_shutdown();
    return 0;
}

int main(int argc, char **argv)
{
    int n = 200, iters = 2000, opt;
    while ((opt = getopt(argc, argv, "n:i:")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'i')
            iters = atoi(optarg);
        else
            return 2;
    }
    if (n < 1 || iters < 1)
        return 2;
    const char *path = optind < argc ? argv[optind] : CODEQ_BENCH_PROGRAMS "/agent100.py";
    prog p = {0};
    char *src = bench_slurp(path, &p.len, 0);
    char err[256];
    if (!src || val_init(err, sizeof err) < 0) {
        fprintf(stderr, "parse_once_bench: %s\n", src ? err : path);
        return 1;
    }
    p.src = src;
    val_report rep = {0};
    if (val_check_compile(NULL, p.src, p.len, "main.py", &rep, &p.obj, err, sizeof err) < 0 ||
        !p.obj.data) {
        fprintf(stderr, "parse_once_bench: %s: no code object (%zu findings)\n", path, rep.count);
        return 1;
    }
    val_report_free(&rep);
    printf("%s\n", path);
    in_process(&p, iters);
    /* Jobs are not pinned: the zygote and its jobs inherit no affinity from here. */
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
    int rc = end_to_end(&p, n);
    val_code_free(&p.obj);
    free(src);
    return rc;
}
