/* val_rules_call.c: rules `call-denied` (builtins that run or open arbitrary things) and
 * `attr-denied` (the os functions that start processes, for policies that allow os).
 *
 * Why this shape:
 * - call-denied matches a bare Name being called, `exec(...)`, or used as a decorator, `@exec`
 *   (a decorator is a call the source does not spell). The set is the policy's
 *   (val_modules.c: exec, eval, compile, __import__, breakpoint, globals, locals, vars, help,
 *   license, credits, copyright, plus open and input when the policy says so). Other
 *   references (`f = exec`) are val_rules_names.c's `builtin-ref`; the callee is marked
 *   exempt so one use gives one finding.
 * - attr-denied matches `X.system`, `X.popen`, `X.exec*`, `X.spawn*`, `X.posix_spawn*` where X is
 *   os, posix (what os re-exports them from), or a name bound by `import os as X`, and flags
 *   `from os import system` (and `from os import *`) at the import. An alias may be bound after
 *   the function that uses it is defined, so uses are collected during the walk and judged in
 *   val_rules_call_finish() once every alias is known. Aliases are module-wide, whatever scope
 *   bound them: cheaper and stricter than tracking scopes, and rebinding `o` to something else
 *   that also has `.system` is not worth allowing.
 */
#include "val_internal.h"

#include <stdlib.h>
#include <string.h>

static int eq(const char *s, Py_ssize_t len, const char *lit) {
    return (size_t)len == strlen(lit) && memcmp(s, lit, (size_t)len) == 0;
}

static int starts(const char *s, Py_ssize_t len, const char *lit) {
    size_t n = strlen(lit);
    return (size_t)len >= n && memcmp(s, lit, n) == 0;
}

/* The builtin's name when id is one the policy denies calling, else NULL (error set or not). */
static const char *denied_builtin(val_ctx *c, PyObject *id, int *error) {
    int r = PySet_Contains(c->policy->denied_builtins, id);
    if (r <= 0) {
        *error = r < 0;
        return NULL;
    }
    const char *s = PyUnicode_AsUTF8(id);
    if (!s) *error = 1;
    return s;
}

static int is_denied_os_attr(const char *s, Py_ssize_t len) {
    return eq(s, len, "system") || eq(s, len, "popen") || starts(s, len, "exec") ||
           starts(s, len, "spawn") || starts(s, len, "posix_spawn");
}

static int is_os_module(const char *s, Py_ssize_t len) {
    return eq(s, len, "os") || eq(s, len, "posix");
}

/* The id of a Name node, borrowed; NULL when the node is not a Name. */
static PyObject *name_id(PyObject *node) {
    if (!Py_IS_TYPE(node, val_py.t_name)) return NULL;
    PyObject *d = val_node_dict(node);
    return d ? val_field(d, val_py.s_id) : NULL;
}

static int visit_call(val_ctx *c, PyObject *dict) {
    PyObject *func = val_field(dict, val_py.s_func);
    PyObject *id = func ? name_id(func) : NULL;
    if (!id) return PyErr_Occurred() ? -1 : 0;
    int error = 0;
    const char *hit = denied_builtin(c, id, &error);
    if (error) return -1;
    if (!hit) return 0;
    val_add_at(c, "call-denied", dict, "call to %s() is not allowed", hit);
    return val_exempt_add(c, func); /* one finding, not a second builtin-ref for the name */
}

static int visit_decorators(val_ctx *c, PyObject *dict) {
    PyObject *decos = val_field(dict, val_py.s_decorator_list);
    if (!decos || !PyList_Check(decos)) return PyErr_Occurred() ? -1 : 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(decos); i++) {
        PyObject *deco = PyList_GET_ITEM(decos, i);
        PyObject *id = name_id(deco);
        if (!id) {
            if (PyErr_Occurred()) return -1;
            continue; /* calls among decorators are visited as Call nodes */
        }
        int error = 0;
        const char *hit = denied_builtin(c, id, &error);
        if (error) return -1;
        if (!hit) continue;
        val_add_at(c, "call-denied", val_node_dict(deco),
                   "use of %s() as a decorator is not allowed", hit);
        if (val_exempt_add(c, deco) < 0) return -1;
    }
    return 0;
}

static int remember_use(val_ctx *c, PyObject *base, PyObject *dict) {
    if (c->use_count == c->use_cap) {
        size_t cap = c->use_cap ? c->use_cap * 2 : 8;
        val_os_use *v = realloc(c->os_uses, cap * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        c->os_uses = v;
        c->use_cap = cap;
    }
    c->os_uses[c->use_count++] = (val_os_use){base, dict};
    return 0;
}

static int visit_attribute(val_ctx *c, PyObject *dict) {
    PyObject *attr = val_field(dict, val_py.s_attr);
    if (!attr) return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t len;
    const char *s = val_str(attr, &len);
    if (!s) return -1;
    if (!is_denied_os_attr(s, len)) return 0;
    PyObject *value = val_field(dict, val_py.s_value);
    PyObject *base = value ? name_id(value) : NULL;
    if (!base) return PyErr_Occurred() ? -1 : 0;
    return remember_use(c, base, dict);
}

static int add_os_name(val_ctx *c, PyObject *name) {
    if (c->os_count == c->os_cap) {
        size_t cap = c->os_cap ? c->os_cap * 2 : 4;
        PyObject **v = realloc(c->os_names, cap * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        c->os_names = v;
        c->os_cap = cap;
    }
    c->os_names[c->os_count++] = name;
    return 0;
}

/* `import os as o`: o is os. (`import os.path as p` binds os.path, which has no system.) */
static int visit_import(val_ctx *c, PyObject *dict) {
    PyObject *names = val_field(dict, val_py.s_names);
    if (!names || !PyList_Check(names)) return PyErr_Occurred() ? -1 : 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
        PyObject *adict = val_node_dict(PyList_GET_ITEM(names, i));
        if (!adict) return -1;
        PyObject *name = val_field(adict, val_py.s_name);
        PyObject *asname = val_field(adict, val_py.s_asname);
        if (!name || !asname || asname == Py_None) continue;
        Py_ssize_t len;
        const char *s = val_str(name, &len);
        if (!s) return -1;
        if (is_os_module(s, len) && add_os_name(c, asname) < 0) return -1;
    }
    return 0;
}

/* `from os import system`: the function arrives without the `os.` the attribute rule needs. */
static int visit_import_from(val_ctx *c, PyObject *dict) {
    PyObject *level = val_field(dict, val_py.s_level);
    if (level && PyLong_Check(level) && PyLong_AsLong(level) != 0) return 0;
    PyObject *module = val_field(dict, val_py.s_module);
    if (!module || module == Py_None) return 0;
    Py_ssize_t mlen;
    const char *m = val_str(module, &mlen);
    if (!m) return -1;
    if (!is_os_module(m, mlen)) return 0;
    PyObject *names = val_field(dict, val_py.s_names);
    if (!names || !PyList_Check(names)) return PyErr_Occurred() ? -1 : 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
        PyObject *adict = val_node_dict(PyList_GET_ITEM(names, i));
        if (!adict) return -1;
        PyObject *name = val_field(adict, val_py.s_name);
        if (!name) continue;
        Py_ssize_t len;
        const char *s = val_str(name, &len);
        if (!s) return -1;
        if (eq(s, len, "*"))
            val_add_at(c, "attr-denied", adict,
                       "'from %s import *' is not allowed (it imports %s.system and the exec/spawn "
                       "functions)", m, m);
        else if (is_denied_os_attr(s, len))
            val_add_at(c, "attr-denied", adict, "import of %s.%s is not allowed", m, s);
    }
    return 0;
}

int val_rules_call_visit(val_ctx *c, PyObject *node, PyObject *dict) {
    PyTypeObject *t = Py_TYPE(node);
    if (t == val_py.t_call) return visit_call(c, dict);
    if (t == val_py.t_attribute) return visit_attribute(c, dict);
    if (t == val_py.t_functiondef || t == val_py.t_asyncfunctiondef || t == val_py.t_classdef)
        return visit_decorators(c, dict);
    if (t == val_py.t_import) return visit_import(c, dict);
    if (t == val_py.t_importfrom) return visit_import_from(c, dict);
    return 0;
}

int val_rules_call_finish(val_ctx *c) {
    for (size_t i = 0; i < c->use_count; i++) {
        val_os_use *u = &c->os_uses[i];
        Py_ssize_t blen, alen;
        const char *b = val_str(u->base, &blen);
        PyObject *attr = val_field(u->dict, val_py.s_attr);
        const char *a = attr ? val_str(attr, &alen) : NULL;
        if (!b || !a) return -1;
        int os = is_os_module(b, blen);
        for (size_t j = 0; !os && j < c->os_count; j++) {
            int r = PyUnicode_Compare(u->base, c->os_names[j]);
            if (r == -1 && PyErr_Occurred()) return -1;
            os = r == 0;
        }
        if (!os) continue;
        if (is_os_module(b, blen))
            val_add_at(c, "attr-denied", u->dict, "use of %s.%s is not allowed", b, a);
        else
            val_add_at(c, "attr-denied", u->dict, "use of %s.%s (os.%s) is not allowed", b, a, a);
    }
    return 0;
}
