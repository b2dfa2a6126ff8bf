/* sbx_zygote_seal.c: `_codeq_seal`, a built-in module of the zygote's interpreter.
 *
 * seal_class(cls) makes one class made by Python code (a heap type) immutable, as CPython's
 * own built-in types are: assigning or deleting an attribute of it (`Lib.meth = f`,
 * type.__setattr__, delattr) then raises TypeError. Only Py_TPFLAGS_IMMUTABLETYPE changes:
 * instances, subclasses and method calls behave as before. Anything else is left alone.
 * Returns whether it changed the flag.
 *
 * Why: a job that rebinds a method of a library class makes library code call the job's
 * function with the library's own objects; typing's get_type_hints handed heapq's globals to
 * a ForwardRef._evaluate the job had replaced (bypass 151). Which classes to seal, and when,
 * is the runtime guard's (validator/val_guard.py, _codeq_class_sealer): this is the one step
 * Python code cannot take.
 *
 * guard_str_format(format, format_map) puts the guard's checked versions of str.format and
 * str.format_map into str's own dict (a built-in type's, which Python code cannot write), once
 * per process: later calls fail. Their field names (`{0.__init__.__globals__}`) are attribute
 * reads by names built at run time, made in C with no audit event (bypasses 23, 24, 81, 82).
 *
 * arm(...) is sbx_zygote_wall.c's: the guard's rules that need no Python, held in C memory.
 *
 * Two builds of one source: built into the zygote (sbx_zy_seal_register), and, with
 * sbx_zygote_wall.c, the extension module _codeq_seal.so that an exec'd interpreter loads from
 * the descriptor the sandbox hands its guard (sbx_seal.c). Both have the same static state:
 * one process, one module.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "sbx_zygote.h"

static PyObject *sbx_seal_class(PyObject *self, PyObject *cls)
{
    (void)self;
    if (!PyType_Check(cls))
        Py_RETURN_FALSE;
    PyTypeObject *type = (PyTypeObject *)cls;
    if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) || (type->tp_flags & Py_TPFLAGS_IMMUTABLETYPE))
        Py_RETURN_FALSE;
    type->tp_flags |= Py_TPFLAGS_IMMUTABLETYPE;
    Py_RETURN_TRUE;
}

static PyObject *sbx_guard_str_format(PyObject *self, PyObject *const *args, Py_ssize_t n)
{
    (void)self;
    static int done;
    if (n != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "guard_str_format(format, format_map): two callables");
        return NULL;
    }
    if (done) {
        PyErr_SetString(PyExc_RuntimeError, "guard_str_format: already done");
        return NULL;
    }
    PyObject *dict = PyUnicode_Type.tp_dict;
    if (PyDict_SetItemString(dict, "format", args[0]) < 0 ||
        PyDict_SetItemString(dict, "format_map", args[1]) < 0)
        return NULL;
    PyType_Modified(&PyUnicode_Type); /* the method cache, str's and its subclasses' */
    done = 1;
    Py_RETURN_NONE;
}

/* sbx_zygote_wall.c */
PyObject *sbx_zy_wall_arm(PyObject *self, PyObject *const *args, Py_ssize_t n);

static PyMethodDef sbx_seal_methods[] = {
    {"seal_class", sbx_seal_class, METH_O,
     "seal_class(cls) -> bool: make a class made by Python code immutable."},
    {"guard_str_format", (PyCFunction)(void (*)(void))sbx_guard_str_format, METH_FASTCALL,
     "guard_str_format(format, format_map): str's two formatters, once per process."},
    {"arm", (PyCFunction)(void (*)(void))sbx_zy_wall_arm, METH_FASTCALL,
     "arm(policy, job_file, cwd, read_roots, own_files, workdir, refused_events, "
     "refused_prefixes): the guard's rules that need no Python, in C (sbx_zygote_wall.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef sbx_seal_module = {
    PyModuleDef_HEAD_INIT, "_codeq_seal",
    "The zygote's helper for codeq's runtime guard (sandbox/sbx_zygote_seal.c).", -1,
    sbx_seal_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__codeq_seal(void)
{
    return PyModule_Create(&sbx_seal_module);
}

int sbx_zy_seal_register(void)
{
    return PyImport_AppendInittab("_codeq_seal", PyInit__codeq_seal);
}
