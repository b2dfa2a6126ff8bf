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

/* Default nesting limit (policy limits.max_depth). Deeper is reported as `too-deep` and not
 * examined further. The walk uses a heap stack, so this is not about the C stack; it bounds the
 * work per job and no program a person or model writes on purpose comes near it (CPython's
 * tokenizer already stops at 200 nested brackets; long `a + b + ...` chains are what gets this
 * deep). */
#define VAL_MAX_DEPTH 1000
#define VAL_MAX_NODES 200000
#define VAL_MAX_BYTES (256 * 1024)

/* Attributes a policy allows on one module (module_attributes). */
typedef struct {
    char *module;
    char **names;
    size_t count;
} val_modattrs;

struct val_policy {
    char name[64];
    char **modules;             /* top-level names */
    size_t nmodules;
    val_modattrs *attrs;        /* module_attributes: the only attributes allowed */
    size_t nattrs;
    val_modattrs *deny;         /* denied_attributes: attributes refused on a module */
    size_t ndeny;
    char **disabled;            /* rule ids the operator turned off */
    size_t ndisabled;
    int files_workdir, allow_input, guard;
    unsigned long long serial;  /* unique per loaded policy: the verdict cache's key */
    size_t max_bytes, max_nodes;
    int max_depth;
    char *guard_src;            /* policy header + val_guard_audit.py + val_guard.py; NULL
                                 * when the guard is off */
    size_t guard_len;

    /* Built on first use with the GIL held (val_modules.c); owned references. */
    int py_state;               /* 0 not built, 1 built, -1 failed */
    PyObject *allowed;          /* frozenset of top-level module names */
    PyObject *restricted;       /* dict: module name -> frozenset of allowed attributes */
    PyObject *denied_attrs;     /* dict: module name -> frozenset of denied attributes */
    PyObject *subs;             /* dict: module name -> dict attr -> allowed submodule name */
    PyObject *escapes;          /* dict: module name -> dict attr -> module name not allowed */
    PyObject *denied_builtins;  /* frozenset: call-denied names under this policy */
};

typedef struct {
    PyObject *compile;      /* builtins.compile */
    PyObject *filename;     /* "<job>" */
    PyObject *mode;         /* "exec" */
    PyObject *flags;        /* int ast.PyCF_ONLY_AST */
    PyObject *field_cache;  /* dict: AST node type -> its _fields tuple */
    unsigned char magic[VAL_CODE_MAGIC_LEN]; /* importlib.util.MAGIC_NUMBER: heads a val_code */

    PyTypeObject *t_ast, *t_import, *t_importfrom, *t_call, *t_name, *t_attribute,
        *t_functiondef, *t_asyncfunctiondef, *t_classdef, *t_constant, *t_load, *t_starred, *t_matchclass;

    PyObject *harmless_dunders;  /* frozenset: dunder attributes any program may use */
    PyObject *introspection;     /* frozenset: frame/code/traceback/generator internals */
    PyObject *getattr_family;    /* frozenset: getattr, setattr, delattr, hasattr */

    PyObject *s_fields, *s_lineno, *s_col_offset, *s_end_lineno, *s_end_col_offset, *s_names,
        *s_name, *s_asname, *s_module, *s_level, *s_func, *s_id, *s_value, *s_attr,
        *s_decorator_list, *s_msg, *s_offset, *s_end_offset, *s_args, *s_ctx, *s_keywords, *s_dot, *s_kwd_attrs, *s_kwd_patterns,
        *s_patterns;
} val_py_state;

/* Valid between a successful val_init() and val_shutdown(). */
extern val_py_state val_py;
int val_py_ready(void);

/* One os-like name seen as `X.attr` with a denied attr; judged once all aliases are known. */
typedef struct {
    PyObject *base;    /* borrowed: the Name id (str) */
    PyObject *dict;    /* borrowed: the Attribute node's __dict__ */
} val_os_use;

/* An attribute name used on an expression that may be a module (`random._os`,
 * `getattr(queue, 'threading')`): judged after the walk, when every import binding is known. */
typedef struct {
    PyObject *value;   /* borrowed: the expression the attribute is taken from */
    PyObject *attr;    /* borrowed: the attribute name (str) */
    PyObject *pos;     /* borrowed: __dict__ of the node that carries the position */
} val_mod_use;

/* Per-check state; every PyObject in it is borrowed from the tree, which outlives the check,
 * except `bindings`, which the check owns. */
typedef struct {
    const val_policy *policy;
    val_finding *items;
    size_t count, cap;
    int failed;              /* a finding could not be stored (out of memory) */

    PyObject **os_names;     /* names bound to the os module: "os", "posix", `import os as o` */
    size_t os_count, os_cap;
    val_os_use *os_uses;
    size_t use_count, use_cap;

    PyObject *bindings;      /* owned dict: name -> module name, from import statements */
    val_mod_use *mod_uses;
    size_t mod_count, mod_cap;
    PyObject **exempt;       /* nodes a parent already judged (a callee, `x.__class__.__name__`) */
    size_t exempt_count, exempt_cap;
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

/* val_cache.c */
int val_cache_key(const char *code, size_t len, unsigned char key[32]);
/* 1 and a copy of the cached report in out, or 0 (miss). With `filename` (a val_check_compile
 * asking for a code object), a clean verdict cached without a code object for that name is a
 * miss, so the caller parses once more and gets both; obj then gets a copy of the object. */
int val_cache_get(const val_policy *p, const unsigned char key[32], const char *filename,
                  val_report *out, val_code *obj);
/* obj may be NULL or empty (no code object to keep). */
void val_cache_put(const val_policy *p, const unsigned char key[32], const char *filename,
                   const val_report *r, const val_code *obj);

/* val_parse.c helpers for the rule files (all borrowed, NULL when absent or not that type). */
PyObject *val_field(PyObject *dict, PyObject *name);
/* The node's __dict__, borrowed: the node owns it and the tree outlives the check. */
PyObject *val_node_dict(PyObject *node);
/* UTF-8 of a str (borrowed, cached on the object); NULL with a Python error set. */
const char *val_str(PyObject *s, Py_ssize_t *len);

/* val_policy.c / val_embed.c / val_modules.c */
/* NULL-terminated name lists shared by the static rules and the runtime guard. */
extern const char *const val_harmless_dunders[];
extern const char *const val_introspection_names[];
const char *val_guard_source(size_t *len);
const char *val_guard_audit_source(size_t *len); /* val_guard_audit.py, put before the guard */
/* Builds the policy's Python tables once; 0, or -1 with a Python error set. */
int val_policy_prepare(val_policy *p);
void val_policy_release_py(val_policy *p);
int val_rule_disabled(const val_policy *p, const char *rule);
/* val_findings.c: every rule id a finding can carry (NULL-terminated); a policy may disable
 * only these (test_rule_ids_complete checks the list against the rule files). */
extern const char *const val_rule_ids[];
/* 1 when the node (an expression) is a module the program bound by import; *name is the
 * module's name (borrowed). 0 when not, -1 with a Python error set. */
int val_module_of(val_ctx *c, PyObject *node, PyObject **name);

/* Rule families: called on every node, return 0, or -1 with a Python error set. */
int val_rules_import_visit(val_ctx *c, PyObject *node, PyObject *dict);
int val_rules_call_visit(val_ctx *c, PyObject *node, PyObject *dict);
int val_rules_names_visit(val_ctx *c, PyObject *node, PyObject *dict);
/* After the walk: attr-denied needs every alias of os first, they may follow the use. */
int val_rules_call_finish(val_ctx *c);
/* After the walk: module attribute uses against the import bindings. */
int val_rules_module_finish(val_ctx *c);
/* Judges `module.attr` (or `from module import attr`) now: module-private, module-attr-denied,
 * module-escape. 0, or -1 with a Python error set. */
int val_check_mod_attr(val_ctx *c, PyObject *module, PyObject *attr, PyObject *pos);
/* Remembers a module attribute use for val_rules_module_finish. */
int val_mod_use_add(val_ctx *c, PyObject *value, PyObject *attr, PyObject *pos);
/* Marks a node as judged by its parent; val_exempt tells whether it was. */
int val_exempt_add(val_ctx *c, PyObject *node);
int val_exempt(val_ctx *c, PyObject *node);
/* Checks one attribute name wherever it appears (Attribute node, getattr literal,
 * attrgetter literal): dunder-attr, introspection-attr, private-attr. */
void val_check_attr_name(val_ctx *c, PyObject *attr, const char *s, Py_ssize_t len,
                         PyObject *pos, const char *how);

#endif
