/* val_modules.c: what the allowed modules hand out, and the rules on module attributes:
 * `module-private` (random._os), `module-escape` (queue.threading, a module outside the
 * allowlist reached through an allowed one), `module-attr-denied` (sys.modules when the policy
 * lists the attributes of sys a program may use).
 *
 * Why this shape:
 * - Which attributes of an allowed module are themselves modules is a fact of the installed
 *   standard library, not something to hand-maintain: on first use of a policy the embedded
 *   interpreter (the same CPython as the sandbox) imports each allowed module and records, for
 *   every module reachable through allowed ones, which attributes are allowed submodules and
 *   which are escapes. A module that is not installed (numpy) simply has no table.
 * - Which names are modules in the program is known only from its import statements, which
 *   may come after a use (a function body runs later), so uses are collected during the walk
 *   and judged afterwards; bindings are module-wide, whatever scope bound them (stricter and
 *   cheaper than scope analysis).
 */
#include "val_internal.h"

#include <stdlib.h>
#include <string.h>

#define VAL_MAX_SCANNED_MODULES 5000

static const char *const base_denied_builtins[] = {
    "exec", "eval", "compile", "__import__", "breakpoint", "globals", "locals", "vars", "help",
    "license", "credits", "copyright", NULL,
};

static int set_add_str(PyObject *set, const char *s) {
    PyObject *o = PyUnicode_InternFromString(s);
    if (!o) return -1;
    int rc = PySet_Add(set, o);
    Py_DECREF(o);
    return rc;
}

static PyObject *frozen_of(const char *const *v, size_t n) {
    PyObject *set = PySet_New(NULL);
    for (size_t i = 0; set && i < n && v[i]; i++)
        if (set_add_str(set, v[i]) < 0) Py_CLEAR(set);
    if (!set) return NULL;
    PyObject *f = PyFrozenSet_New(set);
    Py_DECREF(set);
    return f;
}

static int top_allowed(const val_policy *p, PyObject *modname) {
    Py_ssize_t len;
    const char *s = PyUnicode_AsUTF8AndSize(modname, &len);
    if (!s) return -1;
    const char *dot = memchr(s, '.', (size_t)len);
    PyObject *top = PyUnicode_FromStringAndSize(s, dot ? dot - s : len);
    if (!top) return -1;
    int r = PySet_Contains(p->allowed, top);
    Py_DECREF(top);
    return r;
}

static int add_entry(PyObject *outer, PyObject *mod, PyObject *attr, PyObject *target) {
    PyObject *inner = PyDict_GetItemWithError(outer, mod);
    if (!inner) {
        if (PyErr_Occurred() || !(inner = PyDict_New())) return -1;
        int rc = PyDict_SetItem(outer, mod, inner);
        Py_DECREF(inner); /* the outer dict holds it */
        if (rc < 0) return -1;
    }
    return PyDict_SetItem(inner, attr, target);
}

/* Records the module attributes of one module; appends newly reached allowed modules. */
static int scan_one(val_policy *p, PyObject *mod, PyObject *queue, PyObject *seen) {
    PyObject *name = PyModule_GetNameObject(mod);
    if (!name) {
        PyErr_Clear(); /* a module without a name cannot be named by a program either */
        return 0;
    }
    PyObject *d = PyModule_GetDict(mod), *k, *v;
    Py_ssize_t pos = 0;
    int rc = 0;
    while (rc == 0 && PyDict_Next(d, &pos, &k, &v)) {
        if (!PyUnicode_Check(k) || !PyModule_Check(v)) continue;
        PyObject *target = PyModule_GetNameObject(v);
        if (!target) {
            PyErr_Clear();
            continue;
        }
        int ok = top_allowed(p, target);
        if (ok < 0) rc = -1;
        else if (!ok) rc = add_entry(p->escapes, name, k, target);
        else if ((rc = add_entry(p->subs, name, k, target)) == 0 && !PySet_Contains(seen, v) &&
                 PyList_GET_SIZE(queue) < VAL_MAX_SCANNED_MODULES)
            rc = PySet_Add(seen, v) < 0 || PyList_Append(queue, v) < 0 ? -1 : 0;
        Py_DECREF(target);
    }
    Py_DECREF(name);
    return rc;
}

static int scan_modules(val_policy *p) {
    PyObject *queue = PyList_New(0), *seen = PySet_New(NULL);
    int rc = queue && seen ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < p->nmodules; i++) {
        PyObject *m = PyImport_ImportModule(p->modules[i]);
        if (!m) {
            PyErr_Clear(); /* not installed here: nothing to tabulate, the import fails at run */
            continue;
        }
        if (PySet_Add(seen, m) < 0 || PyList_Append(queue, m) < 0) rc = -1;
        Py_DECREF(m);
    }
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(queue); i++)
        rc = scan_one(p, PyList_GET_ITEM(queue, i), queue, seen);
    Py_XDECREF(queue);
    Py_XDECREF(seen);
    return rc;
}

static PyObject *denied_builtins(const val_policy *p) {
    PyObject *set = PySet_New(NULL);
    for (size_t i = 0; set && base_denied_builtins[i]; i++)
        if (set_add_str(set, base_denied_builtins[i]) < 0) Py_CLEAR(set);
    if (set && !p->files_workdir && set_add_str(set, "open") < 0) Py_CLEAR(set);
    if (set && !p->allow_input && set_add_str(set, "input") < 0) Py_CLEAR(set);
    if (!set) return NULL;
    PyObject *f = PyFrozenSet_New(set);
    Py_DECREF(set);
    return f;
}

/* dict: module name -> frozenset of the listed attributes; new reference or NULL. */
static PyObject *attr_table(const val_modattrs *a, size_t n) {
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < n; i++) {
        PyObject *names = frozen_of((const char *const *)a[i].names, a[i].count);
        if (!names || PyDict_SetItemString(d, a[i].module, names) < 0) Py_CLEAR(d);
        Py_XDECREF(names);
    }
    return d;
}

int val_policy_prepare(val_policy *p) {
    if (p->py_state == 1) return 0;
    if (p->py_state == -1) {
        PyErr_Format(PyExc_RuntimeError, "policy %s: module tables could not be built", p->name);
        return -1;
    }
    p->py_state = -1;
    if (!(p->allowed = frozen_of((const char *const *)p->modules, p->nmodules)) ||
        !(p->restricted = attr_table(p->attrs, p->nattrs)) ||
        !(p->denied_attrs = attr_table(p->deny, p->ndeny)) ||
        !(p->denied_builtins = denied_builtins(p)) ||
        !(p->subs = PyDict_New()) || !(p->escapes = PyDict_New()) || scan_modules(p) < 0)
        return -1;
    p->py_state = 1;
    return 0;
}

void val_policy_release_py(val_policy *p) {
    if (!p->py_state || !val_py_ready()) return; /* after val_shutdown the objects are gone */
    PyGILState_STATE g = PyGILState_Ensure();
    Py_CLEAR(p->allowed);
    Py_CLEAR(p->restricted);
    Py_CLEAR(p->denied_attrs);
    Py_CLEAR(p->subs);
    Py_CLEAR(p->escapes);
    Py_CLEAR(p->denied_builtins);
    PyGILState_Release(g);
    p->py_state = 0;
}

/* ---- uses in a program ----------------------------------------------------------------- */

int val_mod_use_add(val_ctx *c, PyObject *value, PyObject *attr, PyObject *pos) {
    if (c->mod_count == c->mod_cap) {
        size_t cap = c->mod_cap ? c->mod_cap * 2 : 16;
        val_mod_use *v = realloc(c->mod_uses, cap * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        c->mod_uses = v;
        c->mod_cap = cap;
    }
    c->mod_uses[c->mod_count++] = (val_mod_use){value, attr, pos};
    return 0;
}

static PyObject *lookup2(PyObject *outer, PyObject *k1, PyObject *k2) {
    PyObject *inner = PyDict_GetItemWithError(outer, k1);
    return inner ? PyDict_GetItemWithError(inner, k2) : NULL;
}

int val_module_of(val_ctx *c, PyObject *node, PyObject **name) {
    /* Iterative over the Attribute chain `a.b.c`: collect it, then resolve from the Name. */
    PyObject *chain[64];
    int n = 0;
    while (Py_IS_TYPE(node, val_py.t_attribute)) {
        if (n == 64) return 0; /* longer chains are not module paths anyone writes */
        PyObject *d = val_node_dict(node);
        if (!d) return -1;
        chain[n++] = val_field(d, val_py.s_attr);
        node = val_field(d, val_py.s_value);
        if (!node || !chain[n - 1]) return PyErr_Occurred() ? -1 : 0;
    }
    if (!Py_IS_TYPE(node, val_py.t_name)) return 0;
    PyObject *d = val_node_dict(node);
    PyObject *id = d ? val_field(d, val_py.s_id) : NULL;
    PyObject *m = id ? PyDict_GetItemWithError(c->bindings, id) : NULL;
    while (m && n > 0) m = lookup2(c->policy->subs, m, chain[--n]);
    if (!m) return PyErr_Occurred() ? -1 : 0;
    *name = m;
    return 1;
}

static int is_dunder(const char *s, Py_ssize_t len) {
    return len > 4 && s[0] == '_' && s[1] == '_' && s[len - 1] == '_' && s[len - 2] == '_';
}

int val_check_mod_attr(val_ctx *c, PyObject *mod, PyObject *attr, PyObject *pos) {
    const val_policy *p = c->policy;
    Py_ssize_t len, mlen;
    const char *s = val_str(attr, &len), *m = val_str(mod, &mlen);
    if (!s || !m) return -1;
    if (is_dunder(s, len)) return 0; /* the dunder-attr rule judges these wherever they are */
    if (s[0] == '_') {
        val_add_at(c, "module-private", pos,
                   "%s.%s is a private attribute of a module and is not allowed", m, s);
        return 0;
    }
    PyObject *only = PyDict_GetItemWithError(p->restricted, mod);
    if (!only && PyErr_Occurred()) return -1;
    int in = only ? PySet_Contains(only, attr) : 1;
    if (in < 0) return -1;
    if (!in) {
        val_add_at(c, "module-attr-denied", pos,
                   "%s.%s is not among the attributes policy %s allows on module %s", m, s,
                   p->name, m);
        return 0;
    }
    PyObject *deny = PyDict_GetItemWithError(p->denied_attrs, mod);
    if (!deny && PyErr_Occurred()) return -1;
    if (deny && PySet_Contains(deny, attr) == 1) {
        val_add_at(c, "module-attr-denied", pos, "%s.%s is denied by policy %s", m, s, p->name);
        return 0;
    }
    PyObject *esc = lookup2(p->escapes, mod, attr);
    if (esc) {
        const char *e = val_str(esc, &len);
        if (!e) return -1;
        val_add_at(c, "module-escape", pos,
                   "%s.%s is module '%s', which policy %s does not allow", m, s, e, p->name);
    }
    return PyErr_Occurred() ? -1 : 0;
}

int val_rules_module_finish(val_ctx *c) {
    for (size_t i = 0; i < c->mod_count; i++) {
        val_mod_use *u = &c->mod_uses[i];
        PyObject *m;
        int r = val_module_of(c, u->value, &m);
        if (r < 0 || (r > 0 && val_check_mod_attr(c, m, u->attr, u->pos) < 0)) return -1;
    }
    return 0;
}
