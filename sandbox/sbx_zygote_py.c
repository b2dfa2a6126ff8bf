/* sbx_zygote_py.c: the zygote's interpreter — initialized once, run once in each job's main.
 *
 * Initialized like `python3 -I -B` (isolated: no environment variables, no user site, no
 * script directory on sys.path; no .pyc writes) with the zygote's environment, which is the
 * one exec mode gives the job, so os.environ, sys.path, sys.flags and the stdio encodings
 * match. Preloaded modules are imported with PyImport_ImportModule so nothing is left in
 * __main__. Fork hygiene: PyOS_BeforeFork/AfterFork_Parent around the zygote's fork of a
 * supervisor (the zygote has one thread); the supervisor (and exec mode's init) runs no Python;
 * PyOS_AfterFork_Child in the job's main process, which also runs every
 * os.register_at_fork child hook (random reseeds itself there from os.urandom).
 * The job's main process reads its script while it can still report a failure, then closes
 * every descriptor but 0-2: the report pipe, the control socket and the staging directory it
 * holds (an exec'd interpreter loses those through CLOEXEC;
 * this one never execs). A job that brings its code object (sbx_job.code_obj, compiled by the
 * worker's validator from the parse it checked) runs that instead of a compile of its source
 * (the prelude gets it as `_CODEQ_MAIN_CODE`); a wrong magic or file name falls back to the
 * source. Otherwise the script is compiled under its /work path and run in __main__;
 * an uncaught exception prints the usual traceback and exits 1, SystemExit keeps its code,
 * and the exit waits for threads, runs atexit and flushes as a normal exit would.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <marshal.h>

#include "sbx_int.h"
#include "sbx_zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const sbx_inproc_hooks *sbx_inproc;

static void sbx_zy_py_error(char *why, size_t whylen, const char *what, PyStatus st)
{
    snprintf(why, whylen, SBX_PREFIX "zygote: %s: %s", what, st.err_msg ? st.err_msg : "failed");
}

/* Comma-separated module names; one written "?name" is imported only if it is installed. */
static int sbx_zy_py_preload(const char *preload, char *why, size_t whylen)
{
    char name[128];
    for (const char *s = preload; s && *s;) {
        size_t n = strcspn(s, ",");
        bool optional = n && *s == '?';
        if (n && n < sizeof name) {
            memcpy(name, s + optional, n - optional);
            name[n - optional] = '\0';
            PyObject *m = PyImport_ImportModule(name);
            if (!m && optional && PyErr_ExceptionMatches(PyExc_ImportError)) {
                PyErr_Clear();
            } else if (!m) {
                PyErr_Clear();
                snprintf(why, whylen, SBX_PREFIX "zygote: preload of module '%s' failed", name);
                return -1;
            }
            Py_XDECREF(m);
        }
        s += n + (s[n] == ',');
    }
    return 0;
}

/* The worker's prelude (sbx_config.zygote_prelude), compiled once and run once here with
 * _CODEQ_PREPARE set: a guard prelude then leaves _CODEQ_START, the function that runs one
 * job, and builds everything that does not depend on the job ahead (~1 ms a job would pay).
 * Each job's process is a fork: what the preparation built is that process's own copy, and
 * the zygote itself never runs a job, so nothing passes from one job to the next. A prelude
 * that leaves no _CODEQ_START is run whole in each job, as in exec mode. */
static char *sbx_zy_prelude_src;
static PyObject *sbx_zy_prelude_code;
static PyObject *sbx_zy_prelude_start;

static int sbx_zy_py_prepare(void)
{
    PyObject *main = PyImport_AddModule("__main__"); /* borrowed */
    PyObject *g = main ? PyModule_GetDict(main) : NULL;
    PyObject *file = PyUnicode_FromString("/work/" SBX_PRELUDE_NAME);
    int rc = g && file && PyDict_SetItemString(g, "__file__", file) == 0 &&
             PyDict_SetItemString(g, "_CODEQ_PREPARE", Py_True) == 0 ? 0 : -1;
    Py_XDECREF(file);
    PyObject *r = rc == 0 ? PyEval_EvalCode(sbx_zy_prelude_code, g, g) : NULL;
    Py_XDECREF(r);
    if (!r)
        return -1;
    sbx_zy_prelude_start = PyDict_GetItemString(g, "_CODEQ_START"); /* borrowed */
    Py_XINCREF(sbx_zy_prelude_start);
    if (sbx_zy_prelude_start && PyDict_DelItemString(g, "_CODEQ_START") < 0)
        return -1;
    if (PyDict_GetItemString(g, "_CODEQ_PREPARE") && PyDict_DelItemString(g, "_CODEQ_PREPARE") < 0)
        return -1;
    return 0;
}

static int sbx_zy_py_prelude(const char *src, char *why, size_t whylen)
{
    if (!src || !*src)
        return 0;
    sbx_zy_prelude_code = Py_CompileString(src, "/work/" SBX_PRELUDE_NAME, Py_file_input);
    sbx_zy_prelude_src = strdup(src);
    if (!sbx_zy_prelude_code || !sbx_zy_prelude_src) {
        PyErr_Clear();
        snprintf(why, whylen, SBX_PREFIX "zygote: the prelude does not compile");
        return -1;
    }
    if (sbx_zy_py_prepare() < 0) {
        PyErr_Print();
        snprintf(why, whylen, SBX_PREFIX "zygote: preparing the prelude failed (see stderr)");
        return -1;
    }
    return 0;
}

/* importlib.util.MAGIC_NUMBER of this interpreter: a code object marshalled by another
 * version would be misread, so one whose bytes start differently is refused. */
static unsigned char sbx_zy_magic[4];

static int sbx_zy_py_magic(char *why, size_t whylen)
{
    long m = PyImport_GetMagicNumber();
    if (m == -1) {
        PyErr_Clear();
        snprintf(why, whylen, SBX_PREFIX "zygote: importlib's magic number is unavailable");
        return -1;
    }
    for (size_t i = 0; i < sizeof sbx_zy_magic; i++)
        sbx_zy_magic[i] = (unsigned char)(m >> (8 * i));
    return 0;
}

/* The one rule for the file name a code object must carry (see sandbox.h). */
static const char *sbx_zy_py_code_name(bool prelude)
{
    return prelude ? "main.py" : "/work/main.py";
}

const char *sbx_code_obj_filename(const sbx_config *c, const sbx_job *job)
{
    if (!c || !c->isolation || strcmp(c->isolation, "zygote") != 0)
        return NULL;
    return sbx_zy_py_code_name(job && job->prelude);
}

/* The job's code object, or NULL (with no Python error) to compile its source as before: none
 * given, another interpreter's magic, not a code object, or another file name (a traceback
 * would name a different file than a run of the source does). Called in the job's main
 * process before any of the job's code runs; the bytes come from the worker. */
static PyObject *sbx_zy_py_code(const sbx_proc *p)
{
    const size_t ml = sizeof sbx_zy_magic;
    if (!p->code_obj || p->code_obj_len <= ml || memcmp(p->code_obj, sbx_zy_magic, ml) != 0)
        return NULL;
    PyObject *code = PyMarshal_ReadObjectFromString(p->code_obj + ml,
                                                    (Py_ssize_t)(p->code_obj_len - ml));
    PyObject *name = code && PyCode_Check(code) ? PyObject_GetAttrString(code, "co_filename") : NULL;
    const char *n = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    bool ok = n && strcmp(n, sbx_zy_py_code_name(p->prelude != NULL)) == 0;
    Py_XDECREF(name);
    if (!ok)
        Py_CLEAR(code);
    PyErr_Clear();
    return code;
}

/* gc.freeze(): what the zygote built moves to the collector's permanent generation. A job's
 * collections (and those of every process it forks) then never walk those objects, and so
 * never write to their pages: fewer copy-on-write copies charged to the job's memory limit
 * (measured: +0.55 MB per forked process of a job with numpy preloaded, before). */
static int sbx_zy_py_freeze(char *why, size_t whylen)
{
    PyObject *gc = PyImport_ImportModule("gc");
    PyObject *r = gc ? PyObject_CallMethod(gc, "freeze", NULL) : NULL;
    Py_XDECREF(gc);
    if (!r) {
        PyErr_Clear();
        snprintf(why, whylen, SBX_PREFIX "zygote: gc.freeze() failed");
        return -1;
    }
    Py_DECREF(r);
    return 0;
}

/* A preloaded module that starts a thread at import would make every fork below copy a
 * process whose other threads vanish mid-flight (locks held forever): refuse to serve. */
static int sbx_zy_py_single_threaded(char *why, size_t whylen)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    long threads = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %ld", &threads) == 1)
            break;
    if (f)
        fclose(f);
    if (threads == 1)
        return 0;
    snprintf(why, whylen, SBX_PREFIX "zygote: %ld threads after the preload, must be 1 (a "
             "preloaded module started a thread?)", threads);
    return -1;
}

int sbx_zy_py_init(const char *python, const char *preload, const char *prelude, char *why,
                   size_t whylen)
{
    PyPreConfig pre;
    PyPreConfig_InitPythonConfig(&pre);
    pre.isolated = 1;
    pre.use_environment = 0;
    PyStatus st = Py_PreInitialize(&pre);
    if (PyStatus_Exception(st)) {
        sbx_zy_py_error(why, whylen, "Py_PreInitialize", st);
        return -1;
    }
    if (sbx_zy_seal_register() < 0) {
        snprintf(why, whylen, SBX_PREFIX "zygote: registering module _codeq_seal failed");
        return -1;
    }
    PyConfig cfg;
    PyConfig_InitPythonConfig(&cfg);
    cfg.isolated = 1;
    cfg.use_environment = 0;
    cfg.user_site_directory = 0;
    cfg.safe_path = 1;
    cfg.write_bytecode = 0;
    cfg.parse_argv = 0;
    st = PyConfig_SetBytesString(&cfg, &cfg.program_name, python);
    if (!PyStatus_Exception(st))
        st = Py_InitializeFromConfig(&cfg);
    PyConfig_Clear(&cfg);
    if (PyStatus_Exception(st)) {
        sbx_zy_py_error(why, whylen, "Py_InitializeFromConfig", st);
        return -1;
    }
    /* signal: the job's main re-installs the SIGINT handler with it; gc: for the freeze below,
     * imported before the prelude so that the guard's last look at sys.modules stays true. */
    if (sbx_zy_py_preload("signal,gc", why, whylen) < 0 ||
        sbx_zy_py_preload(preload, why, whylen) < 0 ||
        sbx_zy_py_prelude(prelude, why, whylen) < 0 || sbx_zy_py_magic(why, whylen) < 0)
        return -1;
    if (sbx_zy_py_freeze(why, whylen) < 0)
        return -1;
    return sbx_zy_py_single_threaded(why, whylen);
}

static void sbx_zy_py_before(void)
{
    PyOS_BeforeFork();
}

static void sbx_zy_py_after_parent(void)
{
    PyOS_AfterFork_Parent();
}

/* The whole script, NUL-terminated, or NULL with the failure reported to the parent. */
static char *sbx_zy_py_read(sbx_proc *p, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        sbx_child_fail(p, errno, "open(", path, ")", NULL);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += k;
        char *more = len + 1 == cap ? realloc(buf, cap *= 2) : buf;
        if (!more)
            free(buf);
        buf = more;
    }
    fclose(f);
    if (!buf) {
        sbx_child_fail(p, ENOMEM, "read(", path, ")", NULL);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* What `python3` sets up at start and the init's signal reset took away. */
static void sbx_zy_py_signals(void)
{
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    PyObject *sig = PyImport_ImportModule("signal");
    PyObject *h = sig ? PyObject_GetAttrString(sig, "default_int_handler") : NULL;
    PyObject *r = h ? PyObject_CallMethod(sig, "signal", "iO", SIGINT, h) : NULL;
    if (!r)
        PyErr_Clear();
    Py_XDECREF(r);
    Py_XDECREF(h);
    Py_XDECREF(sig);
}

/* sys.argv = [arg0], in place where it is a list: the guard's proxy of sys, prepared in the
 * zygote, holds the zygote's list, and a new one would leave the job [''] there. */
static int sbx_zy_set_argv(PyObject *items)
{
    PyObject *argv = PySys_GetObject("argv"); /* borrowed */
    if (argv && PyList_CheckExact(argv))
        return PyList_SetSlice(argv, 0, PyList_GET_SIZE(argv), items);
    return PySys_SetObject("argv", items);
}

/* The job's code object (stolen; NULL: compile src) runs as main.py, or is handed to the
 * prelude, which runs main.py itself. */
static int sbx_zy_py_exec(const char *src, const char *file, const char *arg0, PyObject *job_code)
{
    PyObject *main = PyImport_AddModule("__main__"); /* borrowed */
    PyObject *g = main ? PyModule_GetDict(main) : NULL;
    PyObject *argv = Py_BuildValue("[s]", arg0);
    PyObject *fname = PyUnicode_FromString(file);
    if (!g || !argv || !fname || sbx_zy_set_argv(argv) < 0 ||
        PyDict_SetItemString(g, "__file__", fname) < 0) {
        Py_XDECREF(argv);
        Py_XDECREF(fname);
        Py_XDECREF(job_code);
        return -1;
    }
    Py_DECREF(argv);
    Py_DECREF(fname);
    bool prelude = strcmp(arg0, SBX_PRELUDE_NAME) == 0;
    if (prelude && sbx_zy_prelude_start) {
        /* The prepared prelude (sbx_zy_py_run_main refused any other), as its own
         * `sys.exit(start(code))`: its source is compared once per job, there. */
        PyObject *r = PyObject_CallOneArg(sbx_zy_prelude_start, job_code ? job_code : Py_None);
        Py_XDECREF(job_code);
        if (r)
            PyErr_SetObject(PyExc_SystemExit, r);
        Py_XDECREF(r);
        return -1;
    }
    bool cached = sbx_zy_prelude_code && prelude && strcmp(src, sbx_zy_prelude_src) == 0;
    if (job_code && prelude && PyDict_SetItemString(g, "_CODEQ_MAIN_CODE", job_code) < 0) {
        Py_DECREF(job_code);
        return -1;
    }
    PyObject *code = job_code && !prelude ? Py_NewRef(job_code)
                     : cached ? Py_NewRef(sbx_zy_prelude_code)
                              : Py_CompileString(src, file, Py_file_input);
    Py_XDECREF(job_code);
    PyObject *r = code ? PyEval_EvalCode(code, g, g) : NULL;
    Py_XDECREF(code);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* SystemExit's code as the interpreter turns it into an exit status (None 0, an int itself,
 * anything else printed to stderr and 1). */
static int sbx_zy_py_exit_code(void)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *code = value ? PyObject_GetAttrString(value, "code") : NULL;
    int status = 1;
    PyErr_Clear();
    if (!code || code == Py_None) {
        status = 0;
    } else if (PyLong_Check(code)) {
        status = (int)PyLong_AsLong(code);
        PyErr_Clear();
    } else { /* as CPython: printed raw, to C's stderr without sys.stderr; the newline even
              * when str() fails */
        PyObject *err = PySys_GetObject("stderr"); /* borrowed */
        if (err && err != Py_None) {
            PyFile_WriteObject(code, err, Py_PRINT_RAW);
        } else {
            PyObject_Print(code, stderr, Py_PRINT_RAW);
            fflush(stderr);
        }
        PyErr_Clear();
        PySys_WriteStderr("\n");
        PyErr_Clear();
    }
    Py_XDECREF(code);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return status;
}

/* CPython's file_is_closed(): a stream the program closed itself is not flushed at exit
 * (and is no failure); one whose `closed` cannot be read is flushed. */
static bool sbx_zy_py_closed(PyObject *f)
{
    PyObject *c = PyObject_GetAttrString(f, "closed");
    int r = c ? PyObject_IsTrue(c) : -1;
    Py_XDECREF(c);
    PyErr_Clear();
    return r > 0;
}

/* What a normal exit does for the job — wait for its non-daemon threads, run its atexit
 * functions, flush stdout and stderr unless the program closed them — without tearing the
 * whole interpreter down (Py_FinalizeEx frees every module: milliseconds, for a process about
 * to vanish). A failed flush is status 120, stdout's reported as an unraisable exception, as
 * in CPython. */
static int sbx_zy_py_leave(int status)
{
    static const char *const steps[][2] = {
        {"threading", "_shutdown"}, {"atexit", "_run_exitfuncs"}};
    for (size_t i = 0; i < 2; i++) {
        PyObject *mods = PyImport_GetModuleDict(); /* borrowed */
        PyObject *m = PyDict_GetItemString(mods, steps[i][0]); /* borrowed: loaded ones only */
        PyObject *r = m ? PyObject_CallMethod(m, steps[i][1], NULL) : NULL;
        if (m && !r)
            PyErr_Print();
        Py_XDECREF(r);
        PyErr_Clear();
    }
    static const char *const streams[] = {"stdout", "stderr"};
    for (size_t i = 0; i < 2; i++) {
        PyObject *f = PySys_GetObject(streams[i]); /* borrowed */
        if (!f || f == Py_None || sbx_zy_py_closed(f))
            continue;
        PyObject *r = PyObject_CallMethod(f, "flush", NULL);
        if (!r) {
            if (i == 0)
                PyErr_WriteUnraisable(f);
            PyErr_Clear();
            status = 120;
        }
        Py_XDECREF(r);
    }
    return status;
}

/* numpy seeds its global RandomState once, at import, from the OS's entropy — in the zygote,
 * when it preloads numpy. os.register_at_fork reseeds the stdlib's random in every child, but
 * nothing does numpy's: without this, every job forked from one zygote would draw the same
 * numpy.random sequence, and one job could predict another's. 0, or -1 (reported). */
static int sbx_zy_py_reseed(sbx_proc *p)
{
    PyObject *nr = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy.random"); /* borrowed */
    PyObject *r = nr ? PyObject_CallMethod(nr, "seed", NULL) : NULL;
    if (nr && !r) {
        PyErr_Clear();
        return sbx_child_fail(p, 0, "numpy.random.seed() in the job", NULL);
    }
    Py_XDECREF(r);
    return 0;
}

static void sbx_zy_py_run_main(sbx_proc *p)
{
    const char *arg0 = p->prelude ? SBX_PRELUDE_NAME : "main.py";
    char file[64];
    snprintf(file, sizeof file, "/work/%s", arg0);
    char *src = sbx_zy_py_read(p, arg0);
    if (!src)
        _exit(126);
    if (sbx_zy_prelude_start && p->prelude && strcmp(src, sbx_zy_prelude_src) != 0) {
        /* another guard in a process this zygote's guard already prepared (and patched) */
        sbx_child_fail(p, 0, "zygote: the job's prelude is not the one this zygote prepared", NULL);
        _exit(126);
    }
    PyOS_AfterFork_Child();
    if (sbx_zy_py_reseed(p) < 0)
        _exit(126);
    /* Said before the job's code can run and before the report pipe closes: the flag in the
     * result is the sandbox's word, never the job's. Unsaid, the source is compiled. */
    PyObject *job_code = sbx_zy_py_code(p);
    sbx_report said = {.kind = SBX_REPORT_CODE};
    if (job_code && write(SBX_FD_REPORT, &said, sizeof said) != (ssize_t)sizeof said)
        Py_CLEAR(job_code);
    if (close_range(SBX_FD_REPORT, ~0U, 0) < 0)
        _exit(126);
    sbx_zy_py_signals();
    int rc = sbx_zy_py_exec(src, file, arg0, job_code);
    free(src);
    int status = 0;
    bool sigint = false;
    if (rc < 0 && PyErr_ExceptionMatches(PyExc_SystemExit)) {
        status = sbx_zy_py_exit_code();
    } else if (rc < 0) {
        status = 1;
        sigint = PyErr_ExceptionMatches(PyExc_KeyboardInterrupt);
        PyErr_Print(); /* the traceback, as an uncaught exception gives it */
    }
    status = sbx_zy_py_leave(status);
    if (sigint) { /* CPython then dies of SIGINT itself, so its parent sees why */
        signal(SIGINT, SIG_DFL);
        kill(getpid(), SIGINT);
    }
    _exit(status);
}

const sbx_inproc_hooks sbx_zy_py_hooks = {
    .before_fork = sbx_zy_py_before,
    .after_fork_parent = sbx_zy_py_after_parent,
    .run_main = sbx_zy_py_run_main,
};
