/* val_rules_names.c: every place an attribute or builtin name can hide in the tree.
 *
 * Rules: `dunder-attr` (dunders outside the harmless set: __class__, __globals__, __subclasses__
 * ...), `dunder-name` (__builtins__, __loader__ ... as bare names), `introspection-attr`
 * (frame, traceback, generator, coroutine and code internals), `private-attr` (name-mangled
 * `_Class__x` from outside the class), `builtin-ref` (a dangerous builtin used as a value:
 * `f = exec`, `map(getattr, ...)`), `getattr-dynamic` / `getattr-private` (getattr, setattr,
 * delattr, hasattr, attrgetter, methodcaller with a computed or private name), `format-attr` /
 * `format-dynamic` (str.format fields that traverse attributes or indexes at run time).
 *
 * Why this shape:
 * - An attribute name is judged the same wherever it appears: `x.__class__`,
 *   `getattr(x, '__class__')`, `attrgetter('a.__class__')`; one function does it.
 * - Dunders are judged against an allowlist of harmless ones (val_policy.c), so a dunder CPython
 *   adds later is denied until someone decides it is harmless.
 * - `x.__class__.__name__` (and __qualname__, __module__) is the one common legitimate use of
 *   __class__: the parent Attribute is visited before the child, so it exempts its child.
 * - Decorators, lambda defaults, f-strings and format specs need nothing special: they are
 *   ordinary nodes and the walker visits every field of every node.
 */
#include "val_internal.h"

#include <stdlib.h>
#include <string.h>

static int eq(const char *s, Py_ssize_t len, const char *lit) {
    return (size_t)len == strlen(lit) && memcmp(s, lit, (size_t)len) == 0;
}

static int is_format_name(const char *s, Py_ssize_t len) {
    return eq(s, len, "format") || eq(s, len, "format_map") || eq(s, len, "vformat");
}

/* operator.attrgetter/methodcaller: getattr by string, judged only where they are called. */
static int is_getter_name(const char *s, Py_ssize_t len) {
    return eq(s, len, "attrgetter") || eq(s, len, "methodcaller");
}

static void getter_ref(val_ctx *c, PyObject *dict, const char *s) {
    val_add_at(c, "builtin-ref", dict, "%s used as a value is not allowed (it could be called "
               "indirectly with a computed name); call it with literal names", s);
}

static int is_dunder(const char *s, Py_ssize_t len) {
    return len > 4 && s[0] == '_' && s[1] == '_' && s[len - 1] == '_' && s[len - 2] == '_';
}

/* `_Printer__filenames`: how Python spells `__filenames` of class _Printer from outside it. */
static int is_mangled(const char *s, Py_ssize_t len) {
    if (len < 4 || s[0] != '_' || s[1] == '_') return 0;
    const char *u = memmem(s + 1, (size_t)len - 1, "__", 2);
    return u && u + 2 < s + len;
}

int val_exempt_add(val_ctx *c, PyObject *node) {
    if (c->exempt_count == c->exempt_cap) {
        size_t cap = c->exempt_cap ? c->exempt_cap * 2 : 16;
        PyObject **v = realloc(c->exempt, cap * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return -1;
        }
        c->exempt = v;
        c->exempt_cap = cap;
    }
    c->exempt[c->exempt_count++] = node;
    return 0;
}

int val_exempt(val_ctx *c, PyObject *node) {
    /* Newest first: the child of the node just visited is almost always the last entry. An
     * entry is taken when its node comes, so the list holds only pending ones (a callee is
     * the next node popped; decorators wait for their function's body) and stays short. */
    for (size_t i = c->exempt_count; i > 0; i--)
        if (c->exempt[i - 1] == node) {
            c->exempt[i - 1] = c->exempt[--c->exempt_count];
            return 1;
        }
    return 0;
}

void val_check_attr_name(val_ctx *c, PyObject *attr, const char *s, Py_ssize_t len,
                         PyObject *pos, const char *how) {
    const char *pre = how ? how : "attribute ";
    if (is_dunder(s, len)) {
        if (PySet_Contains(val_py.harmless_dunders, attr) == 0)
            val_add_at(c, "dunder-attr", pos,
                       "%s%s is not allowed: it reaches interpreter internals", pre, s);
    } else if (PySet_Contains(val_py.introspection, attr) == 1) {
        val_add_at(c, "introspection-attr", pos,
                   "%s%s is not allowed: frame, code and generator internals lead out of the "
                   "program", pre, s);
    } else if (is_mangled(s, len)) {
        val_add_at(c, "private-attr", pos,
                   "%s%s is another class's name-mangled private attribute", pre, s);
    }
    PyErr_Clear(); /* set membership of an interned str cannot fail; never leave a stale error */
}

static PyObject *name_id(PyObject *node) {
    if (!Py_IS_TYPE(node, val_py.t_name)) return NULL;
    PyObject *d = val_node_dict(node);
    return d ? val_field(d, val_py.s_id) : NULL;
}

static PyObject *str_const(PyObject *node) {
    if (!Py_IS_TYPE(node, val_py.t_constant)) return NULL;
    PyObject *d = val_node_dict(node);
    PyObject *v = d ? val_field(d, val_py.s_value) : NULL;
    return v && PyUnicode_CheckExact(v) ? v : NULL;
}

static int visit_name(val_ctx *c, PyObject *node, PyObject *dict) {
    if (val_exempt(c, node)) return 0;
    PyObject *id = val_field(dict, val_py.s_id);
    if (!id) return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t len;
    const char *s = val_str(id, &len);
    if (!s) return -1;
    if (is_dunder(s, len)) {
        if (PySet_Contains(val_py.harmless_dunders, id) == 0 &&
            PySet_Contains(c->policy->denied_builtins, id) == 0)
            val_add_at(c, "dunder-name", dict, "name %s is not allowed: it reaches interpreter "
                                               "internals", s);
    }
    PyObject *ctx = val_field(dict, val_py.s_ctx);
    if (!ctx || !Py_IS_TYPE(ctx, val_py.t_load)) return 0;
    if (is_getter_name(s, len)) getter_ref(c, dict, s);
    if (PySet_Contains(c->policy->denied_builtins, id) == 1 ||
        PySet_Contains(val_py.getattr_family, id) == 1)
        val_add_at(c, "builtin-ref", dict,
                   "%s used as a value is not allowed (it could be called indirectly)", s);
    PyErr_Clear();
    return 0;
}

static int visit_attribute(val_ctx *c, PyObject *node, PyObject *dict) {
    PyObject *attr = val_field(dict, val_py.s_attr);
    PyObject *value = val_field(dict, val_py.s_value);
    if (!attr || !value) return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t len;
    const char *s = val_str(attr, &len);
    if (!s) return -1;
    if (eq(s, len, "__name__") || eq(s, len, "__qualname__") || eq(s, len, "__module__")) {
        PyObject *vd = Py_IS_TYPE(value, val_py.t_attribute) ? val_node_dict(value) : NULL;
        PyObject *va = vd ? val_field(vd, val_py.s_attr) : NULL;
        Py_ssize_t vlen;
        const char *vs = va ? val_str(va, &vlen) : NULL;
        if (vs && eq(vs, vlen, "__class__") && val_exempt_add(c, value) < 0) return -1;
    }
    if (!val_exempt(c, node)) {
        val_check_attr_name(c, attr, s, len, dict, NULL);
        /* A call `s.format(...)` exempts its callee (visit_format judged it); anything else is
         * the bound method escaping to be called later: `f = "{0.__class__}".format`. */
        if (is_format_name(s, len))
            val_add_at(c, "format-dynamic", dict,
                       ".%s used as a value is not allowed (its fields could traverse "
                       "attributes); call it on a literal or use an f-string", s);
        if (is_getter_name(s, len)) getter_ref(c, dict, s);
    }
    /* Only chains that start at a name can be a module the program imported; no one writes
     * a module path 64 attributes long (and val_module_of would not follow it). */
    PyObject *base = value;
    for (int n = 0; Py_IS_TYPE(base, val_py.t_attribute); n++) {
        PyObject *bd = val_node_dict(base);
        if (n == 64 || !bd || !(base = val_field(bd, val_py.s_value)))
            return PyErr_Occurred() ? -1 : 0;
    }
    return Py_IS_TYPE(base, val_py.t_name) ? val_mod_use_add(c, value, attr, dict) : 0;
}

/* A literal attribute name given to getattr and friends: the same checks as `x.name`, plus
 * single-underscore names, which getattr is the usual way to reach. */
static int literal_attr(val_ctx *c, PyObject *obj, PyObject *lit, PyObject *pos,
                        const char *fn) {
    Py_ssize_t len;
    const char *s = val_str(lit, &len);
    if (!s) return -1;
    char how[48];
    snprintf(how, sizeof how, "%s() of ", fn);
    val_check_attr_name(c, lit, s, len, pos, how);
    if (len > 0 && s[0] == '_' && !is_dunder(s, len))
        val_add_at(c, "getattr-private", pos, "%s() of private attribute %s is not allowed", fn,
                   s);
    return obj ? val_mod_use_add(c, obj, lit, pos) : 0;
}

static int has_starred(PyObject *args, Py_ssize_t upto) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args) && i < upto; i++)
        if (Py_IS_TYPE(PyList_GET_ITEM(args, i), val_py.t_starred)) return 1;
    return 0;
}

/* getattr(obj, 'name'[, default]), setattr, delattr, hasattr. */
static int visit_getattr(val_ctx *c, PyObject *func, PyObject *dict, PyObject *args,
                         const char *fn) {
    if (val_exempt_add(c, func) < 0) return -1; /* judged here, not as a builtin-ref */
    PyObject *lit = PyList_GET_SIZE(args) >= 2 && !has_starred(args, 2)
                        ? str_const(PyList_GET_ITEM(args, 1)) : NULL;
    if (!lit) {
        if (PyErr_Occurred()) return -1;
        val_add_at(c, "getattr-dynamic", dict,
                   "%s() with a computed attribute name is not allowed; use the attribute "
                   "directly or a dict", fn);
        return 0;
    }
    return literal_attr(c, PyList_GET_ITEM(args, 0), lit,
                        val_node_dict(PyList_GET_ITEM(args, 1)), fn);
}

/* operator.attrgetter('a.b', ...), operator.methodcaller('name', ...). */
static int visit_getter(val_ctx *c, PyObject *dict, PyObject *args, int dotted, const char *fn) {
    Py_ssize_t n = dotted ? PyList_GET_SIZE(args) : (PyList_GET_SIZE(args) > 0);
    if (n == 0 || has_starred(args, n)) {
        val_add_at(c, "getattr-dynamic", dict, "%s() without literal names is not allowed", fn);
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arg = PyList_GET_ITEM(args, i);
        PyObject *lit = str_const(arg);
        if (!lit) {
            if (PyErr_Occurred()) return -1;
            val_add_at(c, "getattr-dynamic", dict,
                       "%s() with a computed attribute name is not allowed", fn);
            continue;
        }
        PyObject *pos = val_node_dict(arg);
        if (!dotted) {
            Py_ssize_t len;
            const char *s = val_str(lit, &len);
            if (!s) return -1;
            if (is_format_name(s, len))
                val_add_at(c, "format-dynamic", pos, "%s('%s') is not allowed (the string it "
                           "is applied to could traverse attributes)", fn, s);
            return literal_attr(c, NULL, lit, pos, fn);
        }
        PyObject *parts = PyUnicode_Split(lit, val_py.s_dot, -1);
        if (!parts) return -1;
        for (Py_ssize_t j = 0; j < PyList_GET_SIZE(parts); j++)
            if (literal_attr(c, NULL, PyList_GET_ITEM(parts, j), pos, fn) < 0) {
                Py_DECREF(parts);
                return -1;
            }
        Py_DECREF(parts);
    }
    return 0;
}

/* A replacement field whose name goes on with '.' makes format() read attributes at run time:
 * "{0.__class__.__init__.__globals__}". An index ("{0[0]}", "{0[key]}") is an item lookup
 * with a literal key, which cannot reach an attribute, so it is allowed (a '.' inside the
 * brackets is part of the key). Nested fields in a format spec ("{0:{1.x}}") are found the same
 * way, as every '{' starts a field. */
static int format_traverses(const char *s, Py_ssize_t len) {
    for (Py_ssize_t i = 0; i < len; i++) {
        if (s[i] != '{') continue;
        if (i + 1 < len && s[i + 1] == '{') {
            i++;
            continue;
        }
        int in_index = 0;
        for (Py_ssize_t j = i + 1; j < len; j++) {
            char ch = s[j];
            if (in_index) {
                in_index = ch != ']';
                continue;
            }
            if (ch == '.') return 1;
            if (ch == '[') in_index = 1;
            if (ch == '}' || ch == '!' || ch == ':' || ch == '{') break;
        }
    }
    return 0;
}

static int visit_format(val_ctx *c, PyObject *dict, PyObject *receiver, const char *fn) {
    PyObject *lit = str_const(receiver);
    if (!lit) {
        if (PyErr_Occurred()) return -1;
        val_add_at(c, "format-dynamic", dict,
                   ".%s() on a string that is not a literal is not allowed (its fields could "
                   "traverse attributes); use an f-string", fn);
        return 0;
    }
    Py_ssize_t len;
    const char *s = val_str(lit, &len);
    if (!s) return -1;
    if (format_traverses(s, len))
        val_add_at(c, "format-attr", dict,
                   ".%s() with a field that reads attributes ('{0.x}') is not allowed; use an "
                   "f-string", fn);
    return 0;
}

static int visit_call(val_ctx *c, PyObject *dict) {
    PyObject *func = val_field(dict, val_py.s_func);
    PyObject *args = val_field(dict, val_py.s_args);
    if (!func || !args || !PyList_Check(args)) return PyErr_Occurred() ? -1 : 0;
    PyObject *id = name_id(func), *attr = NULL, *fd = NULL;
    if (!id && Py_IS_TYPE(func, val_py.t_attribute) && (fd = val_node_dict(func)))
        attr = val_field(fd, val_py.s_attr);
    PyObject *callee = id ? id : attr;
    if (!callee) return PyErr_Occurred() ? -1 : 0;
    Py_ssize_t len;
    const char *s = val_str(callee, &len);
    if (!s) return -1;
    if (id && PySet_Contains(val_py.getattr_family, id) == 1)
        return visit_getattr(c, func, dict, args, s);
    if (is_getter_name(s, len)) {
        if (val_exempt_add(c, func) < 0) return -1; /* judged here, not as a getter-ref */
        return visit_getter(c, dict, args, eq(s, len, "attrgetter"), s);
    }
    if (attr && is_format_name(s, len)) {
        if (val_exempt_add(c, func) < 0) return -1;
        return visit_format(c, dict, val_field(fd, val_py.s_value), s);
    }
    return 0;
}

/* `case C(attr=pattern)` reads C-instance.attr: the keyword names are attribute names.
 * `case C(p)` reads the attributes C.__match_args__ names at run time, and C (its metaclass's
 * __instancecheck__, __match_args__ set after the class statement, a dataclass's fields) is
 * the program's to choose: the names cannot be judged here, so positional sub-patterns are
 * refused; `case C(x=p)` says the same thing with names the rule above checks. */
static int visit_match_class(val_ctx *c, PyObject *dict) {
    PyObject *positional = val_field(dict, val_py.s_patterns);
    if (positional && PyList_Check(positional) && PyList_GET_SIZE(positional) > 0)
        val_add_at(c, "match-positional", val_node_dict(PyList_GET_ITEM(positional, 0)),
                   "positional sub-patterns in a class pattern read attributes named at run "
                   "time by __match_args__; use keyword sub-patterns (case C(x=p))");
    else if (!positional && PyErr_Occurred())
        return -1;
    PyObject *attrs = val_field(dict, val_py.s_kwd_attrs);
    PyObject *pats = val_field(dict, val_py.s_kwd_patterns);
    if (!attrs || !PyList_Check(attrs)) return PyErr_Occurred() ? -1 : 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(attrs); i++) {
        PyObject *a = PyList_GET_ITEM(attrs, i);
        Py_ssize_t len;
        const char *s = val_str(a, &len);
        if (!s) return -1;
        PyObject *pos = pats && PyList_Check(pats) && i < PyList_GET_SIZE(pats)
                            ? val_node_dict(PyList_GET_ITEM(pats, i)) : dict;
        val_check_attr_name(c, a, s, len, pos, "class pattern attribute ");
    }
    return 0;
}

int val_rules_names_visit(val_ctx *c, PyObject *node, PyObject *dict) {
    PyTypeObject *t = Py_TYPE(node);
    if (t == val_py.t_matchclass) return visit_match_class(c, dict);
    if (t == val_py.t_name) return visit_name(c, node, dict);
    if (t == val_py.t_attribute) return visit_attribute(c, node, dict);
    if (t == val_py.t_call) return visit_call(c, dict);
    return 0;
}
