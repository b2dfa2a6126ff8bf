/* sbx_zygote_seal.c: `_codeq_seal`, a built-in module of the zygote's interpreter.
 *
 * seal() makes every class that exists when it is called and was made by Python code (a heap
 * type) immutable, as CPython's own built-in types are: assigning or deleting an attribute
 * of such a class (`Lib.meth = f`, type.__setattr__, delattr) raises TypeError. It returns
 * how many classes it changed. Classes made after the call keep Python's rules, so the
 * classes a job defines stay its own to change.
 *
 * Why: a job that rebinds a method of a library class makes library code call the job's
 * function with the library's own objects; typing's get_type_hints handed heapq's globals to
 * a ForwardRef._evaluate the job had replaced (bypass 151). The runtime guard
 * (validator/val_guard.py) calls seal() once the library code is loaded and patched, and
 * again after each import the job makes. Only Py_TPFLAGS_IMMUTABLETYPE changes: instances,
 * subclasses and method calls behave as before.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "sbx_zygote.h"

/* Every class reachable from object through type.__subclasses__ (which lists the live
 * subclasses the interpreter tracks), each visited once. */
static PyObject *sbx_seal(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    PyObject *subclasses = PyObject_GetAttrString((PyObject *)&PyType_Type, "__subclasses__");
    PyObject *seen = PySet_New(NULL);
    PyObject *stack = PyList_New(0);
    long sealed = 0;
    int rc = subclasses && seen && stack ? 0 : -1;
    if (rc == 0)
        rc = PyList_Append(stack, (PyObject *)&PyBaseObject_Type);
    while (rc == 0 && PyList_GET_SIZE(stack) > 0) {
        Py_ssize_t top = PyList_GET_SIZE(stack) - 1;
        PyObject *t = Py_NewRef(PyList_GET_ITEM(stack, top));
        rc = PyList_SetSlice(stack, top, top + 1, NULL);
        int known = rc == 0 ? PySet_Contains(seen, t) : -1;
        if (known == 0 && PyType_Check(t)) {
            PyTypeObject *type = (PyTypeObject *)t;
            if ((type->tp_flags & Py_TPFLAGS_HEAPTYPE) &&
                !(type->tp_flags & Py_TPFLAGS_IMMUTABLETYPE)) {
                type->tp_flags |= Py_TPFLAGS_IMMUTABLETYPE;
                sealed++;
            }
            PyObject *subs = PyObject_CallOneArg(subclasses, t);
            rc = subs && PySet_Add(seen, t) == 0 ? 0 : -1;
            for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(subs); i++)
                rc = PyList_Append(stack, PyList_GET_ITEM(subs, i));
            Py_XDECREF(subs);
        } else if (known < 0) {
            rc = -1;
        }
        Py_DECREF(t);
    }
    Py_XDECREF(subclasses);
    Py_XDECREF(seen);
    Py_XDECREF(stack);
    return rc == 0 ? PyLong_FromLong(sealed) : NULL;
}

static PyMethodDef sbx_seal_methods[] = {
    {"seal", sbx_seal, METH_NOARGS,
     "seal() -> int: make every class made by Python code so far immutable; return the count."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef sbx_seal_module = {
    PyModuleDef_HEAD_INIT, "_codeq_seal",
    "The zygote's helper for codeq's runtime guard (sandbox/sbx_zygote_seal.c).", -1,
    sbx_seal_methods, NULL, NULL, NULL, NULL,
};

static PyObject *sbx_seal_init(void)
{
    return PyModule_Create(&sbx_seal_module);
}

int sbx_zy_seal_register(void)
{
    return PyImport_AppendInittab("_codeq_seal", sbx_seal_init);
}
