/* val_policy.c: the operator's policy: loading it from JSON, the built-in profiles, and the
 * runtime guard source made from it.
 *
 * Why this shape:
 * - A policy is plain data checked here once (unknown keys and malformed names are errors, as
 *   in schemas/policy.schema.json), so the hot path never re-validates it and a typo in a policy
 *   file stops the worker at start-up instead of silently allowing something.
 * - Every name a policy holds is an identifier (or dotted identifiers), which is what lets the
 *   guard header below embed them in Python source without any quoting questions.
 * - The name lists that the static rules and the guard must agree on (harmless dunders,
 *   introspection attributes) live here once and are handed to both.
 */
#include "val_internal.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Dunder attributes any program may read or call: object protocol methods a class defines and
 * calls on itself or super(), and descriptive metadata. None of them leads to a module, a
 * frame, globals or the class graph (that is what the dunder-attr rule denies). Not
 * __getstate__: object.__getstate__(cls) is a copy of a class's __dict__, raw descriptors
 * (type(f).__dict__["__globals__"].__get__(f)), i.e. vars() (bypass 111). Not the descriptor
 * protocol's __get__ __set__ __delete__ __set_name__: called by hand, __get__ is getattr
 * without the rules, on any raw class-dict entry a library hands out (functools.cached_property
 * with a chosen attrname reads one, bypass 113); a class still defines and uses descriptors. */
const char *const val_harmless_dunders[] = {
    "__name__", "__qualname__", "__doc__", "__module__", "__file__", "__version__", "__all__",
    "__annotations__", "__slots__", "__match_args__", "__dataclass_fields__", "__members__",
    "__wrapped__", "__init__", "__new__", "__post_init__", "__del__", "__repr__", "__str__",
    "__format__", "__bytes__", "__hash__", "__bool__", "__len__", "__length_hint__",
    "__iter__", "__next__", "__reversed__", "__contains__", "__getitem__", "__setitem__",
    "__delitem__", "__missing__", "__enter__", "__exit__", "__aenter__", "__aexit__",
    "__aiter__", "__anext__", "__await__", "__call__", "__eq__", "__ne__", "__lt__", "__le__",
    "__gt__", "__ge__", "__add__", "__sub__", "__mul__", "__matmul__", "__truediv__",
    "__floordiv__", "__mod__", "__divmod__", "__pow__", "__lshift__", "__rshift__", "__and__",
    "__xor__", "__or__", "__radd__", "__rsub__", "__rmul__", "__rmatmul__", "__rtruediv__",
    "__rfloordiv__", "__rmod__", "__rdivmod__", "__rpow__", "__rlshift__", "__rrshift__",
    "__rand__", "__rxor__", "__ror__", "__iadd__", "__isub__", "__imul__", "__imatmul__",
    "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__", "__ilshift__", "__irshift__",
    "__iand__", "__ixor__", "__ior__", "__neg__", "__pos__", "__abs__", "__invert__",
    "__complex__", "__int__", "__float__", "__index__", "__round__", "__trunc__", "__floor__",
    "__ceil__", "__setattr__", "__delattr__", "__copy__", "__deepcopy__",
    "__sizeof__",
    "__setstate__", "__fspath__", "__debug__", "__cause__", "__context__",
    "__suppress_context__", "__notes__", NULL,
};

/* Attributes of frames, tracebacks, generators, coroutines, code objects and functions: each
 * one leads to globals, builtins or bytecode (bypasses 21-24, 32 in the reference list). */
const char *const val_introspection_names[] = {
    "f_back", "f_builtins", "f_code", "f_globals", "f_locals", "f_trace", "f_lasti",
    "tb_frame", "tb_next", "tb_lasti", "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame",
    "cr_code", "cr_await", "cr_origin", "ag_frame", "ag_code", "ag_await", "co_code",
    "co_consts", "co_names", "co_varnames", "co_filename", "co_name", "co_lines",
    "co_positions",
    /* Cython's functions spell the same internals without dunders (numpy's random module:
     * ISeedSequence.generate_state.func_globals, rtB 140), as Python 2 did. */
    "func_globals", "func_code", "func_closure", "func_defaults", "func_dict", "im_func",
    "im_self", "cell_contents", NULL,
};

static int is_ident(const char *s, int dotted) {
    if (!s || !*s || strlen(s) > 100 * 8) return 0;
    int start = 1;
    for (const char *p = s; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        if (dotted && ch == '.' && !start && p[1]) {
            start = 1;
            continue;
        }
        if (!(isalpha(ch) || ch == '_' || (!start && isdigit(ch)))) return 0;
        start = 0;
    }
    return !start;
}

/* Rule ids: lowercase words joined by '-', as in docs/validator.md. */
static int is_rule_id(const char *s) {
    if (!s || !*s || strlen(s) > 39) return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || *p == '-')) return 0;
    return 1;
}

static void free_strv(char **v, size_t n) {
    for (size_t i = 0; v && i < n; i++) free(v[i]);
    free(v);
}

void val_policy_free(val_policy *p) {
    if (!p || p == val_policy_default()) return;
    val_policy_release_py(p);
    free_strv(p->modules, p->nmodules);
    for (size_t i = 0; i < p->nattrs; i++) {
        free(p->attrs[i].module);
        free_strv(p->attrs[i].names, p->attrs[i].count);
    }
    free(p->attrs);
    for (size_t i = 0; i < p->ndeny; i++) {
        free(p->deny[i].module);
        free_strv(p->deny[i].names, p->deny[i].count);
    }
    free(p->deny);
    free_strv(p->disabled, p->ndisabled);
    free(p->guard_src);
    free(p);
}

static int fail(char *err, size_t errlen, const char *origin, const char *fmt, const char *what) {
    char msg[200];
    snprintf(msg, sizeof msg, fmt, what);
    snprintf(err, errlen, "codeq: validator: policy %s: %s", origin, msg);
    return -1;
}

/* A JSON array of names into a fresh vector; -1 with err set. */
static int strv(json_t *a, int dotted, char ***out, size_t *n, const char *origin,
                const char *key, char *err, size_t errlen) {
    if (!json_is_array(a) || json_array_size(a) > 512)
        return fail(err, errlen, origin, "%s must be an array of at most 512 names", key);
    *n = 0;
    *out = calloc(json_array_size(a) + 1, sizeof **out);
    if (!*out) return fail(err, errlen, origin, "%s: out of memory", key);
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        const char *s = json_string_value(v);
        if (dotted == 2 ? !is_rule_id(s) : !is_ident(s, dotted))
            return fail(err, errlen, origin, "%s holds an entry that is not a Python name", key);
        if (!((*out)[(*n)++] = strdup(s))) return fail(err, errlen, origin, "%s: out of memory", key);
    }
    return 0;
}

static int limit(json_t *limits, const char *key, long long max, size_t *out, const char *origin,
                 char *err, size_t errlen) {
    json_t *v = json_object_get(limits, key);
    if (!v) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > max)
        return fail(err, errlen, origin, "limits.%s must be a positive integer in range", key);
    *out = (size_t)json_integer_value(v);
    return 0;
}

static int parse_limits(val_policy *p, json_t *limits, const char *origin, char *err,
                        size_t errlen) {
    if (!limits) return 0;
    if (!json_is_object(limits)) return fail(err, errlen, origin, "%s must be an object", "limits");
    const char *key;
    json_t *v;
    json_object_foreach(limits, key, v) {
        if (strcmp(key, "max_source_bytes") && strcmp(key, "max_nodes") &&
            strcmp(key, "max_depth"))
            return fail(err, errlen, origin, "unknown key limits.%s", key);
    }
    size_t depth = (size_t)p->max_depth;
    if (limit(limits, "max_source_bytes", 16 << 20, &p->max_bytes, origin, err, errlen) < 0 ||
        limit(limits, "max_nodes", 10000000, &p->max_nodes, origin, err, errlen) < 0 ||
        limit(limits, "max_depth", 100000, &depth, origin, err, errlen) < 0)
        return -1;
    p->max_depth = (int)depth;
    return 0;
}

/* module_attributes or denied_attributes: module name -> list of attribute names. */
static int parse_attrs(val_modattrs **out, size_t *n, json_t *o, const char *what,
                       const char *origin, char *err, size_t errlen) {
    if (!o) return 0;
    if (!json_is_object(o) || json_object_size(o) > 512)
        return fail(err, errlen, origin, "%s must be an object", what);
    *out = calloc(json_object_size(o) + 1, sizeof **out);
    if (!*out) return fail(err, errlen, origin, "%s: out of memory", what);
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        if (!is_ident(key, 1))
            return fail(err, errlen, origin, "attribute list key '%s' is not a module name", key);
        val_modattrs *a = &(*out)[(*n)++];
        if (!(a->module = strdup(key)) ||
            strv(v, 0, &a->names, &a->count, origin, what, err, errlen) < 0)
            return -1;
    }
    return 0;
}

static const char *const known_keys[] = {
    "$schema", "name", "description", "modules", "module_attributes", "denied_attributes",
    "files", "input",
    "runtime_guard", "disabled_rules", "limits", NULL,
};

static int check_keys(json_t *root, const char *origin, char *err, size_t errlen) {
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        int known = 0;
        for (size_t i = 0; known_keys[i]; i++) known |= strcmp(key, known_keys[i]) == 0;
        if (!known) return fail(err, errlen, origin, "unknown key '%s'", key);
    }
    return 0;
}

static int parse_flags(val_policy *p, json_t *root, const char *origin, char *err,
                       size_t errlen) {
    json_t *files = json_object_get(root, "files");
    json_t *input = json_object_get(root, "input");
    json_t *guard = json_object_get(root, "runtime_guard");
    const char *f = files ? json_string_value(files) : "none";
    if (!f || (strcmp(f, "none") && strcmp(f, "workdir")))
        return fail(err, errlen, origin, "%s must be \"none\" or \"workdir\"", "files");
    if ((input && !json_is_boolean(input)) || (guard && !json_is_boolean(guard)))
        return fail(err, errlen, origin, "%s must be booleans", "input and runtime_guard");
    p->files_workdir = strcmp(f, "workdir") == 0;
    p->allow_input = input ? json_is_true(input) : 1;
    p->guard = guard ? json_is_true(guard) : 1;
    return 0;
}

static int build_guard(val_policy *p, char *err, size_t errlen);

static int parse_root(val_policy *p, json_t *root, const char *origin, char *err,
                      size_t errlen) {
    if (!json_is_object(root)) return fail(err, errlen, origin, "%s", "must be a JSON object");
    if (check_keys(root, origin, err, errlen) < 0) return -1;
    const char *name = json_string_value(json_object_get(root, "name"));
    if (!name || !*name || strlen(name) >= sizeof p->name)
        return fail(err, errlen, origin, "%s must be a short string", "name");
    snprintf(p->name, sizeof p->name, "%s", name);
    json_t *mods = json_object_get(root, "modules");
    if (!mods) return fail(err, errlen, origin, "%s is required", "modules");
    if (strv(mods, 0, &p->modules, &p->nmodules, origin, "modules", err, errlen) < 0) return -1;
    json_t *dis = json_object_get(root, "disabled_rules");
    if (dis && strv(dis, 2, &p->disabled, &p->ndisabled, origin, "disabled_rules", err,
                    errlen) < 0)
        return fail(err, errlen, origin, "%s must be an array of rule ids", "disabled_rules");
    for (size_t i = 0; i < p->ndisabled; i++) {
        if (strcmp(p->disabled[i], "syntax") == 0)
            return fail(err, errlen, origin, "%s cannot disable 'syntax'", "disabled_rules");
        /* A misspelt id would disable nothing, silently. */
        size_t k = 0;
        while (val_rule_ids[k] && strcmp(val_rule_ids[k], p->disabled[i]) != 0) k++;
        if (!val_rule_ids[k])
            return fail(err, errlen, origin, "disabled_rules: '%s' is not a rule id (see "
                        "docs/validator.md)", p->disabled[i]);
    }
    if (parse_attrs(&p->attrs, &p->nattrs, json_object_get(root, "module_attributes"),
                    "module_attributes", origin, err, errlen) < 0 ||
        parse_attrs(&p->deny, &p->ndeny, json_object_get(root, "denied_attributes"),
                    "denied_attributes", origin, err, errlen) < 0 ||
        parse_flags(p, root, origin, err, errlen) < 0 ||
        parse_limits(p, json_object_get(root, "limits"), origin, err, errlen) < 0)
        return -1;
    return p->guard ? build_guard(p, err, errlen) : 0;
}

val_policy *val_policy_parse(const char *json, size_t len, const char *origin, char *err,
                             size_t errlen) {
    json_error_t je;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(err, errlen, "codeq: validator: policy %s: line %d: %s", origin, je.line,
                 je.text);
        return NULL;
    }
    val_policy *p = calloc(1, sizeof *p);
    if (!p) {
        json_decref(root);
        snprintf(err, errlen, "codeq: validator: policy %s: out of memory", origin);
        return NULL;
    }
    static unsigned long long serials;
    p->serial = ++serials;
    p->max_bytes = VAL_MAX_BYTES;
    p->max_nodes = VAL_MAX_NODES;
    p->max_depth = VAL_MAX_DEPTH;
    int rc = parse_root(p, root, origin, err, errlen);
    json_decref(root);
    if (rc < 0) {
        val_policy_free(p);
        return NULL;
    }
    return p;
}

val_policy *val_policy_load(const char *name_or_path, char *err, size_t errlen) {
    if (!name_or_path) name_or_path = "strict";
    const char *builtin = val_profile_json(name_or_path);
    if (builtin) return val_policy_parse(builtin, strlen(builtin), name_or_path, err, errlen);
    FILE *f = fopen(name_or_path, "rb");
    if (!f) {
        snprintf(err, errlen, "codeq: validator: policy %s: %s (built-in profiles: strict, data)",
                 name_or_path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, 1 << 20, f) : 0;
    int bad = !buf || ferror(f) || !feof(f);
    fclose(f);
    val_policy *p = NULL;
    if (bad)
        snprintf(err, errlen, "codeq: validator: policy %s: cannot read (or larger than 1 MiB)",
                 name_or_path);
    else
        p = val_policy_parse(buf, n, name_or_path, err, errlen);
    free(buf);
    return p;
}

const val_policy *val_policy_default(void) {
    static val_policy *def;
    static int tried;
    if (!tried) {
        char err[256];
        tried = 1;
        def = val_policy_load("strict", err, sizeof err);
        /* The profile is part of the binary; failing to parse it is a build defect. */
        if (!def) fprintf(stderr, "%s\n", err);
    }
    return def;
}

size_t val_policy_nmodules(const val_policy *p)
{
    return (p ? p : val_policy_default())->nmodules;
}

const char *val_policy_module(const val_policy *p, size_t i)
{
    p = p ? p : val_policy_default();
    return i < p->nmodules ? p->modules[i] : NULL;
}

const char *val_policy_name(const val_policy *p) { return p ? p->name : "strict"; }

int val_rule_disabled(const val_policy *p, const char *rule) {
    for (size_t i = 0; p && i < p->ndisabled; i++)
        if (strcmp(p->disabled[i], rule) == 0) return 1;
    return 0;
}

const char *val_policy_guard(const val_policy *p, size_t *len) {
    *len = p && p->guard_src ? p->guard_len : 0;
    return p ? p->guard_src : NULL;
}

/* ---- the guard: a Python literal of the policy, then val_guard_audit.py and val_guard.py -- */

static void py_list(FILE *f, const char *const *v, size_t n) {
    fputc('[', f);
    for (size_t i = 0; i < n && v[i]; i++) fprintf(f, "%s\"%s\"", i ? ", " : "", v[i]);
    fputc(']', f);
}

static size_t count(const char *const *v) {
    size_t n = 0;
    while (v[n]) n++;
    return n;
}

static int build_guard(val_policy *p, char *err, size_t errlen) {
    size_t glen, alen;
    const char *guard = val_guard_source(&glen);
    const char *audit = val_guard_audit_source(&alen);
    FILE *f = open_memstream(&p->guard_src, &p->guard_len);
    if (!f) return fail(err, errlen, p->name, "runtime guard: %s", strerror(errno));
    fprintf(f, "_CODEQ_POLICY = {\"name\": \"%s\", \"files\": \"%s\", \"input\": %s,\n",
            p->name, p->files_workdir ? "workdir" : "none", p->allow_input ? "True" : "False");
    fputs("    \"modules\": ", f);
    py_list(f, (const char *const *)p->modules, p->nmodules);
    fputs(",\n    \"module_attributes\": {", f);
    for (size_t i = 0; i < p->nattrs; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", p->attrs[i].module);
        py_list(f, (const char *const *)p->attrs[i].names, p->attrs[i].count);
    }
    fputs("},\n    \"denied_attributes\": {", f);
    for (size_t i = 0; i < p->ndeny; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", p->deny[i].module);
        py_list(f, (const char *const *)p->deny[i].names, p->deny[i].count);
    }
    fputs("},\n    \"harmless_dunders\": ", f);
    py_list(f, val_harmless_dunders, count(val_harmless_dunders));
    fputs(",\n    \"introspection\": ", f);
    py_list(f, val_introspection_names, count(val_introspection_names));
    fputs("}\n", f);
    fwrite(audit, 1, alen, f);
    fwrite(guard, 1, glen, f);
    if (fclose(f) != 0 || !p->guard_src) return fail(err, errlen, p->name, "%s", "runtime guard: out of memory");
    return 0;
}
