/* val_parse.c: val_check: parse the job's exact bytes with CPython, walk the tree, run the rules.
 *
 * Why this shape:
 * - The code goes to builtins.compile() as a bytes object with PyCF_ONLY_AST, so CPython itself
 *   decides the encoding (BOM, coding cookie) and rejects NUL bytes exactly as the interpreter
 *   that runs the job will. A C string API would stop at the first NUL and validate less than
 *   what runs.
 * - Anything the parser refuses (SyntaxError, ValueError, UnicodeDecodeError, RecursionError,
 *   MemoryError) is the program's fault and becomes one `syntax` finding; anything else is the
 *   validator's and is returned as an error.
 * - The walk is generic (each node's _fields, cached per type) so a rule family only looks at
 *   the node types it cares about and new families need no walker changes. It uses a heap stack,
 *   so a deep tree cannot overflow the C stack, and stops descending past the policy's
 *   max_depth and counting past its max_nodes; a program over max_source_bytes is not parsed.
 */
#include "val_internal.h"

#include <marshal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PyObject *val_field(PyObject *dict, PyObject *name) {
    /* Lookups with our interned keys cannot raise; a miss means the field is absent. */
    return PyDict_GetItemWithError(dict, name);
}

PyObject *val_node_dict(PyObject *node) {
    PyObject *d = PyObject_GenericGetDict(node, NULL);
    if (!d) return NULL;
    Py_DECREF(d); /* the node keeps it alive, and the node lives as long as the tree */
    return d;
}

const char *val_str(PyObject *s, Py_ssize_t *len) {
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "AST identifier is not a str");
        return NULL;
    }
    return PyUnicode_AsUTF8AndSize(s, len);
}

/* ---- syntax findings ------------------------------------------------------------------- */

static int attr_int(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    int x = 0;
    if (v && PyLong_Check(v)) {
        long l = PyLong_AsLong(v);
        x = (l > 0 && l < INT32_MAX) ? (int)l : 0;
    }
    Py_XDECREF(v);
    PyErr_Clear(); /* an absent or odd position is "unknown" (0), not a second error */
    return x;
}

/* Writes the exception's message (SyntaxError.msg, else "Type: str(exc)") into buf. */
static void exc_message(PyObject *type, PyObject *value, int is_syntax, char *buf, size_t len) {
    const char *tname = PyExceptionClass_Name(type);
    const char *dot = strrchr(tname, '.');
    if (dot) tname = dot + 1;
    PyObject *s = NULL;
    if (is_syntax) {
        s = PyObject_GetAttr(value, val_py.s_msg);
        if (s && !PyUnicode_Check(s)) Py_CLEAR(s);
    }
    if (!s && !PyErr_Occurred()) s = PyObject_Str(value);
    PyObject *b = s ? PyUnicode_AsEncodedString(s, "utf-8", "backslashreplace") : NULL;
    const char *m = b ? PyBytes_AS_STRING(b) : "";
    /* The parser reports running out of its own stack as MemoryError (with no text) or
     * RecursionError; say what that means for the program. */
    const char *hint = PyErr_GivenExceptionMatches(type, PyExc_MemoryError) ||
                               PyErr_GivenExceptionMatches(type, PyExc_RecursionError)
                           ? " (program too deeply nested or too large for the parser)"
                           : "";
    if (is_syntax && *m)
        snprintf(buf, len, "%s", m);
    else if (*m)
        snprintf(buf, len, "%s: %s%s", tname, m, hint);
    else
        snprintf(buf, len, "%s%s", tname, hint);
    Py_XDECREF(b);
    Py_XDECREF(s);
    PyErr_Clear(); /* failing to format the message must not hide the finding itself */
}

/* The parse failed: a `syntax` finding when the program is at fault, else -1 with err set. */
static int parse_failed(val_ctx *c, char *err, size_t errlen) {
    if (!PyErr_ExceptionMatches(PyExc_SyntaxError) && !PyErr_ExceptionMatches(PyExc_ValueError) &&
        !PyErr_ExceptionMatches(PyExc_RecursionError) &&
        !PyErr_ExceptionMatches(PyExc_MemoryError) &&
        !PyErr_ExceptionMatches(PyExc_OverflowError)) {
        val_err_python(err, errlen, "ast.parse");
        return -1;
    }
    int is_syntax = PyErr_ExceptionMatches(PyExc_SyntaxError);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    int line = 0, col = 0, end_line = 0, end_col = 0;
    char msg[sizeof ((val_finding *)0)->message];
    if (value && is_syntax) {
        /* SyntaxError.offset is CPython's 1-based column in characters; kept as it is. */
        line = attr_int(value, val_py.s_lineno);
        col = attr_int(value, val_py.s_offset);
        end_line = attr_int(value, val_py.s_end_lineno);
        end_col = attr_int(value, val_py.s_end_offset);
    }
    if (value)
        exc_message(type, value, is_syntax, msg, sizeof msg);
    else
        snprintf(msg, sizeof msg, "%s", PyExceptionClass_Name(type));
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    val_add(c, "syntax", line, col, end_line, end_col, "%s", msg);
    return 0;
}

/* ---- the walk ------------------------------------------------------------------------- */

typedef struct {
    PyObject *node;   /* borrowed: owned by its parent, ultimately by the tree */
    PyObject *parent; /* borrowed: the parent node, for findings on nodes without a position */
    int depth;
} val_frame;

typedef struct {
    val_frame *v;
    size_t n, cap;
} val_stack;

static int push(val_stack *s, PyObject *node, PyObject *parent, int depth) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        val_frame *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (val_frame){node, parent, depth};
    return 0;
}

/* The _fields tuple of a node's type, cached: one dict lookup per node instead of an
 * attribute lookup through the type's MRO. Borrowed. */
static PyObject *fields_of(PyTypeObject *t) {
    PyObject *f = PyDict_GetItemWithError(val_py.field_cache, (PyObject *)t);
    if (f || PyErr_Occurred()) return f;
    f = PyObject_GetAttr((PyObject *)t, val_py.s_fields);
    if (!f) return NULL;
    if (!PyTuple_Check(f)) {
        PyErr_Format(PyExc_TypeError, "%s._fields is not a tuple", t->tp_name);
        Py_DECREF(f);
        return NULL;
    }
    int rc = PyDict_SetItem(val_py.field_cache, (PyObject *)t, f);
    Py_DECREF(f); /* the cache holds it now */
    return rc < 0 ? NULL : f;
}

static int is_node(PyObject *o) { return PyObject_TypeCheck(o, val_py.t_ast); }

/* Pushes the node's children so they pop in field order (source order, mostly). */
static int push_children(val_stack *s, PyObject *parent, PyObject *dict, PyObject *fields,
                         int depth) {
    for (Py_ssize_t i = PyTuple_GET_SIZE(fields) - 1; i >= 0; i--) {
        PyObject *v = val_field(dict, PyTuple_GET_ITEM(fields, i));
        if (!v) {
            if (PyErr_Occurred()) return -1;
            continue; /* optional field left unset */
        }
        if (PyList_Check(v)) {
            for (Py_ssize_t j = PyList_GET_SIZE(v) - 1; j >= 0; j--) {
                PyObject *item = PyList_GET_ITEM(v, j);
                if (is_node(item) && push(s, item, parent, depth) < 0) return -1;
            }
        } else if (is_node(v) && push(s, v, parent, depth) < 0) {
            return -1;
        }
    }
    return 0;
}

/* The node's own dict when it has a position, else its parent's: operators and contexts
 * (Add, Load) carry none. Only called for a finding, so the hot path never looks. */
static PyObject *where(PyObject *dict, PyObject *parent) {
    PyObject *line = PyDict_GetItemWithError(dict, val_py.s_lineno);
    PyErr_Clear();
    return line || !parent ? dict : val_node_dict(parent);
}

static int visit(val_ctx *c, PyObject *node, PyObject *dict) {
    if (val_rules_import_visit(c, node, dict) < 0 || val_rules_call_visit(c, node, dict) < 0 ||
        val_rules_names_visit(c, node, dict) < 0)
        return -1;
    return 0;
}

static int walk(val_ctx *c, PyObject *tree) {
    val_stack s = {0};
    int rc = push(&s, tree, NULL, 0);
    int deep_reported = 0;
    size_t nodes = 0, max_nodes = c->policy->max_nodes;
    int max_depth = c->policy->max_depth;
    while (rc == 0 && s.n > 0) {
        val_frame f = s.v[--s.n];
        PyObject *dict = val_node_dict(f.node);
        if (!dict) {
            rc = -1;
            break;
        }
        if (++nodes > max_nodes) {
            /* Stop: the rest would be unexamined anyway, and the finding rejects the job. */
            val_add_at(c, "limit-nodes", where(dict, f.parent),
                       "program has more than %zu syntax tree nodes; it is not examined past "
                       "here", max_nodes);
            break;
        }
        if (f.depth > max_depth) {
            /* Once is enough: one deep chain would otherwise repeat this for every sibling. */
            if (!deep_reported)
                val_add_at(c, "too-deep", where(dict, f.parent),
                           "program nests deeper than %d levels; it is not examined past here",
                           max_depth);
            deep_reported = 1;
            continue;
        }
        if (visit(c, f.node, dict) < 0) {
            rc = -1;
            break;
        }
        PyObject *fields = fields_of(Py_TYPE(f.node));
        if (!fields || push_children(&s, f.node, dict, fields, f.depth + 1) < 0) rc = -1;
    }
    free(s.v);
    return rc;
}

/* ---- val_check ------------------------------------------------------------------------ */

/* The code object of a clean program, from the tree its check walked: compile() of an AST
 * does no parsing, and with dont_inherit and no flags it gives what compile() of the source
 * gives (tests/unit/test_validator_code.c compares them). Failing here is not the validator's
 * failure: a program the compiler refuses (`return` outside a function) gets no object, the
 * sandbox compiles its source and reports that error itself, in the words a direct run uses. */
static void compile_tree(PyObject *tree, const char *filename, val_code *obj) {
    PyObject *name = PyUnicode_DecodeFSDefault(filename);
    PyObject *flags = PyLong_FromLong(0);
    PyObject *code = NULL, *bytes = NULL;
    if (name && flags) {
        PyObject *args[] = {tree, name, val_py.mode, flags, Py_True};
        code = PyObject_Vectorcall(val_py.compile, args, 5, NULL);
    }
    if (code) bytes = PyMarshal_WriteObjectToString(code, Py_MARSHAL_VERSION);
    if (bytes) {
        size_t n = (size_t)PyBytes_GET_SIZE(bytes);
        obj->data = malloc(VAL_CODE_MAGIC_LEN + n);
        if (obj->data) {
            memcpy(obj->data, val_py.magic, VAL_CODE_MAGIC_LEN);
            memcpy(obj->data + VAL_CODE_MAGIC_LEN, PyBytes_AS_STRING(bytes), n);
            obj->len = VAL_CODE_MAGIC_LEN + n;
        }
    }
    PyErr_Clear();
    Py_XDECREF(bytes);
    Py_XDECREF(code);
    Py_XDECREF(flags);
    Py_XDECREF(name);
}

static int check(val_ctx *c, const char *code, size_t len, const char *filename, val_code *obj,
                 char *err, size_t errlen) {
    if (len > c->policy->max_bytes) {
        val_add(c, "limit-bytes", 1, 1, 1, 1, "program of %zu bytes is larger than the %zu bytes "
                "policy %s allows", len, c->policy->max_bytes, c->policy->name);
        return 0;
    }
    if (val_policy_prepare((val_policy *)c->policy) < 0) {
        val_err_python(err, errlen, "policy tables");
        return -1;
    }
    PyObject *src = PyBytes_FromStringAndSize(code, (Py_ssize_t)len);
    if (!src) {
        val_err_python(err, errlen, "copy source");
        return -1;
    }
    PyObject *args[] = {src, val_py.filename, val_py.mode, val_py.flags, Py_True};
    /* dont_inherit=True: no __future__ flags of any calling frame may change the parse. */
    PyObject *tree = PyObject_Vectorcall(val_py.compile, args, 5, NULL);
    Py_DECREF(src);
    if (!tree) return parse_failed(c, err, errlen);

    int rc = (c->bindings = PyDict_New()) ? walk(c, tree) : -1;
    if (rc == 0) rc = val_rules_call_finish(c);
    if (rc == 0) rc = val_rules_module_finish(c);
    if (rc < 0) val_err_python(err, errlen, "walk");
    if (rc == 0 && filename && c->count == 0 && !c->failed) compile_tree(tree, filename, obj);
    Py_CLEAR(c->bindings);
    /* Findings point into nothing of the tree (they are copied), so it can go now. */
    Py_DECREF(tree);
    return rc;
}

int val_check_compile(const val_policy *p, const char *code, size_t len, const char *filename,
                      val_report *out, val_code *obj, char *err, size_t errlen) {
    if (obj) *obj = (val_code){0};
    if (!obj) filename = NULL;
    if (out) {
        out->items = NULL;
        out->count = 0;
    }
    if (!out || (!code && len)) {
        snprintf(err, errlen, "codeq: validator: val_check: %s",
                 out ? "code is NULL" : "out is NULL");
        return -1;
    }
    if (!val_py_ready()) {
        snprintf(err, errlen, "codeq: validator: val_check: val_init has not succeeded");
        return -1;
    }
    if (!p && !(p = val_policy_default())) {
        snprintf(err, errlen, "codeq: validator: val_check: the built-in policy did not load");
        return -1;
    }
    if (len > (size_t)PY_SSIZE_T_MAX) {
        snprintf(err, errlen, "codeq: validator: val_check: program of %zu bytes is too large",
                 len);
        return -1;
    }
    unsigned char key[32];
    int keyed = val_cache_key(code ? code : "", len, key) == 0;
    if (keyed && val_cache_get(p, key, filename, out, obj)) return 0;
    val_ctx c = {.policy = p};
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = check(&c, code ? code : "", len, filename, obj, err, errlen);
    PyGILState_Release(g);
    if (rc == 0 && c.failed) {
        snprintf(err, errlen, "codeq: validator: val_check: out of memory storing findings");
        rc = -1;
    }
    if (rc == 0) {
        val_sort(&c);
        out->items = c.items;
        out->count = c.count;
        c.items = NULL;
        if (keyed) val_cache_put(p, key, filename, out, obj);
    } else if (obj) {
        val_code_free(obj);
    }
    val_ctx_free(&c);
    return rc;
}

int val_check_policy(const val_policy *p, const char *code, size_t len, val_report *out,
                     char *err, size_t errlen) {
    return val_check_compile(p, code, len, NULL, out, NULL, err, errlen);
}

void val_code_free(val_code *c) {
    if (!c) return;
    free(c->data);
    *c = (val_code){0};
}

int val_check(const char *code, size_t len, val_report *out, char *err, size_t errlen) {
    return val_check_policy(NULL, code, len, out, err, errlen);
}
