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
 *
 *     lane_requests(items, start, session, routes, exchange_type, now_loop, now_mono, dirty)
 *     lane_answers(items, start, conn, exchange_type, dirty)  -> tuple[int, exception | None]
 *
 * The native lane (`session/native.py`): the fast lane's work for a run of a read's plain
 * requests, and of a server read's plain answers to them; see the section below.
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

/* -- the native lane -------------------------------------------------------------------------
 *
 * `session/fast.py`'s lane, one read at a time: `lane_requests` takes a client's plain requests
 * of one read in a row and does for each what `Lane.relay` does (the same checks, on the same
 * tables of the session, and the same effects in the same order); `lane_answers` takes a
 * server's plain answers to those requests and does what `FastExchange.raw` does for them.
 * Both stop at the first message that is anything else, or that needs what only the Python
 * does (a table without the entry yet, a timer to set, a log line), and return its index: the
 * connection hands it to the Python, then calls again for the rest. So no message is handled
 * differently, only sooner; see `session/native.py` for the Python side.
 */

static PyObject *s_state, *s_running, *s_uri_backends, *s_supports, *s_position_encoding,
    *s_encoding, *s_conn_, *s_closed, *s_debug, *s_id_prefix, *s_writer, *s_is_closing,
    *s_loop, *s_config, *s_request_timeout, *s_next_id, *s_deadlines, *s_pending, *s_sweep,
    *s_sweep_at, *s_seq, *s_pool, *s_shared, *s_documents, *s_ensure_holds, *s_origin,
    *s_last_origin, *s_link, *s_inflight, *s_session, *s_client_id, *s_method, *s_params,
    *s_targets, *s_answered, *s_per_backend, *s_fit_for, *s_fit_kind, *s_backend, *s_family,
    *s_timeout, *s_deadline, *s_last_used, *s_held, *s_held_size, *s_idle, *s_conn, *s_client_capabilities,
    *k_jsonrpc, *k_id, *k_method, *k_params, *k_locate, *k_text_document, *k_uri,
    *k_position, *k_range, *k_line, *k_character, *k_start, *k_end, *v_two, *v_empty;
static PyObject *orjson_loads, *orjson_dumps, *heappush;

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
    INTERN(v_two, "2.0"); INTERN(v_empty, "");
#undef INTERN
    return 0;
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

/* obj.name == "running"; -1 on an error. */
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

/* `Writes.send_raw` inside a read: the header and `body` held on `conn`, `conn` marked dirty
 * when it held nothing yet. */
static int hold(PyObject *conn, PyObject *body, PyObject *dirty) {
    PyObject *held = PyObject_GetAttr(conn, s_held);
    if (held == NULL) return -1;
    if (!PyList_CheckExact(held)) {
        Py_DECREF(held);
        PyErr_SetString(PyExc_TypeError, "lane: _held is not a list");
        return -1;
    }
    int rc = -1;
    Py_ssize_t n = PyBytes_GET_SIZE(body);
    PyObject *header = PyBytes_FromFormat("Content-Length: %zd\r\n\r\n", n);
    PyObject *size = NULL, *grown = NULL, *add = NULL;
    if (header == NULL) goto out;
    if (PyList_GET_SIZE(held) == 0 && PyList_Append(dirty, conn) < 0) goto out;
    if (PyList_Append(held, header) < 0 || PyList_Append(held, body) < 0) goto out;
    if ((size = PyObject_GetAttr(conn, s_held_size)) == NULL) goto out;
    if ((add = PyLong_FromSsize_t(n)) == NULL) goto out;
    if ((grown = PyNumber_Add(size, add)) == NULL) goto out;
    rc = PyObject_SetAttr(conn, s_held_size, grown);
out:
    Py_XDECREF(header);
    Py_XDECREF(size);
    Py_XDECREF(add);
    Py_XDECREF(grown);
    Py_DECREF(held);
    return rc;
}

/* What a lane request goes to, when `Lane.relay` would send it by the lane: its target and the
 * values read on the way (new references in *out). 1: yes; 0: no (the Python decides); -1. */
typedef struct {
    PyObject *msg, *method, *id, *params, *uri, *route, *target, *conn, *timeout, *origin;
    double deadline;
    long long next_id;
} LaneRequest;

static void lane_request_clear(LaneRequest *r) {
    Py_CLEAR(r->msg); Py_CLEAR(r->method); Py_CLEAR(r->id); Py_CLEAR(r->params);
    Py_CLEAR(r->uri); Py_CLEAR(r->route); Py_CLEAR(r->target); Py_CLEAR(r->conn);
    Py_CLEAR(r->timeout); Py_CLEAR(r->origin);
}

/* The largest request body the lane parses (a hover is ~200 bytes). */
#define LANE_MAX_REQUEST (16 * 1024)

#define ROUTE_POSITION 1
#define ROUTE_RANGE 2
#define ROUTE_MERGE 8

#define CHECK(cond) do { int _c = (cond); if (_c < 0) goto error; if (!_c) goto no; } while (0)

static int lane_request(PyObject *body, PyObject *session, PyObject *routes, double now_loop,
                        LaneRequest *r) {
    PyObject *v = NULL, *backends = NULL;
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
    v = NULL;
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
    /* the session running; its servers for the document, all running, one serving it */
    CHECK(is_running(session));
    PyObject *table = PyObject_GetAttr(session, s_uri_backends);
    if (table == NULL) goto error;
    backends = Py_XNewRef(PyDict_GetItemWithError(table, r->uri));
    Py_DECREF(table);
    if (backends == NULL || !PyList_CheckExact(backends)) goto no_or_error;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(backends); k++) {
        PyObject *b = PyList_GET_ITEM(backends, k);
        CHECK(is_running(b));
        PyObject *memo = PyObject_GetAttr(b, s_supports);
        if (memo == NULL) goto error;
        PyObject *known = PyDict_Check(memo) ? PyDict_GetItemWithError(memo, r->method) : NULL;
        Py_DECREF(memo);
        if (known == NULL) goto no_or_error; /* not asked yet: `supports` asks */
        if (known == Py_True) {
            if (r->target != NULL) goto no; /* several: the policy decides */
            r->target = Py_NewRef(b);
        } else if (known != Py_False) {
            goto no;
        }
    }
    if (r->target == NULL) goto no;
    {
        PyObject *a = PyObject_GetAttr(r->target, s_position_encoding);
        if (a == NULL) goto error;
        PyObject *b = PyObject_GetAttr(session, s_encoding);
        if (b == NULL) {
            Py_DECREF(a);
            goto error;
        }
        int same = PyObject_RichCompareBool(a, b, Py_EQ);
        Py_DECREF(a);
        Py_DECREF(b);
        CHECK(same);
    }
    /* the origin of the target (`origin_of`: known since `backends_for`) */
    {
        PyObject *origins = PyObject_GetAttr(session, s_origin);
        if (origins == NULL) goto error;
        r->origin = Py_XNewRef(PyDict_GetItemWithError(origins, r->target));
        Py_DECREF(origins);
        if (r->origin == NULL) goto no_or_error;
    }
    /* `Backend.forward` and `Connection.forward` without their Python-only cases */
    r->conn = PyObject_GetAttr(r->target, s_conn_);
    if (r->conn == NULL) goto error;
    PyObject *conn = r->conn;
    if (conn == Py_None) goto no;
    CHECK(attr_is(conn, s_closed, Py_False));
    CHECK(attr_is(conn, s_debug, Py_False));
    CHECK(attr_is(conn, s_id_prefix, Py_None));
    {
        int loop_none = attr_is(conn, s_loop, Py_None);
        if (loop_none < 0) goto error;
        if (loop_none) goto no; /* the first deadline finds the loop */
    }
    CHECK(writable(conn));
    {
        PyObject *config = PyObject_GetAttr(r->target, s_config);
        if (config == NULL) goto error;
        r->timeout = PyObject_GetAttr(config, s_request_timeout);
        Py_DECREF(config);
        if (r->timeout == NULL) goto error;
    }
    if (r->timeout != Py_None) {
        if (!PyFloat_CheckExact(r->timeout) && !PyLong_CheckExact(r->timeout)) goto no;
        r->deadline = now_loop + PyFloat_AsDouble(r->timeout);
        if (PyErr_Occurred()) goto error;
        PyObject *heap = PyObject_GetAttr(conn, s_deadlines);
        PyObject *pending = heap ? PyObject_GetAttr(conn, s_pending) : NULL;
        if (pending == NULL) {
            Py_XDECREF(heap);
            goto error;
        }
        int compact = !PyList_CheckExact(heap) || !PyDict_CheckExact(pending) ||
                      PyList_GET_SIZE(heap) + 1 > 4 * PyDict_GET_SIZE(pending) + 1024;
        Py_DECREF(heap);
        Py_DECREF(pending);
        if (compact) goto no; /* the Python drops the answered ones */
        PyObject *sweep = PyObject_GetAttr(conn, s_sweep);
        if (sweep == NULL) goto error;
        int no_sweep = sweep == Py_None;
        Py_DECREF(sweep);
        if (no_sweep) goto no; /* the Python sets the timer */
        PyObject *at = PyObject_GetAttr(conn, s_sweep_at);
        if (at == NULL) goto error;
        double sweep_at = PyFloat_AsDouble(at);
        Py_DECREF(at);
        if (sweep_at == -1.0 && PyErr_Occurred()) goto error;
        if (r->deadline < sweep_at) goto no; /* the Python sets the timer sooner */
    }
    Py_XDECREF(backends);
    return 1;
no_or_error:
    if (PyErr_Occurred()) goto error;
no:
    Py_XDECREF(backends);
    return 0;
error:
    Py_XDECREF(backends);
    return -1;
}

static int set_attrs(PyObject *obj, PyObject *const *names, PyObject *const *values, int n) {
    for (int k = 0; k < n; k++)
        if (PyObject_SetAttr(obj, names[k], values[k]) < 0) return -1;
    return 0;
}

/* The effects of `Lane.relay` for a request `lane_request` took, in its order. */
static int lane_send(LaneRequest *r, PyObject *session, PyObject *exchange_type,
                     PyObject *now_mono, PyObject *dirty) {
    PyObject *out = NULL, *body = NULL, *id = NULL, *ex = NULL, *link = NULL, *inflight = NULL,
             *targets = NULL, *family = NULL, *pair = NULL, *deadline = NULL, *entry = NULL;
    int rc = -1;
    PyObject *conn = r->conn;
    /* `single_target`: a shared server holds this client's text; a MERGE of one has its
     * origin now */
    PyObject *pool = PyObject_GetAttr(session, s_pool);
    if (pool == NULL) goto out;
    int shared = attr_is(pool, s_shared, Py_True);
    Py_DECREF(pool);
    if (shared < 0) goto out;
    if (shared) {
        PyObject *docs = PyObject_GetAttr(session, s_documents);
        if (docs == NULL) goto out;
        int open = PySequence_Contains(docs, r->uri);
        Py_DECREF(docs);
        if (open < 0) goto out;
        if (open) {
            PyObject *held_docs = PyObject_GetAttr(r->target, s_documents);
            if (held_docs == NULL) goto out;
            PyObject *res = PyObject_CallMethodObjArgs(held_docs, s_ensure_holds, session,
                                                       r->uri, NULL);
            Py_DECREF(held_docs);
            if (res == NULL) goto out;
            Py_DECREF(res);
        }
    }
    family = Py_NewRef(PyTuple_GET_ITEM(r->route, 1));
    if (PyLong_AsLong(PyTuple_GET_ITEM(r->route, 0)) & ROUTE_MERGE) {
        if (family != Py_None) {
            PyObject *last = PyObject_GetAttr(session, s_last_origin);
            if (last == NULL) goto out;
            int set = PyObject_SetItem(last, family, r->origin);
            Py_DECREF(last);
            if (set < 0) goto out;
        }
        Py_SETREF(family, Py_NewRef(Py_None));
    }
    /* the request as the server gets it: `Connection.forward`'s dict under the connection's
     * next id (read again: the text sent just now took none, but the id is the Python's to
     * give), encoded before anything of the request's own is done (one that cannot be is
     * left to the Python, which answers it; what was done above it does again, the same) */
    {
        PyObject *n = PyObject_GetAttr(conn, s_next_id);
        if (n == NULL) goto out;
        int overflow = 0;
        long long next = PyLong_CheckExact(n) ? PyLong_AsLongLongAndOverflow(n, &overflow) : -1;
        Py_DECREF(n);
        if (next == -1 && PyErr_Occurred()) goto out;
        if (next < 0 || overflow || next > (1LL << 62)) {
            rc = 0;
            goto out;
        }
        r->next_id = next;
    }
    if ((id = PyLong_FromLongLong(r->next_id)) == NULL) goto out;
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
    /* `FastExchange(session, msg, target, family)` */
    if ((ex = PyType_GenericNew((PyTypeObject *)exchange_type, NULL, NULL)) == NULL) goto out;
    if ((link = PyObject_GetAttr(session, s_link)) == NULL) goto out;
    if ((targets = PyList_New(0)) == NULL) goto out;
    {
        PyObject *names[] = {s_session, s_link, s_client_id, s_method, s_params, s_targets,
                             s_answered, s_per_backend, s_fit_for, s_fit_kind, s_backend,
                             s_family, s_timeout, s_deadline};
        /* answers a shared server gives this client fitted to what it declared
         * (`forward.must_fit`): the route's fitting kind, the client's capabilities */
        PyObject *fit_kind = PyTuple_GET_ITEM(r->route, 2), *fit_for = Py_NewRef(Py_None);
        if (fit_kind != Py_None) {
            Py_SETREF(fit_for, PyObject_GetAttr(session, s_client_capabilities));
            if (fit_for == NULL) goto out;
        } else {
            fit_kind = v_empty;
        }
        PyObject *zero = PyFloat_FromDouble(0.0);
        if (zero == NULL) {
            Py_DECREF(fit_for);
            goto out;
        }
        PyObject *values[] = {session, link, r->id, r->method, r->params, targets,
                              Py_False, Py_None, fit_for, fit_kind, r->target,
                              family, Py_None, zero};
        int set = set_attrs(ex, names, values, 14);
        Py_DECREF(zero);
        Py_DECREF(fit_for);
        if (set < 0) goto out;
    }
    if ((inflight = PyObject_GetAttr(link, s_inflight)) == NULL) goto out;
    if (PyObject_SetItem(inflight, r->id, ex) < 0) goto out;
    /* `Backend.forward`, `Connection.forward` */
    if (PyObject_SetAttr(r->target, s_last_used, now_mono) < 0) goto out;
    {
        PyObject *next = PyLong_FromLongLong(r->next_id + 1);
        if (next == NULL) goto out;
        int set = PyObject_SetAttr(conn, s_next_id, next);
        Py_DECREF(next);
        if (set < 0) goto out;
    }
    if (PyObject_SetAttr(ex, s_timeout, r->timeout) < 0) goto out;
    if (r->timeout != Py_None) {
        PyObject *seq = PyObject_GetAttr(conn, s_seq);
        if (seq == NULL) goto out;
        PyObject *one = PyLong_FromLong(1);
        PyObject *seq1 = one ? PyNumber_Add(seq, one) : NULL;
        Py_DECREF(seq);
        Py_XDECREF(one);
        if (seq1 == NULL) goto out;
        if (PyObject_SetAttr(conn, s_seq, seq1) < 0) {
            Py_DECREF(seq1);
            goto out;
        }
        deadline = PyFloat_FromDouble(r->deadline);
        entry = deadline ? PyTuple_Pack(3, deadline, seq1, id) : NULL;
        Py_DECREF(seq1);
        if (entry == NULL) goto out;
        PyObject *heap = PyObject_GetAttr(conn, s_deadlines);
        if (heap == NULL) goto out;
        PyObject *pushed = PyObject_CallFunctionObjArgs(heappush, heap, entry, NULL);
        Py_DECREF(heap);
        if (pushed == NULL) goto out;
        Py_DECREF(pushed);
        if (PyObject_SetAttr(ex, s_deadline, deadline) < 0) goto out;
    }
    {
        PyObject *pending = PyObject_GetAttr(conn, s_pending);
        if (pending == NULL) goto out;
        int set = PyObject_SetItem(pending, id, ex);
        Py_DECREF(pending);
        if (set < 0) goto out;
    }
    if (hold(conn, body, dirty) < 0) goto out;
    if ((pair = PyTuple_Pack(2, r->target, id)) == NULL) goto out;
    if (PyList_Append(targets, pair) < 0) goto out;
    rc = 1;
out:
    Py_XDECREF(out); Py_XDECREF(body); Py_XDECREF(id); Py_XDECREF(ex); Py_XDECREF(link);
    Py_XDECREF(inflight); Py_XDECREF(targets); Py_XDECREF(family); Py_XDECREF(pair);
    Py_XDECREF(deadline); Py_XDECREF(entry);
    return rc;
}

/* A message whose handling failed half way (out of memory, or a bug): it counts as handled, as
 * the Python's `_received` logs a message that fails and goes on; the caller logs the error. */
static PyObject *failed(Py_ssize_t i) {
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
    if (exc == NULL) exc = Py_NewRef(Py_None);
    return Py_BuildValue("(nN)", i + 1, exc);
}

static PyObject *lane_requests(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *items, *session, *routes, *exchange_type, *now_mono, *dirty;
    Py_ssize_t start;
    double now_loop;
    if (!PyArg_ParseTuple(args, "O!nOO!OdOO!:lane_requests", &PyList_Type, &items, &start,
                          &session, &PyDict_Type, &routes, &exchange_type, &now_loop,
                          &now_mono, &PyList_Type, &dirty))
        return NULL;
    if (!PyType_Check(exchange_type)) {
        PyErr_SetString(PyExc_TypeError, "lane_requests: exchange_type must be a type");
        return NULL;
    }
    if (lane_imports() < 0) return NULL;
    Py_ssize_t i = start < 0 ? 0 : start;
    for (; i < PyList_GET_SIZE(items); i++) {
        PyObject *body = PyList_GET_ITEM(items, i);
        /* a lane request is small and has an id: anything else (a document's text, a
         * notification) is left to the Python before it is parsed, so it is parsed once */
        if (!PyBytes_CheckExact(body) || PyBytes_GET_SIZE(body) > LANE_MAX_REQUEST ||
            memmem(PyBytes_AS_STRING(body), (size_t)PyBytes_GET_SIZE(body), "\"id\"", 4) == NULL)
            break;
        LaneRequest r = {0};
        Py_INCREF(body);
        int ok = lane_request(body, session, routes, now_loop, &r);
        if (ok == 1) ok = lane_send(&r, session, exchange_type, now_mono, dirty);
        Py_DECREF(body);
        lane_request_clear(&r);
        if (ok < 0) return failed(i);
        if (ok == 0) break;
    }
    return Py_BuildValue("(nO)", i, Py_None);
}

/* `FastExchange.raw` and what it calls (`reply_raw`, `relay`, `_finish`,
 * `send_raw_response`), for the plain answers of one read; see `lane_requests`. */
static PyObject *lane_answers(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *items, *conn, *exchange_type, *dirty;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!nOOO!:lane_answers", &PyList_Type, &items, &start, &conn,
                          &exchange_type, &PyList_Type, &dirty))
        return NULL;
    PyObject *pending = PyObject_GetAttr(conn, s_pending);
    if (pending == NULL) return NULL;
    if (!PyDict_CheckExact(pending)) {
        Py_DECREF(pending);
        return Py_BuildValue("(nO)", start, Py_None);
    }
    Py_ssize_t i = start < 0 ? 0 : start;
    for (; i < PyList_GET_SIZE(items); i++) {
        PyObject *body = PyList_GET_ITEM(items, i);
        if (!PyBytes_CheckExact(body) || PyDict_GET_SIZE(pending) == 0) break;
        Py_ssize_t n = PyBytes_GET_SIZE(body);
        if (n > 64 * 1024) break; /* a large answer is written from its own bytes */
        PyObject *sniffed = sniff_response(NULL, body);
        if (sniffed == NULL) goto error;
        if (sniffed == Py_None) {
            Py_DECREF(sniffed);
            break;
        }
        PyObject *id = Py_NewRef(PyTuple_GET_ITEM(sniffed, 0));
        Py_ssize_t offset = PyLong_AsSsize_t(PyTuple_GET_ITEM(sniffed, 1));
        Py_DECREF(sniffed);
        PyObject *ex = PyDict_GetItemWithError(pending, id);
        if (ex == NULL || (PyObject *)Py_TYPE(ex) != exchange_type ||
            n - offset < 8 || memcmp(PyBytes_AS_STRING(body) + offset, "\"result\"", 8) != 0) {
            Py_DECREF(id);
            if (PyErr_Occurred()) goto error;
            break;
        }
        Py_INCREF(ex);
        PyObject *link = NULL, *cconn = NULL, *family = NULL, *session = NULL, *origin = NULL,
                 *client_id = NULL, *out = NULL, *inflight = NULL;
        int ok = -1;
        int c;
#define TAKE(cond) do { c = (cond); if (c < 0) goto done; if (!c) { ok = 0; goto done; } } while (0)
        TAKE(attr_is(ex, s_fit_for, Py_None));
        if ((link = PyObject_GetAttr(ex, s_link)) == NULL) goto done;
        TAKE(attr_is(link, s_idle, Py_None));
        if ((cconn = PyObject_GetAttr(link, s_conn)) == NULL) goto done;
        TAKE(cconn != Py_None);
        TAKE(attr_is(cconn, s_debug, Py_False));
        TAKE(writable(cconn));
        if ((client_id = PyObject_GetAttr(ex, s_client_id)) == NULL) goto done;
        {
            PyObject *rargs = Py_BuildValue("(OnO)", body, offset, client_id);
            if (rargs == NULL) goto done;
            out = rewrite_response_id(NULL, rargs);
            Py_DECREF(rargs);
            if (out == NULL) goto done;
            TAKE(out != Py_None);
        }
        if ((family = PyObject_GetAttr(ex, s_family)) == NULL) goto done;
        if (family != Py_None) {
            if ((session = PyObject_GetAttr(ex, s_session)) == NULL) goto done;
            PyObject *origins = PyObject_GetAttr(session, s_origin);
            if (origins == NULL) goto done;
            PyObject *backend = PyObject_GetAttr(ex, s_backend);
            if (backend == NULL) {
                Py_DECREF(origins);
                goto done;
            }
            origin = Py_XNewRef(PyDict_GetItemWithError(origins, backend));
            Py_DECREF(origins);
            Py_DECREF(backend);
            if (origin == NULL && PyErr_Occurred()) goto done;
            TAKE(origin != NULL);
        }
        /* the effects, in the Python's order */
        if (PyDict_DelItem(pending, id) < 0) goto done;
        if (origin != NULL) {
            PyObject *last = PyObject_GetAttr(session, s_last_origin);
            if (last == NULL) goto done;
            int set = PyObject_SetItem(last, family, origin);
            Py_DECREF(last);
            if (set < 0) goto done;
        }
        c = attr_is(ex, s_answered, Py_True);
        if (c < 0) goto done;
        if (c) { /* answered already (`_finish`): nothing is sent */
            ok = 1;
            goto done;
        }
        if (PyObject_SetAttr(ex, s_answered, Py_True) < 0) goto done;
        if ((inflight = PyObject_GetAttr(link, s_inflight)) == NULL) goto done;
        {
            PyObject *known = PyObject_GetItem(inflight, client_id);
            if (known == NULL) {
                if (!PyErr_ExceptionMatches(PyExc_KeyError)) goto done;
                PyErr_Clear();
            } else {
                int mine = known == ex;
                Py_DECREF(known);
                if (mine && PyObject_DelItem(inflight, client_id) < 0) goto done;
            }
        }
        if (hold(cconn, out, dirty) < 0) goto done;
        ok = 1;
#undef TAKE
    done:
        Py_XDECREF(link); Py_XDECREF(cconn); Py_XDECREF(family); Py_XDECREF(session);
        Py_XDECREF(origin); Py_XDECREF(client_id); Py_XDECREF(out); Py_XDECREF(inflight);
        Py_DECREF(ex);
        Py_DECREF(id);
        if (ok < 0) goto error;
        if (ok == 0) break;
    }
    Py_DECREF(pending);
    return Py_BuildValue("(nO)", i, Py_None);
error:
    Py_DECREF(pending);
    return failed(i);
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
    {"lane_requests", lane_requests, METH_VARARGS,
     "session/fast.py's lane for a run of a client's plain requests; the index of the first "
     "message left to the Python (see session/native.py)."},
    {"lane_answers", lane_answers, METH_VARARGS,
     "FastExchange.raw for a run of a server's plain answers; the index of the first message "
     "left to the Python (see session/native.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "lspmux._speedups",
    "The work of lspmux's hot paths in C (optional; see lspmux/speedups.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

/* What the Python of this source expects of the extension (`speedups.ABI`): raised whenever a
 * function's arguments or meaning change, so that a build of an older source is not used. */
#define SPEEDUPS_ABI 2

PyMODINIT_FUNC PyInit__speedups(void) {
    if (lane_init() < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", SPEEDUPS_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
