/* sbx_zygote_wall.c: the runtime guard's rules that need no Python, kept again in C.
 *
 * `_codeq_seal.arm(policy, job_file, cwd, read_roots, own_files, workdir, refused_events,
 * refused_prefixes)` copies the guard's job-bound state (val_guard_audit.py: bind() and the
 * refused events) into this file's memory and adds an audit hook written in C. From then on,
 * in this process:
 * - an event in refused_events, or starting with one of refused_prefixes, raises
 *   PermissionError;
 * - "open": descriptors 0-2 only; a path (exact str or bytes) resolved as os.path.realpath
 *   does must lie under cwd (when workdir) or, opened for reading, be one of own_files or lie
 *   under a read root;
 * - "os.listdir"/"os.scandir": a path under cwd or a read root;
 * - "compile" called from the job's own code (job_file or "<string>").
 * arm() works once per process; later calls raise RuntimeError.
 *
 * Why twice: the Python hook keeps its state in closure cells, which a leaked real getattr
 * reaches (`__closure__`, `cell_contents`, no audit event): bypass 168 widened its read roots
 * that way. State here is in C memory, out of reach of Python code; CPython runs C hooks
 * before Python ones and offers no way to remove either. Only rules whose inputs are the
 * event's own arguments live here; the rules that inspect frames, code and objects (exec,
 * pickle, attributes) stay in Python. The C side never allows what the Python side refuses:
 * where it cannot judge (a path that cannot be encoded or holds a NUL byte, which no system
 * call can open either) it leaves the event to the Python hook.
 * A zygote's job gets this wall; a plain interpreter (exec mode) has no such module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbx_zygote.h"

typedef struct {
    char **v;
    size_t n;
} sbx_strs;

static struct {
    bool armed;
    bool workdir;
    char *policy;
    char *job_file;
    char *cwd;
    sbx_strs roots, own, refused, prefixes;
} wall;

/* ---- paths: posixpath.realpath (non-strict), in C ---- */

/* Appends component `name` (len n) to the absolute path p (size PATH_MAX); false if too long. */
static bool sbx_wall_push(char *p, const char *name, size_t n)
{
    size_t len = strlen(p);
    size_t sep = len > 1 || p[0] != '/' ? 1 : 0;
    if (len + sep + n + 1 > PATH_MAX)
        return false;
    if (sep)
        p[len++] = '/';
    memcpy(p + len, name, n);
    p[len + n] = '\0';
    return true;
}

static void sbx_wall_pop(char *p)
{
    char *slash = strrchr(p, '/');
    if (slash == p)
        p[1] = '\0';
    else if (slash)
        *slash = '\0';
}

/* Resolves `rest` onto the absolute path p as posixpath._joinrealpath does: symbolic links
 * followed, a component that does not exist kept as it is, ".." taken lexically. *links
 * bounds the links followed in all (the kernel's 40); past it a link is left unresolved, as
 * Python leaves a loop. false: too long. */
static bool sbx_wall_join(char *p, const char *rest, int *links)
{
    if (rest[0] == '/')
        strcpy(p, "/");
    while (*rest) {
        const char *end = strchrnul(rest, '/');
        size_t n = (size_t)(end - rest);
        const char *name = rest;
        rest = *end ? end + 1 : end;
        if (n == 0 || (n == 1 && name[0] == '.'))
            continue;
        if (n == 2 && name[0] == '.' && name[1] == '.') {
            sbx_wall_pop(p);
            continue;
        }
        char before[PATH_MAX];
        strcpy(before, p);
        if (!sbx_wall_push(p, name, n))
            return false;
        struct stat st;
        if (lstat(p, &st) < 0 || !S_ISLNK(st.st_mode))
            continue;
        char target[PATH_MAX];
        ssize_t t = readlink(p, target, sizeof target - 1);
        if (t < 0 || *links <= 0)
            continue;
        target[t] = '\0';
        --*links;
        strcpy(p, before);
        if (!sbx_wall_join(p, target, links))
            return false;
    }
    return true;
}

/* The real path of `path` (relative to the working directory), or false. */
static bool sbx_wall_realpath(const char *path, char *out)
{
    if (path[0] == '/')
        strcpy(out, "/");
    else if (!getcwd(out, PATH_MAX))
        return false;
    int links = 40;
    return sbx_wall_join(out, path, &links);
}

static bool sbx_wall_under(const char *path, const char *root)
{
    size_t n = strlen(root);
    return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static bool sbx_wall_in(const sbx_strs *s, const char *x)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i], x) == 0)
            return true;
    return false;
}

static bool sbx_wall_under_any(const sbx_strs *roots, const char *path)
{
    for (size_t i = 0; i < roots->n; i++)
        if (sbx_wall_under(path, roots->v[i]))
            return true;
    return false;
}

/* The path of an exact str or bytes, resolved into out: 1; 0 not a path the rules accept
 * (refused); -1 not one any system call could open (left to the Python hook). */
static int sbx_wall_path(PyObject *path, char *out)
{
    PyObject *b;
    if (PyUnicode_CheckExact(path)) {
        b = PyUnicode_EncodeFSDefault(path);
        if (!b) {
            PyErr_Clear();
            return -1;
        }
    } else if (PyBytes_CheckExact(path)) {
        b = Py_NewRef(path);
    } else {
        return 0;
    }
    const char *s = PyBytes_AS_STRING(b);
    int rc = strlen(s) != (size_t)PyBytes_GET_SIZE(b) ? -1 : sbx_wall_realpath(s, out) ? 1 : 0;
    Py_DECREF(b);
    return rc;
}

/* ---- the rules ---- */

static int sbx_wall_refuse(const char *what)
{
    PyErr_Format(PyExc_PermissionError, "codeq guard: %s is not allowed by policy %s", what,
                 wall.policy);
    return -1;
}

/* Names an object of another type by its type's name only: its repr would be the job's code. */
static void sbx_wall_refuse_type(PyObject *path)
{
    PyObject *name = PyType_GetName(Py_TYPE(path));
    if (name) {
        PyErr_Format(PyExc_PermissionError, "codeq guard: opening %U is not allowed by policy %s",
                     name, wall.policy);
        Py_DECREF(name);
    }
}

static bool sbx_wall_writes(PyObject *mode, PyObject *flags)
{
    if (PyLong_Check(flags)) {
        long f = PyLong_AsLong(flags);
        if (f == -1 && PyErr_Occurred())
            PyErr_Clear();
        else if (f & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND))
            return true;
    }
    if (!PyUnicode_Check(mode))
        return true;
    const char *m = PyUnicode_AsUTF8(mode);
    if (!m) {
        PyErr_Clear();
        return true;
    }
    return strpbrk(m, "wax+") != NULL;
}

static int sbx_wall_open(PyObject *args)
{
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 3)
        return 0;
    PyObject *path = PyTuple_GET_ITEM(args, 0);
    if (PyLong_CheckExact(path)) {
        long fd = PyLong_AsLong(path);
        if (fd == -1 && PyErr_Occurred())
            PyErr_Clear();
        return fd >= 0 && fd <= 2 ? 0 : -2;
    }
    char real[PATH_MAX];
    int p = sbx_wall_path(path, real);
    if (p < 0)
        return 0;
    if (p == 0)
        return -2;
    if (wall.workdir && sbx_wall_under(real, wall.cwd))
        return 0;
    if (sbx_wall_writes(PyTuple_GET_ITEM(args, 1), PyTuple_GET_ITEM(args, 2)))
        return -2;
    return sbx_wall_in(&wall.own, real) || sbx_wall_under_any(&wall.roots, real) ? 0 : -2;
}

static bool sbx_wall_listing(PyObject *args)
{
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 1)
        return false;
    char real[PATH_MAX];
    int p = sbx_wall_path(PyTuple_GET_ITEM(args, 0), real);
    if (p < 0)
        return true;
    return p > 0 && (sbx_wall_under(real, wall.cwd) || sbx_wall_under_any(&wall.roots, real));
}

/* compile() called from the job's own code: its real compile, reached by a leak. */
static bool sbx_wall_job_compiles(void)
{
    PyFrameObject *f = PyEval_GetFrame();
    if (!f)
        return false;
    PyCodeObject *code = PyFrame_GetCode(f);
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    bool job = file && (strcmp(file, wall.job_file) == 0 || strcmp(file, "<string>") == 0);
    if (!file)
        PyErr_Clear();
    Py_DECREF(code);
    return job;
}

static bool sbx_wall_refused(const char *event)
{
    if (sbx_wall_in(&wall.refused, event))
        return true;
    for (size_t i = 0; i < wall.prefixes.n; i++)
        if (strncmp(event, wall.prefixes.v[i], strlen(wall.prefixes.v[i])) == 0)
            return true;
    return false;
}

static int sbx_wall_hook(const char *event, PyObject *args, void *data)
{
    (void)data;
    if (!wall.armed)
        return 0;
    if (sbx_wall_refused(event))
        return sbx_wall_refuse(event);
    if (strcmp(event, "open") == 0 && sbx_wall_open(args) < 0) {
        PyObject *path = PyTuple_GET_ITEM(args, 0);
        if (PyUnicode_CheckExact(path) || PyBytes_CheckExact(path) || PyLong_CheckExact(path))
            PyErr_Format(PyExc_PermissionError,
                         "codeq guard: opening %R is not allowed by policy %s", path,
                         wall.policy);
        else
            sbx_wall_refuse_type(path);
        return -1;
    }
    if ((strcmp(event, "os.listdir") == 0 || strcmp(event, "os.scandir") == 0) &&
        !sbx_wall_listing(args))
        return sbx_wall_refuse(event);
    if (strcmp(event, "compile") == 0 && sbx_wall_job_compiles()) {
        PyErr_Format(PyExc_PermissionError,
                     "codeq guard: compiling a string is not allowed by policy %s", wall.policy);
        return -1;
    }
    return 0;
}

/* ---- arm() ---- */

/* A copy of an exact str in the file system's encoding (as the events' paths are encoded), or
 * NULL with an exception. */
static char *sbx_wall_str(PyObject *o, const char *what)
{
    PyObject *b = PyUnicode_CheckExact(o) ? PyUnicode_EncodeFSDefault(o) : NULL;
    if (!b) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "arm: %s must be a str", what);
        return NULL;
    }
    char *c = strdup(PyBytes_AS_STRING(b));
    Py_DECREF(b);
    if (!c)
        PyErr_NoMemory();
    return c;
}

/* Every item of a tuple or frozenset of str, copied. */
static int sbx_wall_strs(PyObject *o, sbx_strs *out, const char *what)
{
    if (!PyTuple_CheckExact(o) && !PyFrozenSet_CheckExact(o)) {
        PyErr_Format(PyExc_TypeError, "arm: %s must be a tuple or frozenset of str", what);
        return -1;
    }
    Py_ssize_t n = PySequence_Size(o);
    PyObject *it = PyObject_GetIter(o);
    out->v = calloc((size_t)n + 1, sizeof *out->v);
    if (!it || !out->v) {
        Py_XDECREF(it);
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        return -1;
    }
    PyObject *item;
    while ((item = PyIter_Next(it))) {
        char *s = sbx_wall_str(item, what);
        Py_DECREF(item);
        if (!s)
            break;
        out->v[out->n++] = s;
    }
    Py_DECREF(it);
    return PyErr_Occurred() ? -1 : 0;
}

PyObject *sbx_zy_wall_arm(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    if (wall.armed || wall.policy) {
        PyErr_SetString(PyExc_RuntimeError, "arm: already done in this process");
        return NULL;
    }
    if (n != 8) {
        PyErr_SetString(PyExc_TypeError, "arm(policy, job_file, cwd, read_roots, own_files, "
                                         "workdir, refused_events, refused_prefixes)");
        return NULL;
    }
    if (!(wall.policy = sbx_wall_str(args[0], "policy")) ||
        !(wall.job_file = sbx_wall_str(args[1], "job_file")) ||
        !(wall.cwd = sbx_wall_str(args[2], "cwd")) ||
        sbx_wall_strs(args[3], &wall.roots, "read_roots") < 0 ||
        sbx_wall_strs(args[4], &wall.own, "own_files") < 0 ||
        sbx_wall_strs(args[6], &wall.refused, "refused_events") < 0 ||
        sbx_wall_strs(args[7], &wall.prefixes, "refused_prefixes") < 0)
        return NULL; /* wall.policy stays set: no second try with other state */
    wall.workdir = PyObject_IsTrue(args[5]) == 1;
    if (PySys_AddAuditHook(sbx_wall_hook, NULL) < 0)
        return NULL;
    wall.armed = true;
    Py_RETURN_NONE;
}
