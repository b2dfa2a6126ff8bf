/* test_validator_code: val_check_compile, the code object compiled from the parse the check
 * walked ("parse once", issue 12).
 *
 * What is proven: the bytes are importlib.util.MAGIC_NUMBER followed by marshal.dumps of a code
 * object equal to what compile() of the same source gives (the sandbox's compile today), with
 * the requested file name in every nested code object, on hand-written programs and on every
 * benign corpus program and bench program of the tree; no object for a program with findings,
 * for one only the compiler refuses, or without a file name; the verdict cache keeps the object
 * per file name and a hit hands back the same bytes. The zygote's side (magic refused, tracebacks
 * identical) is in test_sandbox_zygote.c.
 */
#include "val_internal.h" /* first: it includes Python.h, which wants to precede libc headers */

#include <marshal.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <dirent.h>

#include "validator.h"

static val_code compile_ok(const char *src, size_t len, const char *filename, size_t findings) {
    val_report r = {0};
    val_code c = {0};
    char err[512] = "";
    if (val_check_compile(NULL, src, len, filename, &r, &c, err, sizeof err) != 0)
        fail_msg("val_check_compile failed: %s", err);
    assert_int_equal(r.count, findings);
    val_report_free(&r);
    return c;
}

/* 1 when every code object in `code` (itself, and nested in co_consts) has file name `want`. */
static int filenames_are(PyObject *code, const char *want) {
    PyObject *name = PyObject_GetAttrString(code, "co_filename");
    int ok = name && PyUnicode_Check(name) && strcmp(PyUnicode_AsUTF8(name), want) == 0;
    Py_XDECREF(name);
    PyObject *consts = ok ? PyObject_GetAttrString(code, "co_consts") : NULL;
    for (Py_ssize_t i = 0; consts && ok && i < PyTuple_GET_SIZE(consts); i++)
        if (PyCode_Check(PyTuple_GET_ITEM(consts, i)))
            ok = filenames_are(PyTuple_GET_ITEM(consts, i), want);
    Py_XDECREF(consts);
    return ok;
}

/* code == code, one nested code object at a time: CPython's comparison recurses through
 * nested code objects, and for benign 74 (lambdas 340 deep) it did not end. Each pair is
 * compared without its constants (bytecode, names, line table, ...), then the constants that
 * are not code, then the nested code objects in turn. */
static int same_code(PyObject *a, PyObject *b)
{
    static const char src[] =
        "def same(a, b):\n"
        "    import types\n"
        "    todo = [(a, b)]\n"
        "    while todo:\n"
        "        x, y = todo.pop()\n"
        "        if type(x) is not type(y):\n"
        "            return False\n"
        "        if not isinstance(x, types.CodeType):\n"
        "            if x != y:\n"
        "                return False\n"
        "            continue\n"
        "        if len(x.co_consts) != len(y.co_consts) or "
        "x.replace(co_consts=()) != y.replace(co_consts=()):\n"
        "            return False\n"
        "        todo.extend(zip(x.co_consts, y.co_consts))\n"
        "    return True\n";
    PyObject *ns = PyDict_New();
    PyObject *builtins = PyEval_GetBuiltins();
    PyDict_SetItemString(ns, "__builtins__", builtins);
    PyObject *r = PyRun_String(src, Py_file_input, ns, ns);
    PyObject *fn = r ? PyDict_GetItemString(ns, "same") : NULL;
    PyObject *v = fn ? PyObject_CallFunctionObjArgs(fn, a, b, NULL) : NULL;
    int same = v ? PyObject_IsTrue(v) : -1;
    if (same < 0)
        PyErr_Print();
    Py_XDECREF(v);
    Py_XDECREF(r);
    Py_DECREF(ns);
    return same;
}

/* The bytes against importlib's magic and compile() of the source: equal code objects (the
 * comparison covers bytecode, constants and nested code objects, names, line table). */
static void expect_same_as_compile(const val_code *c, const char *src, size_t len,
                                   const char *filename)
{
    assert_non_null(c->data);
    assert_true(c->len > VAL_CODE_MAGIC_LEN);
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *util = PyImport_ImportModule("importlib.util");
    PyObject *magic = util ? PyObject_GetAttrString(util, "MAGIC_NUMBER") : NULL;
    assert_non_null(magic);
    assert_int_equal(PyBytes_GET_SIZE(magic), VAL_CODE_MAGIC_LEN);
    assert_memory_equal(c->data, PyBytes_AS_STRING(magic), VAL_CODE_MAGIC_LEN);
    PyObject *loaded = PyMarshal_ReadObjectFromString(c->data + VAL_CODE_MAGIC_LEN,
                                                      (Py_ssize_t)(c->len - VAL_CODE_MAGIC_LEN));
    assert_non_null(loaded);
    assert_true(PyCode_Check(loaded));
    PyObject *builtins = PyImport_ImportModule("builtins");
    PyObject *source = PyBytes_FromStringAndSize(src, (Py_ssize_t)len);
    PyObject *direct = PyObject_CallMethod(builtins, "compile", "OssiO", source, filename, "exec",
                                           0, Py_True);
    assert_non_null(direct);
    assert_int_equal(same_code(loaded, direct), 1);
    assert_true(filenames_are(loaded, filename));
    Py_DECREF(direct);
    Py_DECREF(source);
    Py_DECREF(builtins);
    Py_DECREF(loaded);
    Py_DECREF(magic);
    Py_DECREF(util);
    PyGILState_Release(g);
}

static const char program[] =
    "from __future__ import annotations\n"
    "import json\nfrom dataclasses import dataclass\n\n"
    "@dataclass\nclass Point:\n    x: int\n    y: int = 0\n\n"
    "    def norm(self) -> float:\n        return (self.x ** 2 + self.y ** 2) ** 0.5\n\n"
    "def describe(v):\n    match v:\n        case {'x': x}:\n            return f'x={x!r:>4}'\n"
    "        case [a, *rest]:\n            return str(a) + str(len(rest))\n"
    "        case _:\n            return 'other'\n\n"
    "async def later():\n    return [i async for i in gen()]\n\n"
    "data = {k: (lambda q=k: q * 2)() for k in range(3)}\n"
    "print(json.dumps(data), describe({'x': 1}), Point(3, 4).norm())\n"
    "assert data, 'asserts stay in'\n";

static void test_round_trip(void **state) {
    (void)state;
    static const char *const names[] = {"main.py", "/work/main.py"};
    for (size_t i = 0; i < 2; i++) {
        val_code c = compile_ok(program, sizeof program - 1, names[i], 0);
        expect_same_as_compile(&c, program, sizeof program - 1, names[i]);
        val_code_free(&c);
        assert_null(c.data);
    }
}

/* A coding cookie is honoured by the parse, so the object's strings are what the source's are. */
static void test_round_trip_latin1_cookie(void **state) {
    (void)state;
    static const char src[] = "# -*- coding: latin-1 -*-\ns = '\xe9t\xe9'\nprint(s, len(s))\n";
    val_code c = compile_ok(src, sizeof src - 1, "main.py", 0);
    expect_same_as_compile(&c, src, sizeof src - 1, "main.py");
    val_code_free(&c);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    *len = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    return buf;
}

/* Every program of a directory that the default policy accepts: the object is compile()'s. */
static size_t round_trip_dir(const char *dir) {
    DIR *d = opendir(dir);
    if (!d)
        fail_msg("opendir %s failed (CODEQ_SOURCE_DIR set?)", dir);
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t nl = strlen(e->d_name);
        if (nl < 4 || strcmp(e->d_name + nl - 3, ".py") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t len = 0;
        char *src = read_file(path, &len);
        assert_non_null(src);
        val_report r = {0};
        val_code c = {0};
        char err[512] = "";
        if (val_check_compile(NULL, src, len, "main.py", &r, &c, err, sizeof err) != 0)
            fail_msg("%s: %s", path, err);
        if (r.count == 0) {
            expect_same_as_compile(&c, src, len, "main.py");
            n++;
        } else {
            assert_null(c.data);
        }
        val_report_free(&r);
        val_code_free(&c);
        free(src);
    }
    closedir(d);
    return n;
}

static void test_round_trip_corpora(void **state) {
    (void)state;
    const char *root = getenv("CODEQ_SOURCE_DIR");
    assert_non_null(root);
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/tests/validator/benign", root);
    size_t benign = round_trip_dir(dir);
    snprintf(dir, sizeof dir, "%s/bench/programs", root);
    size_t bench = round_trip_dir(dir);
    print_message("round trip: %zu benign corpus programs, %zu bench programs\n", benign, bench);
    assert_true(benign >= 50);
    assert_true(bench >= 3);
}

static void test_no_code_with_findings(void **state) {
    (void)state;
    static const char src[] = "import os\nprint(os.getcwd())\n";
    val_code c = compile_ok(src, sizeof src - 1, "main.py", 1);
    assert_null(c.data);
    assert_int_equal(c.len, 0);
}

/* The parser accepts it, the compiler does not: no object, and no validator error either (the
 * sandbox compiles the source and reports the SyntaxError as a direct run would). */
static void test_no_code_when_the_compiler_refuses(void **state) {
    (void)state;
    static const char src[] = "print('a')\nreturn 1\n";
    val_code c = compile_ok(src, sizeof src - 1, "main.py", 0);
    assert_null(c.data);
}

static void test_no_filename_no_code(void **state) {
    (void)state;
    val_code c = compile_ok(program, sizeof program - 1, NULL, 0);
    assert_null(c.data);
    val_report r = {0};
    char err[256] = "";
    /* No place for the object: the check alone, as val_check_policy. */
    assert_int_equal(val_check_compile(NULL, "x = 1\n", 6, "main.py", &r, NULL, err, sizeof err), 0);
    assert_int_equal(r.count, 0);
    val_report_free(&r);
}

/* A hit hands back the same bytes without parsing; an object kept for one file name is not
 * served for another (the cache answers a miss, the check compiles for the new name). */
static void test_cache_keeps_code_per_filename(void **state) {
    (void)state;
    val_cache_enable(1);
    val_cache_clear();
    static const char src[] = "def f(n):\n    return n * 2\nprint(f(21))\n";
    val_code first = compile_ok(src, sizeof src - 1, "main.py", 0);
    unsigned char key[32];
    assert_int_equal(val_cache_key(src, sizeof src - 1, key), 0);
    val_report r = {0};
    val_code hit = {0};
    assert_int_equal(val_cache_get(val_policy_default(), key, "main.py", &r, &hit), 1);
    assert_int_equal(hit.len, first.len);
    assert_memory_equal(hit.data, first.data, first.len);
    val_code_free(&hit);
    val_report_free(&r);
    assert_int_equal(val_cache_get(val_policy_default(), key, "/work/main.py", &r, &hit), 0);
    assert_null(hit.data);
    /* Without a name the verdict alone is a hit. */
    assert_int_equal(val_cache_get(val_policy_default(), key, NULL, &r, NULL), 1);
    val_report_free(&r);

    val_code second = compile_ok(src, sizeof src - 1, "main.py", 0);
    assert_int_equal(second.len, first.len);
    assert_memory_equal(second.data, first.data, first.len);
    val_code other = compile_ok(src, sizeof src - 1, "/work/main.py", 0);
    expect_same_as_compile(&other, src, sizeof src - 1, "/work/main.py");
    val_code_free(&first);
    val_code_free(&second);
    val_code_free(&other);
    val_cache_clear();
}

static int setup(void **state) {
    (void)state;
    char err[256] = "";
    if (val_init(err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state) {
    (void)state;
    val_shutdown();
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_round_trip_latin1_cookie),
        cmocka_unit_test(test_round_trip_corpora),
        cmocka_unit_test(test_no_code_with_findings),
        cmocka_unit_test(test_no_code_when_the_compiler_refuses),
        cmocka_unit_test(test_no_filename_no_code),
        cmocka_unit_test(test_cache_keeps_code_per_filename),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
