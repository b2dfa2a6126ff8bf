/* validator_bench: how many programs per second one core can validate (issue 4 goal: >= 2,000/s
 * for a 100-line program), through the public API the worker uses (val_init + val_check_policy).
 *
 * Why it is shaped this way
 * - Pinned to one CPU with sched_setaffinity so the number is "per core", not "per machine".
 * - The validator keeps a verdict cache (SHA-256 of the bytes + policy), so each program is
 *   measured three ways and labelled: "cache-hit" validates the same bytes every time with the
 *   cache on (a resubmitted program), "cache-off" the same bytes with the cache off (parse and
 *   rule walk in full), "distinct" appends a unique comment every iteration with the cache on
 *   (a program never seen before: full work plus hashing and inserting). The goal is about
 *   programs never seen before, so "distinct" is the honest number for it. "parse-only" is the
 *   floor: CPython's compile() to AST objects alone, no rules, in the same interpreter.
 * - Warm-up first (interpreter, type caches, allocator), then N timed iterations; each iteration is
 *   timed alone so the median and p95 come from real samples. Bounded in count and in time.
 * - Rates are given from wall time and from this thread's CPU time: on a shared machine the
 *   wall rate includes time the core spent on other processes; the CPU rate does not (caches
 *   and memory bandwidth are still shared). Both go in the JSON with the load average.
 * - A program that draws findings is reported with its finding count: a rejected program can be
 *   faster or slower to check, so the numbers are only comparable for clean programs. */
#define PY_SSIZE_T_CLEAN
#include <Python.h> /* first, as Python requires; only for the parse-only floor */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity; the build defines it already */
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "validator.h"

#ifndef CODEQ_BENCH_PROGRAMS
#define CODEQ_BENCH_PROGRAMS "bench/programs"
#endif
#ifndef CODEQ_BENCH_RESULTS
#define CODEQ_BENCH_RESULTS "bench/results/validator.json"
#endif

enum { NMODES = 4 };

typedef struct {
    const char *path;
    const char *mode;   /* "cache-hit" | "cache-off" | "distinct" | "parse-only" */
    int lines;
    size_t bytes;
    size_t findings;
    int iterations;
    double per_sec, median_us, p95_us, mean_us;
    double cpu_per_sec; /* from this thread's CPU time: what the rate would be with the core to itself */
} bench_row;

typedef struct {
    int warmup, iterations, cpu;
    double max_seconds; /* per measurement: stop early (and say so) rather than run forever */
    const char *policy, *json;
} bench_opts;

static int count_lines(const char *s, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++) n += s[i] == '\n';
    return n + (len && s[len - 1] != '\n');
}

/* One validation; -1 if the validator failed (the bench stops: numbers would be meaningless). */
static int check_once(const val_policy *pol, const char *code, size_t len, size_t *findings)
{
    char err[256];
    val_report r = {0};
    if (val_check_policy(pol, code, len, &r, err, sizeof err) < 0) {
        fprintf(stderr, "codeq: bench: val_check_policy: %s\n", err);
        return -1;
    }
    *findings = r.count;
    val_report_free(&r);
    return 0;
}

/* The floor under any AST-walking validator: parse to Python AST objects, nothing else. The
 * validator releases the GIL after init, so take it like val_check does. */
static int parse_once(const char *code, size_t len)
{
    (void)len; /* code is NUL-terminated at len (measure() sees to it); programs hold no NULs */
    PyGILState_STATE g = PyGILState_Ensure();
    PyCompilerFlags flags = _PyCompilerFlags_INIT;
    flags.cf_flags = PyCF_ONLY_AST;
    PyObject *ast = Py_CompileStringExFlags(code, "main.py", Py_file_input, &flags, -1);
    int rc = ast ? 0 : -1;
    if (!ast) PyErr_Print();
    Py_XDECREF(ast);
    PyGILState_Release(g);
    return rc;
}

/* Appends "# <i>\n" to the program in place (buf has room) so every input is distinct. */
static size_t make_distinct(char *buf, size_t base, int i)
{
    return base + (size_t)snprintf(buf + base, 64, "# distinct %d\n", i);
}

static int measure(const bench_opts *o, const val_policy *pol, char *code, size_t len, bench_row *row)
{
    int distinct = strcmp(row->mode, "distinct") == 0, parse = strcmp(row->mode, "parse-only") == 0;
    val_cache_enable(strcmp(row->mode, "cache-off") != 0); /* off also empties it */
    code[len] = '\0'; /* a previous distinct row left its suffix behind */
    double *t = malloc(sizeof(double) * (size_t)o->iterations);
    if (!t) return -1;
    for (int i = 0; i < o->warmup; i++) {
        size_t l = distinct ? make_distinct(code, len, -1 - i) : len;
        if ((parse ? parse_once(code, l) : check_once(pol, code, l, &row->findings)) < 0) goto fail;
    }
    double start = bench_now_us(), total = 0, cpu0 = bench_clock_us(CLOCK_THREAD_CPUTIME_ID);
    int n = 0;
    for (; n < o->iterations && (bench_now_us() - start) < o->max_seconds * 1e6; n++) {
        size_t l = distinct ? make_distinct(code, len, n) : len;
        double t0 = bench_now_us();
        if ((parse ? parse_once(code, l) : check_once(pol, code, l, &row->findings)) < 0) goto fail;
        t[n] = bench_now_us() - t0;
        total += t[n];
    }
    row->cpu_per_sec = n / ((bench_clock_us(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1e6);
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    row->iterations = n;
    row->per_sec = n / (total / 1e6);
    row->mean_us = total / n;
    row->median_us = t[n / 2];
    row->p95_us = t[(size_t)(n * 0.95) < (size_t)n ? (size_t)(n * 0.95) : (size_t)n - 1];
    free(t);
    return 0;
fail:
    free(t);
    return -1;
}

static void cpu_model(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        char *c = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && c) {
            snprintf(out, len, "%s", c + 2);
            out[strcspn(out, "\n")] = 0;
            break;
        }
    }
    if (f) fclose(f);
}

/* The 1-minute load average: the machine may be shared, and a busy neighbour shows here. */
static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

static int write_json(const bench_opts *o, const bench_row *rows, int n, double load_before)
{
    FILE *f = fopen(o->json, "w");
    if (!f) {
        fprintf(stderr, "codeq: bench: write %s: %s\n", o->json, strerror(errno));
        return -1;
    }
    char model[128];
    cpu_model(model, sizeof model);
    fprintf(f, "{\n  \"bench\": \"validator\",\n  \"policy\": \"%s\",\n  \"cpu_model\": \"%s\",\n"
               "  \"online_cpus\": %ld,\n  \"pinned_cpu\": %d,\n  \"warmup\": %d,\n"
               "  \"loadavg_1m_before\": %.2f,\n  \"loadavg_1m_after\": %.2f,\n  \"results\": [\n",
            o->policy, model, sysconf(_SC_NPROCESSORS_ONLN), o->cpu, o->warmup, load_before, loadavg());
    for (int i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        const char *slash = strrchr(r->path, '/');
        fprintf(f, "    {\"program\": \"%s\", \"lines\": %d, \"bytes\": %zu, \"mode\": \"%s\", "
                   "\"findings\": %zu, \"iterations\": %d, \"validations_per_sec\": %.0f, "
                   "\"validations_per_cpu_sec\": %.0f, "
                   "\"mean_us\": %.1f, \"median_us\": %.1f, \"p95_us\": %.1f}%s\n",
                slash ? slash + 1 : r->path, r->lines, r->bytes, r->mode, r->findings, r->iterations,
                r->per_sec, r->cpu_per_sec, r->mean_us, r->median_us, r->p95_us, i + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

static int usage(void)
{
    fprintf(stderr, "usage: validator_bench [-n ITER] [-w WARMUP] [-t MAX_S] [-c CPU] [-p POLICY] "
                    "[-o OUT.json] [PROGRAM.py...]\n"
                    "default programs: " CODEQ_BENCH_PROGRAMS "/agent{20,100,400}.py\n"
                    "default output:   " CODEQ_BENCH_RESULTS "\n");
    return 2;
}

static int run_program(const bench_opts *o, const val_policy *pol, const char *path, bench_row *rows)
{
    size_t len;
    char *code = bench_slurp(path, &len, 64); /* room for the distinct-mode suffix */
    if (!code) return -1;
    static const char *modes[] = {"cache-hit", "cache-off", "distinct", "parse-only"};
    for (int m = 0; m < NMODES; m++) {
        bench_row *r = &rows[m];
        *r = (bench_row){.path = path, .mode = modes[m], .lines = count_lines(code, len), .bytes = len};
        if (measure(o, pol, code, len, r) < 0) {
            free(code);
            return -1;
        }
        printf("%-12s %4d lines  %-9s %8.0f /s wall  %8.0f /s cpu  median %7.1f us  p95 %7.1f us  "
               "(%d iter, %zu findings)\n", strrchr(path, '/') ? strrchr(path, '/') + 1 : path, r->lines,
               r->mode, r->per_sec, r->cpu_per_sec, r->median_us, r->p95_us, r->iterations, r->findings);
    }
    free(code);
    return 0;
}

int main(int argc, char **argv)
{
    bench_opts o = {.warmup = 200, .iterations = 5000, .cpu = 0, .max_seconds = 20,
                    .policy = "strict", .json = CODEQ_BENCH_RESULTS};
    int opt;
    while ((opt = getopt(argc, argv, "n:w:t:c:p:o:h")) != -1) {
        switch (opt) {
        case 'n': o.iterations = atoi(optarg); break;
        case 'w': o.warmup = atoi(optarg); break;
        case 't': o.max_seconds = atof(optarg); break;
        case 'c': o.cpu = atoi(optarg); break;
        case 'p': o.policy = optarg; break;
        case 'o': o.json = optarg; break;
        default: return usage();
        }
    }
    if (o.iterations < 1 || o.iterations > 10000000 || o.warmup < 0 || o.max_seconds <= 0) return usage();
    static const char *defaults[] = {CODEQ_BENCH_PROGRAMS "/agent20.py", CODEQ_BENCH_PROGRAMS "/agent100.py",
                                     CODEQ_BENCH_PROGRAMS "/agent400.py"};
    int nprog = optind < argc ? argc - optind : 3;
    const char **progs = optind < argc ? (const char **)argv + optind : defaults;
    char err[256];
    if (bench_pin(o.cpu) < 0) return 1;
    if (val_init(err, sizeof err) < 0) {
        fprintf(stderr, "codeq: bench: val_init: %s\n", err);
        return 1;
    }
    val_policy *pol = val_policy_load(o.policy, err, sizeof err);
    if (!pol) {
        fprintf(stderr, "codeq: bench: policy %s: %s\n", o.policy, err);
        return 1;
    }
    bench_row *rows = calloc((size_t)nprog * NMODES, sizeof *rows);
    int rc = rows ? 0 : 1;
    double load = loadavg();
    printf("validator bench: policy %s, cpu %d, %d warm-up + up to %d iterations (max %.0f s) per row, "
           "load %.2f\n", o.policy, o.cpu, o.warmup, o.iterations, o.max_seconds, load);
    for (int i = 0; i < nprog && rc == 0; i++)
        rc = run_program(&o, pol, progs[i], &rows[NMODES * i]) < 0;
    val_cache_enable(1);
    if (rc == 0) rc = write_json(&o, rows, nprog * NMODES, load) < 0;
    if (rc == 0) printf("wrote %s\n", o.json);
    free(rows);
    val_policy_free(pol);
    val_shutdown();
    return rc;
}
