/* parser_floor: how fast CPython 3.11's own parser can go on this core, below any validator.
 *
 * Issue 4 asks for >= 2,000 validations/s of a 100-line program on one core, and also that the
 * validator parse with CPython exactly as the sandboxed interpreter will. validator_bench's
 * "parse-only" row is compile(..., PyCF_ONLY_AST) in the shared libpython: the parse AND the
 * conversion of CPython's internal C syntax tree into Python AST objects. A validator written
 * against the internal C tree would skip the conversion; this program measures what is left.
 *
 * Why it is shaped this way
 * - _PyParser_ASTFromString is not exported by libpython3.11.so, so this one binary links
 *   Debian's static libpython3.11-pic.a (built only when that file exists). The static library
 *   is built without the shared one's profile-guided optimisation, so its absolute numbers are
 *   slower than the shared library's; what carries over is the *ratio* between rows.
 * - Three rows per program, each timed the same way (pinned to one CPU, warm-up, N iterations):
 *   "c-tree"   _PyParser_ASTFromString into an arena: the parser alone, nothing else;
 *   "c+objects" the same plus PyAST_mod2obj: what compile(ONLY_AST) does;
 *   "compile"   Py_CompileStringObject(PyCF_ONLY_AST), the public call, as a cross-check.
 * - The estimate printed last applies the static library's c-tree/c+objects ratio to the shared
 *   library's parse-only rate from validator_bench (argument -s RATE): the ceiling of any
 *   validator that parses with CPython 3.11 on this core, with zero-cost rules. */
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_pyarena.h"
#include "internal/pycore_ast.h"
#include "internal/pycore_parser.h"

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef CODEQ_BENCH_PROGRAMS
#define CODEQ_BENCH_PROGRAMS "bench/programs"
#endif

enum { ROW_TREE, ROW_OBJECTS, ROW_COMPILE, NROWS };
static const char *const row_name[NROWS] = {"c-tree", "c+objects", "compile"};

/* One parse in the given row's way; 0, or -1 with the Python error printed. */
static int parse_once(int row, const char *src, PyObject *filename)
{
    PyCompilerFlags flags = _PyCompilerFlags_INIT;
    if (row == ROW_COMPILE) {
        flags.cf_flags = PyCF_ONLY_AST;
        PyObject *o = Py_CompileStringObject(src, filename, Py_file_input, &flags, -1);
        Py_XDECREF(o);
        return o ? 0 : -1;
    }
    PyArena *arena = _PyArena_New();
    mod_ty tree = arena ? _PyParser_ASTFromString(src, filename, Py_file_input, &flags, arena) : NULL;
    PyObject *o = tree && row == ROW_OBJECTS ? PyAST_mod2obj(tree) : NULL;
    int ok = tree && (row == ROW_TREE || o);
    Py_XDECREF(o);
    if (arena)
        _PyArena_Free(arena);
    return ok ? 0 : -1;
}

/* Median of n timed parses after a warm-up; the rate from the total. */
static int measure(int row, const char *src, PyObject *fn, int n, double *rate, double *median_us)
{
    double *t = malloc(sizeof *t * (size_t)n), total = 0;
    if (!t)
        return -1;
    for (int i = 0; i < n / 10 + 10; i++)
        if (parse_once(row, src, fn) < 0)
            goto fail;
    for (int i = 0; i < n; i++) {
        double t0 = (bench_now_us() / 1e6);
        if (parse_once(row, src, fn) < 0)
            goto fail;
        t[i] = (bench_now_us() / 1e6) - t0;
        total += t[i];
    }
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    *rate = n / total;
    *median_us = t[n / 2] * 1e6;
    free(t);
    return 0;
fail:
    PyErr_Print();
    free(t);
    return -1;
}

int main(int argc, char **argv)
{
    int n = 2000, opt;
    double shared_rate = 0;
    while ((opt = getopt(argc, argv, "n:s:")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 's')
            shared_rate = atof(optarg);
        else {
            fprintf(stderr, "usage: parser_floor [-n ITER] [-s SHARED_PARSE_ONLY_RATE] [PROGRAM.py]\n");
            return 2;
        }
    }
    const char *path = optind < argc ? argv[optind] : CODEQ_BENCH_PROGRAMS "/agent100.py";
    size_t len;
    char *src = bench_pin(0) == 0 ? bench_slurp(path, &len, 0) : NULL;
    if (!src || n < 10) {
        fprintf(stderr, "parser_floor: cannot read %s (or -n below 10)\n", path);
        return 1;
    }
    Py_Initialize();
    PyObject *fn = PyUnicode_FromString("<job>");
    double rate[NROWS], med[NROWS];
    printf("parser_floor: %s, %d iterations per row, cpu 0, static libpython3.11-pic.a\n", path, n);
    for (int r = 0; r < NROWS; r++) {
        if (measure(r, src, fn, n, &rate[r], &med[r]) < 0)
            return 1;
        printf("  %-10s %7.0f /s  median %7.1f us\n", row_name[r], rate[r], med[r]);
    }
    double share = rate[ROW_OBJECTS] / rate[ROW_TREE]; /* time share of the parse alone */
    printf("  the parse alone is %.0f%% of parse + AST objects\n", share * 100);
    if (shared_rate > 0)
        printf("  estimated shared-library parse alone: %.0f /s (= %.0f /s parse-only / %.2f)\n",
               shared_rate / share, shared_rate, share);
    Py_DECREF(fn);
    free(src);
    return Py_FinalizeEx() < 0 ? 1 : 0;
}
