/* fuzz_guard: the validator and the runtime guard, differentially. Input bytes are a Python
 * program. The validator checks it under the strict policy (CODEQ_FUZZ_GUARD_POLICY names
 * another); a program with no findings is what the worker would run, so it is run as the
 * sandbox runs it, under the same guard (val_policy_guard) in /usr/bin/python3 -I -B, by
 * fuzz/guard_runner.py, with an oracle audit hook installed before the guard. The oracle
 * knows what the policy forbids (processes, sockets, ctypes, file system changes, files
 * opened outside the standard library, imports of modules the policy does not allow on
 * behalf of main.py, code built or frames read by main.py itself, ...) and aborts the job's
 * process in the hook, before the operation runs; when the program ends it also judges what
 * main.py's globals hold (a real module, another module's globals, the real __import__).
 * A report from it is a crash here: both layers let a program reach a forbidden operation.
 * The table of what it judges, and why it can be trusted, is in fuzz/README.md.
 *
 * Feedback: libFuzzer sees the validator's C code (instrumented); what happened at run time
 * (each distinct audit event, and the kind of the last stderr line, e.g. which refusal of
 * the guard) is added as extra counters, so inputs that reach a new operation are kept.
 * A structure-aware mutator splices names and fragments of fuzz/guard.dict and whole lines.
 *
 * `fuzz_guard --self-test` proves the oracle fires (dangerous programs with the guard off
 * must trip it before the operation ran, and programs that only hold an escape must trip its
 * end-of-run check), that the guard stops them (the same programs with the guard on must
 * not), that benign programs run clean, and that no program of tests/validator/bypass trips
 * it, with the static rules on and off. Exit 0 only if all hold.
 * CODEQ_FUZZ_GUARD_STATIC=off fuzzes the guard alone, CODEQ_FUZZ_GUARD_VERBOSE=1 prints each
 * run's outcome.
 *
 * Safety: the program runs outside the sandbox, so the oracle is what stops a forbidden
 * operation; the runner adds a private directory, uid nobody, no new processes and
 * resource limits per program, and this process first moves itself into a new network
 * namespace (no network for anything it starts). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "validator.h"

#ifndef CODEQ_GUARD_RUNNER
#error "CODEQ_GUARD_RUNNER must name fuzz/guard_runner.py"
#endif
#ifndef CODEQ_SEAL_SO
#error "CODEQ_SEAL_SO must name the build's _codeq_seal.so"
#endif

/* The job's whole environment (sandbox/sbx_env.c): the programs run with it, as in the
 * sandbox (numpy, under data, reads OPENBLAS_NUM_THREADS and friends at import). */
extern char *const sbx_job_envp[];
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libpython3.11.so\n"
           "leak:libcrypto.so.3\n";
}

enum { RUN_OK = 0, RUN_VIOLATION = 1, RUN_TIMEOUT = 2, RUN_SIGNAL = 3 };
enum { MODE_GUARD = 0, MODE_BARE = 1, MODE_GUARD_ALONE = 2 };

/* Run-time features for libFuzzer: one counter per hashed audit event / outcome. */
__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t extra[4096];

static val_policy *policy;
/* What happened to the inputs, printed at exit: the share that reaches the guard at all. */
static unsigned long n_inputs, n_run, n_kind[4], n_refused;
static const char *policy_name = "strict";
static int use_static = 1; /* CODEQ_FUZZ_GUARD_STATIC=off: the guard alone (see README) */
static int verbose;        /* CODEQ_FUZZ_GUARD_VERBOSE=1: print each run's outcome */
static pid_t runner = -1;
static int to_runner = -1, from_runner = -1;

static void die(const char *what)
{
    fprintf(stderr, "fuzz_guard: %s: %s\n", what, errno ? strerror(errno) : "failed");
    abort();
}

static void write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            die("write to guard_runner.py");
        p += k;
        len -= (size_t)k;
    }
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len) {
        ssize_t k = read(fd, p, len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

static void send_blob(const void *data, size_t len)
{
    uint32_t n = (uint32_t)len;
    write_all(to_runner, &n, sizeof n);
    write_all(to_runner, data, len);
}

/* /usr/bin/python3 -I -B guard_runner.py on two pipes; the guard is its first message. The
 * guard's C module as descriptor 5, as the sandbox hands it to an exec'd interpreter
 * (sandbox/sbx_seal.c): the runner keeps it for each program's process. */
static void start_runner(void)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
        die("pipe");
    int seal = open(CODEQ_SEAL_SO, O_RDONLY | O_CLOEXEC);
    if (seal < 0)
        die("open " CODEQ_SEAL_SO);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, seal, 5);
    char *argv[] = {"/usr/bin/python3", "-I", "-B", CODEQ_GUARD_RUNNER, NULL};
    int rc = posix_spawn(&runner, argv[0], &fa, NULL, argv, sbx_job_envp);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        die("spawn /usr/bin/python3 " CODEQ_GUARD_RUNNER);
    }
    close(in[0]);
    close(out[1]);
    close(seal);
    to_runner = in[1];
    from_runner = out[0];
    size_t glen;
    const char *guard = val_policy_guard(policy, &glen);
    if (!guard || !glen)
        die("the policy has no runtime guard");
    send_blob(guard, glen);
}

/* Runs one program on the given stdin; returns its kind and fills text (NUL-terminated,
 * cut to cap). */
static int run_stdin(int mode, const uint8_t *data, size_t size, const uint8_t *in, size_t inlen,
                     char *text, size_t cap)
{
    uint32_t m = (uint32_t)mode;
    write_all(to_runner, &m, sizeof m);
    send_blob(data, size);
    send_blob(in, inlen);
    uint32_t head[2];
    if (read_all(from_runner, head, sizeof head) < 0) {
        errno = 0;
        die("guard_runner.py stopped answering (see its traceback above)");
    }
    size_t keep = head[1] < cap - 1 ? head[1] : cap - 1;
    char *all = malloc(head[1] + 1);
    if (!all || read_all(from_runner, all, head[1]) < 0)
        die("read from guard_runner.py");
    memcpy(text, all, keep);
    text[keep] = '\0';
    free(all);
    return (int)head[0];
}

static int run_program(int mode, const uint8_t *data, size_t size, char *text, size_t cap)
{
    return run_stdin(mode, data, size, (const uint8_t *)"", 0, text, cap);
}

static uint32_t fnv1a(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return h;
}

/* "E event" lines and the last stderr line's head (exception type and the guard's words up
 * to the first quote, so names in it do not make every run new) become extra counters. */
static void record_features(int kind, const char *text)
{
    extra[fnv1a((const char *)&kind, sizeof kind) % sizeof extra] = 1;
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        size_t use = n;
        if (n > 2 && line[0] == 'L') {
            use = strcspn(line, "'\"0123456789\n");
            use = use > 80 ? 80 : use;
        }
        if (n > 2 && (line[0] == 'E' || line[0] == 'L' || line[0] == 'X'))
            extra[fnv1a(line, use) % sizeof extra] = 1;
        line += n + (line[n] == '\n');
    }
}

/* 1 if the validator accepts the program (no findings), 0 if not. */
static int validator_accepts(const uint8_t *data, size_t size)
{
    val_report rep = {0};
    char err[512] = "";
    if (val_check_policy(policy, (const char *)data, size, &rep, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_guard: the validator failed: %s\n", err);
        abort();
    }
    size_t count = rep.count;
    val_report_free(&rep);
    return count == 0;
}

/* ---- self-test ---------------------------------------------------------------------- */

/* Each does a forbidden operation the oracle must see with the guard off. With the guard on
 * and the static rules skipped, the guard must refuse it first, unless `guard_holds` is 0:
 * CPython cannot hide attributes like a function's __code__ (docs/validator.md), those are
 * the static rules' job. Through the full stack (validator, then guard) none may trip it.
 * The stopped runs must leave their directory as it was (main.py, stderr.txt): the oracle
 * aborts before the operation, not after. */
static const struct {
    const char *src;
    int guard_holds;
} dangerous[] = {
    {"import os\nos.system('true')\n", 1},
    {"print(open('/etc/passwd').read()[:10])\n", 1},
    {"open('written.txt', 'w').write('x')\n", 1},
    {"import sys\nf = type(sys.stdin.buffer.raw)('/etc/hostname')\nprint(f.read())\n", 1},
    {"import subprocess\nsubprocess.run(['true'])\n", 1},
    {"import socket\nsocket.socket()\n", 1},
    {"import ctypes\nctypes.CDLL(None)\n", 1},
    {"import os\nos.remove('main.py')\n", 1},
    {"import os\nos.kill(os.getpid(), 0)\n", 1},
    {"import random\nrandom._os.mkdir('d')\n", 1},
    {"import sys\nprint(sys._getframe().f_globals)\n", 1},
    {"exec('print(1)')\n", 1},
    {"import os\nprint(os.listdir('/etc'))\n", 1},
    {"import random\ng = random.Random.__init__.__globals__\ng['_os'].system('true')\n", 1},
    {"def f(): pass\nprint(f.__code__)\n", 0},
    {"def g(): yield 1\nprint(g().gi_frame)\n", 0},
};

/* Escapes that need no audited operation to be useful: the oracle judges what main.py's
 * globals hold when it ends. Run under the guard with the static rules skipped (each is one
 * they refuse), in the full-stack mode, each must trip it. */
static const char *const held[] = {
    "import random\ng = random.Random.__init__.__globals__\n",
    "import random\nos = random.Random.__init__.__globals__['_os']\n",
    "b = [print.__self__]\n",
    "b = abs.__self__.__dict__['__import__']\n",
};

static int selftest_file(const char *path, uint8_t **buf, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 18;
    *buf = malloc(cap);
    *len = *buf ? fread(*buf, 1, cap, f) : 0;
    fclose(f);
    return *buf ? 0 : -1;
}

/* Every *.py in dir run through the full stack (validator, then guard + oracle), or with
 * statics 0 the guard alone; counts rejected/ran, and fails on a violation, or
 * (want_accept) on a rejection or a run that did not end with status 0. */
static int selftest_dir(const char *dir, int want_accept, int statics, int *checked)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz_guard: self-test: opendir %s: %s\n", dir, strerror(errno));
        return 1;
    }
    int bad = 0, rejected = 0, ran = 0;
    char text[8192], path[4096];
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 3, ".py") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        uint8_t *buf;
        size_t len;
        if (selftest_file(path, &buf, &len) < 0) {
            fprintf(stderr, "fuzz_guard: self-test: read %s failed\n", path);
            bad++;
            continue;
        }
        (*checked)++;
        if (statics && !validator_accepts(buf, len)) {
            rejected++;
            if (want_accept) {
                fprintf(stderr, "fuzz_guard: self-test: %s rejected by the validator\n", path);
                bad++;
            }
            free(buf);
            continue;
        }
        ran++;
        uint8_t *in = NULL;
        size_t inlen = 0;
        snprintf(path + strlen(path) - 3, 8, ".stdin");
        if (selftest_file(path, &in, &inlen) < 0)
            inlen = 0;
        int kind = run_stdin(statics ? MODE_GUARD : MODE_GUARD_ALONE, buf, len, in ? in : buf,
                             inlen, text, sizeof text);
        free(buf);
        free(in);
        if (kind == RUN_VIOLATION || (want_accept && (kind != RUN_OK || !strstr(text, "X 0\n")))) {
            fprintf(stderr, "fuzz_guard: self-test: %s: kind %d:\n%s\n", path, kind, text);
            bad++;
        }
    }
    closedir(d);
    fprintf(stderr, "fuzz_guard: self-test: %s%s: %d rejected statically, %d ran under the "
            "guard, %d failures\n", dir, statics ? "" : " (static rules off)", rejected, ran, bad);
    return bad;
}

static int self_test(void)
{
    int bad = 0, checked = 0;
    char text[8192];
    for (size_t i = 0; i < sizeof dangerous / sizeof *dangerous; i++) {
        const uint8_t *p = (const uint8_t *)dangerous[i].src;
        size_t n = strlen(dangerous[i].src);
        int bare = run_program(MODE_BARE, p, n, text, sizeof text);
        if (bare != RUN_VIOLATION) {
            fprintf(stderr, "fuzz_guard: self-test: the oracle missed (guard off, kind %d):\n"
                    "%s%s\n", bare, dangerous[i].src, text);
            bad++;
        } else if (!strstr(text, "\nF ") ||
                   strcmp(strstr(text, "\nF "), "\nF main.py\nF stderr.txt") != 0) {
            /* stopped before it ran: main.py not removed, nothing written or made */
            fprintf(stderr, "fuzz_guard: self-test: the oracle fired too late (files left):\n"
                    "%s%s\n", dangerous[i].src, text);
            bad++;
        } else {
            fprintf(stderr, "fuzz_guard: self-test: oracle fired: %.*s\n",
                    (int)strcspn(text, "\n"), text);
        }
        int guarded = dangerous[i].guard_holds
                          ? run_program(MODE_GUARD_ALONE, p, n, text, sizeof text) : RUN_OK;
        if (guarded != RUN_OK) {
            fprintf(stderr, "fuzz_guard: self-test: the guard alone did not refuse (kind %d):"
                    "\n%s%s\n", guarded, dangerous[i].src, text);
            bad++;
        }
        if (validator_accepts(p, n) &&
            run_program(MODE_GUARD, p, n, text, sizeof text) == RUN_VIOLATION) {
            fprintf(stderr, "fuzz_guard: self-test: full stack let through:\n%s%s\n",
                    dangerous[i].src, text);
            bad++;
        }
        checked += 3;
    }
    for (size_t i = 0; i < sizeof held / sizeof *held; i++) {
        int kind = run_program(MODE_GUARD, (const uint8_t *)held[i], strlen(held[i]), text,
                               sizeof text);
        if (kind != RUN_VIOLATION) {
            fprintf(stderr, "fuzz_guard: self-test: the oracle missed what main.py held (kind "
                    "%d):\n%s%s\n", kind, held[i], text);
            bad++;
        } else {
            fprintf(stderr, "fuzz_guard: self-test: oracle fired: %.*s\n",
                    (int)strcspn(text, "\n"), text);
        }
        checked++;
    }
    const char *src = getenv("CODEQ_SOURCE_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/validator/benign", src ? src : ".");
    bad += selftest_dir(dir, 1, 1, &checked);
    bad += selftest_dir(dir, 1, 0, &checked);
    snprintf(dir, sizeof dir, "%s/tests/validator/bypass", src ? src : ".");
    bad += selftest_dir(dir, 0, 1, &checked);
    bad += selftest_dir(dir, 0, 0, &checked);
    fprintf(stderr, "fuzz_guard: self-test: %d checks, %d failures\n", checked, bad);
    return bad ? 1 : 0;
}

static void print_stats(void)
{
    fprintf(stderr, "fuzz_guard: %lu inputs, %lu accepted by the validator and run: %lu ended, "
            "%lu of them stopped by the guard (a 'codeq guard' error), %lu timed out, "
            "%lu killed by a signal\n", n_inputs, n_run, n_kind[RUN_OK], n_refused,
            n_kind[RUN_TIMEOUT], n_kind[RUN_SIGNAL]);
}

/* ---- libFuzzer entry points ---------------------------------------------------------- */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    char err[512];
    /* No network for the runner and every program it starts (needs root; without it the
     * oracle alone refuses sockets). */
    if (unshare(CLONE_NEWNET) < 0)
        fprintf(stderr, "fuzz_guard: unshare(CLONE_NEWNET): %s; the oracle alone refuses "
                "sockets\n", strerror(errno));
    if (val_init(err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_guard: val_init: %s\n", err);
        abort();
    }
    val_cache_enable(0);
    const char *name = getenv("CODEQ_FUZZ_GUARD_POLICY");
    policy_name = name && *name ? name : "strict";
    const char *statics = getenv("CODEQ_FUZZ_GUARD_STATIC");
    use_static = !(statics && strcmp(statics, "off") == 0);
    verbose = getenv("CODEQ_FUZZ_GUARD_VERBOSE") != NULL;
    policy = val_policy_load(policy_name, err, sizeof err);
    if (!policy) {
        fprintf(stderr, "fuzz_guard: policy: %s\n", err);
        abort();
    }
    signal(SIGPIPE, SIG_IGN);
    start_runner();
    for (int i = 1; i < *argc; i++)
        if (strcmp((*argv)[i], "--self-test") == 0)
            exit(self_test());
    atexit(print_stats);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    n_inputs++;
    if (use_static && !validator_accepts(data, size))
        return 0;
    char text[8192];
    int kind = run_program(use_static ? MODE_GUARD : MODE_GUARD_ALONE, data, size, text,
                           sizeof text);
    n_run++;
    n_kind[kind & 3]++;
    n_refused += strstr(text, "codeq guard") != NULL;
    if (kind == RUN_VIOLATION) {
        fprintf(stderr, "fuzz_guard: %s (policy %s) let this program reach a forbidden "
                "operation:\n----\n%.*s\n----\noracle: %s\n",
                use_static ? "the validator and the guard" : "the guard alone", policy_name, (int)(size < 4000 ? size : 4000), (const char *)data, text);
        abort();
    }
    if (verbose)
        fprintf(stderr, "fuzz_guard: kind %d:\n%s\n", kind, text);
    record_features(kind, text);
    return 0;
}

/* ---- structure-aware mutation -------------------------------------------------------- */

#define MAX_TOKENS 512
static char *tokens[MAX_TOKENS];
static size_t ntokens;

/* Quoted strings of a libFuzzer dictionary (name="value" or "value"; \\, \" and \xNN). */
static void load_dict(void)
{
    FILE *f = fopen(CODEQ_GUARD_DICT, "r");
    char line[512];
    while (f && ntokens < MAX_TOKENS && fgets(line, sizeof line, f)) {
        char *q = line[0] == '#' ? NULL : strchr(line, '"');
        char *end = q ? strrchr(line, '"') : NULL;
        if (!q || end <= q)
            continue;
        char *out = malloc((size_t)(end - q)), *o = out;
        for (char *s = q + 1; out && s < end; s++) {
            if (*s == '\\' && s + 1 < end && s[1] == 'x' && s + 3 < end) {
                char hex[3] = {s[2], s[3], 0};
                *o++ = (char)strtol(hex, NULL, 16);
                s += 3;
            } else if (*s == '\\' && s + 1 < end) {
                *o++ = *++s;
            } else {
                *o++ = *s;
            }
        }
        if (out) {
            *o = '\0';
            tokens[ntokens++] = out;
        }
    }
    if (f)
        fclose(f);
}

static size_t rnd(unsigned *seed, size_t n)
{
    return n ? (size_t)rand_r(seed) % n : 0;
}

static int is_ident(uint8_t c)
{
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Replaces data[at, at+cut) by ins; the new size, or size if it would not fit. */
static size_t replace_bytes(uint8_t *data, size_t size, size_t max, size_t at, size_t cut,
                     const char *ins, size_t inslen)
{
    if (size - cut + inslen > max)
        return size;
    memmove(data + at + inslen, data + at + cut, size - at - cut);
    memcpy(data + at, ins, inslen);
    return size - cut + inslen;
}

/* Start of the line holding byte i. */
static size_t line_start(const uint8_t *d, size_t i)
{
    while (i > 0 && d[i - 1] != '\n')
        i--;
    return i;
}

static size_t line_end(const uint8_t *d, size_t size, size_t i)
{
    while (i < size && d[i] != '\n')
        i++;
    return i < size ? i + 1 : i;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    static int loaded;
    if (!loaded++)
        load_dict();
    unsigned s = seed;
    size_t op = rnd(&s, 8);
    if (op < 3 || !ntokens || !size)
        return LLVMFuzzerMutate(data, size, max_size);
    const char *tok = tokens[rnd(&s, ntokens)];
    size_t at = rnd(&s, size + 1);
    if (op == 3) /* a name or fragment, at an identifier boundary */
        while (at < size && at > 0 && is_ident(data[at - 1]) && is_ident(data[at]))
            at++;
    if (op == 3)
        return replace_bytes(data, size, max_size, at, 0, tok, strlen(tok));
    if (op == 4) { /* replace an identifier with a name of the dictionary */
        size_t b = at;
        while (b > 0 && is_ident(data[b - 1]))
            b--;
        size_t e = at;
        while (e < size && is_ident(data[e]))
            e++;
        return e > b ? replace_bytes(data, size, max_size, b, e - b, tok, strlen(tok))
                     : replace_bytes(data, size, max_size, at, 0, tok, strlen(tok));
    }
    size_t ls = line_start(data, at == size ? size - 1 : at), le = line_end(data, size, ls);
    if (op == 5) /* delete a line */
        return replace_bytes(data, size, max_size, ls, le - ls, "", 0);
    if (op == 6) { /* duplicate a line elsewhere (at a line start) */
        size_t len = le - ls;
        char *copy = malloc(len + 1);
        if (!copy)
            return size;
        memcpy(copy, data + ls, len);
        int nl = len == 0 || copy[len - 1] != '\n';
        if (nl)
            copy[len++] = '\n';
        size_t to = line_start(data, rnd(&s, size));
        size_t r = replace_bytes(data, size, max_size, to, 0, copy, len);
        free(copy);
        return r;
    }
    /* a line of its own holding the token, at a line start (statements and snippets) */
    size_t len = strlen(tok);
    char *line = malloc(len + 2);
    if (!line)
        return size;
    memcpy(line, tok, len);
    line[len] = '\n';
    size_t r = replace_bytes(data, size, max_size, ls, 0, line, len + 1);
    free(line);
    return r;
}

size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed);
/* Lines of one program, then lines of the other: whole statements meet new contexts. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *d1, size_t s1, const uint8_t *d2, size_t s2,
                                 uint8_t *out, size_t max_out, unsigned int seed)
{
    unsigned s = seed;
    size_t a = s1 ? line_start(d1, rnd(&s, s1)) : 0;
    size_t b = s2 ? line_start(d2, rnd(&s, s2)) : 0;
    size_t n1 = a < max_out ? a : max_out;
    memcpy(out, d1, n1);
    size_t n2 = s2 - b < max_out - n1 ? s2 - b : max_out - n1;
    memcpy(out + n1, d2 + b, n2);
    return n1 + n2;
}
