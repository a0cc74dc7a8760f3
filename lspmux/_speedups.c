/* lspmux._speedups: the work of a hot path done in C, where Python's own takes too long.
 *
 * Optional: setup.py builds it when the machine has a C compiler, and every caller falls back
 * to the Python it replaces (`lspmux/speedups.py` says which is in use; `lspmux doctor` tells
 * the user). Each function here computes exactly what a Python function computes on a part of
 * its inputs, and declines (None) the rest: the tests compare the two on generated inputs.
 *
 *     contains(haystack: bytes | bytearray, needle: bytes) -> bool
 *
 * `needle in haystack`, by memmem: glibc's is about three times CPython's search over 2.5 MB
 * where the needle is absent, the common case of `routing/fit_raw.py`'s scans.
 *
 *     fit_markdown_docs(body: bytes | bytearray) -> bytes | None
 *
 * `routing/fit_raw.py`'s `_fast_markdown` for a completion answer without a backslash whose
 * markdown documentation is all simple text: each
 * `"documentation":{"kind":"markdown","value":"…"}` becomes
 * `"documentation":{"kind":"plaintext","value":"…"}` with the value's code-span backticks
 * dropped, every other byte kept. None (the caller then runs the Python) for anything else:
 * a backslash or `"arguments"` anywhere; a `"data"` value that is not flat (or overlaps
 * another key); a documentation written otherwise than as a plain string, plaintext
 * MarkupContent, or compact markdown MarkupContent with `value` last; no markdown
 * documentation at all; or a value that is not one line of ASCII whose only markup is code
 * spans (`fit_raw._plain_joined`'s fast case): non-ASCII or control bytes, a first byte that
 * opens a block (`` ` ~ - * _ # > ``, space, tab), two backticks side by side, an unclosed
 * code span, or an inline mark (`< > [ ] ! * _ &`) outside a span.
 *
 * Two passes: the first finds the keys and checks everything, the second copies the bytes
 * between the values and writes the values.
 *
 *     split_frames(data: bytes | bytearray | memoryview, start: int, max_size: int)
 *         -> tuple[list[bytes], int]
 *
 * `wire/framing.py`'s loop over the frames of one read, for the header nearly every peer
 * writes: from `start`, each `Content-Length: N\r\n\r\n` (`_SIMPLE_HEADER`: 1 to 19 ASCII
 * digits, nothing else) whose N is at most `max_size` and whose body has fully arrived, as
 * the body's bytes, and the offset where it stopped: at the first frame that is not of that
 * form, not complete, or too large, which the Python then reads as before.
 *
 *     sniff_response(body: bytes | bytearray) -> tuple[int, int] | None
 *
 * `wire/messages.py`'s `sniff_response` (the regular expression `_SNIFF`, matched at the
 * start): a response that plainly begins `{"jsonrpc":"2.0","id":N,"result"` (or `"error"`,
 * with `"jsonrpc"` before or after the id, or absent, white space anywhere between tokens):
 * its id and the offset of its "result"/"error" key.
 *
 *     rewrite_response_id(body: bytes | bytearray, offset: int, new_id: int | str) -> bytes
 *         | None
 *
 * `wire/messages.py`'s `rewrite_response_id` for an int id (of 64 bits) or a string id of
 * printable ASCII without `"` or `\`, written as orjson writes it; None for another id.
 */
#define _GNU_SOURCE /* memmem */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define LIT(s) (s), (sizeof(s) - 1)

static const char DOC_KEY[] = "\"documentation\"";
static const char DATA_KEY[] = "\"data\"";
static const char MD_HEAD[] = ":{\"kind\":\"markdown\",\"value\":\"";
static const char PLAIN_HEAD[] = ":{\"kind\":\"plaintext\",\"value\":\"";

static int starts(const char *p, const char *end, const char *lit, size_t n) {
    return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0;
}

static const char *find(const char *p, const char *end, const char *lit, size_t n) {
    if (p >= end) return NULL;
    return memmem(p, (size_t)(end - p), lit, n);
}

/* The next `"d` at or after `p` (its quote), or NULL. Both keys looked for start so; it is
 * found by its `d` (memchr), a byte far rarer than a quote in an answer: one pass for both
 * keys, about a quarter of the time of a memmem for each. */
static const char *next_key(const char *p, const char *end) {
    for (const char *q = p + 1; q < end; q++) {
        q = memchr(q, 'd', (size_t)(end - q));
        if (q == NULL) return NULL;
        if (q[-1] == '"') return q - 1;
    }
    return NULL;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Python's `\s` on bytes: also \v and \f. */
static int is_re_space(char c) { return is_space(c) || c == '\v' || c == '\f'; }

/* The end of the flat value after a `"data"` key at `p` (`fit_raw._FLAT_OPAQUE`:
 * `\s*:\s*` then an object or array with no brace or bracket inside, or one byte that is
 * not white space, `{` or `[`), or NULL when it is not one. */
static const char *flat_end(const char *p, const char *end) {
    p += sizeof(DATA_KEY) - 1;
    while (p < end && is_re_space(*p)) p++;
    if (p >= end || *p != ':') return NULL;
    p++;
    while (p < end && is_re_space(*p)) p++;
    if (p >= end) return NULL;
    if (*p == '{' || *p == '[') {
        char close = (*p == '{') ? '}' : ']';
        for (p++; p < end; p++) {
            char c = *p;
            if (c == close) return p + 1;
            if (c == '{' || c == '}' || c == '[' || c == ']') return NULL;
        }
        return NULL;
    }
    return p + 1;
}

/* Whether the value [p, e) is simple text (see the module's comment). */
static int simple(const char *p, const char *e) {
    if (p == e) return 1;
    switch (*p) {
    case '`': case '~': case '-': case '*': case '_': case '#': case '>': case ' ': case '\t':
        return 0;
    }
    int in_span = 0;
    for (; p < e; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x80 || c < 0x20) return 0;
        switch (c) {
        case '`':
            if (p + 1 < e && p[1] == '`') return 0;
            in_span = !in_span;
            break;
        case '<': case '>': case '[': case ']': case '!': case '*': case '_': case '&':
            if (!in_span) return 0;
            break;
        }
    }
    return !in_span;
}

static PyObject *fit_buffer(const char *body, Py_ssize_t n) {
    const char *end = body + n;
    if (memchr(body, '\\', (size_t)n) != NULL || find(body, end, LIT("\"arguments\"")) != NULL)
        Py_RETURN_NONE;

    /* Check first, then write: a body this declines costs no copy. The values found are
     * kept (start and end of each), so the write is copies alone. */
    Py_ssize_t docs = 0, cap = 0, grow = 0;
    const char **found = NULL;
    const char *data_end = body; /* the end of the last flat data value */
    /* Python splits at every documentation key: one that starts inside the part of the body
     * the previous key's check read (its markdown value and end, or its kept head) would cut
     * that part short there, so it is declined. Every key is looked at, overlapping ones
     * included. */
    const char *read_to = body;
    for (const char *k = next_key(body, end); k != NULL; k = next_key(k + 1, end)) {
        if (starts(k, end, LIT(DATA_KEY))) {
            if (k < data_end) goto decline; /* inside another data value */
            data_end = flat_end(k, end);
            if (data_end == NULL) goto decline;
            continue;
        }
        if (!starts(k, end, LIT(DOC_KEY))) continue;
        const char *doc = k;
        if (doc < read_to || doc < data_end) goto decline;
        const char *h = doc + sizeof(DOC_KEY) - 1;
        if (starts(h, end, LIT(MD_HEAD))) {
            const char *v = h + sizeof(MD_HEAD) - 1;
            const char *q = memchr(v, '"', (size_t)(end - v));
            if (q == NULL || q + 1 >= end || q[1] != '}' || !simple(v, q)) goto decline;
            if (docs == cap) {
                cap = cap ? cap * 2 : 1024;
                const char **more = PyMem_Realloc(found, (size_t)cap * 2 * sizeof(*found));
                if (more == NULL) {
                    PyMem_Free(found);
                    return PyErr_NoMemory();
                }
                found = more;
            }
            found[2 * docs] = v, found[2 * docs + 1] = q;
            docs++;
            grow += 1; /* "plaintext" is a byte longer than "markdown" */
            for (const char *c = v; c < q; c++) grow -= (*c == '`');
            read_to = q + 2;
        } else if (starts(h, end, LIT(":\""))) {
            read_to = h + 2;
        } else if (starts(h, end, LIT(PLAIN_HEAD))) {
            read_to = h + sizeof(PLAIN_HEAD) - 1;
        } else if (h < end && (*h == ',' || *h == '}' || *h == ']')) {
            read_to = h + 1;
        } else {
            goto decline;
        }
    }
    if (docs == 0) goto decline;

    PyObject *out = PyBytes_FromStringAndSize(NULL, n + grow);
    if (out == NULL) {
        PyMem_Free(found);
        return NULL;
    }
    char *w = PyBytes_AS_STRING(out);
    const char *p = body;
    const size_t head = sizeof(MD_HEAD) - 1, plain = sizeof(PLAIN_HEAD) - 1;
    for (Py_ssize_t i = 0; i < docs; i++) {
        const char *v = found[2 * i], *q = found[2 * i + 1];
        const char *h = v - head;
        memcpy(w, p, (size_t)(h - p));
        w += h - p;
        memcpy(w, PLAIN_HEAD, plain);
        w += plain;
        for (const char *c = v; c < q; c++)
            if (*c != '`') *w++ = *c;
        p = q; /* the closing quote and brace go with what follows */
    }
    PyMem_Free(found);
    memcpy(w, p, (size_t)(end - p));
    w += end - p;
    if (w - PyBytes_AS_STRING(out) != n + grow) {
        Py_DECREF(out);
        PyErr_SetString(PyExc_AssertionError, "fit_markdown_docs: size mismatch");
        return NULL;
    }
    return out;

decline:
    PyMem_Free(found);
    Py_RETURN_NONE;
}

static PyObject *fit_markdown_docs(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *out = fit_buffer(view.buf, view.len);
    PyBuffer_Release(&view);
    return out;
}

static PyObject *contains(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer hay, needle;
    if (!PyArg_ParseTuple(args, "y*y*:contains", &hay, &needle)) return NULL;
    int found = needle.len == 0 ||
                memmem(hay.buf, (size_t)hay.len, needle.buf, (size_t)needle.len) != NULL;
    PyBuffer_Release(&hay);
    PyBuffer_Release(&needle);
    return PyBool_FromLong(found);
}


/* -- framing ---------------------------------------------------------------------------------- */

static const char CL[] = "Content-Length: ";

static PyObject *split_frames(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t start;
    unsigned long long max_size;
    if (!PyArg_ParseTuple(args, "y*nK:split_frames", &view, &start, &max_size)) return NULL;
    PyObject *bodies = PyList_New(0);
    if (bodies == NULL) goto fail;
    const char *buf = view.buf;
    Py_ssize_t n = view.len, pos = start < 0 ? 0 : start;
    const size_t cl = sizeof(CL) - 1;
    while (pos < n && (size_t)(n - pos) > cl && memcmp(buf + pos, CL, cl) == 0) {
        Py_ssize_t p = pos + (Py_ssize_t)cl, digits = 0;
        unsigned long long length = 0;
        while (p < n && buf[p] >= '0' && buf[p] <= '9' && digits < 19) {
            length = length * 10 + (unsigned long long)(buf[p] - '0');
            p++;
            digits++;
        }
        /* 19 digits never overflow 64 bits unsigned (the largest is below 10^19 < 2^64) */
        if (digits == 0 || n - p < 4 || memcmp(buf + p, "\r\n\r\n", 4) != 0) break;
        if (length > max_size) break;
        p += 4;
        if ((unsigned long long)(n - p) < length) break;
        PyObject *body = PyBytes_FromStringAndSize(buf + p, (Py_ssize_t)length);
        if (body == NULL) goto fail;
        int appended = PyList_Append(bodies, body);
        Py_DECREF(body);
        if (appended < 0) goto fail;
        pos = p + (Py_ssize_t)length;
    }
    PyBuffer_Release(&view);
    PyObject *out = Py_BuildValue("(Nn)", bodies, pos);
    return out;

fail:
    Py_XDECREF(bodies);
    PyBuffer_Release(&view);
    return NULL;
}

/* -- responses -------------------------------------------------------------------------------- */

static Py_ssize_t skip_re_space(const char *b, Py_ssize_t i, Py_ssize_t n) {
    while (i < n && is_re_space(b[i])) i++;
    return i;
}

/* `"jsonrpc"\s*:\s*"2\.0"\s*,\s*` at `i`: the offset after it, or -1. */
static Py_ssize_t jsonrpc_member(const char *b, Py_ssize_t i, Py_ssize_t n) {
    static const char KEY[] = "\"jsonrpc\"", VALUE[] = "\"2.0\"";
    if (n - i < (Py_ssize_t)sizeof(KEY) - 1 || memcmp(b + i, KEY, sizeof(KEY) - 1) != 0)
        return -1;
    i = skip_re_space(b, i + (Py_ssize_t)sizeof(KEY) - 1, n);
    if (i >= n || b[i] != ':') return -1;
    i = skip_re_space(b, i + 1, n);
    if (n - i < (Py_ssize_t)sizeof(VALUE) - 1 || memcmp(b + i, VALUE, sizeof(VALUE) - 1) != 0)
        return -1;
    i = skip_re_space(b, i + (Py_ssize_t)sizeof(VALUE) - 1, n);
    if (i >= n || b[i] != ',') return -1;
    return skip_re_space(b, i + 1, n);
}

static PyObject *sniff_response(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const char *b = view.buf;
    Py_ssize_t n = view.len, i = 0, j, digits_at, digits_end;
    PyObject *out = NULL;
    if (n < 1 || b[0] != '{') goto none;
    i = skip_re_space(b, 1, n);
    j = jsonrpc_member(b, i, n);
    if (j >= 0) i = j;
    if (n - i < 4 || memcmp(b + i, "\"id\"", 4) != 0) goto none;
    i = skip_re_space(b, i + 4, n);
    if (i >= n || b[i] != ':') goto none;
    i = skip_re_space(b, i + 1, n);
    digits_at = i;
    while (i < n && b[i] >= '0' && b[i] <= '9') i++;
    digits_end = i;
    if (digits_end == digits_at) goto none;
    i = skip_re_space(b, i, n);
    if (i >= n || b[i] != ',') goto none;
    i = skip_re_space(b, i + 1, n);
    j = jsonrpc_member(b, i, n);
    if (j >= 0) i = j;
    /* (?="(?:result|error)"\s*:) */
    if (n - i >= 8 && memcmp(b + i, "\"result\"", 8) == 0)
        j = i + 8;
    else if (n - i >= 7 && memcmp(b + i, "\"error\"", 7) == 0)
        j = i + 7;
    else
        goto none;
    j = skip_re_space(b, j, n);
    if (j >= n || b[j] != ':') goto none;
    {
        PyObject *id;
        if (digits_end - digits_at <= 18) {
            long long v = 0;
            for (Py_ssize_t k = digits_at; k < digits_end; k++) v = v * 10 + (b[k] - '0');
            id = PyLong_FromLongLong(v);
        } else {
            PyObject *text = PyUnicode_FromStringAndSize(b + digits_at, digits_end - digits_at);
            if (text == NULL) goto done;
            id = PyLong_FromUnicodeObject(text, 10);
            Py_DECREF(text);
        }
        if (id == NULL) goto done;
        out = Py_BuildValue("(Nn)", id, i);
    }
    goto done;
none:
    out = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return out;
}

static const char RESPONSE_HEAD[] = "{\"jsonrpc\":\"2.0\",\"id\":";

static PyObject *rewrite_response_id(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t offset;
    PyObject *new_id;
    if (!PyArg_ParseTuple(args, "y*nO:rewrite_response_id", &view, &offset, &new_id)) return NULL;
    char idbuf[32];
    const char *id_text = NULL;
    Py_ssize_t id_len = 0;
    PyObject *out = NULL;
    if (PyLong_CheckExact(new_id)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(new_id, &overflow);
        if (v == -1 && PyErr_Occurred()) goto done;
        if (overflow) goto none;  /* orjson refuses ints past 64 bits; the Python says how */
        id_len = snprintf(idbuf, sizeof idbuf, "%lld", v);
        id_text = idbuf;
    } else if (PyUnicode_CheckExact(new_id) && PyUnicode_IS_ASCII(new_id)) {
        Py_ssize_t len = PyUnicode_GET_LENGTH(new_id);
        const char *s = (const char *)PyUnicode_DATA(new_id);
        for (Py_ssize_t k = 0; k < len; k++)
            if (s[k] < 0x20 || s[k] == '"' || s[k] == '\\' || s[k] == 0x7f) goto none;
        id_text = s;
        id_len = len;
    } else {
        goto none;
    }
    if (offset < 0 || offset > view.len) {
        PyErr_SetString(PyExc_ValueError, "rewrite_response_id: offset out of range");
        goto done;
    }
    {
        int quoted = !PyLong_CheckExact(new_id);
        Py_ssize_t head = (Py_ssize_t)sizeof(RESPONSE_HEAD) - 1;
        Py_ssize_t rest = view.len - offset;
        Py_ssize_t size = head + id_len + 2 * quoted + 1 + rest;
        out = PyBytes_FromStringAndSize(NULL, size);
        if (out == NULL) goto done;
        char *w = PyBytes_AS_STRING(out);
        memcpy(w, RESPONSE_HEAD, (size_t)head);
        w += head;
        if (quoted) *w++ = '"';
        memcpy(w, id_text, (size_t)id_len);
        w += id_len;
        if (quoted) *w++ = '"';
        *w++ = ',';
        memcpy(w, (const char *)view.buf + offset, (size_t)rest);
    }
    goto done;
none:
    out = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"contains", contains, METH_VARARGS,
     "`needle in haystack` for two bytes, by the C library's memmem (about three times "
     "CPython's search where the needle is absent from a large haystack)."},
    {"fit_markdown_docs", fit_markdown_docs, METH_O,
     "fit_raw._fast_markdown of an answer whose markdown documentation is simple text; None "
     "for any other."},
    {"split_frames", split_frames, METH_VARARGS,
     "The complete frames with a plain Content-Length header from `start`: their bodies and "
     "the offset where the first other one starts (see wire/framing.py)."},
    {"sniff_response", sniff_response, METH_O,
     "wire.messages.sniff_response: (id, offset of \"result\"/\"error\") of a response that "
     "plainly starts as one, else None."},
    {"rewrite_response_id", rewrite_response_id, METH_VARARGS,
     "wire.messages.rewrite_response_id for an int id or a plain ASCII string id; None for "
     "another."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "lspmux._speedups",
    "The work of lspmux's hot paths in C (optional; see lspmux/speedups.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
