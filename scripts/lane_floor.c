/* lane_floor: the per-message work of scripts/bench_floor.py's thin relay, in C.
 *
 * A CPython extension, compiled by bench_floor.py with the machine's C compiler and the
 * interpreter's headers. It answers one question: with the wake-ups left to the event loop
 * (uvloop calls Python once per read) and everything done per message moved out of the
 * interpreter, how close does a relay that reads messages get to a byte relay?
 *
 *     lane = Lane()
 *     lane.up(data)   -> bytes   client -> server: every whole message of what was read, each
 *                                request's id replaced by the lane's own (a counter)
 *     lane.down(data) -> bytes   server -> client: each answer's id put back
 *
 * A partial message is kept for the next call. Ids are found by a scan of each body's top
 * level (strings, escapes and nesting skipped), so a key named "id" inside params is not
 * taken; a request's id is kept as its raw JSON token (a number or a string) in a dict keyed
 * by the lane's id. It is a benchmark's prototype, not lspmux's code: no routing, no checks,
 * and an answer whose id the lane does not know is passed on as it is.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

typedef struct {
    PyObject_HEAD
    PyObject *pending; /* dict: lane id (int) -> the client's id token (bytes) */
    long long last;
    char *rest[2];     /* what is left of a partial message, per direction */
    Py_ssize_t rest_len[2];
} Lane;

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int out_put(Out *o, const char *p, Py_ssize_t n) {
    if (o->len + n > o->cap) {
        Py_ssize_t cap = (o->cap ? o->cap * 2 : 65536);
        while (cap < o->len + n) cap *= 2;
        char *b = PyMem_Realloc(o->buf, (size_t)cap);
        if (!b) return -1;
        o->buf = b, o->cap = cap;
    }
    memcpy(o->buf + o->len, p, (size_t)n);
    o->len += n;
    return 0;
}

/* The span of the top-level value of `key` (a JSON token: number or string) in the object
 * `b[0:n]`; 1 if found, with *has_method set when a top-level "method" key is seen. */
static int top_level(const char *b, Py_ssize_t n, Py_ssize_t *vs, Py_ssize_t *ve, int *has_method) {
    int depth = 0, found = 0;
    *has_method = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = b[i];
        if (c == '"') {
            Py_ssize_t s = ++i;
            while (i < n && b[i] != '"') i += (b[i] == '\\') ? 2 : 1;
            if (depth != 1) continue;
            Py_ssize_t e = i, j = i + 1;
            while (j < n && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r')) j++;
            if (j >= n || b[j] != ':') continue; /* a value, not a key */
            if (e - s == 6 && memcmp(b + s, "method", 6) == 0) *has_method = 1;
            if (e - s == 2 && memcmp(b + s, "id", 2) == 0) {
                j++;
                while (j < n && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r')) j++;
                Py_ssize_t k = j;
                if (k < n && b[k] == '"') {
                    k++;
                    while (k < n && b[k] != '"') k += (b[k] == '\\') ? 2 : 1;
                    k++;
                } else {
                    while (k < n && b[k] != ',' && b[k] != '}' && b[k] != ' ') k++;
                }
                *vs = j, *ve = k, found = 1;
            }
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return found;
}

static int put_message(Out *o, const char *head, Py_ssize_t hn, const char *mid, Py_ssize_t mn,
                       const char *tail, Py_ssize_t tn) {
    char header[48];
    int h = snprintf(header, sizeof header, "Content-Length: %zd\r\n\r\n", hn + mn + tn);
    return out_put(o, header, h) || out_put(o, head, hn) || out_put(o, mid, mn) || out_put(o, tail, tn);
}

/* One message body: a request gets the lane's id (up), an answer its client's back (down). */
static int relay_body(Lane *self, int down, const char *b, Py_ssize_t n, Out *o) {
    Py_ssize_t vs = 0, ve = 0;
    int has_method;
    if (!top_level(b, n, &vs, &ve, &has_method) || (down ? has_method : !has_method))
        return put_message(o, b, n, "", 0, "", 0);
    if (!down) {
        PyObject *token = PyBytes_FromStringAndSize(b + vs, ve - vs);
        PyObject *key = token ? PyLong_FromLongLong(++self->last) : NULL;
        int failed = !key || PyDict_SetItem(self->pending, key, token) < 0;
        Py_XDECREF(key);
        Py_XDECREF(token);
        if (failed) return -1;
        char id[24];
        int idn = snprintf(id, sizeof id, "%lld", self->last);
        return put_message(o, b, vs, id, idn, b + ve, n - ve);
    }
    long long lane_id = 0;
    for (Py_ssize_t i = vs; i < ve; i++) {
        if (b[i] < '0' || b[i] > '9') return put_message(o, b, n, "", 0, "", 0);
        lane_id = lane_id * 10 + (b[i] - '0');
    }
    PyObject *key = PyLong_FromLongLong(lane_id);
    if (!key) return -1;
    PyObject *token = PyDict_GetItemWithError(self->pending, key); /* borrowed */
    if (!token) {
        Py_DECREF(key);
        return PyErr_Occurred() ? -1 : put_message(o, b, n, "", 0, "", 0);
    }
    Py_INCREF(token);
    int failed = PyDict_DelItem(self->pending, key) < 0;
    Py_DECREF(key);
    if (!failed)
        failed = put_message(o, b, vs, PyBytes_AS_STRING(token), PyBytes_GET_SIZE(token), b + ve,
                             n - ve);
    Py_DECREF(token);
    return failed ? -1 : 0;
}

static PyObject *relay(Lane *self, PyObject *arg, int down) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const char *data = view.buf;
    Py_ssize_t n = view.len;
    char *joined = NULL;
    if (self->rest_len[down]) { /* the partial message of the last call, then this read */
        joined = PyMem_Malloc((size_t)(self->rest_len[down] + n));
        if (!joined) {
            PyBuffer_Release(&view);
            return PyErr_NoMemory();
        }
        memcpy(joined, self->rest[down], (size_t)self->rest_len[down]);
        memcpy(joined + self->rest_len[down], data, (size_t)n);
        n += self->rest_len[down];
        data = joined;
    }
    Out o = {NULL, 0, 0};
    Py_ssize_t pos = 0;
    int failed = 0;
    static const char prefix[] = "Content-Length:";
    while (!failed) {
        const char *end = memmem(data + pos, (size_t)(n - pos), "\r\n\r\n", 4);
        if (!end) break;
        Py_ssize_t body = end - data + 4;
        if (strncmp(data + pos, prefix, sizeof prefix - 1) != 0) {
            PyErr_SetString(PyExc_ValueError, "a header without Content-Length");
            failed = 1;
            break;
        }
        Py_ssize_t length = (Py_ssize_t)strtoll(data + pos + sizeof prefix - 1, NULL, 10);
        if (body + length > n) break;
        failed = relay_body(self, down, data + body, length, &o) < 0;
        pos = body + length;
    }
    PyObject *result = NULL;
    if (!failed) {
        Py_ssize_t left = n - pos;
        char *rest = left ? PyMem_Malloc((size_t)left) : NULL;
        if (left && !rest) {
            PyErr_NoMemory();
        } else {
            if (left) memcpy(rest, data + pos, (size_t)left);
            PyMem_Free(self->rest[down]);
            self->rest[down] = rest, self->rest_len[down] = left;
            result = PyBytes_FromStringAndSize(o.buf ? o.buf : "", o.len);
        }
    } else if (!PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    PyMem_Free(o.buf);
    PyMem_Free(joined);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *lane_up(Lane *self, PyObject *arg) { return relay(self, arg, 0); }
static PyObject *lane_down(Lane *self, PyObject *arg) { return relay(self, arg, 1); }

static int lane_init(Lane *self, PyObject *args, PyObject *kwds) {
    if (!PyArg_ParseTuple(args, "")) return -1;
    Py_XSETREF(self->pending, PyDict_New());
    return self->pending ? 0 : -1;
}

static void lane_dealloc(Lane *self) {
    Py_XDECREF(self->pending);
    PyMem_Free(self->rest[0]);
    PyMem_Free(self->rest[1]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *lane_pending(Lane *self, void *closure) {
    return Py_NewRef(self->pending);
}

static PyMethodDef lane_methods[] = {
    {"up", (PyCFunction)lane_up, METH_O, "client -> server: whole messages, requests re-id'd"},
    {"down", (PyCFunction)lane_down, METH_O, "server -> client: whole messages, ids put back"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef lane_getset[] = {
    {"pending", (getter)lane_pending, NULL, "lane id -> the client's id token", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject LaneType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "lane_floor.Lane",
    .tp_basicsize = sizeof(Lane),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)lane_init,
    .tp_dealloc = (destructor)lane_dealloc,
    .tp_methods = lane_methods,
    .tp_getset = lane_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "lane_floor", NULL, -1, NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_lane_floor(void) {
    if (PyType_Ready(&LaneType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&LaneType);
    if (PyModule_AddObject(m, "Lane", (PyObject *)&LaneType) < 0) {
        Py_DECREF(&LaneType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
