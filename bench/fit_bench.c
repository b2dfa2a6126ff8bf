/* fit_bench: what a job's largest output costs the worker's thread after the run (issue 12).
 *
 * The worker turns a run into its result (wrk_result_set_run: each stream as text, and base64
 * where it is not UTF-8), fits it to its record budget (wrk_result_fit) and encodes it once to
 * publish. A job can print up to 16 MiB to each stream; control characters take jansson ~40 ns
 * a byte of output to escape, six bytes each. This times the three steps, thread CPU, for two
 * streams of N bytes of one byte value, median of R repeats.
 * Usage: fit_bench [-n BYTES] [-b BYTE] [-m BUDGET] [-r REPEATS] */
#include "bench_util.h"
#include "wrk_internal.h"

#include <unistd.h>

static double cpu_ms(void) { return bench_clock_us(CLOCK_THREAD_CPUTIME_ID) / 1e3; }

int main(int argc, char **argv)
{
    size_t n = 16u << 20, budget = 1000000;
    int byte = 1, repeats = 5, opt;
    while ((opt = getopt(argc, argv, "n:b:m:r:")) != -1) {
        switch (opt) {
        case 'n': n = strtoull(optarg, NULL, 0); break;
        case 'b': byte = (int)strtol(optarg, NULL, 0); break;
        case 'm': budget = strtoull(optarg, NULL, 0); break;
        case 'r': repeats = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: fit_bench [-n BYTES] [-b BYTE] [-m BUDGET] [-r REPEATS]\n");
            return 2;
        }
    }
    if (repeats < 1 || repeats > 100) repeats = 5;
    char *data = malloc(n ? n : 1);
    if (!data) return 1;
    memset(data, byte, n);
    sbx_limits lim;
    sbx_limits_default(&lim);
    double build[100], fit[100], encode[100];
    size_t kept = 0, len = 0;
    for (int i = 0; i < repeats; i++) {
        sbx_result s = {.status = SBX_OK, .exit_code = 0};
        s.out = (sbx_buf){.data = data, .len = n, .total = n};
        s.err = s.out;
        double t0 = cpu_ms();
        json_t *r = wrk_result_new("bench-1", "ok", "w", "2026-12-01T00:00:00.000Z", NULL);
        wrk_result_set_run(r, &s, &lim);
        double t1 = cpu_ms();
        wrk_result_fit(r, budget);
        double t2 = cpu_ms();
        char *enc = json_dumps(r, JSON_COMPACT);
        double t3 = cpu_ms();
        len = enc ? strlen(enc) : 0;
        kept = json_string_length(json_object_get(r, "stdout"));
        free(enc);
        json_decref(r);
        build[i] = t1 - t0, fit[i] = t2 - t1, encode[i] = t3 - t2;
    }
    qsort(build, (size_t)repeats, sizeof *build, bench_cmp_double);
    qsort(fit, (size_t)repeats, sizeof *fit, bench_cmp_double);
    qsort(encode, (size_t)repeats, sizeof *encode, bench_cmp_double);
    printf("{\"bytes_per_stream\": %zu, \"byte\": %d, \"budget\": %zu, \"repeats\": %d, "
           "\"build_ms\": %.1f, \"fit_ms\": %.1f, \"encode_ms\": %.1f, \"record_bytes\": %zu, "
           "\"stdout_kept\": %zu}\n", n, byte, budget, repeats, build[repeats / 2],
           fit[repeats / 2], encode[repeats / 2], len, kept);
    free(data);
    return 0;
}
