"""JSON-RPC messages on raw dicts: decode, validation, builders, the response sniff."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lspmux.errors import InvalidRequest, ParseError, RequestFailed
from lspmux.wire.messages import (
    decode,
    error,
    invalid_reason,
    is_error_reply,
    notification,
    request,
    result_is_null,
    rewrite_response_id,
    sniff_response,
)

# -- decode -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        (b"{not json", ParseError.CODE, "invalid JSON"),
        (b"", ParseError.CODE, "invalid JSON"),
        (b'{"a":1', ParseError.CODE, "invalid JSON"),
        (b"\xff\xfe", ParseError.CODE, "invalid JSON"),
        (b"[1, 2]", InvalidRequest.CODE, "batch"),
        (b'[{"jsonrpc":"2.0","id":1,"method":"x"}]', InvalidRequest.CODE, "batch"),
        (b"42", InvalidRequest.CODE, "int"),
        (b'"text"', InvalidRequest.CODE, "str"),
        (b"null", InvalidRequest.CODE, "NoneType"),
    ],
)
def test_decode_bad_bodies_become_error_replies(body: bytes, code: int, words: str) -> None:
    reply = decode(body)
    assert is_error_reply(reply)
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] is None
    assert reply["error"]["code"] == code
    assert words in reply["error"]["message"]
    assert "method" not in reply


@pytest.mark.parametrize(
    "msg",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "result": None},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no"}},
        {"jsonrpc": "2.0", "id": "abc", "result": [1, "ü", {"x": None}]},
    ],
)
def test_decode_good_bodies(msg: dict[str, Any]) -> None:
    decoded = decode(orjson.dumps(msg))
    assert decoded == msg
    assert not is_error_reply(decoded)


@pytest.mark.parametrize("msg_id", [5, None])
def test_a_peers_error_response_is_not_an_error_reply(msg_id: int | None) -> None:
    """A peer may answer with an error and id null (it could not read our id): that is a
    response to log, not a reply of ours to send back (echoing it could ping-pong forever)."""
    err = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32700, "message": "x"}}
    assert not is_error_reply(decode(orjson.dumps(err)))
    assert not is_error_reply(err)


# -- invalid_reason ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("msg", "reason"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "x"}, None),
        ({"jsonrpc": "2.0", "id": "s", "method": "x", "params": []}, None),
        ({"jsonrpc": "2.0", "method": "x", "params": {}}, None),
        ({"jsonrpc": "2.0", "method": "x", "params": None}, None),
        ({"jsonrpc": "2.0", "id": 1, "result": None}, None),
        ({"jsonrpc": "2.0", "id": None, "error": {"code": 1, "message": "m"}}, None),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, "'method' must be a string"),
        ({"jsonrpc": "1.0", "id": 1, "method": "x"}, '\'jsonrpc\' must be "2.0", not "1.0"'),
        ({"id": 1, "method": "x"}, None),  # an absent version is taken
        ({"jsonrpc": "1.0", "id": 1, "result": None}, None),  # a response still completes
        ({"jsonrpc": "2.0", "id": 1.5, "method": "x"}, "'id' must be a number or a string"),
        ({"jsonrpc": "2.0", "id": None, "method": "x"}, "'id' must be a number or a string"),
        ({"jsonrpc": "2.0", "id": [1], "method": "x"}, "'id' must be a number or a string"),
        ({"jsonrpc": "2.0", "method": "x", "params": 3}, "'params' must be an object or an array"),
        (
            {"jsonrpc": "2.0", "method": "x", "params": "s"},
            "'params' must be an object or an array",
        ),
        ({"jsonrpc": "2.0", "id": 7}, "neither a request"),
        ({"jsonrpc": "2.0", "result": 1}, "neither a request"),
        ({}, "neither a request"),
    ],
)
def test_invalid_reason(msg: dict[str, Any], reason: str | None) -> None:
    got = invalid_reason(msg)
    if reason is None:
        assert got is None
    else:
        assert got is not None and reason in got


# -- builders -----------------------------------------------------------------------------------


def test_builders() -> None:
    assert request(1, "m") == {"jsonrpc": "2.0", "id": 1, "method": "m"}
    assert request("a", "m", {"x": 1})["params"] == {"x": 1}
    assert notification("n") == {"jsonrpc": "2.0", "method": "n"}
    assert notification("n", [1])["params"] == [1]
    assert error(4, RequestFailed("boom", {"d": 1})) == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32803, "message": "boom", "data": {"d": 1}},
    }
    raw = {"code": 1, "message": "m"}
    assert error(None, raw)["error"] is raw


# -- sniff_response ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected_id", "key"),
    [
        # vscode-languageserver and serde (lsp-server): jsonrpc first
        (b'{"jsonrpc":"2.0","id":12,"result":{"a":1}}', 12, b'"result"'),
        (b'{"jsonrpc":"2.0","id":0,"result":null}', 0, b'"result"'),
        (b'{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"x"}}', 3, b'"error"'),
        # clangd: id first
        (b'{"id":7,"jsonrpc":"2.0","result":[]}', 7, b'"result"'),
        (b'{"id":7,"jsonrpc":"2.0","error":{"code":1,"message":"m"}}', 7, b'"error"'),
        # no jsonrpc before the result
        (b'{"id":8,"result":1,"jsonrpc":"2.0"}', 8, b'"result"'),
        # pretty-printed / spaced
        (b'{ "jsonrpc" : "2.0" , "id" : 42 , "result" : [] }', 42, b'"result"'),
        (b'{\n  "id": 9,\n  "jsonrpc": "2.0",\n  "result": {}\n}', 9, b'"result"'),
        (b'{"jsonrpc":"2.0","id":123456789012,"result":1}', 123456789012, b'"result"'),
    ],
)
def test_sniff_response(body: bytes, expected_id: int, key: bytes) -> None:
    sniffed = sniff_response(body)
    assert sniffed is not None
    msg_id, offset = sniffed
    assert msg_id == expected_id
    assert body[offset:].startswith(key)


@pytest.mark.parametrize(
    "body",
    [
        b'{"jsonrpc":"2.0","id":1,"method":"workspace/configuration","params":{}}',  # request
        b'{"jsonrpc":"2.0","method":"window/logMessage","params":{}}',  # notification
        b'{"jsonrpc":"2.0","result":null,"id":1}',  # id not before result
        b'{"result":null,"id":1,"jsonrpc":"2.0"}',
        b'{"jsonrpc":"2.0","id":"abc","result":null}',  # string id
        b'{"jsonrpc":"2.0","id":-1,"result":null}',  # negative id
        b'{"jsonrpc":"2.0","id":1.5,"result":null}',
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}',
        b'{"jsonrpc":"1.0","id":1,"result":null}',
        b'[{"jsonrpc":"2.0","id":1,"result":null}]',
        b'  {"jsonrpc":"2.0","id":1,"result":null}',  # leading whitespace: not "plainly"
        b"",
        b"{not json",
    ],
)
def test_sniff_response_negative(body: bytes) -> None:
    assert sniff_response(body) is None


# -- rewrite_response_id ----------------------------------------------------------------------------

results = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
ids = st.integers(0, 2**53) | st.text(max_size=12)


@given(value=results, old_id=st.integers(0, 2**53), new_id=ids, clangd=st.booleans())
def test_rewrite_response_id_round_trips_results(
    value: Any, old_id: int, new_id: int | str, clangd: bool
) -> None:
    if clangd:
        body = b'{"id":%d,"jsonrpc":"2.0","result":' % old_id + orjson.dumps(value) + b"}"
    else:
        body = orjson.dumps({"jsonrpc": "2.0", "id": old_id, "result": value})
    sniffed = sniff_response(body)
    assert sniffed is not None and sniffed[0] == old_id
    rewritten = rewrite_response_id(body, sniffed[1], new_id)
    assert orjson.loads(rewritten) == {"jsonrpc": "2.0", "id": new_id, "result": value}


@given(
    code=st.integers(-32900, 0),
    message=st.text(max_size=30),
    data=results,
    new_id=ids,
)
def test_rewrite_response_id_round_trips_errors(
    code: int, message: str, data: Any, new_id: int | str
) -> None:
    err = {"code": code, "message": message, "data": data}
    body = orjson.dumps({"jsonrpc": "2.0", "id": 5, "error": err})
    sniffed = sniff_response(body)
    assert sniffed is not None
    rewritten = orjson.loads(rewrite_response_id(body, sniffed[1], new_id))
    assert rewritten == {"jsonrpc": "2.0", "id": new_id, "error": err}


# -- is the result null? (decided as JSON reads it, not by exact bytes) ---------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":1,"result":null}', True),
        (b'{"jsonrpc": "2.0", "id": 1, "result": null}', True),  # pygls's spacing
        (b'{"jsonrpc":"2.0","id":1,"result" :\n null \n}', True),
        (b'{"id":1,"jsonrpc":"2.0","result":null,"extra":1}', True),
        (b'{"jsonrpc":"2.0","id":1,"result":[]}', False),
        (b'{"jsonrpc":"2.0","id":1,"result":"null"}', False),
        (b'{"jsonrpc":"2.0","id":1,"result":nullx}', False),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"null"}}', False),
    ],
)
def test_result_is_null(body: bytes, expected: bool) -> None:
    sniffed = sniff_response(body)
    assert sniffed is not None
    assert result_is_null(body, sniffed[1]) is expected
