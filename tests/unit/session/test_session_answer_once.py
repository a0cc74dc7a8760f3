"""Property: whatever params a client sends, for any method in the table (and one it does not
know), every request gets exactly one answer and nothing stays in flight."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lspmux.routing.table import CLIENT_REQUESTS, ROUTES
from tests.polling import VirtualClockLoop
from tests.profiles import examples

from .memory import MemorySession, ScriptedServer, until

METHODS = [*sorted(set(CLIENT_REQUESTS) - {"initialize", "shutdown"}), "x/unknownMethod"]

#: A server that offers every capability the table knows and answers every request with null.
CAPABILITIES: dict[str, Any] = {
    r.capability: True for r in ROUTES.values() if r.capability and r.capability != "workspace"
}
CAPABILITIES["textDocumentSync"] = {"openClose": True, "change": 2}
CAPABILITIES["diagnosticProvider"] = {"interFileDependencies": False, "workspaceDiagnostics": False}

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**12),
    st.text(max_size=8),
    st.floats(allow_nan=False),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)


def position() -> st.SearchStrategy[Any]:
    good = st.fixed_dictionaries({"line": st.integers(0, 5), "character": st.integers(0, 20)})
    return st.one_of(good, json_value)


def params_for(uri: str) -> st.SearchStrategy[Any]:
    document = st.one_of(
        st.just({"uri": uri}), st.just({"uri": "file:///elsewhere.py"}), json_value
    )
    shaped = st.fixed_dictionaries(
        {"textDocument": document},
        optional={
            "position": position(),
            "range": st.one_of(
                st.fixed_dictionaries({"start": position(), "end": position()}), json_value
            ),
            "context": json_value,
            "locate": json_value,
            "previousResultId": json_value,
            "command": st.text(max_size=5),
            "data": json_value,
            "query": st.text(max_size=5),
        },
    )
    return st.one_of(shaped, json_value)


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_every_request_is_answered_exactly_once(tmp_path: Path, data: st.DataObject) -> None:
    uri = (tmp_path / "a.py").as_uri()
    batch = data.draw(
        st.lists(st.tuples(st.sampled_from(METHODS), params_for(uri)), min_size=1, max_size=12)
    )

    answered_once(tmp_path, batch)


def answered_once(
    tmp_path: Path, batch: list[tuple[str, Any]], *, servers_running: bool = False
) -> None:
    """Send `batch` at once after opening a file (with `servers_running`: once its server
    runs), and check that every request is answered exactly once, nothing left in flight."""

    async def run() -> None:
        server = ScriptedServer("s", CAPABILITIES, {m: (lambda p: None) for m in METHODS})
        m = MemorySession(tmp_path, {"s": server})
        try:
            await m.initialize({"textDocument": {"diagnostic": {}}})
            uri = m.open("a.py", "x = 1\n")
            if servers_running:
                backends = m.session.backends_for(uri)
                await until(lambda: all(b.state == "running" for b in backends), "servers up")
            for method, params in batch:
                m.client.request(method, params)
            await until(
                lambda: all(i in m.client.responses for i in m.client.sent_ids),
                "an answer to every request",
                timeout=20,
            )
        finally:
            await m.close()  # settles, then checks: one answer each, nothing in flight

    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        runner.run(run())
