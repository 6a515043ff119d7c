/* The in-process entry into a native pipeline: a Python extension (ina_entry) whose bound
 * function runs frames through the pipeline's ina_ctl_process, one after another, and returns
 * each one's outputs as [(port, bytes)], one C call with no ctypes in between (no argument conversion, no views of the
 * output buffer, no Python lock: the call holds the GIL throughout, so no two Python threads share
 * its output buffer, and ina_ctl_process takes the switch lock against the port loop and the
 * control plane's ctypes calls, which run without the GIL).
 *
 * datapath.py builds it once per interpreter (switch/native/build.py's cache) and binds it to a
 * backend's switch and an output buffer of its own: bind(process, switch, out), the addresses of
 * ina_ctl_process, the ina_switch and the ina_out. The bound function is valid while that backend
 * lives; its holder keeps the backend.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "runtime.h"

typedef int (*process_fn)(ina_switch *sw, int port, const uint8_t *data, uint32_t len,
                          ina_out *out);

typedef struct {
    process_fn process;
    ina_switch *sw;
    ina_out *out;
} entry;

static const char CAPSULE[] = "ina_entry.entry";

/* The frames one input sent, from out's records first..n-1, as a new list of (port, bytes). */
static PyObject *outputs(const ina_out *out, int first, int n) {
    PyObject *list = PyList_New(n - first);
    if (!list) return NULL;
    for (int i = first; i < n; i++) {
        const ina_pkt *p = &out->pkts[i];
        PyObject *port = PyLong_FromLong(p->port);
        PyObject *frame =
            PyBytes_FromStringAndSize((const char *)out->arena + p->off, (Py_ssize_t)p->len);
        PyObject *item = port && frame ? PyTuple_New(2) : NULL;
        if (!item) {
            Py_XDECREF(port);
            Py_XDECREF(frame);
            Py_DECREF(list);
            return NULL;
        }
        PyTuple_SET_ITEM(item, 0, port);
        PyTuple_SET_ITEM(item, 1, frame);
        PyList_SET_ITEM(list, i - first, item);
    }
    return list;
}

/* One frame (bytes or bytearray) arriving on `port`: the list of what it sent, or NULL. */
static PyObject *run_one(const entry *e, PyObject *port_obj, PyObject *frame) {
    long port = PyLong_AsLong(port_obj);
    if (port == -1 && PyErr_Occurred()) return NULL;
    const char *data;
    Py_ssize_t len;
    if (PyBytes_CheckExact(frame)) {
        data = PyBytes_AS_STRING(frame);
        len = PyBytes_GET_SIZE(frame);
    } else if (PyByteArray_CheckExact(frame)) {
        data = PyByteArray_AS_STRING(frame);
        len = PyByteArray_GET_SIZE(frame);
    } else {
        PyErr_SetString(PyExc_TypeError, "process: a frame is bytes or bytearray");
        return NULL;
    }
    if (len > UINT32_MAX) len = UINT32_MAX; /* past INA_MAX_PACKET: the pipeline drops it */
    int n = e->process(e->sw, (int)port, (const uint8_t *)data, (uint32_t)len, e->out);
    return outputs(e->out, 0, n);
}

/* process(frames) -> [[(port, bytes)] per frame]: `frames`, a list of (port, frame), run in
 * order, each one's outputs a list of its own (frames arriving at one switch at one instant). */
static PyObject *process(PyObject *self, PyObject *frames) {
    const entry *e = PyCapsule_GetPointer(self, CAPSULE);
    if (!e) return NULL;
    if (!PyList_CheckExact(frames)) {
        PyErr_SetString(PyExc_TypeError, "process: frames is a list of (port, frame)");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(frames);
    PyObject *sent = PyList_New(count);
    if (!sent) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyList_GET_ITEM(frames, i);
        PyObject *one = NULL;
        if (PyTuple_CheckExact(item) && PyTuple_GET_SIZE(item) == 2)
            one = run_one(e, PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1));
        else
            PyErr_SetString(PyExc_TypeError, "process: frames is a list of (port, frame)");
        if (!one) {
            Py_DECREF(sent);
            return NULL;
        }
        PyList_SET_ITEM(sent, i, one);
    }
    return sent;
}

static PyMethodDef PROCESS = {"process", process, METH_O,
                              "process([(port, frame)]) -> [[(port, bytes)] per frame]"};

static void release(PyObject *capsule) {
    PyMem_Free(PyCapsule_GetPointer(capsule, CAPSULE));
}

/* bind(process, switch, out) -> process([(port, frame)]), for a backend's addresses. */
static PyObject *bind(PyObject *Py_UNUSED(module), PyObject *args) {
    unsigned long long fn, sw, out;
    if (!PyArg_ParseTuple(args, "KKK", &fn, &sw, &out)) return NULL;
    if (!fn || !sw || !out) {
        PyErr_SetString(PyExc_ValueError, "bind: a null address");
        return NULL;
    }
    entry *e = PyMem_Malloc(sizeof *e);
    if (!e) return PyErr_NoMemory();
    e->process = (process_fn)(uintptr_t)fn;
    e->sw = (ina_switch *)(uintptr_t)sw;
    e->out = (ina_out *)(uintptr_t)out;
    PyObject *capsule = PyCapsule_New(e, CAPSULE, release);
    if (!capsule) {
        PyMem_Free(e);
        return NULL;
    }
    PyObject *bound = PyCFunction_New(&PROCESS, capsule);
    Py_DECREF(capsule);
    return bound;
}

static PyMethodDef METHODS[] = {
    {"bind", bind, METH_VARARGS, "bind(process, switch, out) -> process([(port, frame)])"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "ina_entry", NULL, -1, METHODS};

PyMODINIT_FUNC PyInit_ina_entry(void) { return PyModule_Create(&MODULE); }
