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
 * pickle, attributes) stay in Python. The C side never refuses what the Python side allows:
 * where it cannot judge (a path that cannot be encoded, holds a NUL byte, is PATH_MAX long or
 * crosses more than 80 links, which no system call opens either) it leaves the event to the
 * Python hook.
 * Both isolation modes get this wall: a zygote has the module built in, an exec'd interpreter
 * loads it as _codeq_seal.so (sbx_zygote_seal.c, sbx_seal.c).
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

/* The walk's buffers are static, not on the stack: a job's thread may have a 32 KiB stack
 * (threading.stack_size), and a walk holds two paths. Audit hooks run under the GIL, so one
 * walk at a time. Their size is what a walk can need: a path shorter than PATH_MAX (the
 * kernel's own bound for an argument; longer ones are left to its ENAMETOOLONG), and each of
 * SBX_WALL_LINKS links adding a target shorter than PATH_MAX; untouched, they cost no memory. */
enum { SBX_WALL_LINKS = 80, SBX_WALL_MAX = (SBX_WALL_LINKS + 2) * PATH_MAX };
static char wall_path[SBX_WALL_MAX], wall_rest[2][SBX_WALL_MAX];

typedef struct {
    char *p;    /* the absolute path resolved so far */
    size_t len; /* its length */
} sbx_wall_at;

/* Appends component `name` (n bytes); false if too long. */
static bool sbx_wall_push(sbx_wall_at *at, const char *name, size_t n)
{
    size_t sep = at->len > 1 ? 1 : 0;
    if (at->len + sep + n + 1 > SBX_WALL_MAX)
        return false;
    if (sep)
        at->p[at->len++] = '/';
    memcpy(at->p + at->len, name, n);
    at->len += n;
    at->p[at->len] = '\0';
    return true;
}

static void sbx_wall_pop(sbx_wall_at *at)
{
    while (at->len > 1 && at->p[at->len - 1] != '/')
        at->len--;
    if (at->len > 1)
        at->len--;
    at->p[at->len] = '\0';
}

/* Walks `path` from the absolute path in at as posixpath._joinrealpath does: symbolic links
 * followed (their targets walked in place of their names), a component that does not exist
 * kept as it is, ".." taken lexically. 1 done; 0 too long (cannot happen with the buffers'
 * size, refused all the same); -1 more than SBX_WALL_LINKS links. Python caches the links it
 * has resolved and stops at a loop; the kernel follows every link it meets, as this walk does,
 * and refuses a path past 40 (ELOOP): a path past twice that is one no system call opens. */
static int sbx_wall_walk(sbx_wall_at *at, const char *path)
{
    int links = SBX_WALL_LINKS, cur = 0;
    size_t n = strlen(path), pos = 0;
    if (n + 1 > SBX_WALL_MAX)
        return 0;
    memcpy(wall_rest[cur], path, n + 1);
    char *rest = wall_rest[cur];
    if (rest[0] == '/')
        at->len = 1, at->p[1] = '\0';
    while (rest[pos]) {
        const char *name = rest + pos;
        size_t len = strchrnul(name, '/') - name;
        pos += len + (name[len] == '/');
        if (len == 0 || (len == 1 && name[0] == '.'))
            continue;
        if (len == 2 && name[0] == '.' && name[1] == '.') {
            sbx_wall_pop(at);
            continue;
        }
        size_t before = at->len;
        if (!sbx_wall_push(at, name, len))
            return 0;
        struct stat st;
        char target[PATH_MAX];
        ssize_t t;
        if (lstat(at->p, &st) < 0 || !S_ISLNK(st.st_mode) ||
            (t = readlink(at->p, target, sizeof target - 1)) <= 0)
            continue;
        if (links-- <= 0)
            return -1;
        at->len = before;
        at->p[before] = '\0';
        /* The rest becomes the link's target, then what was left after its name. */
        size_t left = strlen(rest + pos);
        if ((size_t)t + 1 + left + 1 > SBX_WALL_MAX)
            return 0;
        char *next = wall_rest[1 - cur];
        memcpy(next, target, (size_t)t);
        next[t] = '/';
        memcpy(next + t + 1, rest + pos, left + 1);
        if (target[0] == '/')
            at->len = 1, at->p[1] = '\0';
        cur = 1 - cur;
        rest = next;
        pos = 0;
    }
    return 1;
}

/* The real path of `path` (relative to the working directory) into wall_path: as
 * sbx_wall_walk, and 0 without a working directory. */
static int sbx_wall_realpath(const char *path)
{
    sbx_wall_at at = {wall_path, 1};
    strcpy(wall_path, "/");
    if (path[0] != '/') {
        if (!getcwd(wall_path, PATH_MAX))
            return 0;
        at.len = strlen(wall_path);
    }
    return sbx_wall_walk(&at, path);
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

/* The path of an exact str or bytes, resolved into wall_path: 1; 0 not a path the rules accept
 * (refused); -1 not one any system call could open (a NUL byte, no encoding, PATH_MAX or
 * longer: the kernel's ENAMETOOLONG; too many links: its ELOOP), left to the Python hook and
 * the system call. */
static int sbx_wall_path(PyObject *path)
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
    size_t n = (size_t)PyBytes_GET_SIZE(b);
    int rc = strlen(s) != n || n >= PATH_MAX ? -1 : sbx_wall_realpath(s);
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

/* As the Python hook's shown(): an exact str, bytes or int by its repr; anything else by its
 * type's name only, since its repr would be the job's code. */
static int sbx_wall_refuse_open(PyObject *path)
{
    PyObject *shown = PyUnicode_CheckExact(path) || PyBytes_CheckExact(path) ||
                              PyLong_CheckExact(path)
                          ? PyObject_Repr(path)
                          : PyType_GetName(Py_TYPE(path));
    if (shown) {
        PyErr_Format(PyExc_PermissionError, "codeq guard: opening %U is not allowed by policy %s",
                     shown, wall.policy);
        Py_DECREF(shown);
    }
    return -1;
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
    int p = sbx_wall_path(path);
    if (p < 0)
        return 0;
    if (p == 0)
        return -2;
    if (wall.workdir && sbx_wall_under(wall_path, wall.cwd))
        return 0;
    if (sbx_wall_writes(PyTuple_GET_ITEM(args, 1), PyTuple_GET_ITEM(args, 2)))
        return -2;
    return sbx_wall_in(&wall.own, wall_path) || sbx_wall_under_any(&wall.roots, wall_path) ? 0
                                                                                          : -2;
}

static bool sbx_wall_listing(PyObject *args)
{
    if (!PyTuple_Check(args) || PyTuple_GET_SIZE(args) < 1)
        return false;
    int p = sbx_wall_path(PyTuple_GET_ITEM(args, 0));
    if (p < 0)
        return true;
    return p > 0 &&
           (sbx_wall_under(wall_path, wall.cwd) || sbx_wall_under_any(&wall.roots, wall_path));
}

/* compile() called from the job's own code: its real compile, reached by a leak. Fails
 * closed: a frame or file name that cannot be read counts as the job's. */
static bool sbx_wall_job_compiles(void)
{
    PyFrameObject *f = PyEval_GetFrame();
    if (!f) {
        bool failed = PyErr_Occurred() != NULL; /* no frame: called from C, not from code */
        PyErr_Clear();
        return failed;
    }
    PyCodeObject *code = PyFrame_GetCode(f);
    const char *file = PyUnicode_AsUTF8(code->co_filename);
    bool job = !file || strcmp(file, wall.job_file) == 0 || strcmp(file, "<string>") == 0;
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

static const char sbx_wall_check[] = "codeq.wall.armed";
static bool wall_seen;

static int sbx_wall_hook(const char *event, PyObject *args, void *data)
{
    (void)data;
    if (!wall.armed)
        return 0;
    if (strcmp(event, sbx_wall_check) == 0) {
        wall_seen = true;
        return 0;
    }
    if (sbx_wall_refused(event))
        return sbx_wall_refuse(event);
    if (strcmp(event, "open") == 0 && sbx_wall_open(args) < 0)
        return sbx_wall_refuse_open(PyTuple_GET_ITEM(args, 0));
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
    Py_ssize_t n = PyObject_Size(o);
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
    if (wall.policy) { /* set first: also after an arm() that failed half-way */
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
    int workdir = PyObject_IsTrue(args[5]);
    if (workdir < 0)
        return NULL;
    wall.workdir = workdir;
    wall.armed = true;
    /* An existing hook may refuse the new one, and PySys_AddAuditHook then returns 0 all the
     * same: the hook is known added once it has seen an event of ours. */
    if (PySys_AddAuditHook(sbx_wall_hook, NULL) < 0 || PySys_Audit(sbx_wall_check, NULL) < 0)
        return NULL;
    if (!wall_seen) {
        PyErr_SetString(PyExc_RuntimeError, "arm: the audit hook was not added");
        return NULL;
    }
    Py_RETURN_NONE;
}
