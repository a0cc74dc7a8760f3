"""How often lspmux pulls a server's diagnostics (`families/diagnostics.py`, the `Puller`):
one `textDocument/diagnostic` per document per text. Seen with basedpyright (trace in the
pulls brief's report): its `workspace/diagnostic/refresh` arrives while lspmux's pull for the
same text is still unanswered, and each one sent another pull."""

from __future__ import annotations

import itertools
from typing import Any

from .memory import Hang, Held, ScriptedServer, settle, until

PULL = {
    "textDocumentSync": {"openClose": True, "change": 2},
    "diagnosticProvider": {"interFileDependencies": True, "workspaceDiagnostics": False},
}


def _diagnostic(message: str) -> dict[str, Any]:
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}
    return {"range": rng, "message": message, "severity": 1}


def _held_reports() -> Any:
    """A handler whose n-th pull is answered, when the test releases it, with a report of one
    diagnostic saying `pull n`."""
    n = itertools.count(1)

    def handler(_params: Any) -> Held:
        i = next(n)
        return Held({"kind": "full", "resultId": str(i), "items": [_diagnostic(f"pull {i}")]})

    return handler


def _pulls(server: ScriptedServer) -> list[dict[str, Any]]:
    return server.requests("textDocument/diagnostic")


async def _opened(mem: Any, pulled: Any) -> tuple[ScriptedServer, Any, str]:
    """A session whose one server answers pulls with `pulled`, a.py open and pulled once."""
    a = ScriptedServer("a", PULL, {"textDocument/diagnostic": pulled})
    m = mem(a=a)
    await m.initialize()
    uri = m.open("a.py", "x\n")
    await until(lambda: _pulls(a), "the pull after didOpen")
    return a, m, uri


async def _refresh(server: ScriptedServer) -> None:
    _id, answer = server.request("workspace/diagnostic/refresh", None)
    assert (await answer).get("result", "no result") is None


async def test_refreshes_while_a_pull_is_unanswered_send_no_second_pull(mem: Any) -> None:
    """Before: each refresh sent another pull of the same text (three for one open here)."""
    a, m, uri = await _opened(mem, _held_reports())
    await _refresh(a)
    await _refresh(a)
    await settle(quiet=1.0)
    assert len(_pulls(a)) == 1, [p["params"] for p in _pulls(a)]
    assert a.release() == 1
    await until(lambda: m.client.published(uri), "the pulled report, pushed to the client")
    assert m.client.published(uri)[-1]["diagnostics"][0]["message"] == "pull 1"
    # A refresh after the answer is news: pulled again, with the result id it has.
    await _refresh(a)
    await until(lambda: len(_pulls(a)) == 2, "the pull after the answered refresh")
    assert _pulls(a)[1]["params"]["previousResultId"] == "1"
    assert a.release() == 1
    await settle(quiet=1.0)
    assert len(_pulls(a)) == 2


async def test_a_newer_text_is_pulled_and_the_older_answer_dropped(mem: Any) -> None:
    a, m, uri = await _opened(mem, _held_reports())
    m.change(uri, 2, (0, 0), (0, 1), "y")
    await until(lambda: len(_pulls(a)) == 2, "the pull of version 2")
    await _refresh(a)  # for version 2: its pull answers it
    await settle(quiet=1.0)
    assert len(_pulls(a)) == 2
    assert a.release() == 2
    await settle(quiet=1.0)
    shown = [d["message"] for p in m.client.published(uri) for d in p["diagnostics"]]
    assert shown == ["pull 2"]  # version 1's answer came after the change: never shown
    assert m.session.store.fresh_sources(uri) == {"a"}


async def test_a_failed_pull_that_answered_for_a_refresh_is_sent_again(mem: Any) -> None:
    """The refresh that waited on an unanswered pull is not lost when that pull fails (here:
    times out)."""
    answers = iter([Hang(), {"kind": "full", "resultId": "2", "items": [_diagnostic("late")]}])
    a, m, uri = await _opened(mem, lambda _p: next(answers))
    await _refresh(a)
    await until(lambda: len(_pulls(a)) == 2, "the pull again after the first timed out", 30)
    await until(lambda: m.client.published(uri), "the second pull's report")
    assert m.client.published(uri)[-1]["diagnostics"][0]["message"] == "late"
