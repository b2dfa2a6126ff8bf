/* test_sandbox_wall: the runtime guard's rules kept in C (sandbox/sbx_zygote_wall.c).
 *
 * An interpreter in this process, with the zygote's `_codeq_seal` built in and no Python
 * hook at all: after arm(), only the C wall stands between the code and each operation, so
 * what is refused here is refused by C state alone — the state a Python hook's closure cells
 * held and a leak could rewrite. Proven: refused events and prefixes, opens (descriptors,
 * outside the roots, through a symbolic link, "..", a write outside the working directory,
 * os.open's flags), listings and compile() from the job's own code are refused with the
 * guard's messages; what the guard allows still works (reads under a root, the job's own
 * files, writes in the working directory, a missing file's own error, a NUL byte's own
 * error); a second arm() is refused.
 */
#include <Python.h> /* first: it wants to precede libc headers */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx_zygote.h"

static char g_dir[] = "/tmp/codeq-wall-XXXXXX";

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Runs src (file name "harness.py", so not the job's) in __main__; returns the str it leaves
 * in `out`, which the caller frees. */
static char *py(const char *src)
{
    PyObject *main = PyImport_AddModule("__main__");
    PyObject *g = PyModule_GetDict(main);
    PyObject *code = Py_CompileString(src, "harness.py", Py_file_input);
    if (!code)
        PyErr_Print();
    assert_non_null(code);
    PyObject *r = PyEval_EvalCode(code, g, g);
    Py_DECREF(code);
    if (!r)
        PyErr_Print();
    assert_non_null(r);
    Py_DECREF(r);
    PyObject *out = PyDict_GetItemString(g, "out");
    assert_non_null(out);
    return strdup(PyUnicode_AsUTF8(out));
}

static void expect(const char *src, const char *want)
{
    char *got = py(src);
    if (strcmp(got, want) != 0)
        fprintf(stderr, "for:\n%s\ngot:  %s\nwant: %s\n", src, got, want);
    assert_string_equal(got, want);
    free(got);
}

/* attempt(lambda: call)'s answer must start with want. */
static void expect_prefix(const char *call, const char *want)
{
    char src[512];
    snprintf(src, sizeof src, "out = attempt(lambda: %s)", call);
    char *got = py(src);
    if (strncmp(got, want, strlen(want)) != 0)
        fprintf(stderr, "for: %s\ngot:  %s\nwant: %s...\n", call, got, want);
    assert_true(strncmp(got, want, strlen(want)) == 0);
    free(got);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(g_dir))
        return -1;
    char p[512];
    const char *dirs[] = {"work", "root", "outside"};
    for (size_t i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", g_dir, dirs[i]);
        if (mkdir(p, 0700) < 0)
            return -1;
    }
    snprintf(p, sizeof p, "%s/outside", g_dir);
    write_file(p, "secret.txt", "secret");
    snprintf(p, sizeof p, "%s/root", g_dir);
    write_file(p, "lib.txt", "lib");
    snprintf(p, sizeof p, "%s/work", g_dir);
    write_file(p, "main.py", "print(1)\n");
    char link[600], target[600];
    snprintf(link, sizeof link, "%s/work/link", g_dir);
    snprintf(target, sizeof target, "%s/outside/secret.txt", g_dir);
    if (symlink(target, link) < 0)
        return -1;
    snprintf(link, sizeof link, "%s/root/escape", g_dir);
    if (symlink("../outside/secret.txt", link) < 0 || chdir(p) < 0)
        return -1;
    if (sbx_zy_seal_register() < 0)
        return -1;
    Py_InitializeEx(0);
    /* The roots as the guard's bind() makes them: sys.path (the standard library, whose files
     * imports open) and one of the test's. ctypes is loaded before, as exec mode's guard
     * does. */
    char src[2048];
    snprintf(src, sizeof src,
             "import os, sys, ctypes, _codeq_seal\n"
             "D = '%s'\n"
             "refused = frozenset({'os.kill', 'os.system', 'code.__new__'})\n"
             "roots = tuple(os.path.realpath(p) for p in sys.path if p) + (D + '/root',)\n"
             "_codeq_seal.arm('wall-test', 'main.py', D + '/work', roots,\n"
             "                (D + '/work/main.py',), True, refused, ('ctypes.',))\n"
             "def attempt(f):\n"
             "    try:\n"
             "        r = f()\n"
             "        return 'ok' if r is None else 'ok ' + str(r)\n"
             "    except Exception as e:\n"
             "        return f'{type(e).__name__}: {e}'\n"
             "out = ''\n",
             g_dir);
    free(py(src));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    Py_FinalizeEx();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_refused_events(void **state)
{
    (void)state;
    expect("out = attempt(lambda: os.kill(os.getpid(), 0))",
           "PermissionError: codeq guard: os.kill is not allowed by policy wall-test");
    expect("out = attempt(lambda: ctypes.string_at(id(1), 8))",
           "PermissionError: codeq guard: ctypes.string_at is not allowed by policy wall-test");
    expect("out = attempt(lambda: os.getpid() > 0)", "ok True");
}

static void test_open(void **state)
{
    (void)state;
    const char *refused[] = {
        "open(D + '/outside/secret.txt').read()",
        "open('link').read()", /* in the working directory, to outside */
        "open(D + '/root/escape').read()",
        "open('../outside/secret.txt', 'rb').read()",
        "open(D + '/root/new.txt', 'w')",
        "os.open(D + '/root/lib.txt', os.O_RDONLY)", /* no mode: taken as a write */
    };
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
        expect_prefix(refused[i], "PermissionError: codeq guard: opening ");
    expect("out = attempt(lambda: open(5))",
           "PermissionError: codeq guard: opening 5 is not allowed by policy wall-test");
    /* A str subclass reaches the event as it is (a path object, as os.fspath() gives): its
     * methods are the job's, so only an exact str or bytes is judged. */
    expect("class S(str): pass\nout = attempt(lambda: open(S('main.py')))",
           "PermissionError: codeq guard: opening S is not allowed by policy wall-test");
    expect("out = attempt(lambda: open(D + '/root/lib.txt').read())", "ok lib");
    expect("out = attempt(lambda: open(D.encode() + b'/root/lib.txt').read())", "ok lib");
}

static void test_open_allowed(void **state)
{
    (void)state;
    expect("out = attempt(lambda: open('main.py').read().strip())", "ok print(1)");
    expect("with open('made.txt', 'w') as f: f.write('made')\n"
           "out = attempt(lambda: open('made.txt').read())",
           "ok made");
    expect("out = attempt(lambda: open(1, 'w', closefd=False).close())", "ok");
    expect_prefix("open('missing.txt')", "FileNotFoundError");
    expect_prefix("open('a\\0b')", "ValueError");
    expect("import json\nout = attempt(lambda: json.dumps([1]))", "ok [1]");
}

/* The walk keeps its buffers off the stack: a thread's may be 32 KiB, the least CPython
 * allows, and a path through links nested three deep (/dev/fd/0: /dev/fd, /proc/self) or a
 * chain of the job's own crashed the interpreter there (SIGSEGV) instead of answering. */
static void test_small_thread_stack(void **state)
{
    (void)state;
    expect("import threading\n"
           "os.symlink('made.txt', 'c3'); os.symlink('c3', 'c2'); os.symlink('c2', 'c1')\n"
           "got = []\n"
           "def work():\n"
           "    got.append(attempt(lambda: open('c1').read()))\n"
           "    got.append(attempt(lambda: open('/dev/fd/0').close()).split(':')[0])\n"
           "threading.stack_size(32768)\n"
           "t = threading.Thread(target=work); t.start(); t.join()\n"
           "threading.stack_size(0)\n"
           "for n in ('c1', 'c2', 'c3'): os.unlink(n)\n"
           "out = ' | '.join(got)",
           "ok made | PermissionError");
}

/* Where the kernel refuses a path by its length or its links, the job gets the kernel's
 * error, as under the Python hook, not a PermissionError. */
static void test_kernel_limits(void **state)
{
    (void)state;
    /* 42 links (each /proc/self/root is two), which Python follows and the kernel does not */
    expect_prefix("open('/proc/self/root' * 21 + D + '/work/main.py')",
                  "OSError: [Errno 40] Too many levels of symbolic links");
    /* 82: past the walk's own 80, left to the kernel (it refused them, lexically resolved) */
    expect_prefix("open('/proc/self/root' * 41 + D + '/work/main.py')",
                  "OSError: [Errno 40] Too many levels of symbolic links");
    /* 4095 bytes: the kernel takes it, the absolute path is longer than PATH_MAX */
    expect_prefix("open('m/' * 2044 + 'abcdefg')", "FileNotFoundError");
    expect_prefix("open('m/' * 3000)", "OSError: [Errno 36] File name too long");
    /* 21 links of ~4 KiB targets each (the kernel follows them): the walk's text grows past
     * 64 KiB, which the first iterative walk refused */
    expect("os.mkdir('dd'); open('dd/x', 'w').write('far')\n"
           "for i in range(21):\n"
           "    os.symlink(('L%d/' % (i + 1) + './' * 2040) if i < 20 else 'dd', 'L%d' % i)\n"
           "out = attempt(lambda: open('L0/x').read())\n"
           "for i in range(21): os.unlink('L%d' % i)\n"
           "os.unlink('dd/x'); os.rmdir('dd')",
           "ok far");
}

static void test_listing(void **state)
{
    (void)state;
    expect("out = attempt(lambda: sorted(os.listdir('.')))",
           "ok ['link', 'made.txt', 'main.py']");
    expect("out = attempt(lambda: os.listdir(D + '/outside'))",
           "PermissionError: codeq guard: os.listdir is not allowed by policy wall-test");
    expect("out = attempt(lambda: list(os.scandir(D + '/outside')))",
           "PermissionError: codeq guard: os.scandir is not allowed by policy wall-test");
}

static void test_compile_from_job_code(void **state)
{
    (void)state;
    expect("job = compile(\"compile('1', 'x', 'eval')\", 'main.py', 'exec')\n"
           "out = attempt(lambda: exec(job, {}))",
           "PermissionError: codeq guard: compiling a string is not allowed by policy wall-test");
    expect("lib = compile(\"c = compile('1', 'x', 'eval')\", 'lib.py', 'exec')\n"
           "out = attempt(lambda: exec(lib, {}))",
           "ok");
}

static void test_armed_once(void **state)
{
    (void)state;
    expect("out = attempt(lambda: _codeq_seal.arm('wide', 'main.py', '/', ('/',), (), True,\n"
           "                                       frozenset(), ()))",
           "RuntimeError: arm: already done in this process");
    expect("out = attempt(lambda: os.kill(os.getpid(), 0))",
           "PermissionError: codeq guard: os.kill is not allowed by policy wall-test");
    expect_prefix("open(D + '/outside/secret.txt')", "PermissionError: codeq guard: opening '");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_events),  cmocka_unit_test(test_open),
        cmocka_unit_test(test_open_allowed),    cmocka_unit_test(test_listing),
        cmocka_unit_test(test_compile_from_job_code), cmocka_unit_test(test_small_thread_stack),
        cmocka_unit_test(test_kernel_limits),   cmocka_unit_test(test_armed_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
