/* hgas._fast: the hot calls of the Python API in C, so that a put of a few bytes costs what the
 * C call costs plus one Python call (ctypes alone spends microseconds on reading a NumPy array's
 * address and on passing a struct by value). Buffers come through the buffer protocol (NumPy,
 * bytearray, memoryview); anything else, and every failure, returns a code that sends the caller
 * to the ctypes path, which builds the full error. The library's functions are handed in by
 * address from the ctypes handle (setup), so that both paths use the one libhgas loaded and this
 * module links nothing but Python. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct { uint64_t offset; uint32_t rank; uint16_t segment, flags; } gptr_t;
typedef int (*ptr_fn)(const void *, int, gptr_t *);
typedef int (*put_fn)(gptr_t, const void *, size_t);
typedef int (*get_fn)(void *, gptr_t, size_t);
typedef int (*allreduce_fn)(void *, const void *, size_t, int, int);

static ptr_fn hgas_ptr;
static put_fn hgas_put;
static get_fn hgas_get;
static allreduce_fn hgas_allreduce;

enum { SLOW = -1 }; /* not a buffer or a size mismatch: take the ctypes path, which says what is wrong */

static PyObject *setup(PyObject *self, PyObject *args) {
    unsigned long long p, pu, g, ar;
    if (!PyArg_ParseTuple(args, "KKKK", &p, &pu, &g, &ar)) return NULL;
    hgas_ptr = (ptr_fn)(uintptr_t)p;
    hgas_put = (put_fn)(uintptr_t)pu;
    hgas_get = (get_fn)(uintptr_t)g;
    hgas_allreduce = (allreduce_fn)(uintptr_t)ar;
    Py_RETURN_NONE;
}

/* Fills *b with a C-contiguous view of o, or clears the error and returns 0. */
static int view(PyObject *o, Py_buffer *b, int flags) {
    if (PyObject_GetBuffer(o, b, flags | PyBUF_C_CONTIGUOUS) == 0) return 1;
    PyErr_Clear();
    return 0;
}

/* put(dst, src, rank) and get(dst, src, rank): the hgas status, or SLOW. */
static PyObject *move(PyObject *const *args, Py_ssize_t n, int is_put) {
    if (n != 3 || !hgas_ptr) return PyLong_FromLong(SLOW);
    int rank = (int)PyLong_AsLong(args[2]);
    if (rank == -1 && PyErr_Occurred()) { PyErr_Clear(); return PyLong_FromLong(SLOW); }
    Py_buffer d, s;
    if (!view(args[0], &d, is_put ? PyBUF_SIMPLE : PyBUF_WRITABLE)) return PyLong_FromLong(SLOW);
    if (!view(args[1], &s, PyBUF_SIMPLE)) { PyBuffer_Release(&d); return PyLong_FromLong(SLOW); }
    int rc = SLOW;
    gptr_t g;
    if (is_put ? s.len <= d.len : d.len <= s.len) {
        rc = hgas_ptr(is_put ? d.buf : s.buf, rank, &g); /* a failure: its status, raised by the caller */
        if (rc == 0) rc = is_put ? hgas_put(g, s.buf, (size_t)s.len) : hgas_get(d.buf, g, (size_t)d.len);
    }
    PyBuffer_Release(&s);
    PyBuffer_Release(&d);
    return PyLong_FromLong(rc);
}

static PyObject *put(PyObject *self, PyObject *const *args, Py_ssize_t n) { return move(args, n, 1); }
static PyObject *get(PyObject *self, PyObject *const *args, Py_ssize_t n) { return move(args, n, 0); }

/* hgas_dtype_t of a buffer format, or -1. */
static int dtype_of(const char *f, Py_ssize_t size) {
    if (!f) return -1;
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (f[0] && f[1]) return -1;
    switch (*f) {
    case 'e': return size == 2 ? 10 : -1; /* float16 */
    case 'f': return size == 4 ? 4 : -1;
    case 'd': return size == 8 ? 5 : -1;
    case 'b': return size == 1 ? 6 : -1;
    case 'B': return size == 1 ? 8 : -1;
    case 'h': case 'i': case 'l': case 'q': return size == 2 ? 7 : size == 4 ? 0 : size == 8 ? 1 : -1;
    case 'H': case 'I': case 'L': case 'Q': return size == 2 ? 9 : size == 4 ? 2 : size == 8 ? 3 : -1;
    default: return -1;
    }
}

/* allreduce(array, op) in place: the hgas status, or SLOW. */
static PyObject *allreduce(PyObject *self, PyObject *const *args, Py_ssize_t n) {
    if (n != 2 || !hgas_allreduce) return PyLong_FromLong(SLOW);
    int op = (int)PyLong_AsLong(args[1]);
    if (op == -1 && PyErr_Occurred()) { PyErr_Clear(); return PyLong_FromLong(SLOW); }
    Py_buffer b;
    if (!view(args[0], &b, PyBUF_WRITABLE | PyBUF_FORMAT)) return PyLong_FromLong(SLOW);
    int t = dtype_of(b.format, b.itemsize), rc = SLOW;
    if (t >= 0) {
        size_t count = (size_t)(b.len / b.itemsize);
        Py_BEGIN_ALLOW_THREADS /* a collective waits for the other ranks: let other threads run */
        rc = hgas_allreduce(b.buf, b.buf, count, t, op);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&b);
    return PyLong_FromLong(rc);
}

static PyMethodDef methods[] = {
    {"setup", setup, METH_VARARGS, "setup(hgas_ptr, hgas_put, hgas_get, hgas_allreduce): the library's functions"},
    {"put", (PyCFunction)(void (*)(void))put, METH_FASTCALL, "put(dst, src, rank) -> hgas status, or -1: use the ctypes path"},
    {"get", (PyCFunction)(void (*)(void))get, METH_FASTCALL, "get(dst, src, rank) -> hgas status, or -1: use the ctypes path"},
    {"allreduce", (PyCFunction)(void (*)(void))allreduce, METH_FASTCALL,
     "allreduce(array, op) in place -> hgas status, or -1: use the ctypes path"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", "hot calls of hgas in C", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&module); }
