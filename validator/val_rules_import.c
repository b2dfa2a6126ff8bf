/* val_rules_import.c: rule `import-denied`, imports of modules that hand out process or memory
 * control outright.
 *
 * Why this shape: the policy is about the top-level package, so `import subprocess.foo` and
 * `from subprocess import run` are the same decision as `import subprocess`. Relative imports
 * (`from . import x`) name the job's own files and are not judged. `os` itself stays allowed for
 * this slice; its dangerous attributes are val_rules_call.c's `attr-denied`.
 * The list is the seed validator's (subprocess, shutil) plus the obvious escape hatches around
 * it: importlib (imports any module by string), ctypes (calls libc directly), pty (spawns
 * processes), and the private C modules _ctypes and _posixsubprocess that those wrap, which
 * would otherwise be the one-word way around the rule.
 */
#include "val_internal.h"

#include <string.h>

static const char *const denied[] = {
    "subprocess", "shutil", "importlib", "ctypes", "pty", "_ctypes", "_posixsubprocess",
};

/* The denied entry matching the top-level package of a dotted name, or NULL. */
static const char *denied_top(const char *name, Py_ssize_t len) {
    const char *dot = memchr(name, '.', (size_t)len);
    size_t top = dot ? (size_t)(dot - name) : (size_t)len;
    for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
        if (strlen(denied[i]) == top && memcmp(denied[i], name, top) == 0) return denied[i];
    return NULL;
}

static int visit_import(val_ctx *c, PyObject *dict) {
    PyObject *names = val_field(dict, val_py.s_names);
    if (!names || !PyList_Check(names)) return PyErr_Occurred() ? -1 : 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(names); i++) {
        PyObject *alias = PyList_GET_ITEM(names, i);
        PyObject *adict = val_node_dict(alias);
        if (!adict) return -1;
        PyObject *name = val_field(adict, val_py.s_name);
        if (!name) continue;
        Py_ssize_t len;
        const char *s = val_str(name, &len);
        if (!s) return -1;
        const char *hit = denied_top(s, len);
        /* The alias carries its own position, so `import os, subprocess` points at the name. */
        if (hit) val_add_at(c, "import-denied", adict, "import of module '%s' is not allowed", hit);
    }
    return 0;
}

static int visit_import_from(val_ctx *c, PyObject *dict) {
    PyObject *level = val_field(dict, val_py.s_level);
    if (level && PyLong_Check(level) && PyLong_AsLong(level) != 0) return 0; /* relative */
    PyObject *module = val_field(dict, val_py.s_module);
    if (!module || module == Py_None) return 0;
    Py_ssize_t len;
    const char *s = val_str(module, &len);
    if (!s) return -1;
    const char *hit = denied_top(s, len);
    if (hit) val_add_at(c, "import-denied", dict, "import of module '%s' is not allowed", hit);
    return 0;
}

int val_rules_import_visit(val_ctx *c, PyObject *node, PyObject *dict) {
    if (Py_IS_TYPE(node, val_py.t_import)) return visit_import(c, dict);
    if (Py_IS_TYPE(node, val_py.t_importfrom)) return visit_import_from(c, dict);
    return 0;
}
