/* copy_cost_bench: what one process of a job costs by being a copy of the zygote, against a
 * small program exec'd in its place (issue 12, "fewer processes per job").
 *
 * The bench embeds the interpreter as the zygote does and imports what a zygote preloads
 * (-i), so its address space has the zygote's shape; then, rounds alternating, it times N
 * times fork + _exit + wait (what each of a job's supervisor, init and main costs before it
 * does anything) and N times posix_spawn + wait of a static program that only exits (what
 * an exec'd helper would cost instead: posix_spawn is vfork + exec, no copy of the address
 * space). CPU is the bench's own and its children's (getrusage), wall per spawn beside it.
 * Usage: copy_cost_bench [-n N] [-r ROUNDS] [-i MODULE[,MODULE...]] [HELPER...] */
#include <Python.h>

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

extern char **environ;

static double cpu_ms(void)
{
    struct rusage s, c;
    getrusage(RUSAGE_SELF, &s);
    getrusage(RUSAGE_CHILDREN, &c);
    double us = 0;
    const struct timeval *t[] = {&s.ru_utime, &s.ru_stime, &c.ru_utime, &c.ru_stime};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        us += (double)t[i]->tv_sec * 1e6 + (double)t[i]->tv_usec;
    return us / 1e3;
}

/* One child: a copy of this process (helper NULL) or the helper exec'd; 0, or -1 with a
 * message. */
static int one_child(const char *helper)
{
    pid_t pid;
    if (!helper) {
        pid = fork();
        if (pid == 0)
            _exit(0);
        if (pid < 0) {
            fprintf(stderr, "codeq: copy_cost_bench: fork: %s\n", strerror(errno));
            return -1;
        }
    } else {
        char *argv[] = {(char *)helper, NULL};
        int rc = posix_spawn(&pid, helper, NULL, NULL, argv, environ);
        if (rc != 0) {
            fprintf(stderr, "codeq: copy_cost_bench: posix_spawn %s: %s\n", helper, strerror(rc));
            return -1;
        }
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "codeq: copy_cost_bench: child %s did not exit 0\n", helper ? helper : "(fork)");
        return -1;
    }
    return 0;
}

/* Mappings and anonymous resident memory of this process: the shape a fork copies. */
static void print_shape(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int vmas = 0;
    for (int ch; f && (ch = fgetc(f)) != EOF;)
        vmas += ch == '\n';
    if (f)
        fclose(f);
    long anon_kb = -1;
    char line[256];
    f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %ld kB", &anon_kb) == 1)
            break;
    if (f)
        fclose(f);
    printf("address space: %d mappings, %.1f MB anonymous resident\n", vmas, (double)anon_kb / 1024);
}

static int import_all(const char *modules)
{
    char *list = strdup(modules), *save = NULL;
    int rc = 0;
    for (char *m = strtok_r(list, ",", &save); m && rc == 0; m = strtok_r(NULL, ",", &save)) {
        PyObject *mod = PyImport_ImportModule(m);
        if (!mod) {
            PyErr_Print();
            fprintf(stderr, "codeq: copy_cost_bench: import %s failed\n", m);
            rc = -1;
        }
        Py_XDECREF(mod);
    }
    free(list);
    return rc;
}

int main(int argc, char **argv)
{
    int n = 300, rounds = 3, opt;
    const char *modules = NULL;
    while ((opt = getopt(argc, argv, "n:r:i:")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'r')
            rounds = atoi(optarg);
        else if (opt == 'i')
            modules = optarg;
        else {
            fprintf(stderr, "usage: copy_cost_bench [-n N] [-r ROUNDS] [-i MODULE[,MODULE...]] [HELPER...]\n");
            return 2;
        }
    }
    if (n < 1 || rounds < 1) {
        fprintf(stderr, "codeq: copy_cost_bench: -n and -r must be at least 1\n");
        return 2;
    }
    Py_InitializeEx(0);
    if (modules && import_all(modules) < 0)
        return 1;
    printf("interpreter with %s imported; ", modules ? modules : "nothing");
    print_shape();
    int kinds = 1 + (argc - optind);
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < kinds; k++) {
            const char *helper = k == 0 ? NULL : argv[optind + k - 1];
            double c0 = cpu_ms(), w0 = bench_now_ms();
            for (int i = 0; i < n; i++)
                if (one_child(helper) < 0)
                    return 1;
            printf("round %d  %-40s %.3f ms CPU, %.3f ms wall per child\n", r + 1,
                   helper ? helper : "fork of this process", (cpu_ms() - c0) / n,
                   (bench_now_ms() - w0) / n);
        }
    }
    return 0;
}
