/* val_findings.c: collecting findings, putting them in source order, giving them to the caller.
 *
 * Why this shape: rule families find things in walk order and the os-alias rule only after the
 * walk, so ordering is one sort at the end rather than a promise every rule has to keep.
 * Messages end up in JSON (jansson refuses invalid UTF-8), so a message cut to fit its fixed
 * buffer is cut on a character boundary, never inside one.
 */
#include "val_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void val_utf8_trim(char *s) {
    size_t n = strlen(s);
    if (n == 0) return;
    /* Find the start of the last sequence and drop it if it is shorter than its lead byte says. */
    size_t i = n;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80 && n - i < 3) i--;
    if (i == 0) return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : 4;
    if (lead >= 0x80 && n - (i - 1) < want) s[i - 1] = '\0';
}

const char *const val_rule_ids[] = {
    "attr-denied", "builtin-ref", "call-denied", "dunder-attr", "dunder-name", "format-attr",
    "format-dynamic", "getattr-dynamic", "getattr-private", "import-denied", "import-relative",
    "import-star", "introspection-attr", "limit-bytes", "limit-nodes", "match-positional",
    "module-attr-denied", "module-escape", "module-private", "private-attr", "syntax",
    "too-deep", NULL};

static void vadd(val_ctx *c, const char *rule, int line, int col, int end_line, int end_col,
                 const char *fmt, va_list ap) {
    if (val_rule_disabled(c->policy, rule)) return; /* the operator turned this rule off */
    if (c->count == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 8;
        val_finding *items = realloc(c->items, cap * sizeof *items);
        if (!items) {
            c->failed = 1;
            return;
        }
        c->items = items;
        c->cap = cap;
    }
    val_finding *f = &c->items[c->count++];
    memset(f, 0, sizeof *f);
    snprintf(f->rule, sizeof f->rule, "%s", rule);
    snprintf(f->severity, sizeof f->severity, "%s", "error");
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    val_utf8_trim(f->message);
    f->line = line > 0 ? line : 0;
    f->col = col > 0 ? col : 0;
    f->end_line = end_line > 0 ? end_line : 0;
    f->end_col = end_col > 0 ? end_col : 0;
}

void val_add(val_ctx *c, const char *rule, int line, int col, int end_line, int end_col,
             const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vadd(c, rule, line, col, end_line, end_col, fmt, ap);
    va_end(ap);
}

static int int_field(PyObject *dict, PyObject *name) {
    PyObject *v = dict ? val_field(dict, name) : NULL;
    if (!v || !PyLong_Check(v)) return 0;
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Clear(); /* out of int range: the position is unknown, the finding still stands */
        return 0;
    }
    return x > 0 && x < INT32_MAX ? (int)x : 0;
}

/* CPython's col_offset is a 0-based offset in UTF-8 bytes of the (decoded) line. Columns here are
 * that plus one: 1-based and byte-based, equal to the character column on ASCII lines. The end
 * column is likewise exclusive, like SyntaxError.end_offset. */
void val_add_at(val_ctx *c, const char *rule, PyObject *dict, const char *fmt, ...) {
    if (!dict) {
        PyErr_Clear(); /* the node had no __dict__: report it without a position */
        va_list ap;
        va_start(ap, fmt);
        vadd(c, rule, 0, 0, 0, 0, fmt, ap);
        va_end(ap);
        return;
    }
    int line = int_field(dict, val_py.s_lineno);
    int end_line = int_field(dict, val_py.s_end_lineno);
    PyObject *co = val_field(dict, val_py.s_col_offset);
    PyObject *eco = val_field(dict, val_py.s_end_col_offset);
    int col = co ? int_field(dict, val_py.s_col_offset) + 1 : 0;
    int end_col = eco ? int_field(dict, val_py.s_end_col_offset) + 1 : 0;
    va_list ap;
    va_start(ap, fmt);
    vadd(c, rule, line, col, end_line, end_col, fmt, ap);
    va_end(ap);
}

static int cmp_int(int a, int b) { return (a > b) - (a < b); }

/* A total order, so equal positions still come out the same way on every run. */
static int cmp_finding(const void *pa, const void *pb) {
    const val_finding *a = pa, *b = pb;
    int r;
    if ((r = cmp_int(a->line, b->line))) return r;
    if ((r = cmp_int(a->col, b->col))) return r;
    if ((r = cmp_int(a->end_line, b->end_line))) return r;
    if ((r = cmp_int(a->end_col, b->end_col))) return r;
    if ((r = strcmp(a->rule, b->rule))) return r;
    return strcmp(a->message, b->message);
}

void val_sort(val_ctx *c) {
    if (c->count > 1) qsort(c->items, c->count, sizeof *c->items, cmp_finding);
}

void val_ctx_free(val_ctx *c) {
    free(c->items);
    free(c->os_names);
    free(c->os_uses);
    free(c->mod_uses);
    free(c->exempt);
    memset(c, 0, sizeof *c);
}

void val_report_free(val_report *r) {
    if (!r) return;
    free(r->items);
    r->items = NULL;
    r->count = 0;
}

void val_err_python(char *err, size_t errlen, const char *what) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (!type) {
        snprintf(err, errlen, "codeq: validator: %s: failed without a Python error", what);
        return;
    }
    PyErr_NormalizeException(&type, &value, &tb);
    const char *tname = PyExceptionClass_Check(type)
                            ? PyExceptionClass_Name(type) : "exception";
    const char *dot = strrchr(tname, '.');
    if (dot) tname = dot + 1;
    PyObject *s = value ? PyObject_Str(value) : NULL;
    PyObject *b = s ? PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace") : NULL;
    if (b)
        snprintf(err, errlen, "codeq: validator: %s: %s: %s", what, tname, PyBytes_AS_STRING(b));
    else
        snprintf(err, errlen, "codeq: validator: %s: %s", what, tname);
    val_utf8_trim(err);
    Py_XDECREF(b);
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear(); /* a failure inside str() above must not outlive this report of the first one */
}
