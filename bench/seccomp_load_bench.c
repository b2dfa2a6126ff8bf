/* seccomp_load_bench: what loading the job's seccomp filters costs a job's main process.
 *
 * Builds the filters the sandbox's seccomp layer builds (its own prepare, zygote variant
 * unless -x), then, rounds alternating, times N times fork + no_new_privs + load + _exit + wait
 * with a one-instruction filter (allow everything) and with the job's filters, in the order
 * the layer loads them. The difference is what the filters cost each job on top of the fork;
 * the kernel checks, converts and JIT-compiles each program and builds its action cache.
 * With FILE, a third variant loads one raw BPF program read from FILE (struct sock_filter
 * array, as `seccomp_export_bpf` writes it), to compare a former filter in the same run.
 * CPU is the children's (getrusage), wall per fork beside it.
 * Usage: seccomp_load_bench [-n N] [-r ROUNDS] [-x] [FILE] */
#include "sbx_int.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double children_cpu_ms(void)
{
    struct rusage r;
    getrusage(RUSAGE_CHILDREN, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
           (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

/* progs[0..n): loaded in this order by each child. */
static int time_loads(const char *what, const struct sock_fprog *progs, int n, int count)
{
    double t0 = now_ms(), c0 = children_cpu_ms();
    for (int i = 0; i < count; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("seccomp_load_bench: fork");
            return -1;
        }
        if (pid == 0) {
            if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                _exit(1);
            for (int k = 0; k < n; k++)
                if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &progs[k]) < 0)
                    _exit(2);
            _exit(0);
        }
        int st;
        if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "seccomp_load_bench: %s: a load failed (status 0x%x)\n", what, st);
            return -1;
        }
    }
    int len = 0;
    for (int k = 0; k < n; k++)
        len += progs[k].len;
    printf("%-34s %5d insns  wall %6.1f us  cpu %6.1f us per fork+load\n", what, len,
           (now_ms() - t0) * 1e3 / count, (children_cpu_ms() - c0) * 1e3 / count);
    return 0;
}

static int read_prog(const char *path, struct sock_fprog *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "seccomp_load_bench: %s: %s\n", path, strerror(errno));
        return -1;
    }
    static struct sock_filter insns[BPF_MAXINSNS];
    size_t n = fread(insns, sizeof insns[0], BPF_MAXINSNS, f);
    fclose(f);
    if (n == 0) {
        fprintf(stderr, "seccomp_load_bench: %s: no instructions\n", path);
        return -1;
    }
    *out = (struct sock_fprog){(unsigned short)n, insns};
    return 0;
}

int main(int argc, char **argv)
{
    int count = 2000, rounds = 4, opt;
    bool exec_variant = false;
    while ((opt = getopt(argc, argv, "n:r:x")) != -1) {
        if (opt == 'n')
            count = atoi(optarg);
        else if (opt == 'r')
            rounds = atoi(optarg);
        else if (opt == 'x')
            exec_variant = true;
        else {
            fprintf(stderr, "usage: seccomp_load_bench [-n N] [-r ROUNDS] [-x] [FILE]\n");
            return 2;
        }
    }
    sbx_proc p = {.use_seccomp = true, .inproc = !exec_variant};
    if (sbx_layer_seccomp.prepare(&p) < 0 || !p.seccomp_prog) {
        fprintf(stderr, "seccomp_load_bench: %s\n", p.res.message[0] ? p.res.message : "no filter built");
        return 1;
    }
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    const struct sock_fprog one = {1, &allow};
    struct sock_fprog former;
    if (optind < argc && read_prog(argv[optind], &former) < 0)
        return 1;
    for (int r = 0; r < rounds; r++) {
        if (time_loads("one instruction", &one, 1, count) < 0 ||
            time_loads("the job's filters", p.seccomp_prog, SBX_SECCOMP_FILTERS, count) < 0 ||
            (optind < argc && time_loads(argv[optind], &former, 1, count) < 0))
            return 1;
    }
    return 0;
}
