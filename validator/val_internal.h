/* val_internal.h: what the validator's files share, and nothing the worker should see.
 *
 * Shape: val_python.c owns the embedded interpreter and every cached Python object (type objects,
 * interned attribute names) so the hot path never looks a name up by string; val_parse.c parses
 * and walks; each val_rules_*.c file is one rule family called on every node by the walker;
 * val_findings.c collects, orders and hands out findings. All of it runs with the GIL held by
 * the one thread that owns the interpreter (see validator.h).
 */
#ifndef CODEQ_VAL_INTERNAL_H
#define CODEQ_VAL_INTERNAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdarg.h>
#include <stddef.h>

#include "validator.h"

/* Deeper than this many nested AST nodes is reported as `too-deep` and not examined further.
 * The walk uses a heap stack, so this is not about the C stack; it bounds the work per job and
 * no program a person or model writes on purpose comes near it (CPython's tokenizer already
 * stops at 200 nested brackets; long `a + b + ...` chains are what gets this deep). */
#define VAL_MAX_DEPTH 1000

typedef struct {
    PyObject *compile;      /* builtins.compile */
    PyObject *filename;     /* "<job>" */
    PyObject *mode;         /* "exec" */
    PyObject *flags;        /* int ast.PyCF_ONLY_AST */
    PyObject *field_cache;  /* dict: AST node type -> its _fields tuple */

    PyTypeObject *t_ast, *t_import, *t_importfrom, *t_call, *t_name, *t_attribute,
        *t_functiondef, *t_asyncfunctiondef, *t_classdef;

    PyObject *s_fields, *s_lineno, *s_col_offset, *s_end_lineno, *s_end_col_offset, *s_names,
        *s_name, *s_asname, *s_module, *s_level, *s_func, *s_id, *s_value, *s_attr,
        *s_decorator_list, *s_msg, *s_offset, *s_end_offset;
} val_py_state;

/* Valid between a successful val_init() and val_shutdown(). */
extern val_py_state val_py;
int val_py_ready(void);

/* One os-like name seen as `X.attr` with a denied attr; judged once all aliases are known. */
typedef struct {
    PyObject *base;    /* borrowed: the Name id (str) */
    PyObject *dict;    /* borrowed: the Attribute node's __dict__ */
} val_os_use;

/* Per-check state; every PyObject in it is borrowed from the tree, which outlives the check. */
typedef struct {
    val_finding *items;
    size_t count, cap;
    int failed;              /* a finding could not be stored (out of memory) */

    PyObject **os_names;     /* names bound to the os module: "os", "posix", `import os as o` */
    size_t os_count, os_cap;
    val_os_use *os_uses;
    size_t use_count, use_cap;
} val_ctx;

/* val_findings.c */
void val_add(val_ctx *c, const char *rule, int line, int col, int end_line, int end_col,
             const char *fmt, ...) __attribute__((format(printf, 7, 8)));
void val_add_at(val_ctx *c, const char *rule, PyObject *node_dict, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void val_sort(val_ctx *c);
void val_ctx_free(val_ctx *c);
void val_utf8_trim(char *s);
/* "codeq: validator: <what>: <Type>: <message>" from the pending Python error, which is cleared. */
void val_err_python(char *err, size_t errlen, const char *what);

/* val_parse.c helpers for the rule files (all borrowed, NULL when absent or not that type). */
PyObject *val_field(PyObject *dict, PyObject *name);
/* The node's __dict__, borrowed: the node owns it and the tree outlives the check. */
PyObject *val_node_dict(PyObject *node);
/* UTF-8 of a str (borrowed, cached on the object); NULL with a Python error set. */
const char *val_str(PyObject *s, Py_ssize_t *len);

/* Rule families: called on every node, return 0, or -1 with a Python error set. */
int val_rules_import_visit(val_ctx *c, PyObject *node, PyObject *dict);
int val_rules_call_visit(val_ctx *c, PyObject *node, PyObject *dict);
/* After the walk: attr-denied needs every alias of os first, they may follow the use. */
int val_rules_call_finish(val_ctx *c);

#endif
