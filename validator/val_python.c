/* val_python.c: the embedded interpreter's lifecycle and the objects cached from it.
 *
 * Why this shape: the validator must parse with exactly the CPython that will run the job, and
 * nothing of the worker's environment (PYTHONPATH, a pyenv PYTHONHOME, user site) may change how
 * it parses, so the interpreter is isolated and started once per process. Everything the hot
 * path needs (builtins.compile, AST type objects, interned attribute names) is looked up here
 * once so that checking a node is pointer comparisons and dict lookups, not string work.
 * After init the GIL is released; val_check takes it with PyGILState_Ensure, so whichever single
 * thread owns the validator may call it.
 */
#include "val_internal.h"

#include <stdio.h>

val_py_state val_py;

enum { VAL_UNINIT, VAL_READY, VAL_DONE };
static int state = VAL_UNINIT;
static PyThreadState *main_tstate;

int val_py_ready(void) { return state == VAL_READY; }

static int set_err(char *err, size_t errlen, const char *what, PyStatus st) {
    snprintf(err, errlen, "codeq: validator: %s: %s%s%s", what, st.func ? st.func : "",
             st.func ? ": " : "", st.err_msg ? st.err_msg : "failed");
    return -1;
}

static int start_interpreter(char *err, size_t errlen) {
    PyStatus st;
    PyPreConfig pre;
    PyPreConfig_InitIsolatedConfig(&pre);
    st = Py_PreInitialize(&pre);
    if (PyStatus_Exception(st)) return set_err(err, errlen, "Py_PreInitialize", st);

    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    /* Isolated already implies most of these; spelled out because each one is a way for the
     * worker's environment to change what is parsed or to touch the disk or its signals. */
    config.isolated = 1;
    config.use_environment = 0;
    config.user_site_directory = 0;
    config.site_import = 0;
    config.write_bytecode = 0;
    config.install_signal_handlers = 0;
    config.parse_argv = 0;
    config.pathconfig_warnings = 0;
    /* The parser warns through the warnings module (SyntaxWarning "invalid decimal literal",
     * DeprecationWarning for bad escapes) onto the worker's stderr, once per check, for text the
     * job controls. Warnings never change what parses, so ignoring them all is safe. */
    st = PyWideStringList_Append(&config.warnoptions, L"ignore");
    if (PyStatus_Exception(st)) {
        PyConfig_Clear(&config);
        return set_err(err, errlen, "PyWideStringList_Append(warnoptions)", st);
    }
    /* The path calculation starts from the program name: point it at the Debian interpreter
     * that runs jobs, so the stdlib found is /usr/lib/python3.11, never a pyenv tree. */
    st = PyConfig_SetBytesString(&config, &config.program_name, "/usr/bin/python3");
    if (PyStatus_Exception(st)) {
        PyConfig_Clear(&config);
        return set_err(err, errlen, "PyConfig_SetBytesString(program_name)", st);
    }
    st = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(st)) return set_err(err, errlen, "Py_InitializeFromConfig", st);
    return 0;
}

static PyObject *intern(const char *s) { return PyUnicode_InternFromString(s); }

/* A frozenset of interned str from a NULL-terminated list; new reference or NULL. */
static PyObject *frozen(const char *const *names) {
    PyObject *set = PySet_New(NULL);
    for (size_t i = 0; set && names[i]; i++) {
        PyObject *s = intern(names[i]);
        if (!s || PySet_Add(set, s) < 0) Py_CLEAR(set);
        Py_XDECREF(s);
    }
    PyObject *f = set ? PyFrozenSet_New(set) : NULL;
    Py_XDECREF(set);
    return f;
}

static PyTypeObject *ast_type(PyObject *ast, const char *name) {
    PyObject *t = PyObject_GetAttrString(ast, name);
    if (t && !PyType_Check(t)) {
        PyErr_Format(PyExc_TypeError, "ast.%s is not a type", name);
        Py_CLEAR(t);
    }
    return (PyTypeObject *)t;
}

/* Returns 0, or -1 with a Python error set; partial results are released by val_shutdown. */
static int cache_objects(void) {
    val_py_state *p = &val_py;
    PyObject *builtins = PyImport_ImportModule("builtins");
    if (!builtins) return -1;
    p->compile = PyObject_GetAttrString(builtins, "compile");
    Py_DECREF(builtins);
    if (!p->compile) return -1;

    PyObject *ast = PyImport_ImportModule("ast");
    if (!ast) return -1;
    int rc = -1;
    PyObject *flag = PyObject_GetAttrString(ast, "PyCF_ONLY_AST");
    if (!flag) goto out;
    p->flags = flag;
    if (!(p->t_ast = ast_type(ast, "AST")) || !(p->t_import = ast_type(ast, "Import")) ||
        !(p->t_importfrom = ast_type(ast, "ImportFrom")) || !(p->t_call = ast_type(ast, "Call")) ||
        !(p->t_name = ast_type(ast, "Name")) || !(p->t_attribute = ast_type(ast, "Attribute")) ||
        !(p->t_functiondef = ast_type(ast, "FunctionDef")) ||
        !(p->t_asyncfunctiondef = ast_type(ast, "AsyncFunctionDef")) ||
        !(p->t_classdef = ast_type(ast, "ClassDef")) ||
        !(p->t_constant = ast_type(ast, "Constant")) || !(p->t_load = ast_type(ast, "Load")) ||
        !(p->t_starred = ast_type(ast, "Starred")) ||
        !(p->t_matchclass = ast_type(ast, "MatchClass")))
        goto out;
    rc = 0;
out:
    Py_DECREF(ast);
    if (rc) return rc;

    /* The .pyc magic, as importlib.util.MAGIC_NUMBER spells it (little-endian): it heads every
     * val_code so that an interpreter of another version refuses the marshalled bytes. */
    long magic = PyImport_GetMagicNumber();
    if (magic == -1) return -1;
    for (int i = 0; i < VAL_CODE_MAGIC_LEN; i++) p->magic[i] = (unsigned char)(magic >> (8 * i));

    p->filename = PyUnicode_FromString("<job>");
    p->mode = PyUnicode_FromString("exec");
    p->field_cache = PyDict_New();
    if (!p->filename || !p->mode || !p->field_cache) return -1;

    struct { PyObject **slot; const char *name; } names[] = {
        {&p->s_fields, "_fields"},           {&p->s_lineno, "lineno"},
        {&p->s_col_offset, "col_offset"},    {&p->s_end_lineno, "end_lineno"},
        {&p->s_end_col_offset, "end_col_offset"}, {&p->s_names, "names"},
        {&p->s_name, "name"},                {&p->s_asname, "asname"},
        {&p->s_module, "module"},            {&p->s_level, "level"},
        {&p->s_func, "func"},                {&p->s_id, "id"},
        {&p->s_value, "value"},              {&p->s_attr, "attr"},
        {&p->s_decorator_list, "decorator_list"}, {&p->s_msg, "msg"},
        {&p->s_offset, "offset"},            {&p->s_end_offset, "end_offset"},
        {&p->s_args, "args"},                {&p->s_ctx, "ctx"},
        {&p->s_keywords, "keywords"},        {&p->s_dot, "."},
        {&p->s_kwd_attrs, "kwd_attrs"},      {&p->s_kwd_patterns, "kwd_patterns"},
        {&p->s_patterns, "patterns"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*names[i].slot = intern(names[i].name))) return -1;
    static const char *const getattrs[] = {"getattr", "setattr", "delattr", "hasattr", NULL};
    if (!(p->harmless_dunders = frozen(val_harmless_dunders)) ||
        !(p->introspection = frozen(val_introspection_names)) ||
        !(p->getattr_family = frozen(getattrs)))
        return -1;
    return 0;
}

static void release_objects(void) {
    val_py_state *p = &val_py;
    PyObject **objs[] = {
        &p->compile, &p->filename, &p->mode, &p->flags, &p->field_cache,
        (PyObject **)&p->t_ast, (PyObject **)&p->t_import, (PyObject **)&p->t_importfrom,
        (PyObject **)&p->t_call, (PyObject **)&p->t_name, (PyObject **)&p->t_attribute,
        (PyObject **)&p->t_functiondef, (PyObject **)&p->t_asyncfunctiondef,
        (PyObject **)&p->t_classdef, (PyObject **)&p->t_constant, (PyObject **)&p->t_load,
        (PyObject **)&p->t_starred, (PyObject **)&p->t_matchclass, &p->s_kwd_attrs,
        &p->s_kwd_patterns, &p->s_patterns, &p->harmless_dunders, &p->introspection, &p->getattr_family,
        &p->s_args, &p->s_ctx, &p->s_keywords, &p->s_dot,
        &p->s_fields, &p->s_lineno, &p->s_col_offset, &p->s_end_lineno, &p->s_end_col_offset,
        &p->s_names, &p->s_name, &p->s_asname, &p->s_module, &p->s_level, &p->s_func, &p->s_id,
        &p->s_value, &p->s_attr, &p->s_decorator_list, &p->s_msg, &p->s_offset, &p->s_end_offset,
    };
    for (size_t i = 0; i < sizeof objs / sizeof objs[0]; i++) Py_CLEAR(*objs[i]);
}

int val_init(char *err, size_t errlen) {
    if (state == VAL_READY) return 0;
    if (state == VAL_DONE) {
        snprintf(err, errlen, "codeq: validator: val_init: interpreter already finalized "
                              "(CPython cannot be re-initialized reliably in one process)");
        return -1;
    }
    if (Py_IsInitialized()) {
        /* Someone else's interpreter would not be isolated the way parsing needs. */
        snprintf(err, errlen, "codeq: validator: val_init: a Python interpreter is already "
                              "running in this process");
        return -1;
    }
    if (start_interpreter(err, errlen) < 0) return -1;
    if (cache_objects() < 0) {
        val_err_python(err, errlen, "val_init: import ast");
        release_objects();
        Py_FinalizeEx();
        state = VAL_DONE;
        return -1;
    }
    state = VAL_READY;
    main_tstate = PyEval_SaveThread();
    return 0;
}

void val_shutdown(void) {
    if (state != VAL_READY) return;
    /* Finalizing belongs to the thread that initialized (the saved thread state is its own). */
    PyEval_RestoreThread(main_tstate);
    release_objects();
    state = VAL_DONE;
    /* Nothing to hand the error to (void, called at exit); say it rather than drop it. */
    if (Py_FinalizeEx() < 0)
        fprintf(stderr, "codeq: validator: val_shutdown: Py_FinalizeEx reported an error\n");
}
