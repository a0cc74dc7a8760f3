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
 *     fit_hover_markdown(body: bytes | bytearray) -> bytes | None
 *
 * A hover's markdown fitted in place for a client without it (`fit_raw.fit_found`); see its
 * section below. The native lane fits such answers with it too.
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
 *
 *     configure(batch, exchange_type, request_run, answer_run, lane_routes, failed)
 *     run_requests(run, items, start) -> int;  run_answers(run, items, start) -> int
 *
 * The native lane (`session/native.py`): the fast lane's work for a run of a read's plain
 * requests, and of a server read's plain answers to them, with the runs' guards; see the
 * sections below.
 *
 *     Reader(conn, batch, flush, failed)  (nbytes) -> None;  .get_buffer(sizehint)
 *
 * `Connection.buffer_updated` and `get_buffer` for the usual read (`wire/connection.py`): its
 * frames, the connection's run and the held writes in one call; see its section.
 */
#define _GNU_SOURCE /* memmem */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <structmember.h> /* T_OBJECT_EX, READONLY: the slots an exchange is written through */

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

/* `fit(body)` of the bytes of `arg` (bytes or bytearray). */
static PyObject *on_bytes(PyObject *arg, PyObject *(*fit)(const char *, Py_ssize_t)) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *out = fit(view.buf, view.len);
    PyBuffer_Release(&view);
    return out;
}

static PyObject *fit_markdown_docs(PyObject *self, PyObject *arg) {
    (void)self;
    return on_bytes(arg, fit_buffer);
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


/* -- arguments of the calls made at every read (METH_FASTCALL: no tuple, no format string) -- */

static int fast_nargs(const char *name, Py_ssize_t nargs, Py_ssize_t want) {
    if (nargs == want) return 0;
    PyErr_Format(PyExc_TypeError, "%s() takes exactly %zd arguments (%zd given)", name, want,
                 nargs);
    return -1;
}

static int fast_list(const char *name, PyObject *arg, PyObject **out) {
    if (PyList_Check(arg)) {
        *out = arg;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s() argument must be list, not %.50s", name,
                 Py_TYPE(arg)->tp_name);
    return -1;
}

static int fast_index(PyObject *arg, Py_ssize_t *out) {
    *out = PyLong_AsSsize_t(arg);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* -- framing ---------------------------------------------------------------------------------- */

static const char CL[] = "Content-Length: ";

/* The bodies of the complete frames of `buf[start:n]` with a plain header, appended to
 * `bodies`: the offset where the first other frame starts, or -1 on an error. */
static Py_ssize_t frames_into(const char *buf, Py_ssize_t n, Py_ssize_t start,
                              unsigned long long max_size, PyObject *bodies) {
    Py_ssize_t pos = start < 0 ? 0 : start;
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
        if (body == NULL) return -1;
        int appended = PyList_Append(bodies, body);
        Py_DECREF(body);
        if (appended < 0) return -1;
        pos = p + (Py_ssize_t)length;
    }
    return pos;
}

static PyObject *split_frames(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    Py_buffer view;
    Py_ssize_t start;
    unsigned long long max_size;
    if (fast_nargs("split_frames", nargs, 3) < 0 || fast_index(args[1], &start) < 0) return NULL;
    if (!PyLong_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "split_frames() max_size must be int");
        return NULL;
    }
    max_size = PyLong_AsUnsignedLongLongMask(args[2]);
    if (max_size == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *bodies = PyList_New(0);
    Py_ssize_t pos = bodies == NULL ? -1 : frames_into(view.buf, view.len, start, max_size, bodies);
    PyBuffer_Release(&view);
    if (pos < 0) {
        Py_XDECREF(bodies);
        return NULL;
    }
    return Py_BuildValue("(Nn)", bodies, pos);
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

/* The sniffed head of a response (`_SNIFF`): 1 with its id's digits [*digits_at, *digits_end)
 * and the offset of its "result"/"error" key; 0 for another body. */
static int sniff(const char *b, Py_ssize_t n, Py_ssize_t *digits_at, Py_ssize_t *digits_end,
                 Py_ssize_t *offset) {
    Py_ssize_t i, j;
    if (n < 1 || b[0] != '{') return 0;
    i = skip_re_space(b, 1, n);
    j = jsonrpc_member(b, i, n);
    if (j >= 0) i = j;
    if (n - i < 4 || memcmp(b + i, "\"id\"", 4) != 0) return 0;
    i = skip_re_space(b, i + 4, n);
    if (i >= n || b[i] != ':') return 0;
    i = skip_re_space(b, i + 1, n);
    *digits_at = i;
    while (i < n && b[i] >= '0' && b[i] <= '9') i++;
    *digits_end = i;
    if (*digits_end == *digits_at) return 0;
    i = skip_re_space(b, i, n);
    if (i >= n || b[i] != ',') return 0;
    i = skip_re_space(b, i + 1, n);
    j = jsonrpc_member(b, i, n);
    if (j >= 0) i = j;
    /* (?="(?:result|error)"\s*:) */
    if (n - i >= 8 && memcmp(b + i, "\"result\"", 8) == 0)
        j = i + 8;
    else if (n - i >= 7 && memcmp(b + i, "\"error\"", 7) == 0)
        j = i + 7;
    else
        return 0;
    j = skip_re_space(b, j, n);
    if (j >= n || b[j] != ':') return 0;
    *offset = i;
    return 1;
}

/* The int of a sniffed id's digits. */
static PyObject *sniffed_id(const char *b, Py_ssize_t at, Py_ssize_t end) {
    if (end - at <= 18) {
        long long v = 0;
        for (Py_ssize_t k = at; k < end; k++) v = v * 10 + (b[k] - '0');
        return PyLong_FromLongLong(v);
    }
    PyObject *text = PyUnicode_FromStringAndSize(b + at, end - at);
    if (text == NULL) return NULL;
    PyObject *id = PyLong_FromUnicodeObject(text, 10);
    Py_DECREF(text);
    return id;
}

static PyObject *sniff_response(PyObject *self, PyObject *arg) {
    (void)self;
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Py_ssize_t at, end, offset;
    PyObject *out;
    if (sniff(view.buf, view.len, &at, &end, &offset)) {
        PyObject *id = sniffed_id(view.buf, at, end);
        out = id == NULL ? NULL : Py_BuildValue("(Nn)", id, offset);
    } else {
        out = Py_NewRef(Py_None);
    }
    PyBuffer_Release(&view);
    return out;
}

static const char RESPONSE_HEAD[] = "{\"jsonrpc\":\"2.0\",\"id\":";

/* An id as orjson writes it, for an int of 64 bits or a plain ASCII string: 1 with its text in
 * *text (in `buf` or the string's own), its length and whether it is quoted; 0 for another
 * id; -1 on an error. */
static int id_text(PyObject *id, char buf[32], const char **text, Py_ssize_t *len, int *quoted) {
    if (PyLong_CheckExact(id)) {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(id, &overflow);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (overflow) return 0; /* orjson refuses ints past 64 bits; the Python says how */
        unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
        char *w = buf + 32;
        do {
            *--w = (char)('0' + u % 10);
            u /= 10;
        } while (u > 0);
        if (v < 0) *--w = '-';
        *len = buf + 32 - w;
        *text = w;
        *quoted = 0;
        return 1;
    }
    if (PyUnicode_CheckExact(id) && PyUnicode_IS_ASCII(id)) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(id);
        const char *s = (const char *)PyUnicode_DATA(id);
        for (Py_ssize_t k = 0; k < n; k++)
            if (s[k] < 0x20 || s[k] == '"' || s[k] == '\\' || s[k] == 0x7f) return 0;
        *text = s;
        *len = n;
        *quoted = 1;
        return 1;
    }
    return 0;
}

/* The digits of n at the end of a buffer of at least 20 bytes: where they start. */
static char *digits(char *end, unsigned long long n) {
    char *p = end;
    do {
        *--p = (char)('0' + n % 10);
        n /= 10;
    } while (n > 0);
    return p;
}

/* `rewrite_response_id(body, offset, new_id)`, framed or not: with `framed`, the header
 * `Content-Length: N\r\n\r\n` first, in the same bytes (*body_len: N). None for an id the C
 * does not write. */
static PyObject *rewritten(const char *body, Py_ssize_t n, Py_ssize_t offset, PyObject *new_id,
                           int framed, Py_ssize_t *body_len) {
    char idbuf[32], lenbuf[32];
    const char *text;
    Py_ssize_t len;
    int quoted;
    int ok = id_text(new_id, idbuf, &text, &len, &quoted);
    if (ok < 0) return NULL;
    if (ok == 0) return Py_NewRef(Py_None);
    if (offset < 0 || offset > n) {
        PyErr_SetString(PyExc_ValueError, "rewrite_response_id: offset out of range");
        return NULL;
    }
    Py_ssize_t head = (Py_ssize_t)sizeof(RESPONSE_HEAD) - 1, rest = n - offset;
    Py_ssize_t size = head + len + 2 * quoted + 1 + rest;
    const char *count = lenbuf + sizeof lenbuf;
    Py_ssize_t frame = 0;
    if (framed) {
        count = digits(lenbuf + sizeof lenbuf, (unsigned long long)size);
        frame = (Py_ssize_t)(sizeof(CL) - 1) + (lenbuf + sizeof lenbuf - count) + 4;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, frame + size);
    if (out == NULL) return NULL;
    char *w = PyBytes_AS_STRING(out);
    if (framed) {
        memcpy(w, CL, sizeof(CL) - 1);
        w += sizeof(CL) - 1;
        memcpy(w, count, (size_t)(lenbuf + sizeof lenbuf - count));
        w += lenbuf + sizeof lenbuf - count;
        memcpy(w, "\r\n\r\n", 4);
        w += 4;
    }
    memcpy(w, RESPONSE_HEAD, (size_t)head);
    w += head;
    if (quoted) *w++ = '"';
    memcpy(w, text, (size_t)len);
    w += len;
    if (quoted) *w++ = '"';
    *w++ = ',';
    memcpy(w, body + offset, (size_t)rest);
    if (body_len != NULL) *body_len = size;
    return out;
}

static PyObject *rewrite_response_id(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer view;
    Py_ssize_t offset;
    PyObject *new_id;
    if (!PyArg_ParseTuple(args, "y*nO:rewrite_response_id", &view, &offset, &new_id)) return NULL;
    PyObject *out = rewritten(view.buf, view.len, offset, new_id, 0, NULL);
    PyBuffer_Release(&view);
    return out;
}

/* -- a hover's markdown, fitted in place --------------------------------------------------------
 *
 *     fit_hover_markdown(body: bytes | bytearray) -> bytes | None
 *
 * `routing/fit_raw.py`'s `fit_found("hover", body, client)` for a client without markdown
 * hovers, on the answers servers give most: `"result":{"contents":{"kind":"markdown","value":
 * "…"}…` (white space between the tokens as JSON allows, `contents` first, `kind` before
 * `value`, nothing after it) whose text is code blocks and lines without markup. The value
 * becomes `{"kind":"plaintext","value":…}` with `adapt.markdown_to_plaintext`'s text — fences
 * dropped, code and plain lines kept, a rule (`---`) made a blank line, blank lines collapsed
 * to one, none at the end — and every other byte is kept. None for anything else: another
 * shape, `"contents"` again after it, an escape other than `\n`, `\"` and (in code) `\\`, a
 * byte that is not printable ASCII, or, outside code, a line other than a rule whose first
 * character may open a block (`` ` ~ - * _ # > ``) or that holds an inline mark
 * (`\ < > [ ] ! * _ ` &`): the Python parses those.
 */

/* `p` past white space and the literal `lit` (of `len` bytes): where it ends, or NULL. */
static const char *json_token(const char *p, const char *end, const char *lit, size_t len) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    if ((size_t)(end - p) < len || memcmp(p, lit, len) != 0) return NULL;
    return p + len;
}

/* A thematic break (`adapt._RULE`): at most three spaces, then three or more of one of
 * `- * _` with spaces between them and after; `s` is the first byte that is not a space. */
static int is_rule(const char *line, const char *s, const char *end) {
    if (s - line > 3 || (*s != '-' && *s != '*' && *s != '_')) return 0;
    int marks = 0;
    for (const char *q = s; q < end; q++) {
        if (*q == *s)
            marks++;
        else if (*q != ' ')
            return 0;
    }
    return marks >= 3;
}

static const char HOVER_PLAIN_HEAD[] = "\"result\":{\"contents\":{\"kind\":\"plaintext\",\"value\":\"";

/* The fitted answer from its "result" key on (`offset`): a new bytes, Py_None when the Python
 * must fit it, NULL on an error. */
static PyObject *hover_plain_tail(const char *b, Py_ssize_t n, Py_ssize_t offset) {
    const char *end = b + n, *p = b + offset;
#define EXPECT(lit) if ((p = json_token(p, end, lit, sizeof(lit) - 1)) == NULL) Py_RETURN_NONE
    EXPECT("\"result\""); EXPECT(":"); EXPECT("{"); EXPECT("\"contents\""); EXPECT(":");
    EXPECT("{"); EXPECT("\"kind\""); EXPECT(":"); EXPECT("\"markdown\""); EXPECT(",");
    EXPECT("\"value\""); EXPECT(":"); EXPECT("\"");
    const char *value = p;
    /* the value's end and the object's: the bytes after them are kept */
    const char *close = value;
    while (close < end && *close != '"') close += *close == '\\' ? 2 : 1;
    if (close >= end) Py_RETURN_NONE;
    p = close + 1;
    EXPECT("}");
#undef EXPECT
    const char *rest = p;
    if (memmem(rest, (size_t)(end - rest), "\"contents\"", 10) != NULL) Py_RETURN_NONE;
    Py_ssize_t head = (Py_ssize_t)sizeof(HOVER_PLAIN_HEAD) - 1;
    PyObject *out = PyBytes_FromStringAndSize(NULL, head + (close - value) + 2 + (end - rest));
    if (out == NULL) return NULL;
    char *w0 = PyBytes_AS_STRING(out), *w = w0 + head;
    memcpy(w0, HOVER_PLAIN_HEAD, (size_t)head);
    int in_code = 0, emitted = 0, blank_due = 0;
    const char *line = value;
    for (p = value; p <= close; ) {
        if (p < close && *p != '\\') {
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f) goto decline;
            p++;
            continue;
        }
        if (p < close && p[1] != 'n') { /* `\"` or `\\`, read with the line below */
            if (p[1] != '"' && p[1] != '\\') goto decline;
            p += 2;
            continue;
        }
        /* a line [line, p): a fence, code, blank, or plain text */
        const char *s = line;
        while (s < p && *s == ' ') s++;
        if (p - s >= 3 && (memcmp(s, "```", 3) == 0 || memcmp(s, "~~~", 3) == 0)) {
            in_code = !in_code;
        } else if (s == p || (!in_code && is_rule(line, s, p))) {
            blank_due = emitted; /* one blank line between two others, none at the end */
        } else {
            if (!in_code) {
                if (strchr("`~-*_#>", *s) != NULL) goto decline;
                for (const char *q = s; q < p; q++) {
                    if (*q == '\\') {
                        if (q[1] == '\\') goto decline; /* a markdown escape */
                        q++;
                    } else if (strchr("<>[]!*_`&", *q) != NULL) {
                        goto decline;
                    }
                }
            }
            if (emitted) { memcpy(w, "\\n", 2); w += 2; }
            if (blank_due) { memcpy(w, "\\n", 2); w += 2; }
            memcpy(w, line, (size_t)(p - line));
            w += p - line;
            emitted = 1;
            blank_due = 0;
        }
        p += 2; /* past `\n`, or past the closing quote: the loop ends */
        line = p;
    }
    *w++ = '"';
    *w++ = '}';
    memcpy(w, rest, (size_t)(end - rest));
    w += end - rest;
    if (_PyBytes_Resize(&out, w - w0) < 0) return NULL;
    return out;
decline:
    Py_DECREF(out);
    Py_RETURN_NONE;
}

/* The whole answer `b` fitted (its head kept before the new tail), or Py_None. */
static PyObject *hover_fitted(const char *b, Py_ssize_t n) {
    Py_ssize_t at, digits_end, offset;
    if (!sniff(b, n, &at, &digits_end, &offset)) Py_RETURN_NONE;
    PyObject *tail = hover_plain_tail(b, n, offset);
    if (tail == NULL || tail == Py_None) return tail;
    PyObject *out = PyBytes_FromStringAndSize(NULL, offset + PyBytes_GET_SIZE(tail));
    if (out != NULL) {
        memcpy(PyBytes_AS_STRING(out), b, (size_t)offset);
        memcpy(PyBytes_AS_STRING(out) + offset, PyBytes_AS_STRING(tail),
               (size_t)PyBytes_GET_SIZE(tail));
    }
    Py_DECREF(tail);
    return out;
}

static PyObject *fit_hover_markdown(PyObject *self, PyObject *arg) {
    (void)self;
    return on_bytes(arg, hover_fitted);
}

/* -- the native lane -------------------------------------------------------------------------
 *
 * `session/fast.py`'s lane, one read at a time: `requests_core` takes a client's plain
 * requests of one read in a row and does for each what `Lane.relay` does (the same checks, on
 * the same tables of the session, and the same effects in the same order); `answers_core`
 * takes a server's plain answers to those requests and does what `FastExchange.raw` does for
 * them (the runs, `run_requests` and `run_answers`, call them).
 * Both stop at the first message that is anything else, or that needs what only the Python
 * does (a table without the entry yet, a timer to set, a log line), and return its index: the
 * connection hands it to the Python, then calls again for the rest. So no message is handled
 * differently, only sooner; see `session/native.py` for the Python side.
 *
 * A run reads each table once: what it read of the session, of a server and of a connection
 * is kept for the run's next messages (`LaneRun`, `Answers`), since no Python runs between
 * them, and read again after the Python did (a shared server made to hold the client's text).
 * The exchange's slots are written and read in place (`ex_offset`), as the slot descriptors
 * do.
 */

static PyObject *s_state, *s_running, *s_uri_backends, *s_supports, *s_position_encoding,
    *s_encoding, *s_conn_, *s_closed, *s_debug, *s_id_prefix, *s_writer, *s_is_closing,
    *s_loop, *s_config, *s_request_timeout, *s_next_id, *s_deadlines, *s_pending, *s_sweep,
    *s_sweep_at, *s_seq, *s_pool, *s_shared, *s_documents, *s_ensure_holds, *s_origin,
    *s_last_origin, *s_link, *s_inflight, *s_session, *s_client_id, *s_method, *s_params,
    *s_targets, *s_answered, *s_per_backend, *s_fit_for, *s_fit_kind, *s_backend, *s_family,
    *s_timeout, *s_deadline, *s_last_used, *s_held, *s_held_size, *s_idle, *s_conn,
    *s_client_capabilities, *k_jsonrpc, *k_id, *k_method, *k_params, *k_locate,
    *k_text_document, *k_uri, *k_position, *k_range, *k_line, *k_character, *k_start, *k_end,
    *v_two, *v_empty, *s_body, *s_congestion, *v_hover, *s_docs_, *s_current, *s_holders,
    *s_dirty;
static PyObject *orjson_loads, *orjson_dumps, *heappush, *v_zero_float;

static int lane_init(void) {
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return -1
    INTERN(s_state, "state"); INTERN(s_running, "running");
    INTERN(s_uri_backends, "_uri_backends"); INTERN(s_supports, "_supports");
    INTERN(s_position_encoding, "position_encoding"); INTERN(s_encoding, "encoding");
    INTERN(s_conn_, "_conn"); INTERN(s_closed, "_closed"); INTERN(s_debug, "_debug");
    INTERN(s_id_prefix, "_id_prefix"); INTERN(s_writer, "_writer");
    INTERN(s_is_closing, "is_closing"); INTERN(s_loop, "_loop"); INTERN(s_config, "config");
    INTERN(s_request_timeout, "request_timeout"); INTERN(s_next_id, "_next_id");
    INTERN(s_deadlines, "_deadlines"); INTERN(s_pending, "_pending"); INTERN(s_sweep, "_sweep");
    INTERN(s_sweep_at, "_sweep_at"); INTERN(s_seq, "_seq"); INTERN(s_pool, "pool");
    INTERN(s_shared, "shared"); INTERN(s_documents, "documents");
    INTERN(s_ensure_holds, "ensure_holds"); INTERN(s_origin, "_origin");
    INTERN(s_last_origin, "last_origin"); INTERN(s_link, "link"); INTERN(s_inflight, "inflight");
    INTERN(s_session, "session"); INTERN(s_client_id, "client_id"); INTERN(s_method, "method");
    INTERN(s_params, "params"); INTERN(s_targets, "targets"); INTERN(s_answered, "answered");
    INTERN(s_per_backend, "per_backend"); INTERN(s_fit_for, "fit_for");
    INTERN(s_fit_kind, "fit_kind"); INTERN(s_backend, "backend"); INTERN(s_family, "family");
    INTERN(s_timeout, "timeout"); INTERN(s_deadline, "deadline");
    INTERN(s_last_used, "last_used"); INTERN(s_held, "_held"); INTERN(s_held_size, "_held_size");
    INTERN(s_idle, "_idle"); INTERN(s_conn, "conn");
    INTERN(s_client_capabilities, "client_capabilities");
    INTERN(k_jsonrpc, "jsonrpc"); INTERN(k_id, "id"); INTERN(k_method, "method");
    INTERN(k_params, "params"); INTERN(k_locate, "locate");
    INTERN(k_text_document, "textDocument"); INTERN(k_uri, "uri");
    INTERN(k_position, "position"); INTERN(k_range, "range"); INTERN(k_line, "line");
    INTERN(k_character, "character"); INTERN(k_start, "start"); INTERN(k_end, "end");
    INTERN(v_two, "2.0"); INTERN(v_empty, ""); INTERN(s_body, "_body");
    INTERN(s_congestion, "_congestion"); INTERN(v_hover, "hover"); INTERN(s_docs_, "_docs");
    INTERN(s_current, "current"); INTERN(s_holders, "holders"); INTERN(s_dirty, "dirty");
#undef INTERN
    return (v_zero_float = PyFloat_FromDouble(0.0)) == NULL ? -1 : 0;
}

/* The functions the lane calls: orjson's and heapq's, imported at the first run. */
static int lane_imports(void) {
    if (heappush != NULL) return 0;
    PyObject *orjson = PyImport_ImportModule("orjson");
    if (orjson == NULL) return -1;
    orjson_loads = PyObject_GetAttrString(orjson, "loads");
    orjson_dumps = PyObject_GetAttrString(orjson, "dumps");
    Py_DECREF(orjson);
    PyObject *heapq = PyImport_ImportModule("heapq");
    if (heapq == NULL) return -1;
    heappush = PyObject_GetAttrString(heapq, "heappush");
    Py_DECREF(heapq);
    return (orjson_loads && orjson_dumps && heappush) ? 0 : -1;
}

/* obj.name is `want` (identity: None, True, False); -1 on an error. */
static int attr_is(PyObject *obj, PyObject *name, PyObject *want) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return -1;
    int same = v == want;
    Py_DECREF(v);
    return same;
}

/* obj.state == "running"; -1 on an error. */
static int is_running(PyObject *obj) {
    PyObject *v = PyObject_GetAttr(obj, s_state);
    if (v == NULL) return -1;
    int eq = PyUnicode_CheckExact(v) ? PyUnicode_Compare(v, s_running) == 0 : 0;
    Py_DECREF(v);
    return eq;
}

/* `params._is_position(value)`: a dict whose line and character are ints (not bools). */
static int is_position(PyObject *value) {
    if (value == NULL || !PyDict_Check(value)) return 0;
    PyObject *line = PyDict_GetItemWithError(value, k_line);
    PyObject *character = PyDict_GetItemWithError(value, k_character);
    return line != NULL && character != NULL && PyLong_CheckExact(line) &&
           PyLong_CheckExact(character);
}

/* `writer is not None and not writer.is_closing()`: 1 when it can be written to. */
static int writable(PyObject *conn) {
    PyObject *w = PyObject_GetAttr(conn, s_writer);
    if (w == NULL) return -1;
    if (w == Py_None) {
        Py_DECREF(w);
        return 0;
    }
    PyObject *closing = PyObject_CallMethodNoArgs(w, s_is_closing);
    Py_DECREF(w);
    if (closing == NULL) return -1;
    int ok = closing == Py_False;
    Py_DECREF(closing);
    return ok;
}

/* `d[key] = value`, a plain dict's way when it is one. */
static int set_item(PyObject *d, PyObject *key, PyObject *value) {
    return PyDict_CheckExact(d) ? PyDict_SetItem(d, key, value) : PyObject_SetItem(d, key, value);
}

/* -- an exchange's slots ---------------------------------------------------------------------- */

enum {
    EX_SESSION, EX_LINK, EX_CLIENT_ID, EX_METHOD, EX_PARAMS, EX_TARGETS, EX_ANSWERED,
    EX_PER_BACKEND, EX_FIT_FOR, EX_FIT_KIND, EX_BACKEND, EX_FAMILY, EX_TIMEOUT, EX_DEADLINE,
    EX_BODY, EX_SLOTS
};

/* The type whose slot offsets `ex_offset` holds (a strong reference: an address is not
 * reused while it is held). */
static PyObject *ex_type;
static Py_ssize_t ex_offset[EX_SLOTS];

/* The offset of the object slot `name` in instances of `type`: the first slot of that name in
 * its MRO (a property over a slot, as `FastExchange.params`, is passed over for the slot it
 * stands on); -1 with TypeError when there is none, or it is not a writable object slot. */
static Py_ssize_t slot_offset(PyTypeObject *type, PyObject *name) {
    PyObject *mro = type->tp_mro;
    for (Py_ssize_t k = 0; mro != NULL && k < PyTuple_GET_SIZE(mro); k++) {
        PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, k))->tp_dict;
        PyObject *d = dict == NULL ? NULL : PyDict_GetItemWithError(dict, name);
        if (d == NULL) {
            if (PyErr_Occurred()) return -1;
            continue;
        }
        if (!Py_IS_TYPE(d, &PyMemberDescr_Type)) continue;
        PyMemberDef *m = ((PyMemberDescrObject *)d)->d_member;
        if (m->type != T_OBJECT_EX || (m->flags & READONLY) || m->offset <= 0) break;
        return m->offset;
    }
    PyErr_Format(PyExc_TypeError, "lane: %R has no slot %R", type, name);
    return -1;
}

/* `ex_offset` for `type`. */
static int exchange_slots(PyObject *type) {
    if (type == ex_type) return 0;
    PyObject *names[EX_SLOTS] = {s_session, s_link, s_client_id, s_method, s_params, s_targets,
                                 s_answered, s_per_backend, s_fit_for, s_fit_kind, s_backend,
                                 s_family, s_timeout, s_deadline, s_body};
    Py_ssize_t offset[EX_SLOTS];
    for (int k = 0; k < EX_SLOTS; k++)
        if ((offset[k] = slot_offset((PyTypeObject *)type, names[k])) < 0) return -1;
    memcpy(ex_offset, offset, sizeof offset);
    Py_XSETREF(ex_type, Py_NewRef(type));
    return 0;
}

#define EX_SLOT(ex, k) ((PyObject **)((char *)(ex) + ex_offset[k]))

/* ex.<slot k> = v, as the slot's descriptor sets it. */
static void ex_set(PyObject *ex, int k, PyObject *v) {
    PyObject **p = EX_SLOT(ex, k), *old = *p;
    *p = Py_NewRef(v);
    Py_XDECREF(old);
}

/* ex.<slot k> (borrowed); NULL with AttributeError when it is unset. */
static PyObject *ex_get(PyObject *ex, int k) {
    PyObject *v = *EX_SLOT(ex, k);
    if (v == NULL) PyErr_SetString(PyExc_AttributeError, "lane: an exchange's slot is unset");
    return v;
}

/* -- what a connection holds during a read ------------------------------------------------------ */

/* `Writes.send_raw` inside a read, for one connection: its `_held` pieces and `_held_size` (the
 * size of their bodies), read at its first message of the run; the size is written back when
 * the run is done with the connection (`holder_sync`), or before the Python runs. */
typedef struct {
    PyObject *conn, *held;
    long long size, synced;
} Holder;

/* `obj.name = value` where it moved since it was last read or written (*synced): 0 or -1. */
static int write_back(PyObject *obj, PyObject *name, long long value, long long *synced) {
    if (value == *synced) return 0;
    PyObject *v = PyLong_FromLongLong(value);
    int rc = v == NULL ? -1 : PyObject_SetAttr(obj, name, v);
    Py_XDECREF(v);
    if (rc == 0) *synced = value;
    return rc;
}

/* `_held_size` written back: 0 or -1. */
static int holder_sync(Holder *h) {
    return h->conn == NULL ? 0 : write_back(h->conn, s_held_size, h->size, &h->synced);
}

/* Never called with an error set; the write back fails only out of memory. */
static void holder_clear(Holder *h) {
    if (holder_sync(h) < 0) PyErr_Clear();
    Py_CLEAR(h->conn);
    Py_CLEAR(h->held);
}

static int holder_open(Holder *h, PyObject *conn) {
    if (h->conn == conn) return 0;
    holder_clear(h);
    PyObject *held = PyObject_GetAttr(conn, s_held);
    if (held == NULL) return -1;
    if (!PyList_CheckExact(held)) {
        Py_DECREF(held);
        PyErr_SetString(PyExc_TypeError, "lane: _held is not a list");
        return -1;
    }
    PyObject *size = PyObject_GetAttr(conn, s_held_size);
    Py_ssize_t n = size == NULL ? -1 : PyLong_AsSsize_t(size);
    Py_XDECREF(size);
    if (n == -1 && PyErr_Occurred()) {
        Py_DECREF(held);
        return -1;
    }
    h->conn = Py_NewRef(conn);
    h->held = held;
    h->size = h->synced = n;
    return 0;
}

/* The pieces of one message (the body's length: `body_len`) held on the connection, and the
 * connection marked dirty when it held nothing yet. */
static int hold(Holder *h, PyObject *conn, PyObject *a, PyObject *b, Py_ssize_t body_len,
                PyObject *dirty) {
    if (holder_open(h, conn) < 0) return -1;
    if (PyList_GET_SIZE(h->held) == 0 && PyList_Append(dirty, conn) < 0) return -1;
    if (PyList_Append(h->held, a) < 0) return -1;
    if (b != NULL && PyList_Append(h->held, b) < 0) return -1;
    h->size += body_len;
    return 0;
}

/* `HEADER % n`. */
static PyObject *header(Py_ssize_t n) {
    char buf[64], *end = buf + sizeof buf - 4;
    char *p = digits(end, (unsigned long long)n);
    memcpy(end, "\r\n\r\n", 4);
    p -= sizeof(CL) - 1;
    memcpy(p, CL, sizeof(CL) - 1);
    return PyBytes_FromStringAndSize(p, buf + sizeof buf - p);
}

/* -- a request read in place, framed for the server ----------------------------------------- */

/* The request framed for the server: the header, and its body with the id `next_id` written
 * in place of its own (*body_len: the body's length). */
static PyObject *framed_request(const char *b, Py_ssize_t n, Py_ssize_t at, Py_ssize_t end,
                                long long next_id, Py_ssize_t *body_len) {
    char idbuf[32], lenbuf[32];
    char *id = digits(idbuf + sizeof idbuf, (unsigned long long)next_id);
    Py_ssize_t id_len = idbuf + sizeof idbuf - id;
    Py_ssize_t size = at + id_len + (n - end);
    char *count = digits(lenbuf + sizeof lenbuf, (unsigned long long)size);
    Py_ssize_t count_len = lenbuf + sizeof lenbuf - count;
    Py_ssize_t frame = (Py_ssize_t)(sizeof(CL) - 1) + count_len + 4;
    PyObject *out = PyBytes_FromStringAndSize(NULL, frame + size);
    if (out == NULL) return NULL;
    char *w = PyBytes_AS_STRING(out);
    memcpy(w, CL, sizeof(CL) - 1);
    w += sizeof(CL) - 1;
    memcpy(w, count, (size_t)count_len);
    w += count_len;
    memcpy(w, "\r\n\r\n", 4);
    w += 4;
    memcpy(w, b, (size_t)at);
    w += at;
    memcpy(w, id, (size_t)id_len);
    w += id_len;
    memcpy(w, b + end, (size_t)(n - end));
    *body_len = size;
    return out;
}

/* -- a request read in place ----------------------------------------------------------------------
 *
 * `scan_request` reads a plain request without building it: a JSON object whose members are
 * exactly "jsonrpc" ("2.0"), "id" (an int or a string), "method" (a string) and "params" (an
 * object, with "textDocument": {"uri": …} and, where present, a "position" or a "range" of
 * ints), in any order. It takes only what it reads as orjson would, and declines the rest (the
 * lane then parses the body with orjson): a string with an escape, a control or non-ASCII
 * byte; a number that is not an int of at most 18 digits; an object of more than
 * `SCAN_KEYS` members or with a key twice; nesting deeper than `SCAN_DEPTH`; a "locate" in
 * the params. So a request it takes is valid JSON whose parse is the one the lane needs, and
 * its bytes can go to the server as they are, with the server's id in place of the client's.
 */

#define SCAN_KEYS 16
#define SCAN_DEPTH 32

typedef struct {
    Py_ssize_t at, end;
} Span;

typedef struct {
    const char *b;
    Py_ssize_t n, i;
    int depth;
} Scan;

typedef struct {
    Span keys[SCAN_KEYS];
    int count;
} Members;

/* What `scan_request` read. */
typedef struct {
    Span id;                  /* the id's value, as written */
    Span id_text, method, uri; /* a string's characters, without its quotes */
    int id_is_string;
    long long id_int;
    int position, range; /* present, of ints */
} Scanned;

static void sc_space(Scan *s) {
    while (s->i < s->n && is_space(s->b[s->i])) s->i++;
}

static int span_is(const char *b, Span v, const char *lit) {
    size_t n = strlen(lit);
    return (size_t)(v.end - v.at) == n && memcmp(b + v.at, lit, n) == 0;
}

/* A string of printable ASCII without escapes at s->i; its characters in *out. */
static int sc_string(Scan *s, Span *out) {
    if (s->i >= s->n || s->b[s->i] != '"') return 0;
    Py_ssize_t i = s->i + 1;
    for (; i < s->n; i++) {
        unsigned char c = (unsigned char)s->b[i];
        if (c == '"') break;
        if (c < 0x20 || c >= 0x7f || c == '\\') return 0;
    }
    if (i >= s->n) return 0;
    out->at = s->i + 1;
    out->end = i;
    s->i = i + 1;
    return 1;
}

/* An int of at most 18 digits at s->i, as JSON writes it (no leading zero, no fraction, no
 * exponent). */
static int sc_int(Scan *s, long long *out) {
    Py_ssize_t i = s->i;
    int negative = i < s->n && s->b[i] == '-';
    if (negative) i++;
    Py_ssize_t first = i;
    long long v = 0;
    while (i < s->n && s->b[i] >= '0' && s->b[i] <= '9') {
        if (i - first == 18) return 0; /* a 19th digit: past what the scan reads */
        v = v * 10 + (s->b[i++] - '0');
    }
    Py_ssize_t count = i - first;
    if (count == 0 || (count > 1 && s->b[first] == '0')) return 0;
    if (i < s->n && (s->b[i] == '.' || s->b[i] == 'e' || s->b[i] == 'E')) return 0;
    *out = negative ? -v : v;
    s->i = i;
    return 1;
}

/* `{` at s->i: the object opened. */
static int obj_open(Scan *s, Members *m) {
    if (s->i >= s->n || s->b[s->i] != '{' || s->depth >= SCAN_DEPTH) return 0;
    s->depth++;
    s->i++;
    m->count = 0;
    return 1;
}

/* The object's next member: 1 with its key in *key and s->i at its value; 0 at its end (read);
 * -1 for anything the scan declines. */
static int obj_next(Scan *s, Members *m, Span *key) {
    sc_space(s);
    if (s->i >= s->n) return -1;
    if (s->b[s->i] == '}') {
        s->i++;
        s->depth--;
        return 0;
    }
    if (m->count > 0) {
        if (s->b[s->i] != ',') return -1;
        s->i++;
        sc_space(s);
    }
    if (!sc_string(s, key) || m->count == SCAN_KEYS) return -1;
    for (int k = 0; k < m->count; k++)
        if (m->keys[k].end - m->keys[k].at == key->end - key->at &&
            memcmp(s->b + m->keys[k].at, s->b + key->at, (size_t)(key->end - key->at)) == 0)
            return -1; /* twice: orjson keeps the last, the bytes would keep both */
    m->keys[m->count++] = *key;
    sc_space(s);
    if (s->i >= s->n || s->b[s->i] != ':') return -1;
    s->i++;
    sc_space(s);
    return 1;
}

static int sc_value(Scan *s);

static int sc_object(Scan *s) {
    Members m;
    Span key;
    int r;
    if (!obj_open(s, &m)) return 0;
    while ((r = obj_next(s, &m, &key)) == 1)
        if (!sc_value(s)) return 0;
    return r == 0;
}

static int sc_array(Scan *s) {
    if (s->depth >= SCAN_DEPTH) return 0;
    s->depth++;
    s->i++;
    sc_space(s);
    if (s->i < s->n && s->b[s->i] == ']') {
        s->i++;
        s->depth--;
        return 1;
    }
    for (;;) {
        if (!sc_value(s)) return 0;
        sc_space(s);
        if (s->i >= s->n) return 0;
        if (s->b[s->i] == ']') {
            s->i++;
            s->depth--;
            return 1;
        }
        if (s->b[s->i] != ',') return 0;
        s->i++;
        sc_space(s);
    }
}

/* Any value the scan takes, at s->i. */
static int sc_value(Scan *s) {
    if (s->i >= s->n) return 0;
    char c = s->b[s->i];
    if (c == '"') {
        Span text;
        return sc_string(s, &text);
    }
    if (c == '{') return sc_object(s);
    if (c == '[') return sc_array(s);
    if (c == '-' || (c >= '0' && c <= '9')) {
        long long v;
        return sc_int(s, &v);
    }
    static const char *const literals[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        size_t len = strlen(literals[k]);
        if ((size_t)(s->n - s->i) >= len && memcmp(s->b + s->i, literals[k], len) == 0) {
            s->i += (Py_ssize_t)len;
            return 1;
        }
    }
    return 0;
}

/* `{"line": int, "character": int, …}`. */
static int sc_position(Scan *s) {
    Members m;
    Span key;
    int r, seen = 0;
    long long v;
    if (!obj_open(s, &m)) return 0;
    while ((r = obj_next(s, &m, &key)) == 1) {
        if (span_is(s->b, key, "line") || span_is(s->b, key, "character")) {
            if (!sc_int(s, &v)) return 0;
            seen++;
        } else if (!sc_value(s)) {
            return 0;
        }
    }
    return r == 0 && seen == 2;
}

/* `{"start": position, "end": position, …}`. */
static int sc_range(Scan *s) {
    Members m;
    Span key;
    int r, seen = 0;
    if (!obj_open(s, &m)) return 0;
    while ((r = obj_next(s, &m, &key)) == 1) {
        if (span_is(s->b, key, "start") || span_is(s->b, key, "end")) {
            if (!sc_position(s)) return 0;
            seen++;
        } else if (!sc_value(s)) {
            return 0;
        }
    }
    return r == 0 && seen == 2;
}

static int sc_params(Scan *s, Scanned *q) {
    Members m, t;
    Span key;
    int r, has_uri = 0;
    if (!obj_open(s, &m)) return 0;
    while ((r = obj_next(s, &m, &key)) == 1) {
        if (span_is(s->b, key, "locate")) return 0; /* Locate's, the Python's */
        if (span_is(s->b, key, "textDocument")) {
            int u;
            if (!obj_open(s, &t)) return 0;
            while ((u = obj_next(s, &t, &key)) == 1) {
                if (span_is(s->b, key, "uri")) {
                    if (!sc_string(s, &q->uri)) return 0;
                    has_uri = 1;
                } else if (!sc_value(s)) {
                    return 0;
                }
            }
            if (u < 0) return 0;
        } else if (span_is(s->b, key, "position")) {
            if (!sc_position(s)) return 0;
            q->position = 1;
        } else if (span_is(s->b, key, "range")) {
            if (!sc_range(s)) return 0;
            q->range = 1;
        } else if (!sc_value(s)) {
            return 0;
        }
    }
    return r == 0 && has_uri;
}

/* The request of `body`, read in place: 1 when the scan takes it (*q), else 0. */
static int scan_request(const char *b, Py_ssize_t n, Scanned *q) {
    Scan s = {b, n, 0, 0};
    Members m;
    Span key, v;
    int r, seen = 0;
    memset(q, 0, sizeof *q);
    sc_space(&s);
    if (!obj_open(&s, &m)) return 0;
    while ((r = obj_next(&s, &m, &key)) == 1) {
        if (span_is(b, key, "jsonrpc")) {
            if (!sc_string(&s, &v) || !span_is(b, v, "2.0")) return 0;
            seen |= 1;
        } else if (span_is(b, key, "id")) {
            q->id.at = s.i;
            if (s.i < n && b[s.i] == '"') {
                if (!sc_string(&s, &q->id_text)) return 0;
                q->id_is_string = 1;
            } else if (!sc_int(&s, &q->id_int)) {
                return 0;
            }
            q->id.end = s.i;
            seen |= 2;
        } else if (span_is(b, key, "method")) {
            if (!sc_string(&s, &q->method)) return 0;
            seen |= 4;
        } else if (span_is(b, key, "params")) {
            if (!sc_params(&s, q)) return 0;
            seen |= 8;
        } else {
            return 0;
        }
    }
    if (r != 0 || seen != 15) return 0;
    sc_space(&s);
    return s.i == n;
}

/* `scan_request` for the tests: (id, method, uri, position, range, id's offset, id's end) or
 * None. */
static PyObject *scan_request_py(PyObject *self, PyObject *arg) {
    (void)self;
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "scan_request: bytes expected");
        return NULL;
    }
    const char *b = PyBytes_AS_STRING(arg);
    Scanned q;
    if (!scan_request(b, PyBytes_GET_SIZE(arg), &q)) Py_RETURN_NONE;
    PyObject *id = q.id_is_string
                       ? PyUnicode_FromStringAndSize(b + q.id_text.at, q.id_text.end - q.id_text.at)
                       : PyLong_FromLongLong(q.id_int);
    if (id == NULL) return NULL;
    return Py_BuildValue("(Ns#s#OOnn)", id, b + q.method.at, q.method.end - q.method.at,
                         b + q.uri.at, q.uri.end - q.uri.at, q.position ? Py_True : Py_False,
                         q.range ? Py_True : Py_False, q.id.at, q.id.end);
}

/* -- requests ----------------------------------------------------------------------------------- */

/* The largest request body the lane parses (a hover is ~200 bytes). */
#define LANE_MAX_REQUEST (16 * 1024)
/* The servers of a document a run keeps what it read of. */
#define LANE_SERVERS 8

#define ROUTE_POSITION 1
#define ROUTE_RANGE 2
#define ROUTE_MERGE 8

/* What a run of requests read of the session, its servers and the target's connection: read
 * when first needed, and again after the Python ran (`lane_run_reset`). */
typedef struct {
    /* the session's */
    int session_read, running, shared;
    PyObject *table, *encoding, *origins, *link, *inflight, *last_origin, *caps, *docs;
    /* the session's documents by URI (`Documents._docs`), when it is a dict */
    PyObject *docs_map;
    /* each server met: running, and its remembered `supports` answers */
    int servers;
    PyObject *server[LANE_SERVERS], *supports[LANE_SERVERS];
    int server_running[LANE_SERVERS];
    /* the last target's: whether `Lane.relay` may send to it, and what it sends with */
    PyObject *target, *origin, *conn, *timeout;
    int usable;
    double deadline, sweep_at;
    /* the last method and document read in place, as strings */
    PyObject *method, *uri;
    /* the target's connection's counters and tables (`conn_read`); the counters as last read
     * or written back (`run_sync`) */
    int conn_read;
    long long next_id, seq, next_id0, seq0;
    /* the target whose `last_used` the run set */
    PyObject *used;
    PyObject *heap, *pending;
    Holder holder;
} LaneRun;

/* What the run counted written back to the connection (its `_next_id`, `_seq`, `_held_size`):
 * before the Python runs, and when the run is done with the connection. 0 or -1. */
static int run_sync(LaneRun *run) {
    if (run->conn_read &&
        (write_back(run->conn, s_next_id, run->next_id, &run->next_id0) < 0 ||
         write_back(run->conn, s_seq, run->seq, &run->seq0) < 0))
        return -1;
    return holder_sync(&run->holder);
}

/* Never called with an error set; the write back fails only out of memory. */
static void lane_run_reset(LaneRun *run) {
    if (run_sync(run) < 0) PyErr_Clear();
    Py_CLEAR(run->used);
    run->session_read = 0;
    Py_CLEAR(run->table); Py_CLEAR(run->encoding); Py_CLEAR(run->origins); Py_CLEAR(run->link);
    Py_CLEAR(run->inflight); Py_CLEAR(run->last_origin); Py_CLEAR(run->caps);
    Py_CLEAR(run->docs); Py_CLEAR(run->docs_map);
    for (int k = 0; k < run->servers; k++) {
        Py_CLEAR(run->server[k]);
        Py_CLEAR(run->supports[k]);
    }
    run->servers = 0;
    Py_CLEAR(run->target); Py_CLEAR(run->origin); Py_CLEAR(run->conn); Py_CLEAR(run->timeout);
    run->conn_read = 0;
    Py_CLEAR(run->heap); Py_CLEAR(run->pending);
    Py_CLEAR(run->method); Py_CLEAR(run->uri);
    holder_clear(&run->holder);
}

/* The string of the characters `v` of `b` (printable ASCII), the run's last one when they are
 * the same (a new reference). */
static PyObject *run_string(PyObject **last, const char *b, Span v) {
    Py_ssize_t n = v.end - v.at;
    PyObject *known = *last;
    if (known != NULL && PyUnicode_GET_LENGTH(known) == n &&
        memcmp(PyUnicode_DATA(known), b + v.at, (size_t)n) == 0)
        return Py_NewRef(known);
    PyObject *text = PyUnicode_FromStringAndSize(b + v.at, n);
    if (text != NULL) Py_XSETREF(*last, Py_NewRef(text));
    return text;
}

/* The session's values: 0 or -1. */
static int run_session(LaneRun *run, PyObject *session) {
    if (run->session_read) return 0;
    int running = is_running(session);
    if (running < 0) return -1;
    run->running = running;
    if (!running) { /* no request goes by the lane: nothing else is read */
        run->session_read = 1;
        return 0;
    }
    PyObject *pool = PyObject_GetAttr(session, s_pool);
    if (pool == NULL) return -1;
    int shared = attr_is(pool, s_shared, Py_True);
    Py_DECREF(pool);
    if (shared < 0) return -1;
    if ((run->table = PyObject_GetAttr(session, s_uri_backends)) == NULL ||
        (run->encoding = PyObject_GetAttr(session, s_encoding)) == NULL ||
        (run->origins = PyObject_GetAttr(session, s_origin)) == NULL ||
        (run->link = PyObject_GetAttr(session, s_link)) == NULL ||
        (run->inflight = PyObject_GetAttr(run->link, s_inflight)) == NULL ||
        (run->last_origin = PyObject_GetAttr(session, s_last_origin)) == NULL)
        return -1;
    if (shared) {
        if ((run->docs = PyObject_GetAttr(session, s_documents)) == NULL) return -1;
        PyObject *map = PyObject_GetAttr(run->docs, s_docs_);
        if (map == NULL) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
            PyErr_Clear();
        } else if (PyDict_CheckExact(map)) {
            run->docs_map = map;
        } else {
            Py_DECREF(map);
        }
    }
    run->shared = shared;
    run->session_read = 1;
    return 0;
}

/* The index of server `b` in the run's, read now if it is new; -1 on an error, -2 when the
 * run keeps no more. */
static int run_server(LaneRun *run, PyObject *b) {
    for (int k = 0; k < run->servers; k++)
        if (run->server[k] == b) return k;
    if (run->servers == LANE_SERVERS) return -2;
    int running = is_running(b);
    if (running < 0) return -1;
    PyObject *memo = PyObject_GetAttr(b, s_supports);
    if (memo == NULL) return -1;
    int k = run->servers++;
    run->server[k] = Py_NewRef(b);
    run->supports[k] = memo;
    run->server_running[k] = running;
    return k;
}

#define CHECK(cond) do { int _c = (cond); if (_c < 0) return -1; if (!_c) return 0; } while (0)

/* `Lane.relay`'s checks of the target that do not depend on the request, in its order: 1 when
 * the lane may send to it, 0 when the Python decides, -1. */
static int target_checks(LaneRun *run, PyObject *target, double now_loop) {
    PyObject *a = PyObject_GetAttr(target, s_position_encoding);
    if (a == NULL) return -1;
    int same = PyObject_RichCompareBool(a, run->encoding, Py_EQ);
    Py_DECREF(a);
    CHECK(same);
    /* the origin of the target (`origin_of`: known since `backends_for`) */
    run->origin = Py_XNewRef(PyDict_GetItemWithError(run->origins, target));
    if (run->origin == NULL) return PyErr_Occurred() ? -1 : 0;
    /* `Backend.forward` and `Connection.forward` without their Python-only cases */
    run->conn = PyObject_GetAttr(target, s_conn_);
    if (run->conn == NULL) return -1;
    PyObject *conn = run->conn;
    if (conn == Py_None) return 0;
    CHECK(attr_is(conn, s_closed, Py_False));
    CHECK(attr_is(conn, s_debug, Py_False));
    CHECK(attr_is(conn, s_id_prefix, Py_None));
    {
        int loop_none = attr_is(conn, s_loop, Py_None);
        if (loop_none < 0) return -1;
        if (loop_none) return 0; /* the first deadline finds the loop */
    }
    CHECK(writable(conn));
    PyObject *config = PyObject_GetAttr(target, s_config);
    if (config == NULL) return -1;
    run->timeout = PyObject_GetAttr(config, s_request_timeout);
    Py_DECREF(config);
    if (run->timeout == NULL) return -1;
    if (run->timeout != Py_None) {
        if (!PyFloat_CheckExact(run->timeout) && !PyLong_CheckExact(run->timeout)) return 0;
        run->deadline = now_loop + PyFloat_AsDouble(run->timeout);
        if (PyErr_Occurred()) return -1;
        PyObject *sweep = PyObject_GetAttr(conn, s_sweep);
        if (sweep == NULL) return -1;
        int no_sweep = sweep == Py_None;
        Py_DECREF(sweep);
        if (no_sweep) return 0; /* the Python sets the timer */
        PyObject *at = PyObject_GetAttr(conn, s_sweep_at);
        if (at == NULL) return -1;
        run->sweep_at = PyFloat_AsDouble(at);
        Py_DECREF(at);
        if (run->sweep_at == -1.0 && PyErr_Occurred()) return -1;
        if (run->deadline < run->sweep_at) return 0; /* the Python sets the timer sooner */
    }
    return 1;
}

/* The run's target: `target_checks` of it, once per run. */
static int run_target(LaneRun *run, PyObject *target, double now_loop) {
    if (run->target == target) return run->usable;
    if (run_sync(run) < 0) return -1;
    Py_CLEAR(run->target); Py_CLEAR(run->origin); Py_CLEAR(run->conn); Py_CLEAR(run->timeout);
    run->conn_read = 0;
    Py_CLEAR(run->heap); Py_CLEAR(run->pending);
    int usable = target_checks(run, target, now_loop);
    if (usable < 0) return -1;
    run->target = Py_NewRef(target);
    run->usable = usable;
    return usable;
}

/* The target's connection's id counter, deadline counter and tables: 1, 0 (an id the lane
 * does not count), or -1. */
static int run_conn(LaneRun *run) {
    if (run->conn_read) return 1;
    PyObject *conn = run->conn;
    PyObject *n = PyObject_GetAttr(conn, s_next_id);
    if (n == NULL) return -1;
    int overflow = 0;
    long long next = PyLong_CheckExact(n) ? PyLong_AsLongLongAndOverflow(n, &overflow) : -1;
    Py_DECREF(n);
    if (next == -1 && PyErr_Occurred()) return -1;
    if (next < 0 || overflow || next > (1LL << 62)) return 0;
    PyObject *seq = PyObject_GetAttr(conn, s_seq);
    if (seq == NULL) return -1;
    long long s = PyLong_CheckExact(seq) ? PyLong_AsLongLongAndOverflow(seq, &overflow) : -1;
    Py_DECREF(seq);
    if (s == -1 && PyErr_Occurred()) return -1;
    if (s < 0 || overflow || s > (1LL << 62)) return 0;
    if ((run->heap = PyObject_GetAttr(conn, s_deadlines)) == NULL ||
        (run->pending = PyObject_GetAttr(conn, s_pending)) == NULL)
        return -1;
    run->next_id = run->next_id0 = next;
    run->seq = run->seq0 = s;
    run->conn_read = 1;
    return 1;
}

/* A request `lane_request` took: its parts (new references). */
typedef struct {
    PyObject *body, *msg, *method, *id, *params, *uri, *route, *target;
    int scanned; /* read in place (`scan_request`): no params built, the id's bytes known */
    Py_ssize_t id_at, id_end;
} LaneRequest;

static void lane_request_clear(LaneRequest *r) {
    Py_CLEAR(r->msg); Py_CLEAR(r->method); Py_CLEAR(r->id); Py_CLEAR(r->params);
    Py_CLEAR(r->uri); Py_CLEAR(r->route); Py_CLEAR(r->target);
}

#undef CHECK
#define CHECK(cond) do { int _c = (cond); if (_c < 0) goto error; if (!_c) goto no; } while (0)

/* Whether `Lane.relay` would send this request by the lane: 1 (its target in r), 0 (the
 * Python decides), -1. */
static int lane_request(PyObject *body, PyObject *session, PyObject *routes, double now_loop,
                        LaneRun *run, LaneRequest *r) {
    PyObject *v = NULL;
    Scanned q;
    if (scan_request(PyBytes_AS_STRING(body), PyBytes_GET_SIZE(body), &q)) {
        const char *b = PyBytes_AS_STRING(body);
        r->scanned = 1;
        r->id_at = q.id.at;
        r->id_end = q.id.end;
        if ((r->method = run_string(&run->method, b, q.method)) == NULL) goto error;
        r->route = Py_XNewRef(PyDict_GetItemWithError(routes, r->method));
        if (r->route == NULL) goto no_or_error;
        r->id = q.id_is_string ? PyUnicode_FromStringAndSize(b + q.id_text.at,
                                                             q.id_text.end - q.id_text.at)
                               : PyLong_FromLongLong(q.id_int);
        if (r->id == NULL) goto error;
        if ((r->uri = run_string(&run->uri, b, q.uri)) == NULL) goto error;
        r->params = Py_NewRef(Py_None); /* the exchange parses them if they are asked for */
        long flags = PyLong_AsLong(PyTuple_GET_ITEM(r->route, 0));
        if (flags & ROUTE_POSITION && !q.position) goto no;
        if (flags & ROUTE_RANGE && !q.range) goto no;
        goto checked;
    }
    r->msg = PyObject_CallOneArg(orjson_loads, body);
    if (r->msg == NULL) {
        PyErr_Clear(); /* not JSON: the Python answers with its ParseError */
        return 0;
    }
    if (!PyDict_CheckExact(r->msg)) goto no;
    PyObject *msg = r->msg;
    /* `invalid_reason` and the request's shape */
    r->method = Py_XNewRef(PyDict_GetItemWithError(msg, k_method));
    if (r->method == NULL || !PyUnicode_CheckExact(r->method)) goto no_or_error;
    r->route = Py_XNewRef(PyDict_GetItemWithError(routes, r->method));
    if (r->route == NULL) goto no_or_error;
    v = PyDict_GetItemWithError(msg, k_jsonrpc);
    if (v == NULL && PyErr_Occurred()) goto error;
    if (v != NULL && !(PyUnicode_CheckExact(v) && PyUnicode_Compare(v, v_two) == 0)) goto no;
    r->id = Py_XNewRef(PyDict_GetItemWithError(msg, k_id));
    if (r->id == NULL || !(PyLong_CheckExact(r->id) || PyUnicode_CheckExact(r->id)))
        goto no_or_error;
    r->params = Py_XNewRef(PyDict_GetItemWithError(msg, k_params));
    if (r->params == NULL || !PyDict_CheckExact(r->params)) goto no_or_error;
    PyObject *params = r->params;
    CHECK(!PyDict_Contains(params, k_locate) ? 1 : (PyErr_Occurred() ? -1 : 0));
    PyObject *td = PyDict_GetItemWithError(params, k_text_document);
    if (td == NULL || !PyDict_Check(td)) goto no_or_error;
    r->uri = Py_XNewRef(PyDict_GetItemWithError(td, k_uri));
    if (r->uri == NULL || !PyUnicode_CheckExact(r->uri)) goto no_or_error;
    /* `params_problem`, for the route's flags */
    long flags = PyLong_AsLong(PyTuple_GET_ITEM(r->route, 0));
    if (flags & ROUTE_POSITION && !is_position(PyDict_GetItemWithError(params, k_position)))
        goto no_or_error;
    if (flags & ROUTE_RANGE) {
        PyObject *rng = PyDict_GetItemWithError(params, k_range);
        if (rng == NULL || !PyDict_Check(rng)) goto no_or_error;
        if (!is_position(PyDict_GetItemWithError(rng, k_start))) goto no_or_error;
        if (!is_position(PyDict_GetItemWithError(rng, k_end))) goto no_or_error;
    }
checked:
    /* the session running; its servers for the document, all running, one serving it */
    if (run_session(run, session) < 0) goto error;
    if (!run->running) goto no;
    PyObject *backends = PyDict_CheckExact(run->table)
                             ? Py_XNewRef(PyDict_GetItemWithError(run->table, r->uri))
                             : NULL; /* held: reading a server's state may run its Python */
    if (backends == NULL || !PyList_CheckExact(backends)) {
        Py_XDECREF(backends);
        goto no_or_error;
    }
    PyObject *target = NULL;
    int found = 1;
    for (Py_ssize_t k = 0; found == 1 && k < PyList_GET_SIZE(backends); k++) {
        PyObject *b = PyList_GET_ITEM(backends, k);
        int s = run_server(run, b);
        if (s < 0) {
            found = s == -2 ? 0 : -1;
            break;
        }
        PyObject *memo = run->supports[s];
        PyObject *known = PyDict_Check(memo) ? PyDict_GetItemWithError(memo, r->method) : NULL;
        if (!run->server_running[s] || known == NULL) /* not asked yet: `supports` asks */
            found = PyErr_Occurred() ? -1 : 0;
        else if (known == Py_True && target == NULL)
            target = b;
        else if (known != Py_False) /* several: the policy decides */
            found = 0;
    }
    if (found == 1 && target != NULL) r->target = Py_NewRef(target);
    Py_DECREF(backends);
    if (found < 0) goto error;
    if (r->target == NULL) goto no;
    CHECK(run_target(run, target, now_loop));
    if (run->timeout != Py_None) {
        CHECK(run_conn(run));
        int compact = !PyList_CheckExact(run->heap) || !PyDict_CheckExact(run->pending) ||
                      PyList_GET_SIZE(run->heap) + 1 > 4 * PyDict_GET_SIZE(run->pending) + 1024;
        if (compact) goto no; /* the Python drops the answered ones */
    }
    return 1;
no_or_error:
    if (PyErr_Occurred()) goto error;
no:
    return 0;
error:
    return -1;
}
#undef CHECK

/* Whether `BackendDocuments.ensure_holds(holder, uri)` of `held_docs` would send nothing and
 * return False (no document there, `holder` not among its holders, or the server holds
 * `holder`'s current text: `holds`), read from its tables: 1, 0 when it may send (the Python
 * is asked), -1. */
static int holds_already(PyObject *held_docs, PyObject *holder, PyObject *uri) {
    PyObject *map = PyObject_GetAttr(held_docs, s_docs_), *current = NULL, *holders = NULL;
    if (map == NULL) return -1;
    int rc = 0;
    if (!PyDict_CheckExact(map)) goto done;
    PyObject *doc = PyDict_GetItemWithError(map, uri); /* borrowed */
    if (doc == NULL) {
        rc = PyErr_Occurred() ? -1 : 1;
        goto done;
    }
    if ((current = PyObject_GetAttr(doc, s_current)) == NULL ||
        (holders = PyObject_GetAttr(doc, s_holders)) == NULL) {
        rc = -1;
        goto done;
    }
    if (!PyDict_CheckExact(current) || !PyDict_CheckExact(holders)) goto done;
    PyObject *own = PyDict_GetItemWithError(holders, holder);
    if (own == NULL) {
        rc = PyErr_Occurred() ? -1 : 1; /* not its holder */
        goto done;
    }
    PyObject *held = PyDict_GetItemWithError(current, holder);
    if (held == NULL) {
        rc = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    rc = PyObject_RichCompareBool(held, own, Py_EQ);
done:
    Py_XDECREF(current);
    Py_XDECREF(holders);
    Py_DECREF(map);
    return rc;
}

/* The effects of `Lane.relay` for a request `lane_request` took, in its order. */
static int lane_send(LaneRun *run, LaneRequest *r, PyObject *session, PyObject *exchange_type,
                     PyObject *now_mono, PyObject *dirty) {
    PyObject *out = NULL, *body = NULL, *id = NULL, *ex = NULL, *targets = NULL,
             *family = NULL, *pair = NULL, *deadline = NULL, *entry = NULL, *head = NULL;
    int rc = -1;
    /* `single_target`: a shared server holds this client's text; a MERGE of one has its
     * origin now */
    if (run->shared) {
        int open = run->docs_map != NULL ? PyDict_Contains(run->docs_map, r->uri)
                                         : PySequence_Contains(run->docs, r->uri);
        if (open < 0) goto out;
        PyObject *held_docs = NULL;
        if (open) {
            if ((held_docs = PyObject_GetAttr(r->target, s_documents)) == NULL) goto out;
            int nothing = holds_already(held_docs, session, r->uri);
            if (nothing != 0) {
                Py_DECREF(held_docs);
                if (nothing < 0) goto out;
                open = 0; /* `ensure_holds` would send nothing */
            }
        }
        if (open && run_sync(run) < 0) { /* the Python may send: it sees what was counted */
            Py_DECREF(held_docs);
            goto out;
        }
        if (open) {
            PyObject *res = PyObject_CallMethodObjArgs(held_docs, s_ensure_holds, session,
                                                       r->uri, NULL);
            Py_DECREF(held_docs);
            if (res == NULL) goto out;
            int sent = res != Py_False;
            Py_DECREF(res);
            if (sent) {
                /* the Python sent the text: the run reads again what it uses from here on
                 * (this request's checks stand, as in `Lane.relay`; the next one's are made
                 * again) */
                PyObject *conn = Py_NewRef(run->conn), *origin = Py_NewRef(run->origin);
                PyObject *timeout = Py_NewRef(run->timeout);
                double at = run->deadline;
                lane_run_reset(run);
                run->conn = conn;
                run->origin = origin;
                run->timeout = timeout;
                run->deadline = at;
                if (run_session(run, session) < 0) goto out;
                if (!run->running) { /* no longer: the Python answers it */
                    rc = 0;
                    goto out;
                }
            }
        }
    }
    PyObject *conn = run->conn;
    family = Py_NewRef(PyTuple_GET_ITEM(r->route, 1));
    if (PyLong_AsLong(PyTuple_GET_ITEM(r->route, 0)) & ROUTE_MERGE) {
        if (family != Py_None && set_item(run->last_origin, family, run->origin) < 0) goto out;
        Py_SETREF(family, Py_NewRef(Py_None));
    }
    /* the request as the server gets it: `Connection.forward`'s dict under the connection's
     * next id (read after the text was sent: it took none, but the id is the Python's to
     * give), encoded before anything of the request's own is done (one that cannot be is
     * left to the Python, which answers it; what was done above it does again, the same) */
    {
        int counted = run_conn(run);
        if (counted <= 0) {
            rc = counted;
            goto out;
        }
    }
    if ((id = PyLong_FromLongLong(run->next_id)) == NULL) goto out;
    Py_ssize_t body_len;
    if (r->scanned) { /* the very bytes, under the server's id: the same message as the dict's */
        head = framed_request(PyBytes_AS_STRING(r->body), PyBytes_GET_SIZE(r->body), r->id_at,
                              r->id_end, run->next_id, &body_len);
        if (head == NULL) goto out;
    } else {
        if ((out = PyDict_New()) == NULL) goto out;
        if (PyDict_SetItem(out, k_jsonrpc, v_two) < 0 || PyDict_SetItem(out, k_id, id) < 0 ||
            PyDict_SetItem(out, k_method, r->method) < 0 ||
            PyDict_SetItem(out, k_params, r->params) < 0)
            goto out;
        if ((body = PyObject_CallOneArg(orjson_dumps, out)) == NULL) {
            PyErr_Clear();
            rc = 0;
            goto out;
        }
        body_len = PyBytes_GET_SIZE(body);
        if ((head = header(body_len)) == NULL) goto out;
    }
    /* `FastExchange(session, msg, target, family)` */
    if ((ex = PyType_GenericNew((PyTypeObject *)exchange_type, NULL, NULL)) == NULL) goto out;
    if ((targets = PyList_New(0)) == NULL) goto out;
    {
        /* answers a shared server gives this client fitted to what it declared
         * (`forward.must_fit`): the route's fitting kind, the client's capabilities */
        PyObject *fit_kind = PyTuple_GET_ITEM(r->route, 2), *fit_for = Py_None;
        if (fit_kind != Py_None) {
            if (run->caps == NULL &&
                (run->caps = PyObject_GetAttr(session, s_client_capabilities)) == NULL)
                goto out;
            fit_for = run->caps;
        } else {
            fit_kind = v_empty;
        }
        ex_set(ex, EX_SESSION, session);
        ex_set(ex, EX_LINK, run->link);
        ex_set(ex, EX_CLIENT_ID, r->id);
        ex_set(ex, EX_METHOD, r->method);
        ex_set(ex, EX_PARAMS, r->params);
        ex_set(ex, EX_BODY, r->scanned ? r->body : Py_None);
        ex_set(ex, EX_TARGETS, targets);
        ex_set(ex, EX_ANSWERED, Py_False);
        ex_set(ex, EX_PER_BACKEND, Py_None);
        ex_set(ex, EX_FIT_FOR, fit_for);
        ex_set(ex, EX_FIT_KIND, fit_kind);
        ex_set(ex, EX_BACKEND, r->target);
        ex_set(ex, EX_FAMILY, family);
        ex_set(ex, EX_TIMEOUT, run->timeout);
        ex_set(ex, EX_DEADLINE, v_zero_float);
    }
    if (set_item(run->inflight, r->id, ex) < 0) goto out;
    /* `Backend.forward`, `Connection.forward` */
    if (run->used != r->target) { /* the same time for the whole run: set once */
        if (PyObject_SetAttr(r->target, s_last_used, now_mono) < 0) goto out;
        Py_XSETREF(run->used, Py_NewRef(r->target));
    }
    run->next_id++; /* `_next_id` and `_seq` are written back by `run_sync` */
    if (run->timeout != Py_None) {
        PyObject *seq1 = PyLong_FromLongLong(run->seq + 1);
        if (seq1 == NULL) goto out;
        run->seq++;
        deadline = PyFloat_FromDouble(run->deadline);
        entry = deadline ? PyTuple_Pack(3, deadline, seq1, id) : NULL;
        Py_DECREF(seq1);
        if (entry == NULL) goto out;
        PyObject *pushed = PyObject_CallFunctionObjArgs(heappush, run->heap, entry, NULL);
        if (pushed == NULL) goto out;
        Py_DECREF(pushed);
        ex_set(ex, EX_DEADLINE, deadline);
    }
    if (set_item(run->pending, id, ex) < 0) goto out;
    if (hold(&run->holder, conn, head, body, body_len, dirty) < 0) goto out;
    if ((pair = PyTuple_Pack(2, r->target, id)) == NULL) goto out;
    if (PyList_Append(targets, pair) < 0) goto out;
    rc = 1;
out:
    Py_XDECREF(out); Py_XDECREF(body); Py_XDECREF(id); Py_XDECREF(ex); Py_XDECREF(targets);
    Py_XDECREF(family); Py_XDECREF(pair); Py_XDECREF(deadline); Py_XDECREF(entry);
    Py_XDECREF(head);
    return rc;
}

/* The exception raised, as an object (for the Python that logs it); the indicator cleared. */
static PyObject *raised(void) {
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc = PyErr_GetRaisedException();
#else
    PyObject *type, *exc, *tb;
    PyErr_Fetch(&type, &exc, &tb);
    PyErr_NormalizeException(&type, &exc, &tb);
    if (exc != NULL && tb != NULL) PyException_SetTraceback(exc, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
#endif
    return exc != NULL ? exc : Py_NewRef(Py_None);
}

/* The requests of `items` from `start` that the lane sends (`Lane.relay`'s, in its order), for
 * a session whose guards hold (`request_run`): the index of the first one left to the Python,
 * or -1 on an error before any was handled. A request whose handling failed half way (out of
 * memory, or a bug) counts as handled, as the Python's `_handle` logs a message that fails and
 * goes on: *exc is then its exception, which the caller logs. */
static Py_ssize_t requests_core(PyObject *items, Py_ssize_t start, PyObject *session,
                                PyObject *routes, PyObject *exchange_type, double now_loop,
                                PyObject *now_mono, PyObject *dirty, PyObject **exc) {
    *exc = NULL;
    if (!PyDict_Check(routes)) {
        PyErr_SetString(PyExc_TypeError, "lane: routes must be a dict");
        return -1;
    }
    if (!PyType_Check(exchange_type)) {
        PyErr_SetString(PyExc_TypeError, "lane: exchange_type must be a type");
        return -1;
    }
    if (lane_imports() < 0 || exchange_slots(exchange_type) < 0) return -1;
    LaneRun run = {0};
    Py_ssize_t i = start < 0 ? 0 : start;
    for (; i < PyList_GET_SIZE(items); i++) {
        PyObject *body = PyList_GET_ITEM(items, i);
        /* a lane request is small and has an id: anything else (a document's text, a
         * notification) is left to the Python before it is parsed, so it is parsed once */
        if (!PyBytes_CheckExact(body) || PyBytes_GET_SIZE(body) > LANE_MAX_REQUEST ||
            memmem(PyBytes_AS_STRING(body), (size_t)PyBytes_GET_SIZE(body), "\"id\"", 4) == NULL)
            break;
        LaneRequest r = {0};
        r.body = body; /* borrowed: the list holds it, and the run holds the list */
        Py_INCREF(body);
        int ok = lane_request(body, session, routes, now_loop, &run, &r);
        if (ok == 1) ok = lane_send(&run, &r, session, exchange_type, now_mono, dirty);
        Py_DECREF(body);
        lane_request_clear(&r);
        if (ok < 0) {
            *exc = raised();
            i++;
            break;
        }
        if (ok == 0) break;
    }
    lane_run_reset(&run);
    return i;
}

/* -- answers ------------------------------------------------------------------------------------ */

/* What a run of answers read of the clients it answers and of their sessions. */
typedef struct {
    /* the last client link's: whether the answer may be written to it, its connection and
     * in-flight table */
    PyObject *link, *cconn, *inflight;
    int usable;
    /* whether its client reads (`_congestion` is None: not `not_reading()`), -1 not asked */
    int reading;
    /* the last session's origins and last origins */
    PyObject *session, *origins, *last_origin;
    Holder holder;
} Answers;

static void answers_clear(Answers *a) {
    Py_CLEAR(a->link); Py_CLEAR(a->cconn); Py_CLEAR(a->inflight);
    Py_CLEAR(a->session); Py_CLEAR(a->origins); Py_CLEAR(a->last_origin);
    holder_clear(&a->holder);
}

/* `link._idle is None`, its connection open and writable (`send_raw`'s and `reply_raw`'s
 * checks): 1, 0 or -1; read once per link. */
static int answers_link(Answers *a, PyObject *link) {
    if (a->link == link) return a->usable;
    Py_CLEAR(a->link); Py_CLEAR(a->cconn); Py_CLEAR(a->inflight);
    int usable = attr_is(link, s_idle, Py_None);
    if (usable < 0) return -1;
    if (usable) {
        if ((a->cconn = PyObject_GetAttr(link, s_conn)) == NULL) return -1;
        usable = a->cconn != Py_None;
    }
    if (usable) usable = attr_is(a->cconn, s_debug, Py_False);
    if (usable > 0) usable = writable(a->cconn);
    if (usable < 0) return -1;
    a->link = Py_NewRef(link);
    a->usable = usable;
    a->reading = -1;
    return usable;
}

static int answers_session(Answers *a, PyObject *session) {
    if (a->session == session) return 0;
    Py_CLEAR(a->session); Py_CLEAR(a->origins); Py_CLEAR(a->last_origin);
    if ((a->origins = PyObject_GetAttr(session, s_origin)) == NULL ||
        (a->last_origin = PyObject_GetAttr(session, s_last_origin)) == NULL)
        return -1;
    a->session = Py_NewRef(session);
    return 0;
}

/* One answer of `answers_core`: 1 relayed (or dropped, answered already), 0 left to the
 * Python, -1. */
static int lane_answer(Answers *a, PyObject *body, PyObject *pending, PyObject *exchange_type,
                       PyObject *dirty) {
    const char *b = PyBytes_AS_STRING(body);
    Py_ssize_t n = PyBytes_GET_SIZE(body), at, end, offset;
    if (!sniff(b, n, &at, &end, &offset)) return 0;
    if (n - offset < 8 || memcmp(b + offset, "\"result\"", 8) != 0) return 0;
    PyObject *id = sniffed_id(b, at, end);
    if (id == NULL) return -1;
    PyObject *ex = PyDict_GetItemWithError(pending, id);
    if (ex == NULL || (PyObject *)Py_TYPE(ex) != exchange_type) {
        Py_DECREF(id);
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_INCREF(ex);
    PyObject *framed = NULL, *origin = NULL, *tail = NULL, *v;
    Py_ssize_t body_len = 0;
    int ok = -1, c;
#define TAKE(cond) do { c = (cond); if (c < 0) goto done; if (!c) { ok = 0; goto done; } } while (0)
    /* an answer fitted for its client (`reply_raw`): a markdown hover the C can fit, to a
     * client that reads (not `link.not_reading()`); the Python fits the others */
    if ((v = ex_get(ex, EX_FIT_FOR)) == NULL) goto done;
    int fit = v != Py_None;
    if (fit) {
        if ((v = ex_get(ex, EX_FIT_KIND)) == NULL) goto done;
        TAKE(PyUnicode_CheckExact(v) && PyUnicode_Compare(v, v_hover) == 0);
    }
    PyObject *link = ex_get(ex, EX_LINK), *client_id = ex_get(ex, EX_CLIENT_ID);
    if (link == NULL || client_id == NULL) goto done;
    TAKE(answers_link(a, link));
    if (fit) {
        if (a->reading < 0 && (a->reading = attr_is(a->cconn, s_congestion, Py_None)) < 0)
            goto done;
        TAKE(a->reading);
        if ((tail = hover_plain_tail(b, n, offset)) == NULL) goto done;
        TAKE(tail != Py_None);
        framed = rewritten(PyBytes_AS_STRING(tail), PyBytes_GET_SIZE(tail), 0, client_id, 1,
                           &body_len);
    } else {
        framed = rewritten(b, n, offset, client_id, 1, &body_len);
    }
    if (framed == NULL) goto done;
    TAKE(framed != Py_None);
    PyObject *family = ex_get(ex, EX_FAMILY);
    if (family == NULL) goto done;
    if (family != Py_None) {
        PyObject *session = ex_get(ex, EX_SESSION), *backend = ex_get(ex, EX_BACKEND);
        if (session == NULL || backend == NULL || answers_session(a, session) < 0) goto done;
        origin = Py_XNewRef(PyDict_GetItemWithError(a->origins, backend));
        if (origin == NULL && PyErr_Occurred()) goto done;
        TAKE(origin != NULL);
    }
    /* the effects, in the Python's order */
    if (PyDict_DelItem(pending, id) < 0) goto done;
    if (origin != NULL && set_item(a->last_origin, family, origin) < 0) goto done;
    if ((v = ex_get(ex, EX_ANSWERED)) == NULL) goto done;
    if (v == Py_True) { /* answered already (`_finish`): nothing is sent */
        ok = 1;
        goto done;
    }
    ex_set(ex, EX_ANSWERED, Py_True);
    if (a->inflight == NULL && (a->inflight = PyObject_GetAttr(link, s_inflight)) == NULL)
        goto done;
    {
        PyObject *known;
        if (PyDict_CheckExact(a->inflight)) {
            known = Py_XNewRef(PyDict_GetItemWithError(a->inflight, client_id));
            if (known == NULL && PyErr_Occurred()) goto done;
        } else {
            known = PyObject_GetItem(a->inflight, client_id);
            if (known == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_KeyError)) goto done;
                PyErr_Clear();
            }
        }
        int mine = known == ex;
        Py_XDECREF(known);
        if (mine && PyObject_DelItem(a->inflight, client_id) < 0) goto done;
    }
    if (hold(&a->holder, a->cconn, framed, NULL, body_len, dirty) < 0) goto done;
    ok = 1;
#undef TAKE
done:
    Py_XDECREF(framed);
    Py_XDECREF(tail);
    Py_XDECREF(origin);
    Py_DECREF(ex);
    Py_DECREF(id);
    return ok;
}

/* `FastExchange.raw` and what it calls (`reply_raw`, `relay`, `_finish`,
 * `send_raw_response`), for the plain answers of `items` from `start` (`answer_run`): as
 * `requests_core`. */
static Py_ssize_t answers_core(PyObject *items, Py_ssize_t start, PyObject *conn,
                               PyObject *exchange_type, PyObject *dirty, PyObject **exc) {
    *exc = NULL;
    if (exchange_slots(exchange_type) < 0) return -1;
    PyObject *pending = PyObject_GetAttr(conn, s_pending);
    if (pending == NULL) return -1;
    Py_ssize_t i = start < 0 ? 0 : start;
    if (!PyDict_CheckExact(pending)) {
        Py_DECREF(pending);
        return i;
    }
    Answers a = {0};
    for (; i < PyList_GET_SIZE(items); i++) {
        PyObject *body = PyList_GET_ITEM(items, i);
        if (!PyBytes_CheckExact(body) || PyDict_GET_SIZE(pending) == 0) break;
        if (PyBytes_GET_SIZE(body) > 64 * 1024) break; /* written from its own bytes */
        Py_INCREF(body);
        int ok = lane_answer(&a, body, pending, exchange_type, dirty);
        Py_DECREF(body);
        if (ok < 0) {
            *exc = raised();
            i++;
            break;
        }
        if (ok == 0) break;
    }
    answers_clear(&a);
    Py_DECREF(pending);
    return i;
}

/* -- the runs (`session/native.py`) ------------------------------------------------------------
 *
 *     configure(batch, exchange_type, request_run, answer_run, lane_routes, failed)
 *     run_requests(run, items, start) -> int;  run_answers(run, items, start) -> int
 *
 * A session's client connection's run (`RequestRun`) and a server connection's
 * (`AnswerRun`): their guards (the lane runs only inside a read, `batch.dirty`; for requests:
 * the session running, nothing held behind a request, nothing pending on the client's
 * connection, no debug log, the client not behind), the session's lane routes (made by
 * `lane_routes(session)` again when its pool became shared), the times, the core, then what
 * the run counts (`handled`, the session's `last_active`), and a failure given to
 * `failed(conn, what, exc)`, which logs it. The index of the first message left to the
 * Python. The reader calls them without the runs' Python `__call__`.
 */

static PyObject *cfg_batch, *cfg_exchange, *cfg_request_run, *cfg_answer_run, *cfg_routes,
    *cfg_failed, *cfg_get_loop, *cfg_monotonic, *s_dispatch, *s_routes_, *s_shared_, *s_handled,
    *s_last_active, *s_time, *v_request, *v_answer;

static PyObject *configure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *batch, *exchange, *request_run, *answer_run, *routes, *failed_;
    if (!PyArg_ParseTuple(args, "OOOOOO:configure", &batch, &exchange, &request_run,
                          &answer_run, &routes, &failed_))
        return NULL;
    if (!PyType_Check(exchange) || !PyType_Check(request_run) || !PyType_Check(answer_run)) {
        PyErr_SetString(PyExc_TypeError, "configure: the exchange and the runs must be types");
        return NULL;
    }
    if (cfg_get_loop == NULL) {
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
        INTERN(s_dispatch, "dispatch"); INTERN(s_routes_, "_routes"); INTERN(s_shared_, "_shared");
        INTERN(s_handled, "handled"); INTERN(s_last_active, "last_active"); INTERN(s_time, "time");
        INTERN(v_request, "a request"); INTERN(v_answer, "an answer");
#undef INTERN
        PyObject *asyncio = PyImport_ImportModule("asyncio");
        if (asyncio == NULL) return NULL;
        cfg_get_loop = PyObject_GetAttrString(asyncio, "get_running_loop");
        Py_DECREF(asyncio);
        PyObject *time = PyImport_ImportModule("time");
        if (time == NULL) return NULL;
        cfg_monotonic = PyObject_GetAttrString(time, "monotonic");
        Py_DECREF(time);
        if (cfg_get_loop == NULL || cfg_monotonic == NULL) return NULL;
    }
    Py_XSETREF(cfg_batch, Py_NewRef(batch));
    Py_XSETREF(cfg_exchange, Py_NewRef(exchange));
    Py_XSETREF(cfg_request_run, Py_NewRef(request_run));
    Py_XSETREF(cfg_answer_run, Py_NewRef(answer_run));
    Py_XSETREF(cfg_routes, Py_NewRef(routes));
    Py_XSETREF(cfg_failed, Py_NewRef(failed_));
    Py_RETURN_NONE;
}

/* obj.name's truth: 1, 0, -1. */
static int attr_true(PyObject *obj, PyObject *name) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return -1;
    int truth = PyObject_IsTrue(v);
    Py_DECREF(v);
    return truth;
}

/* obj.name is falsy: 1, 0, -1. */
static int attr_false(PyObject *obj, PyObject *name) {
    int truth = attr_true(obj, name);
    return truth < 0 ? -1 : !truth;
}

/* run.handled += n */
static int add_handled(PyObject *run, Py_ssize_t n) {
    PyObject *was = PyObject_GetAttr(run, s_handled);
    if (was == NULL) return -1;
    PyObject *by = PyLong_FromSsize_t(n);
    PyObject *now = by == NULL ? NULL : PyNumber_Add(was, by);
    Py_DECREF(was);
    Py_XDECREF(by);
    if (now == NULL) return -1;
    int rc = PyObject_SetAttr(run, s_handled, now);
    Py_DECREF(now);
    return rc;
}

/* A failure the core counted as handled, given to `failed(conn, what, exc)`. */
static int run_failed(PyObject *conn, PyObject *what, PyObject *exc) {
    PyObject *r = PyObject_CallFunctionObjArgs(cfg_failed, conn, what, exc, NULL);
    Py_DECREF(exc);
    Py_XDECREF(r);
    return r == NULL ? -1 : 0;
}

/* The batch's held writes (`batch.dirty`) when it is a list: a new reference, Py_None (a new
 * reference) outside a read, NULL on an error. */
static PyObject *batch_dirty(void) {
    PyObject *dirty = PyObject_GetAttr(cfg_batch, s_dirty);
    if (dirty != NULL && dirty != Py_None && !PyList_Check(dirty)) {
        Py_DECREF(dirty);
        PyErr_SetString(PyExc_TypeError, "lane: batch.dirty must be a list or None");
        return NULL;
    }
    return dirty;
}

/* `dirty`: the batch's held writes, Py_None outside a read (borrowed). */
static Py_ssize_t request_run(PyObject *run, PyObject *items, Py_ssize_t start,
                              PyObject *dirty) {
    PyObject *session = NULL, *dispatch = NULL, *conn = NULL, *routes = NULL,
             *pool = NULL, *shared = NULL, *last = NULL, *loop = NULL, *now = NULL, *t = NULL,
             *exc = NULL;
    Py_ssize_t end = -1;
    int ok;
#define GUARD(cond) do { ok = (cond); if (ok < 0) goto out; if (!ok) { end = start; goto out; } } while (0)
    GUARD(dirty != Py_None);
    if ((session = PyObject_GetAttr(run, s_session)) == NULL) goto out;
    GUARD(is_running(session));
    if ((dispatch = PyObject_GetAttr(run, s_dispatch)) == NULL) goto out;
    GUARD(attr_false(dispatch, s_held));
    if ((conn = PyObject_GetAttr(run, s_conn)) == NULL) goto out;
    GUARD(attr_false(conn, s_pending));
    GUARD(attr_false(conn, s_debug));
    GUARD(attr_is(conn, s_congestion, Py_None));
#undef GUARD
    /* the client's capabilities are known once it runs; a pool shared since needs the
     * client's answers fitted */
    if ((routes = PyObject_GetAttr(run, s_routes_)) == NULL ||
        (pool = PyObject_GetAttr(session, s_pool)) == NULL ||
        (shared = PyObject_GetAttr(pool, s_shared)) == NULL ||
        (last = PyObject_GetAttr(run, s_shared_)) == NULL)
        goto out;
    if (routes == Py_None || last != shared) {
        if (PyObject_SetAttr(run, s_shared_, shared) < 0) goto out;
        Py_SETREF(routes, PyObject_CallOneArg(cfg_routes, session));
        if (routes == NULL || PyObject_SetAttr(run, s_routes_, routes) < 0) goto out;
    }
    if ((loop = PyObject_GetAttr(run, s_loop)) == NULL) goto out;
    if (loop == Py_None) {
        Py_SETREF(loop, PyObject_CallNoArgs(cfg_get_loop));
        if (loop == NULL || PyObject_SetAttr(run, s_loop, loop) < 0) goto out;
    }
    if ((now = PyObject_CallNoArgs(cfg_monotonic)) == NULL ||
        (t = PyObject_CallMethodNoArgs(loop, s_time)) == NULL)
        goto out;
    double now_loop = PyFloat_AsDouble(t);
    if (now_loop == -1.0 && PyErr_Occurred()) goto out;
    end = requests_core(items, start, session, routes, cfg_exchange, now_loop, now, dirty, &exc);
    if (end > start &&
        (PyObject_SetAttr(session, s_last_active, now) < 0 || add_handled(run, end - start) < 0))
        end = -1;
    if (exc != NULL && run_failed(conn, v_request, exc) < 0) end = -1;
out:
    Py_XDECREF(session); Py_XDECREF(dispatch); Py_XDECREF(conn);
    Py_XDECREF(routes); Py_XDECREF(pool); Py_XDECREF(shared); Py_XDECREF(last);
    Py_XDECREF(loop); Py_XDECREF(now); Py_XDECREF(t);
    return end;
}

static Py_ssize_t answer_run(PyObject *run, PyObject *items, Py_ssize_t start,
                             PyObject *dirty) {
    PyObject *conn = NULL, *exc = NULL;
    Py_ssize_t end = -1;
    int ok;
    if (dirty == Py_None) return start;
    if ((conn = PyObject_GetAttr(run, s_conn)) == NULL) goto out;
    if ((ok = attr_true(conn, s_debug)) != 0) { end = ok < 0 ? -1 : start; goto out; }
    if ((ok = attr_true(conn, s_pending)) != 1) { end = ok < 0 ? -1 : start; goto out; }
    end = answers_core(items, start, conn, cfg_exchange, dirty, &exc);
    if (end > start && add_handled(run, end - start) < 0) end = -1;
    if (exc != NULL && run_failed(conn, v_answer, exc) < 0) end = -1;
out:
    Py_XDECREF(conn);
    return end;
}

/* The run `kind` of (run, items, start) called from the Python: the index it stopped at. */
static PyObject *run_call(const char *name,
                          Py_ssize_t (*kind)(PyObject *, PyObject *, Py_ssize_t, PyObject *),
                          PyObject *const *args, Py_ssize_t nargs) {
    PyObject *items;
    Py_ssize_t start;
    if (fast_nargs(name, nargs, 3) < 0 || fast_list(name, args[1], &items) < 0 ||
        fast_index(args[2], &start) < 0)
        return NULL;
    if (cfg_batch == NULL) {
        PyErr_Format(PyExc_RuntimeError, "%s: configure() was not called", name);
        return NULL;
    }
    PyObject *dirty = batch_dirty();
    if (dirty == NULL) return NULL;
    Py_ssize_t end = kind(args[0], items, start, dirty);
    Py_DECREF(dirty);
    return end < 0 ? NULL : PyLong_FromSsize_t(end);
}

static PyObject *run_requests(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return run_call("run_requests", request_run, args, nargs);
}

static PyObject *run_answers(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    return run_call("run_answers", answer_run, args, nargs);
}

/* -- a connection's reads ------------------------------------------------------------------------
 *
 *     Reader(conn, batch, flush, failed)(nbytes) -> None
 *
 * `Connection.buffer_updated` as the transport calls it at every read (`wire/connection.py`),
 * for the usual read: the parser between messages (`FrameParser.buffer_updated`'s own fast
 * case). What the Python does in four of its functions and the run's, here in one call: the
 * whole frames cut where they were read (`frames_into`; a partial one left to
 * `FrameParser.feed`), the writes held (`batch.dirty`, `Connection._received`), the
 * connection's run called on the messages (`conn.lane`), what it left handed to the
 * connection's Python (`Connection._handle`), then the held writes written as `Writes._flush`
 * writes them: one write per connection, for a connection whose held bodies are small, whose
 * transport is open and within `max_write_buffer`, and which is not behind; `flush(others)`
 * (the Python) writes the others. A failure after a write (the backpressure's Python) is
 * given to `failed(conn, exc)`, which logs it, as `flush` logs its own.
 *
 * Any other read (a large body read in place, a partial frame of the last read, a read inside
 * another's handling) is the Python's: `conn._buffer_updated(nbytes)`. Its `get_buffer` is
 * the parser's, without a call of the Python's for the usual read. A run that raises is
 * called again by `_handle`, which logs the failure and turns the run off.
 */

static PyObject *s_parser, *s_big, *s_need, *s_buf, *s_parts, *s_dead, *s_scratch,
    *s_max_size, *s_lane, *s_handle, *s_max_write_buffer, *s_backpressure, *s_write,
    *s_get_write_buffer_size, *s_buffer_updated_py, *s_feed, *s_received, *s_congest, *v_zero,
    *v_empty_bytes, *s_in_place, *s_get_buffer;

static int reader_init(void) {
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return -1
    INTERN(s_parser, "_parser"); INTERN(s_big, "_big"); INTERN(s_need, "_need");
    INTERN(s_buf, "_buf"); INTERN(s_parts, "_parts"); INTERN(s_dead, "_dead");
    INTERN(s_scratch, "_scratch"); INTERN(s_max_size, "max_size"); INTERN(s_lane, "lane");
    INTERN(s_handle, "_handle");
    INTERN(s_max_write_buffer, "max_write_buffer"); INTERN(s_backpressure, "backpressure");
    INTERN(s_write, "write"); INTERN(s_get_write_buffer_size, "get_write_buffer_size");
    INTERN(s_buffer_updated_py, "_buffer_updated"); INTERN(s_feed, "feed");
    INTERN(s_received, "_received"); INTERN(s_congest, "_congest");
    INTERN(s_in_place, "_in_place"); INTERN(s_get_buffer, "get_buffer");
#undef INTERN
    if ((v_empty_bytes = PyBytes_FromStringAndSize("", 0)) == NULL) return -1;
    return (v_zero = PyLong_FromLong(0)) == NULL ? -1 : 0;
}

typedef struct {
    PyObject_HEAD
    PyObject *conn, *batch, *flush, *failed;
    vectorcallfunc vectorcall;
} Reader;

/* An int attribute of obj as a Py_ssize_t (*out; -1 when it is not an int); -1 on an error. */
static int attr_index(PyObject *obj, PyObject *name, Py_ssize_t *out) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL) return -1;
    *out = PyLong_CheckExact(v) ? PyLong_AsSsize_t(v) : -1;
    Py_DECREF(v);
    if (*out == -1 && PyErr_Occurred()) return -1;
    return 0;
}

/* Whether the parser is between messages (`FrameParser.buffer_updated`'s fast case): 1, 0, -1. */
static int parser_between(PyObject *parser) {
    Py_ssize_t need;
    int ok = attr_is(parser, s_big, Py_None);
    if (ok != 1) return ok;
    if (attr_index(parser, s_need, &need) < 0) return -1;
    if (need >= 0) return 0;
    PyObject *buf = PyObject_GetAttr(parser, s_buf);
    if (buf == NULL) return -1;
    int empty = PyByteArray_CheckExact(buf) && PyByteArray_GET_SIZE(buf) == 0;
    Py_DECREF(buf);
    if (!empty) return 0;
    if ((ok = attr_is(parser, s_parts, Py_None)) != 1) return ok;
    return attr_is(parser, s_dead, Py_False);
}

/* The items of a read of `nbytes` into the parser's scratch buffer, as
 * `FrameParser.buffer_updated` gives them: 1 (*out, a new list), 0 when the read is not one the
 * reader takes, -1. */
static int read_items(PyObject *parser, Py_ssize_t nbytes, PyObject **out) {
    int between = parser_between(parser);
    if (between <= 0) return between;
    PyObject *scratch = PyObject_GetAttr(parser, s_scratch);
    if (scratch == NULL) return -1;
    int taken = 0;
    PyObject *bodies = NULL, *max = NULL;
    if (!PyMemoryView_Check(scratch)) goto done;
    Py_buffer *view = PyMemoryView_GET_BUFFER(scratch);
    if (nbytes < 0 || nbytes > view->len) goto done;
    if ((max = PyObject_GetAttr(parser, s_max_size)) == NULL) goto error;
    if (!PyLong_Check(max)) goto done;
    unsigned long long max_size = PyLong_AsUnsignedLongLongMask(max);
    if (max_size == (unsigned long long)-1 && PyErr_Occurred()) goto error;
    if ((bodies = PyList_New(0)) == NULL) goto error;
    Py_ssize_t pos = frames_into(view->buf, nbytes, 0, max_size, bodies);
    if (pos < 0) goto error;
    if (pos < nbytes) { /* what is left: `feed` reads it (a partial frame, another header) */
        PyObject *rest = PySequence_GetSlice(scratch, pos, nbytes);
        if (rest == NULL) goto error;
        PyObject *fed = PyObject_CallMethodOneArg(parser, s_feed, rest);
        Py_DECREF(rest);
        if (fed == NULL) goto error;
        Py_ssize_t n = PyList_GET_SIZE(bodies);
        int rc = PyList_SetSlice(bodies, n, n, fed);
        Py_DECREF(fed);
        if (rc < 0) goto error;
    }
    *out = bodies;
    bodies = NULL;
    taken = 1;
done:
    Py_XDECREF(bodies);
    Py_XDECREF(max);
    Py_DECREF(scratch);
    return taken;
error:
    taken = -1;
    goto done;
}

/* The pieces of `held` joined into one bytes (`b"".join(held)`). */
static PyObject *joined(PyObject *held) {
    Py_ssize_t n = PyList_GET_SIZE(held), total = 0;
    if (n == 1 && PyBytes_CheckExact(PyList_GET_ITEM(held, 0)))
        return Py_NewRef(PyList_GET_ITEM(held, 0));
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *piece = PyList_GET_ITEM(held, k);
        if (!PyBytes_CheckExact(piece))
            return PyObject_CallMethod(v_empty_bytes, "join", "O", held);
        total += PyBytes_GET_SIZE(piece);
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, total);
    if (out == NULL) return NULL;
    char *p = PyBytes_AS_STRING(out);
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *piece = PyList_GET_ITEM(held, k);
        memcpy(p, PyBytes_AS_STRING(piece), (size_t)PyBytes_GET_SIZE(piece));
        p += PyBytes_GET_SIZE(piece);
    }
    return out;
}

/* `transport.get_write_buffer_size() > limit`: 1, 0, -1. */
static int over(PyObject *w, PyObject *limit) {
    PyObject *q = PyObject_CallMethodNoArgs(w, s_get_write_buffer_size);
    if (q == NULL) return -1;
    int above = PyObject_RichCompareBool(q, limit, Py_GT);
    Py_DECREF(q);
    return above;
}

/* `conn._flush()` for the usual case: 1 written (or nothing held), 0 left to the Python
 * (nothing done), -1 an error before the write (nothing done), -2 an error after it. */
static int flush_one(PyObject *conn) {
    PyObject *held = NULL, *w = NULL, *limit = NULL, *data = NULL;
    int rc = 0;
    Py_ssize_t size;
    if ((held = PyObject_GetAttr(conn, s_held)) == NULL) goto error;
    if (!PyList_CheckExact(held)) goto done;
    if (PyList_GET_SIZE(held) == 0) { rc = 1; goto done; }
    if (attr_index(conn, s_held_size, &size) < 0) goto error;
    if (size < 0 || size > 64 * 1024) goto done; /* `LARGE_WRITE`: written as pieces */
    if ((w = PyObject_GetAttr(conn, s_writer)) == NULL) goto error;
    if (w == Py_None) goto done;
    {
        PyObject *closing = PyObject_CallMethodNoArgs(w, s_is_closing);
        if (closing == NULL) goto error;
        int open = closing == Py_False;
        Py_DECREF(closing);
        if (!open) goto done;
    }
    if ((limit = PyObject_GetAttr(conn, s_max_write_buffer)) == NULL) goto error;
    if (limit != Py_None) { /* `_over_write_limit`: the Python aborts the peer */
        int above = over(w, limit);
        if (above < 0) goto error;
        if (above) goto done;
    }
    Py_CLEAR(limit);
    if ((limit = PyObject_GetAttr(conn, s_backpressure)) == NULL) goto error;
    if (limit != Py_None) { /* a peer already behind: `_check_queue` counts what it is sent */
        int behind = attr_is(conn, s_congestion, Py_None);
        if (behind < 0) goto error;
        if (!behind) goto done;
    }
    if ((data = joined(held)) == NULL) goto error;
    PyObject *r = PyObject_CallMethodOneArg(w, s_write, data);
    if (r == NULL) goto error;
    Py_DECREF(r);
    if (PyList_SetSlice(held, 0, PyList_GET_SIZE(held), NULL) < 0 ||
        PyObject_SetAttr(conn, s_held_size, v_zero) < 0) {
        rc = -2;
        goto done;
    }
    rc = 1;
    if (limit != Py_None) { /* `_check_queue` */
        int above = over(w, limit);
        if (above > 0) {
            r = PyObject_CallMethodNoArgs(conn, s_congest);
            if (r == NULL) above = -1;
            Py_XDECREF(r);
        }
        if (above < 0) rc = -2;
    }
done:
    Py_XDECREF(held); Py_XDECREF(w); Py_XDECREF(limit); Py_XDECREF(data);
    return rc;
error:
    rc = -1;
    goto done;
}

/* The held writes of the connections in `dirty` written: 0, or -1 when the Python's `flush`
 * or `failed` raised. */
static int reader_flush(Reader *self, PyObject *dirty) {
    PyObject *rest = NULL;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(dirty); k++) {
        PyObject *conn = PyList_GET_ITEM(dirty, k);
        int rc = flush_one(conn);
        if (rc == -2) {
            PyObject *exc = raised();
            PyObject *r = PyObject_CallFunctionObjArgs(self->failed, conn, exc, NULL);
            Py_DECREF(exc);
            if (r == NULL) goto error;
            Py_DECREF(r);
            continue;
        }
        if (rc == 1) continue;
        if (rc == -1) PyErr_Clear(); /* nothing done: the Python does it, and logs a failure */
        if (rest == NULL && (rest = PyList_New(0)) == NULL) goto error;
        if (PyList_Append(rest, conn) < 0) goto error;
    }
    if (rest != NULL) {
        PyObject *r = PyObject_CallOneArg(self->flush, rest);
        if (r == NULL) goto error;
        Py_DECREF(r);
        Py_DECREF(rest);
    }
    return 0;
error:
    Py_XDECREF(rest);
    return -1;
}

/* `Connection._received(items)` when no read is being handled: the run, the Python for the
 * rest, the held writes written. */
static PyObject *reader_received(Reader *self, PyObject *conn, PyObject *items) {
    PyObject *dirty = PyList_New(0);
    if (dirty == NULL) return NULL;
    if (PyObject_SetAttr(self->batch, s_dirty, dirty) < 0) {
        Py_DECREF(dirty);
        return NULL;
    }
    PyObject *exc = NULL, *lane = NULL;
    Py_ssize_t at = 0, count = PyList_GET_SIZE(items);
    int lane_first = 1; /* whether `_handle` calls the run before the message at `at` */
    if ((lane = PyObject_GetAttr(conn, s_lane)) == NULL) goto fail;
    if (lane != Py_None && count > 0) {
        Py_ssize_t end;
        if (cfg_request_run != NULL && (PyObject *)Py_TYPE(lane) == cfg_request_run) {
            end = request_run(lane, items, 0, dirty); /* its `__call__`, without the frame */
        } else if (cfg_answer_run != NULL && (PyObject *)Py_TYPE(lane) == cfg_answer_run) {
            end = answer_run(lane, items, 0, dirty);
        } else {
            PyObject *args[2] = {items, v_zero};
            PyObject *r = PyObject_Vectorcall(lane, args, 2, NULL);
            end = r == NULL ? -1 : PyLong_AsSsize_t(r);
            Py_XDECREF(r);
        }
        if (end < 0 || end > count) {
            PyErr_Clear(); /* `_handle` calls it again: it logs the failure, turns it off */
        } else {
            at = end;
            lane_first = 0;
        }
    }
    if (at < count) {
        PyObject *where = PyLong_FromSsize_t(at);
        if (where == NULL) goto fail;
        PyObject *r = PyObject_CallMethodObjArgs(conn, s_handle, items, where,
                                                 lane_first ? Py_True : Py_False, NULL);
        Py_DECREF(where);
        if (r == NULL) goto fail;
        Py_DECREF(r);
    }
    goto flush;
fail:
    exc = raised();
flush:
    Py_XDECREF(lane);
    /* `_received`'s finally: the batch ended, then its writes */
    if (PyObject_SetAttr(self->batch, s_dirty, Py_None) < 0 || reader_flush(self, dirty) < 0) {
        Py_XDECREF(exc);
        Py_DECREF(dirty);
        return NULL;
    }
    Py_DECREF(dirty);
    if (exc != NULL && exc != Py_None) {
#if PY_VERSION_HEX >= 0x030C0000
        PyErr_SetRaisedException(exc);
#else
        PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(exc)), exc, PyException_GetTraceback(exc));
#endif
        return NULL;
    }
    Py_XDECREF(exc);
    Py_RETURN_NONE;
}

static PyObject *reader_call(PyObject *op, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames) {
    Reader *self = (Reader *)op;
    Py_ssize_t nbytes;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        PyErr_SetString(PyExc_TypeError, "Reader() takes no keywords");
        return NULL;
    }
    if (fast_nargs("Reader", PyVectorcall_NARGS(nargsf), 1) < 0 ||
        fast_index(args[0], &nbytes) < 0)
        return NULL;
    PyObject *conn = Py_NewRef(self->conn), *parser = NULL, *items = NULL, *result = NULL;
    if ((parser = PyObject_GetAttr(conn, s_parser)) == NULL) goto done;
    int taken = read_items(parser, nbytes, &items);
    if (taken < 0) goto done;
    if (taken == 0) {
        result = PyObject_CallMethodOneArg(conn, s_buffer_updated_py, args[0]);
        goto done;
    }
    PyObject *dirty = PyObject_GetAttr(self->batch, s_dirty);
    if (dirty == NULL) goto done;
    int nested = dirty != Py_None;
    Py_DECREF(dirty);
    result = nested ? PyObject_CallMethodOneArg(conn, s_received, items)
                    : reader_received(self, conn, items);
done:
    Py_XDECREF(items);
    Py_XDECREF(parser);
    Py_DECREF(conn);
    return result;
}

/* `FrameParser.get_buffer(sizehint)` when it was called before and no large body is read in
 * place: the parser's scratch buffer, which it hands out at every such read. */
static PyObject *reader_get_buffer(PyObject *op, PyObject *const *args, Py_ssize_t nargs) {
    Reader *self = (Reader *)op;
    if (fast_nargs("get_buffer", nargs, 1) < 0) return NULL;
    PyObject *parser = PyObject_GetAttr(self->conn, s_parser);
    if (parser == NULL) return NULL;
    PyObject *out = NULL;
    int plain = attr_is(parser, s_big, Py_None);
    if (plain == 1) plain = attr_is(parser, s_in_place, Py_True);
    if (plain < 0) goto done;
    if (plain) {
        PyObject *scratch = PyObject_GetAttr(parser, s_scratch);
        if (scratch == NULL) goto done;
        if (PyMemoryView_Check(scratch)) {
            out = scratch;
            goto done;
        }
        Py_DECREF(scratch);
    }
    out = PyObject_CallMethodOneArg(parser, s_get_buffer, args[0]);
done:
    Py_DECREF(parser);
    return out;
}

static PyMethodDef reader_methods[] = {
    {"get_buffer", (PyCFunction)(void (*)(void))reader_get_buffer, METH_FASTCALL,
     "Connection.get_buffer (FrameParser.get_buffer) for the reads this reader takes."},
    {NULL, NULL, 0, NULL},
};

static PyObject *reader_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyObject *conn, *batch, *flush, *failed;
    static char *names[] = {"conn", "batch", "flush", "failed", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOOO:Reader", names, &conn, &batch, &flush,
                                     &failed))
        return NULL;
    if (!PyCallable_Check(flush) || !PyCallable_Check(failed)) {
        PyErr_SetString(PyExc_TypeError, "Reader: flush and failed must be callable");
        return NULL;
    }
    Reader *self = (Reader *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->conn = Py_NewRef(conn);
    self->batch = Py_NewRef(batch);
    self->flush = Py_NewRef(flush);
    self->failed = Py_NewRef(failed);
    self->vectorcall = reader_call;
    return (PyObject *)self;
}

static int reader_traverse(PyObject *op, visitproc visit, void *arg) {
    Reader *self = (Reader *)op;
    Py_VISIT(self->conn); Py_VISIT(self->batch); Py_VISIT(self->flush); Py_VISIT(self->failed);
    return 0;
}

static int reader_clear(PyObject *op) {
    Reader *self = (Reader *)op;
    Py_CLEAR(self->conn); Py_CLEAR(self->batch); Py_CLEAR(self->flush); Py_CLEAR(self->failed);
    return 0;
}

static void reader_dealloc(PyObject *op) {
    PyObject_GC_UnTrack(op);
    reader_clear(op);
    Py_TYPE(op)->tp_free(op);
}

static PyTypeObject ReaderType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "lspmux._speedups.Reader",
    .tp_basicsize = sizeof(Reader),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Connection.buffer_updated for the usual read (see the section in _speedups.c).",
    .tp_new = reader_new,
    .tp_methods = reader_methods,
    .tp_traverse = reader_traverse,
    .tp_clear = reader_clear,
    .tp_dealloc = reader_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Reader, vectorcall),
};

static PyMethodDef methods[] = {
    {"contains", contains, METH_VARARGS,
     "`needle in haystack` for two bytes, by the C library's memmem (about three times "
     "CPython's search where the needle is absent from a large haystack)."},
    {"fit_hover_markdown", fit_hover_markdown, METH_O,
     "fit_raw.fit_found of a hover answer whose markdown is code blocks and lines without "
     "markup, for a client without markdown; None for another answer"},
    {"fit_markdown_docs", fit_markdown_docs, METH_O,
     "fit_raw._fast_markdown of an answer whose markdown documentation is simple text; None "
     "for any other."},
    {"split_frames", (PyCFunction)(void (*)(void))split_frames, METH_FASTCALL,
     "The complete frames with a plain Content-Length header from `start`: their bodies and "
     "the offset where the first other one starts (see wire/framing.py)."},
    {"sniff_response", sniff_response, METH_O,
     "wire.messages.sniff_response: (id, offset of \"result\"/\"error\") of a response that "
     "plainly starts as one, else None."},
    {"rewrite_response_id", rewrite_response_id, METH_VARARGS,
     "wire.messages.rewrite_response_id for an int id or a plain ASCII string id; None for "
     "another."},
    {"scan_request", scan_request_py, METH_O,
     "The plain request the native lane reads in place: (id, method, uri, has a position, "
     "has a range, the id's offset, its end), or None for a body it leaves to orjson."},
    {"configure", configure, METH_VARARGS,
     "configure(batch, exchange_type, request_run, answer_run, lane_routes, failed): what the "
     "runs read and call (see session/native.py)."},
    {"run_requests", (PyCFunction)(void (*)(void))run_requests, METH_FASTCALL,
     "RequestRun's run over a read's messages: the index of the first message left to the "
     "Python (see session/native.py)."},
    {"run_answers", (PyCFunction)(void (*)(void))run_answers, METH_FASTCALL,
     "AnswerRun's run over a read's messages: the index of the first message left to the "
     "Python (see session/native.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "lspmux._speedups",
    "The work of lspmux's hot paths in C (optional; see lspmux/speedups.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* What the Python of this source expects of the extension (`speedups.ABI`): raised whenever a
 * function's arguments or meaning change, so that a build of an older source is not used. */
#define SPEEDUPS_ABI 6

PyMODINIT_FUNC PyInit__speedups(void) {
    if (lane_init() < 0 || reader_init() < 0 || PyType_Ready(&ReaderType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddIntConstant(m, "ABI", SPEEDUPS_ABI) < 0 ||
                      PyModule_AddObjectRef(m, "Reader", (PyObject *)&ReaderType) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
