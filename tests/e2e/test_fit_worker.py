"""The fitting worker process (`lspmux/fit_worker.py`): what it answers, and that the command
`session/fitting.py` starts it with really runs it."""

from __future__ import annotations

import subprocess

import orjson

from lspmux import fit_worker
from lspmux.session.fitting import WORKER_ARGV
from lspmux.wire.framing import FrameParser

ANSWER = {
    "jsonrpc": "2.0",
    "id": 7,
    "result": {"contents": {"kind": "markdown", "value": "**bold** `code`"}},
}


def request(params: object, method: str = fit_worker.METHOD, msg_id: object = 1) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


def sized_request(
    answer: bytes, client: object, msg_id: int = 5, kind: str = "completion"
) -> bytes:
    """A request as session/fitting.py writes it: the answer last, its size before it."""
    params = {"kind": kind, "client": client, "size": len(answer)}
    return request({**params, "answer": orjson.Fragment(answer)}, msg_id=msg_id)


def test_it_answers_the_fitted_result() -> None:
    reply = fit_worker.handle(sized_request(orjson.dumps(ANSWER), {}, msg_id=1, kind="hover"))
    assert reply is not None
    assert orjson.loads(reply) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"contents": {"kind": "plaintext", "value": "bold code"}},
    }


def test_what_it_cannot_do_is_an_error_the_requester_reads() -> None:
    def code(body: bytes) -> int:
        reply = fit_worker.handle(body)
        assert reply is not None
        return int(orjson.loads(reply)["error"]["code"])

    assert code(b"{not json") == -32700
    assert code(request({}, method="other")) == -32601
    assert code(request({"kind": "hover"})) == -32602  # no answer
    # the answer parsed in the params, not spliced in last with its size: never written so
    assert code(request({"kind": "hover", "client": {}, "answer": ANSWER})) == -32602
    assert fit_worker.handle(b'{"jsonrpc":"2.0","method":"x"}') is None  # a notification


def test_the_worker_command_runs_it_over_stdio() -> None:
    body = sized_request(orjson.dumps(ANSWER), {}, msg_id=3, kind="hover")
    done = subprocess.run(
        WORKER_ARGV,
        input=b"Content-Length: %d\r\n\r\n" % len(body) + body,
        capture_output=True,
        timeout=60,
        check=True,
    )
    replies = [orjson.loads(b) for b in FrameParser().feed(done.stdout) if isinstance(b, bytes)]
    assert replies == [
        {
            "jsonrpc": "2.0",
            "id": 3,
            "result": {"contents": {"kind": "plaintext", "value": "bold code"}},
        }
    ]


def test_a_sized_answer_is_fitted_in_its_own_bytes() -> None:
    items = [
        {"label": "a", "documentation": {"kind": "markdown", "value": "`a` here"}},
        {"label": "b", "detail": "`kept`", "documentation": "plain `b`"},
    ]
    answer = orjson.dumps({"jsonrpc": "2.0", "id": 41, "result": {"items": items}})
    reply = fit_worker.handle(sized_request(answer, {}))
    assert reply == (
        b'{"jsonrpc":"2.0","id":5,"result":{"items":[{"label":"a","documentation":'
        b'{"kind":"plaintext","value":"a here"}},{"label":"b","detail":"`kept`",'
        b'"documentation":"plain `b`"}]}}'
    )
    # a client that takes markdown gets the server's bytes under the worker's id
    rich = {
        "textDocument": {"completion": {"completionItem": {"documentationFormat": ["markdown"]}}}
    }
    reply = fit_worker.handle(sized_request(answer, rich))
    assert reply == answer.replace(b'"id":41', b'"id":5')


def test_a_sized_answer_that_is_not_json_is_an_error_the_requester_reads() -> None:
    answer = b'{"jsonrpc":"2.0","id":41,"result":{"kind":"markdown","value":}'
    reply = fit_worker.handle(sized_request(answer, {}))
    assert reply is not None
    assert orjson.loads(reply)["error"]["code"] == -32603
