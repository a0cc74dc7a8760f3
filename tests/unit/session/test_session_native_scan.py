"""The native lane reads a plain request in place (`_speedups.c`: `scan_request`) and sends its
very bytes to the server with the server's id in place of the client's; the exchange parses
the params only if something asks for them (`FastExchange.params`).

So what the scan takes must be exactly what orjson reads (the same id, method, document,
position and range; nothing it does not see, such as a key written twice), and the bytes with
the id replaced must be the same message under the new id. What it declines, the lane parses
with orjson as before. Checked on generated requests: white space of every kind, members in
any order, extra params of any shape, ids of every type, strings with escapes and non-ASCII
characters, numbers of every form — and on those bytes cut or changed at random.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lspmux import speedups
from lspmux.session.params import _is_position

from .memory import Fail, ScriptedServer
from .test_session_fast import HOVER, hover_params, opened
from .test_session_native import runs

# -- a serializer with every freedom JSON gives -----------------------------------------------------

SPACE = st.sampled_from(["", "", "", " ", "\n", "\t", "\r\n  ", "  "])


class Twice(dict):  # type: ignore[type-arg]
    """A JSON object written with `key` twice: first with `first`, then with its value."""

    def __init__(self, items: dict[str, Any], key: str, first: Any) -> None:
        super().__init__(items)
        self.key, self.first = key, first


@st.composite
def written(draw: st.DrawFn, value: Any, plain: bool = False) -> str:
    """`value` as JSON, with white space anywhere between tokens; unless `plain`, strings
    escaped or not and ints written as floats now and then."""
    if isinstance(value, dict):
        pairs = list(value.items())
        if isinstance(value, Twice):
            pairs.insert(draw(st.integers(0, len(pairs))), (value.key, value.first))
        members = [
            draw(SPACE) + draw(written(k, plain)) + draw(SPACE) + ":" + draw(SPACE)
            + draw(written(v, plain))
            for k, v in pairs
        ]  # fmt: skip
        return "{" + ",".join(members) + draw(SPACE) + "}"
    if isinstance(value, list):
        items = (draw(SPACE) + draw(written(v, plain)) for v in value)
        return "[" + ",".join(items) + draw(SPACE) + "]"
    if plain:
        return json.dumps(value)
    if isinstance(value, str):
        how = draw(st.sampled_from(["plain"] * 6 + ["ascii", "escape-one"]))
        if how == "ascii":
            return json.dumps(value, ensure_ascii=True)
        if how == "escape-one" and value:
            k = draw(st.integers(0, len(value) - 1))
            return (
                json.dumps(value[:k], ensure_ascii=False)[:-1]
                + f"\\u{ord(value[k]):04x}"
                + json.dumps(value[k + 1 :], ensure_ascii=False)[1:]
                if ord(value[k]) < 0x10000
                else json.dumps(value, ensure_ascii=False)
            )
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float):
        return draw(st.sampled_from([repr(value), f"{value:e}", f"{value:.3E}"]))
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int) and draw(st.integers(0, 9)) == 0:
        return draw(st.sampled_from([f"{value}.0", f"{value}e0", f"{value}E+0"]))  # an int's forms
    return json.dumps(value)


NAMES = st.sampled_from(
    ["uri", "line", "character", "start", "end", "id", "method", "params", "textDocument",
     "position", "range", "context", "workDoneToken", "version", "locate", "x"]
)  # fmt: skip
ASCII = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=12)
TEXT = (
    ASCII
    | ASCII
    | st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
    | st.sampled_from(["file:///w/a.py", "2.0", "", "é", "\\", '"', "\x7f", "a\x00b"])
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES | TEXT, inner, max_size=3),
    max_leaves=8,
)
SMALL = st.integers(0, 10**6)
INTS = SMALL | SMALL | SMALL | st.integers(-(10**20), 10**20)
POSITION = (
    st.fixed_dictionaries({"line": SMALL, "character": SMALL})
    | st.fixed_dictionaries({"line": INTS, "character": INTS})
    | VALUES
)
ID = SMALL | SMALL | ASCII | SCALARS


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    doc: dict[str, Any] = {"uri": draw(TEXT | st.just("file:///w/a.py"))}
    if draw(st.booleans()):
        doc.update(draw(st.dictionaries(NAMES, VALUES, max_size=2)))
    params: dict[str, Any] = {"textDocument": doc}
    if draw(st.booleans()):
        params["position"] = draw(POSITION)
    if draw(st.booleans()):
        params["range"] = draw(st.fixed_dictionaries({"start": POSITION, "end": POSITION}) | VALUES)
    if draw(st.booleans()):
        params.update(draw(st.dictionaries(NAMES, VALUES, max_size=3)))
    msg: dict[str, Any] = {
        "jsonrpc": draw(st.sampled_from(["2.0"] * 8 + ["1.0", 2])),
        "id": draw(ID),
        "method": draw(st.sampled_from(["textDocument/hover", "textDocument/definition"]) | TEXT),
        "params": draw(st.sampled_from([params] * 8 + [[params], None])),
    }
    if draw(st.integers(0, 9)) == 0:
        del msg[draw(st.sampled_from(list(msg)))]
    if draw(st.integers(0, 9)) == 0:
        msg.update(draw(st.dictionaries(NAMES, VALUES, max_size=1)))
    order = draw(st.permutations(list(msg)))
    return {k: msg[k] for k in order}


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    body = (draw(SPACE) + draw(written(draw(requests()))) + draw(SPACE)).encode()
    how = draw(st.sampled_from(["as written"] * 6 + ["twice a key", "cut", "changed"]))
    if how == "twice a key" and b'"uri"' in body:
        at = body.index(b'"uri"')
        body = body[:at] + b'"uri":"file:///other",' + body[at:]
    elif how == "cut" and body:
        body = body[: draw(st.integers(0, len(body) - 1))]
    elif how == "changed" and body:
        at = draw(st.integers(0, len(body) - 1))
        body = (
            body[:at]
            + draw(st.sampled_from([b"", b",", b"}", b"{", b'"', b"0", b"\\", b" "]))
            + body[at + 1 :]
        )
    return body


def each_key_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), f"a key twice: {keys}"
    return dict(pairs)


def check(native: Any, body: bytes) -> Any:
    """The scan's reading of `body` against orjson's: the same, or declined."""
    got = native.scan_request(body)
    if got is None:
        return None
    msg_id, method, uri, position, rng, id_at, id_end = got
    msg = orjson.loads(body)  # what the scan takes is valid JSON
    json.loads(body, object_pairs_hook=each_key_once)  # the server reads no key twice
    assert isinstance(msg, dict) and list(sorted(msg)) == ["id", "jsonrpc", "method", "params"]
    assert msg["jsonrpc"] == "2.0"
    assert type(msg["id"]) is type(msg_id) and msg["id"] == msg_id
    assert type(msg_id) in (int, str)
    assert msg["method"] == method
    params = msg["params"]
    assert isinstance(params, dict) and "locate" not in params
    assert isinstance(params["textDocument"], dict) and params["textDocument"]["uri"] == uri
    assert position == ("position" in params)
    assert not position or _is_position(params["position"])
    assert rng == ("range" in params)
    if rng:
        assert isinstance(params["range"], dict)
        assert _is_position(params["range"]["start"]) and _is_position(params["range"]["end"])
    # the id's bytes, and the same message under another id
    assert orjson.loads(body[id_at:id_end]) == msg_id
    assert orjson.loads(body[:id_at] + b"4242" + body[id_end:]) == {**msg, "id": 4242}
    return got


PLAIN_TEXT = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=12
)
PLAIN_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**17), 10**17) | PLAIN_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(PLAIN_TEXT, inner, max_size=3),
    max_leaves=8,
)
PLAIN_POSITION = st.fixed_dictionaries(
    {"line": st.integers(-3, 10**17), "character": st.integers(-3, 10**17)}
)
OTHER_KEYS = PLAIN_TEXT.filter(lambda k: k not in ("textDocument", "position", "range", "locate"))


@st.composite
def plain_bodies(draw: st.DrawFn) -> bytes:
    """Requests as clients write them, in any layout: the scan must take every one."""
    params: dict[str, Any] = {
        "textDocument": {"uri": draw(PLAIN_TEXT), **draw(st.dictionaries(
            PLAIN_TEXT.filter(lambda k: k != "uri"), PLAIN_VALUES, max_size=2))},
    }  # fmt: skip
    if draw(st.booleans()):
        params["position"] = draw(PLAIN_POSITION)
    if draw(st.booleans()):
        params["range"] = {"start": draw(PLAIN_POSITION), "end": draw(PLAIN_POSITION)}
    params.update(draw(st.dictionaries(OTHER_KEYS, PLAIN_VALUES, max_size=3)))
    msg = {
        "jsonrpc": "2.0",
        "id": draw(st.integers(-(10**17), 10**17) | PLAIN_TEXT),
        "method": draw(PLAIN_TEXT),
        "params": {k: params[k] for k in draw(st.permutations(list(params)))},
    }
    msg = {k: msg[k] for k in draw(st.permutations(list(msg)))}
    layout = draw(st.sampled_from(["orjson", "indented", "spaced"]))
    if layout == "orjson":
        return orjson.dumps(msg)
    if layout == "indented":
        return json.dumps(msg, indent=draw(st.integers(0, 4))).encode()
    return (draw(SPACE) + draw(written(msg, plain=True)) + draw(SPACE)).encode()


def objects(value: Any) -> list[dict[str, Any]]:
    """Every JSON object in `value`, itself included."""
    found: list[dict[str, Any]] = []
    if isinstance(value, dict):
        found.append(value)
        for v in value.values():
            found += objects(v)
    elif isinstance(value, list):
        for v in value:
            found += objects(v)
    return found


@st.composite
def tricked(draw: st.DrawFn) -> bytes:
    """A plain request with one thing the scan must not misread: a key written twice, an
    escape, a non-ASCII or control character, an int in another form, a "locate", bytes
    after the object — or one byte changed."""
    body = draw(plain_bodies())
    trick = draw(st.sampled_from(["twice", "escape", "byte", "locate", "after", "number"]))
    if trick == "twice":
        msg = orjson.loads(body)
        target = draw(st.sampled_from(objects(msg)))
        if target:
            key = draw(st.sampled_from(list(target)))
            twice = Twice(target, key, draw(PLAIN_VALUES))
            parent = [o for o in objects(msg) if any(v is target for v in o.values())]
            if parent:
                k = next(k for k, v in parent[0].items() if v is target)
                parent[0][k] = twice
            else:
                msg = twice
        return draw(written(msg, plain=True)).encode()
    if trick == "escape":  # a letter of a string or of a literal, as \u00XX
        letters = [i for i, c in enumerate(body) if chr(c).isalpha()]
        if letters:
            i = draw(st.sampled_from(letters))
            return body[:i] + b"\\u%04x" % body[i] + body[i + 1 :]
    if trick == "byte":
        i = draw(st.integers(0, len(body) - 1))
        new = draw(
            st.sampled_from([b"\xc3\xa9", b"\x7f", b"\x01", b"\\", b"\\n", b"-", b"0", b"."])
        )
        return body[:i] + new + body[i + 1 :]
    if trick == "locate":
        msg = orjson.loads(body)
        msg["params"]["locate"] = {"symbol": "f"}
        return orjson.dumps(msg)
    if trick == "after":
        return body + draw(st.sampled_from([b"x", b"{}", b",", b"\x00"]))
    # an int written otherwise: 1.0, 1e0, 01, -0, a big one
    numbers = [i for i, c in enumerate(body) if chr(c).isdigit() and not chr(body[i - 1]).isdigit()]
    if numbers:
        i = draw(st.sampled_from(numbers))
        new = draw(st.sampled_from([b"1.0", b"1e0", b"01", b"-0", b"1234567890123456789012"]))
        return body[:i] + new + body[i + 1 :]
    return body


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(bodies() | tricked())
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"u"},"uri":"v"}}')
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"u","uri":"v"}}}')
@example(b'{"jsonrpc":"2.0","id":01,"method":"m","params":{"textDocument":{"uri":"u"}}}')
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"u"}}} x')
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"u"}},}')
@example(b'{"jsonrpc":"2.0","id":true,"method":"m","params":{"textDocument":{"uri":"u"}}}')
@example(b'{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":{"textDocument":{"uri":"u"}}}')
@example(
    b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"u"},"x":{"a":1,"a":2}}}'
)
@example(
    b'{"jsonrpc":"2.0","id":1234567890123456789,"method":"m","params":{"textDocument":{"uri":"u"}}}'
)
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"u"},'
         b'"position":{"line":12345678901234567890123,"character":0}}}')  # fmt: skip
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"u"},"x":1e400}}')
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"u"},"locate":{}}}')
@example(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"textDocument":{"uri":"\\u0075"}}}')
def test_the_scan_reads_what_orjson_reads_or_declines(native: Any, body: bytes) -> None:
    check(native, body)


@given(plain_bodies())
def test_every_plain_request_is_read_in_place(native: Any, body: bytes) -> None:
    assert check(native, body) is not None, body


def canonical(msg_id: Any, params: Any, *, method: str = "textDocument/hover") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


HOVER_PARAMS = {"textDocument": {"uri": "file:///w/a.py"}, "position": {"line": 3, "character": 7}}


@pytest.mark.parametrize(
    "body",
    [
        orjson.dumps(canonical(1, HOVER_PARAMS)),  # orjson, serde_json, most agents
        json.dumps(canonical("c-1", HOVER_PARAMS), indent=2).encode(),  # pretty-printed
        json.dumps(canonical(2**40, HOVER_PARAMS)).encode(),  # ", " and ": "
        orjson.dumps(  # keys in another order (Neovim's vim.json writes any order)
            {"params": HOVER_PARAMS, "method": "textDocument/hover", "id": 9, "jsonrpc": "2.0"}
        ),
        orjson.dumps(  # a range, a context, a token: what the scan does not read it keeps
            canonical(
                3,
                {
                    "textDocument": {"uri": "file:///w/a.py", "version": 2},
                    "range": {
                        "start": {"line": 0, "character": 0},
                        "end": {"line": 9, "character": 0},
                    },
                    "context": {"diagnostics": [], "only": ["quickfix"], "triggerKind": 1},
                    "workDoneToken": "t-1",
                },
                method="textDocument/codeAction",
            )
        ),
    ],
)
def test_the_requests_clients_send_are_read_in_place(native: Any, body: bytes) -> None:
    assert check(native, body) is not None


# -- through the lane ------------------------------------------------------------------------------

#: The lane's tests need the extension (`LSPMUX_PURE_PYTHON=1` runs without it).
through_the_lane = pytest.mark.skipif(
    speedups.native is None, reason=f"lspmux's C speedups: {speedups.status}"
)


@through_the_lane
async def test_a_request_read_in_place_reaches_the_server_as_the_client_wrote_it(
    mem: Any,
) -> None:
    """The server gets the client's params as they were parsed (the same message, under its
    own id); the exchange's params, asked for, are the same; the answer comes back."""
    seen: list[Any] = []
    a = ScriptedServer(
        "a", HOVER, {"textDocument/hover": lambda p: seen.append(p) or {"contents": "h"}}
    )
    m = mem(a=a)
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    params = {"textDocument": {"uri": uri, "version": 1}, "position": {"line": 0, "character": 1},
              "workDoneToken": "w", "extra": [1, {"nested": None}, "é"]}  # fmt: skip
    await m.client.answer(m.client.request("textDocument/hover", params))  # `supports` asked
    before = runs(m)[0]
    body = json.dumps(canonical(77, params), indent=1).encode()
    assert m.client.to_lspmux is not None
    m.client.sent_ids.append(77)
    m.client.to_lspmux(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert (await m.client.answer(77))["result"] == {"contents": "h"}
    assert runs(m)[0] == before + 1
    assert seen[-1] == params
    sent = a.requests("textDocument/hover")[-1]
    assert sent["jsonrpc"] == "2.0" and sent["method"] == "textDocument/hover"
    assert sent["id"] != 77 and isinstance(sent["id"], int)


@through_the_lane
async def test_a_retry_of_a_request_read_in_place_sends_its_params_parsed(mem: Any) -> None:
    """ContentModified: the FIRST policy asks again, with the exchange's params — parsed from
    the request's bytes when first asked for."""
    calls: list[Any] = []

    def flaky(p: Any) -> Any:
        calls.append(p)
        if len(calls) == 2:
            raise Fail(-32801, "content modified")
        return {"contents": f"call {len(calls)}"}

    m = mem(a=ScriptedServer("a", HOVER, {"textDocument/hover": flaky}))
    await m.initialize()
    uri = await opened(m, "a.py", "x\n")
    await m.client.answer(m.client.request("textDocument/hover", hover_params(uri)))
    before = runs(m)[0]
    params = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}, "t": [1]}
    answer = await m.client.answer(m.client.request("textDocument/hover", params))
    assert answer["result"] == {"contents": "call 3"}
    assert runs(m)[0] == before + 1  # read in place
    assert calls[1:] == [params, params]
