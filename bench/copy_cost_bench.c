/* copy_cost_bench: what one process of a job costs by being a copy of the zygote, against a
 * small program exec'd in its place (issue 12, "fewer processes per job").
 *
 * The bench embeds the interpreter as the zygote does and imports what a zygote preloads
 * (-i), so its address space has the zygote's shape; then, rounds alternating, it times N
 * times fork + _exit + wait (what each of a job's supervisor, init and main costs before it
 * does anything) and N times posix_spawn + wait of a static program that only exits (what
 * an exec'd helper would cost instead: posix_spawn is vfork + exec, no copy of the address
 * space). CPU is the bench's own and its children's (getrusage), wall per spawn beside it.
 * With -j (root: it makes namespaces) it also times a job's shape both ways: an init cloned
 * into new pid/mount/ipc/uts namespaces as a copy, which forks the main process (a copy) and
 * reaps it, as today; against an init cloned with CLONE_VM | CLONE_VFORK (sharing this
 * process's memory, posix_spawn's way), which forks the main process and execs the first
 * HELPER from a memfd, the helper reaping it. Then the same two shapes with the supervisor
 * counted in (the zygote's fork of it, the job's processes below it), beside a third: the
 * supervisor forked into a new pid namespace, its pid 1, forking the main process straight
 * into new mount/ipc/uts namespaces and reaping it itself — two processes per job, both
 * copies, and no init. And a fourth with -j: the supervisor forked into its new pid namespace
 * by a small factory that was forked before the interpreter started (so the supervisor is a
 * copy of that small process, not of the zygote), and the main process forked by the zygote
 * itself into that namespace (setns(CLONE_NEWPID) there and back) — one copy of the zygote per
 * job; the factory's CPU, and its supervisors', counted in.
 * With -g POLICY the address space is a zygote's for that policy, set up by the zygote's own
 * code (sbx_zy_py_init): the policy's modules preloaded (unless -i names others), its guard
 * prepared once, gc.freeze() — the guard's preparation alone adds ~1.5-3.5 MB.
 * Usage: copy_cost_bench [-n N] [-r ROUNDS] [-i MODULE[,MODULE...]] [-g POLICY] [-j] [HELPER...] */
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "sbx_zygote.h"
#include "validator.h"
#include "worker.h"

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

/* Waits for a child that must exit 0; 0, or -1 with a message naming it. */
static int reap_ok(pid_t pid, const char *what)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "codeq: copy_cost_bench: %s ended with status %#x\n", what, st);
        return -1;
    }
    return 0;
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
    return reap_ok(pid, helper ? helper : "the copy");
}

/* A job's shape (-j). The namespaces a job's init is cloned into (the network one is the
 * zygote's, shared); the init makes its mounts private, as its first mount step does. */
#define JOB_NS (CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS)

static int helper_memfd = -1;

static pid_t fork_like(unsigned long flags)
{
    return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0UL);
}

static void init_first_steps(void)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        _exit(90);
}

/* Today: the init is a copy; it forks the main process (a copy) and reaps it. */
static pid_t job_init_copy(void)
{
    pid_t init = fork_like(JOB_NS);
    if (init == 0) {
        init_first_steps();
        if (fork_like(0) == 0)
            _exit(0);
        int st;
        while (wait(&st) > 0 || errno == EINTR)
            ;
        _exit(0);
    }
    return init;
}

/* The other way: runs on its own stack in this process's memory, this process suspended,
 * until the exec gives it the helper's. */
static int job_vfork_init(void *arg)
{
    (void)arg;
    init_first_steps();
    if (fork_like(0) == 0)
        _exit(0);
    char *argv[] = {"codeq-init", NULL}, *envp[] = {NULL};
    syscall(SYS_execveat, helper_memfd, "", argv, envp, AT_EMPTY_PATH);
    _exit(91);
}

static pid_t job_init_vfork(void)
{
    static char *stack;
    const size_t len = 256 * 1024;
    if (!stack) {
        stack = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED) {
            stack = NULL;
            return -1;
        }
    }
    return clone(job_vfork_init, stack + len, JOB_NS | CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
}

/* The helper into a memfd, as a zygote would hold it; 0, or -1 with a message. */
static int helper_load(const char *path)
{
    size_t len;
    char *image = bench_slurp(path, &len, 0);
    if (!image)
        return -1;
    helper_memfd = memfd_create("codeq-init", MFD_CLOEXEC);
    int rc = helper_memfd >= 0 && write(helper_memfd, image, len) == (ssize_t)len ? 0 : -1;
    if (rc < 0)
        fprintf(stderr, "codeq: copy_cost_bench: %s into a memfd: %s\n", path, strerror(errno));
    free(image);
    return rc;
}

enum job_shape {
    SHAPE_COPY, SHAPE_VFORK, SHAPE_SUP_COPY, SHAPE_SUP_VFORK, SHAPE_SUP_INIT, SHAPE_FACTORY, SHAPES
};

static const char *const shape_names[SHAPES] = {
    "job: init a copy, main a copy",
    "job: vfork init, main a copy, helper",
    "sup + job: init a copy, main a copy",
    "sup + job: vfork init, main a copy, helper",
    "sup pid 1 (new pid ns) + main a copy",
    "sup pid 1 from a factory + main by setns",
};

/* The job's init one way or the other; -1 with errno. */
static pid_t job_init(bool vfork_init)
{
    return vfork_init ? job_init_vfork() : job_init_copy();
}

/* From a supervisor that is pid 1: the main process forked into the job's other namespaces,
 * and reaped; 0, or -1 with a message. */
static int main_in_namespaces(void)
{
    pid_t main_pid = fork_like(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS);
    if (main_pid == 0) {
        init_first_steps();
        _exit(0);
    }
    if (main_pid < 0) {
        fprintf(stderr, "codeq: copy_cost_bench: clone(main): %s\n", strerror(errno));
        return -1;
    }
    return reap_ok(main_pid, "the job's main");
}

/* The supervisor as the job's init: the zygote forks it into a new pid namespace (ahead of
 * the job in the real thing), it forks the main process into the other namespaces and reaps
 * it. */
static pid_t sup_as_init(void)
{
    pid_t sup = fork_like(CLONE_NEWPID);
    if (sup == 0)
        _exit(main_in_namespaces() < 0 ? 92 : 0);
    return sup;
}

/* The main process forked by a supervisor that is already pid 1 of its namespace: what is
 * left on a job's path in that shape. One such supervisor forks and reaps n of them. */
static int mains_from_a_ready_init(int n)
{
    pid_t sup = fork_like(CLONE_NEWPID);
    if (sup == 0) {
        for (int i = 0; i < n; i++)
            if (main_in_namespaces() < 0)
                _exit(94);
        _exit(0);
    }
    if (sup < 0) {
        fprintf(stderr, "codeq: copy_cost_bench: clone(CLONE_NEWPID): %s\n", strerror(errno));
        return -1;
    }
    return reap_ok(sup, "the supervisor as pid 1");
}

/* The supervisor as a plain fork of the zygote, running the job's init below it. */
static pid_t sup_then_init(bool vfork_init)
{
    pid_t sup = fork_like(0);
    if (sup == 0) {
        pid_t init = job_init(vfork_init);
        _exit(init < 0 || reap_ok(init, "the job's init") < 0 ? 93 : 0);
    }
    return sup;
}

/* ---- the factory shape ----
 * The factory is forked before the interpreter starts, so its address space is the bench's
 * before Py_Initialize: a supervisor forked from it copies almost nothing. It answers three
 * requests on a SOCK_SEQPACKET pair: 'S' forks a supervisor into a new pid namespace (it
 * waits to be killed, as pid 1 with nothing to reap) and answers its pid; 'K' + pid kills and
 * reaps one; 'R' answers its CPU and its reaped children's, in ms. */
static int factory_fd = -1;
static int own_pidns_fd = -1;

typedef struct {
    char op;
    pid_t pid;
    double cpu_ms;
} factory_msg;

static void factory_serve(int fd)
{
    factory_msg m;
    while (recv(fd, &m, sizeof m, 0) == (ssize_t)sizeof m) {
        if (m.op == 'S') {
            m.pid = fork_like(CLONE_NEWPID);
            if (m.pid == 0) { /* dies with the factory: no pid namespace outlives the bench */
                close(fd);
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                    _exit(1);
                for (;;)
                    pause();
            }
            m.cpu_ms = m.pid < 0 ? errno : 0;
        } else if (m.op == 'K') {
            kill(m.pid, SIGKILL);
            m.pid = waitpid(m.pid, NULL, 0);
        } else {
            m.cpu_ms = cpu_ms();
        }
        if (send(fd, &m, sizeof m, 0) != (ssize_t)sizeof m)
            break;
    }
    _exit(0);
}

/* Before the interpreter: 0, or -1 with a message. */
static int factory_start(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return perror("codeq: copy_cost_bench: socketpair"), -1;
    pid_t f = fork();
    if (f == 0) {
        close(sv[0]);
        factory_serve(sv[1]);
    }
    close(sv[1]);
    factory_fd = sv[0];
    own_pidns_fd = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
    if (f < 0 || own_pidns_fd < 0)
        return perror("codeq: copy_cost_bench: the factory"), -1;
    return 0;
}

static int factory_ask(factory_msg *m)
{
    if (send(factory_fd, m, sizeof *m, 0) != (ssize_t)sizeof *m ||
        recv(factory_fd, m, sizeof *m, 0) != (ssize_t)sizeof *m)
        return perror("codeq: copy_cost_bench: the factory's answer"), -1;
    return 0;
}

/* The factory's CPU and its supervisors' so far, in ms; -1 on failure. */
static double factory_cpu_ms(void)
{
    factory_msg m = {.op = 'R'};
    return factory_fd < 0 ? 0 : factory_ask(&m) < 0 ? -1 : m.cpu_ms;
}

/* Into the supervisor's pid namespace for the next fork, and back; 0, or -1. */
static int pidns_enter(pid_t sup)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)sup);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = fd >= 0 ? setns(fd, CLONE_NEWPID) : -1;
    if (fd >= 0)
        close(fd);
    return rc;
}

/* One job: the supervisor from the factory, the main process from us into its namespace.
 * The supervisor is killed and reaped whatever happens to the main. */
static int factory_job(void)
{
    factory_msg m = {.op = 'S'};
    if (factory_ask(&m) < 0)
        return -1;
    if (m.pid <= 0) {
        fprintf(stderr, "codeq: copy_cost_bench: the factory's fork(CLONE_NEWPID): %s\n",
                strerror((int)m.cpu_ms));
        return -1;
    }
    pid_t sup = m.pid;
    int rc = -1;
    if (pidns_enter(sup) < 0)
        perror("codeq: copy_cost_bench: setns(the supervisor's pid namespace)");
    else if ((rc = main_in_namespaces()), setns(own_pidns_fd, CLONE_NEWPID) < 0) {
        perror("codeq: copy_cost_bench: setns(back)");
        rc = -1;
    }
    m = (factory_msg){.op = 'K', .pid = sup};
    if (factory_ask(&m) < 0)
        return -1;
    if (m.pid != sup) {
        fprintf(stderr, "codeq: copy_cost_bench: the factory could not reap supervisor %d\n",
                (int)sup);
        return -1;
    }
    return rc;
}

/* One job's processes started and reaped in the given shape; 0, or -1 with a message. */
static int one_job(enum job_shape shape)
{
    if (shape == SHAPE_FACTORY)
        return factory_job();
    pid_t pid = shape == SHAPE_COPY || shape == SHAPE_VFORK ? job_init(shape == SHAPE_VFORK)
                : shape == SHAPE_SUP_INIT                   ? sup_as_init()
                                                            : sup_then_init(shape == SHAPE_SUP_VFORK);
    if (pid < 0) {
        fprintf(stderr, "codeq: copy_cost_bench: clone(%s): %s\n", shape_names[shape],
                strerror(errno));
        return -1;
    }
    return reap_ok(pid, shape_names[shape]);
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

/* The interpreter as the worker's zygote for a policy sets it up (wrk_config_finish gives the
 * preload and the guard, sbx_zy_py_init does what the zygote does); -i replaces the preload.
 * 0, or -1 with a message. */
static int prepare_like_zygote(const char *policy, const char *modules)
{
    char err[512];
    val_policy *p = val_policy_load(policy, err, sizeof err);
    if (!p) {
        fprintf(stderr, "codeq: copy_cost_bench: %s\n", err);
        return -1;
    }
    static wrk_config w;
    wrk_config_default(&w);
    w.policy = p;
    wrk_config_finish(&w); /* zygote isolation is the default: sets the preload and prelude */
    if (sbx_zy_py_init(w.sandbox.python, modules ? modules : w.sandbox.zygote_preload,
                       w.sandbox.zygote_prelude, err, sizeof err) < 0) {
        fprintf(stderr, "codeq: copy_cost_bench: %s\n", err);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int n = 300, rounds = 3, opt;
    bool jobs = false;
    const char *modules = NULL, *policy = NULL;
    while ((opt = getopt(argc, argv, "n:r:i:g:j")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'r')
            rounds = atoi(optarg);
        else if (opt == 'i')
            modules = optarg;
        else if (opt == 'g')
            policy = optarg;
        else if (opt == 'j')
            jobs = true;
        else {
            fprintf(stderr, "usage: copy_cost_bench [-n N] [-r ROUNDS] [-i MODULE[,MODULE...]] [-g POLICY] [-j] [HELPER...]\n");
            return 2;
        }
    }
    if (n < 1 || rounds < 1 || (jobs && optind == argc)) {
        fprintf(stderr, "codeq: copy_cost_bench: -n and -r must be at least 1; -j needs a HELPER\n");
        return 2;
    }
    if (jobs && (helper_load(argv[optind]) < 0 || factory_start() < 0))
        return 1;
    if (policy) {
        if (prepare_like_zygote(policy, modules) < 0)
            return 1;
    } else {
        Py_InitializeEx(0);
        if (modules && import_all(modules) < 0)
            return 1;
    }
    if (policy)
        printf("interpreter prepared as a zygote for policy %s; ", policy);
    else
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
        for (int k = 0; jobs && k < SHAPES; k++) {
            double f0 = factory_cpu_ms(), c0 = cpu_ms(), w0 = bench_now_ms();
            for (int i = 0; i < n; i++)
                if (one_job((enum job_shape)k) < 0)
                    return 1;
            double f1 = factory_cpu_ms(), c1 = cpu_ms();
            if (f0 < 0 || f1 < 0)
                return 1;
            c0 += f0;
            c1 += f1;
            printf("round %d  %-42s %.3f ms CPU, %.3f ms wall per job\n", r + 1, shape_names[k],
                   (c1 - c0) / n, (bench_now_ms() - w0) / n);
        }
        if (jobs) {
            double c0 = cpu_ms(), w0 = bench_now_ms();
            if (mains_from_a_ready_init(n) < 0)
                return 1;
            printf("round %d  %-42s %.3f ms CPU, %.3f ms wall per job\n", r + 1,
                   "path: main a copy, from a ready pid 1", (cpu_ms() - c0) / n,
                   (bench_now_ms() - w0) / n);
        }
    }
    return 0;
}
