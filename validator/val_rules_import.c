/* val_rules_import.c: rules `import-denied` (a module outside the policy's allowlist),
 * `import-relative` and `import-star`; and the import bindings the module rules resolve names
 * with.
 *
 * Why this shape:
 * - The allowlist is about the top-level package, so `import json.decoder` and
 *   `from collections.abc import Mapping` are decided by `json` and `collections`. An allowlist,
 *   not a denylist: the standard library has hundreds of modules and any one not thought about
 *   (ctypes, _posixsubprocess, gc, inspect) is a way out.
 * - A job is one file, main.py: a relative import can only name files the job itself wrote into
 *   its working directory, so it is refused like any module not on the list.
 * - `from M import name` is the attribute use M.name and gets the same module rules
 *   (val_check_mod_attr); `from M import *` is refused only when M has something to hide
 *   (an attribute restriction or a module escape), since the rest is what M.name would give.
 * - Bindings: `import a.b` binds a -> "a", `import a.b as x` binds x -> "a.b",
 *   `from a import b` binds b -> "a.b" when b is a submodule of an allowed module.
 */
#include "val_internal.h"

#include <string.h>

static int allowed_top(val_ctx *c, const char *name, Py_ssize_t len, PyObject **top) {
    const char *dot = memchr(name, '.', (size_t)len);
    *top = PyUnicode_FromStringAndSize(name, dot ? dot - name : len);
    if (!*top) return -1;
    return PySet_Contains(c->policy->allowed, *top);
}

static int bind(val_ctx *c, PyObject *name, PyObject *module) {
    return PyDict_SetItem(c->bindings, name, module);
}

static int visit_import(val_ctx *c, PyObject *dict) {
    PyObject *names = val_field(dict, val_py.s_names);
    if (!names || !PyList_Check(names)) return PyErr_Occurred() ? -1 : 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
        PyObject *adict = val_node_dict(PyList_GET_ITEM(names, i));
        if (!adict) return -1;
        PyObject *name = val_field(adict, val_py.s_name);
        PyObject *asname = val_field(adict, val_py.s_asname);
        if (!name) continue;
        Py_ssize_t len;
        const char *s = val_str(name, &len);
        PyObject *top = NULL;
        int ok = s ? allowed_top(c, s, len, &top) : -1;
        int rc = ok;
        /* The alias carries its own position, so `import os, subprocess` points at the name. */
        if (ok == 0)
            val_add_at(c, "import-denied", adict, "import of module '%s' is not allowed by "
                       "policy %s", PyUnicode_AsUTF8(top), c->policy->name);
        else if (ok > 0)
            rc = asname && asname != Py_None ? bind(c, asname, name) : bind(c, top, top);
        Py_XDECREF(top);
        if (rc < 0) return -1;
    }
    return 0;
}

static int has_hidden(val_ctx *c, PyObject *module) {
    int r = PyDict_Contains(c->policy->restricted, module);
    if (!r) r = PyDict_Contains(c->policy->denied_attrs, module);
    return r ? r : PyDict_Contains(c->policy->escapes, module);
}

static int visit_from_names(val_ctx *c, PyObject *module, PyObject *names) {
    const char *m = PyUnicode_AsUTF8(module);
    if (!m) return -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
        PyObject *adict = val_node_dict(PyList_GET_ITEM(names, i));
        if (!adict) return -1;
        PyObject *name = val_field(adict, val_py.s_name);
        PyObject *asname = val_field(adict, val_py.s_asname);
        if (!name) continue;
        Py_ssize_t len;
        const char *s = val_str(name, &len);
        if (!s) return -1;
        if (asname && asname != Py_None && strcmp(m, "operator") == 0 &&
            (strcmp(s, "attrgetter") == 0 || strcmp(s, "methodcaller") == 0))
            val_add_at(c, "builtin-ref", adict, "import of operator.%s under another name is not "
                       "allowed (its calls are checked by name)", s);
        if (strcmp(s, "*") == 0) {
            int r = has_hidden(c, module);
            if (r < 0) return -1;
            if (r)
                val_add_at(c, "import-star", adict, "'from %s import *' is not allowed: %s has "
                           "attributes policy %s does not allow", m, m, c->policy->name);
            continue;
        }
        if (val_check_mod_attr(c, module, name, adict) < 0) return -1;
        PyObject *inner = PyDict_GetItemWithError(c->policy->subs, module);
        PyObject *sub = inner ? PyDict_GetItemWithError(inner, name) : NULL;
        if (sub && bind(c, asname && asname != Py_None ? asname : name, sub) < 0) return -1;
        if (PyErr_Occurred()) return -1;
    }
    return 0;
}

static int visit_import_from(val_ctx *c, PyObject *dict) {
    PyObject *level = val_field(dict, val_py.s_level);
    if (level && PyLong_Check(level) && PyLong_AsLong(level) != 0) {
        val_add_at(c, "import-relative", dict,
                   "relative import is not allowed: a job is the single file main.py");
        return 0;
    }
    PyObject *module = val_field(dict, val_py.s_module);
    PyObject *names = val_field(dict, val_py.s_names);
    if (!module || module == Py_None || !names || !PyList_Check(names))
        return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t len;
    const char *s = val_str(module, &len);
    PyObject *top = NULL;
    int ok = s ? allowed_top(c, s, len, &top) : -1;
    if (ok == 0)
        val_add_at(c, "import-denied", dict, "import of module '%s' is not allowed by policy %s",
                   PyUnicode_AsUTF8(top), c->policy->name);
    Py_XDECREF(top);
    if (ok < 0) return -1;
    return ok ? visit_from_names(c, module, names) : 0;
}

int val_rules_import_visit(val_ctx *c, PyObject *node, PyObject *dict) {
    if (Py_IS_TYPE(node, val_py.t_import)) return visit_import(c, dict);
    if (Py_IS_TYPE(node, val_py.t_importfrom)) return visit_import_from(c, dict);
    return 0;
}
