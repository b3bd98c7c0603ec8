/*
 * A minimal CPython extension, as frameworks are: `cuext.synchronize()` calls
 * cudaDeviceSynchronize with the GIL released, the way PyTorch does around
 * blocking CUDA calls, and returns the cudaError_t. Built by the tests for
 * each interpreter, against the runtime double.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cuda_runtime_api.h>

static PyObject *synchronize(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    cudaError_t rc;
    Py_BEGIN_ALLOW_THREADS rc = cudaDeviceSynchronize();
    Py_END_ALLOW_THREADS return PyLong_FromLong((long)rc);
}

static PyMethodDef methods[] = {
    {"synchronize", synchronize, METH_NOARGS, "cudaDeviceSynchronize without the GIL"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "cuext", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_cuext(void)
{
    return PyModule_Create(&module);
}
