/* bench_util.h: what every benchmark here needs the same way — clocks, sorting samples for
 * percentiles, pinning to one CPU, reading a program file. Header-only (static functions): the
 * benchmarks are separate executables, some linked against different libpythons. */
#ifndef CODEQ_BENCH_UTIL_H
#define CODEQ_BENCH_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity; the build defines it already */
#endif
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double bench_clock_us(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static inline double bench_now_us(void) { return bench_clock_us(CLOCK_MONOTONIC); }
static inline double bench_now_ms(void) { return bench_now_us() / 1e3; }

/* qsort comparator for double samples, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts the n samples in place; their median and 95th percentile. */
static inline void bench_median_p95(double *t, int n, double *median, double *p95)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    *median = t[n / 2];
    *p95 = t[(n * 95) / 100 < n ? (n * 95) / 100 : n - 1];
}

/* This thread on one CPU, so a rate is "per core"; -1 with a message. */
static inline int bench_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) < 0) {
        fprintf(stderr, "codeq: bench: sched_setaffinity(cpu %d): %s\n", cpu, strerror(errno));
        return -1;
    }
    return 0;
}

/* A file of at most 1 MiB, NUL-terminated, with `room` spare bytes after it; NULL with a
 * message. */
static inline char *bench_slurp(const char *path, size_t *len, size_t room)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "codeq: bench: open %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20;
    char *buf = malloc(cap + room + 1);
    *len = buf ? fread(buf, 1, cap, f) : 0;
    int bad = !buf || ferror(f) || !feof(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "codeq: bench: read %s: %s\n", path,
                buf ? "larger than 1 MiB or unreadable" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[*len] = '\0';
    return buf;
}

#endif
