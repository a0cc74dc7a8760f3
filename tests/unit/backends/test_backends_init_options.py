"""The `initialize` a backend sends: the client's `initializationOptions` merged under the
configured ones, and capabilities from for_backend. Checked against a real `ruff server`,
whose lint selection and line length come from `initializationOptions.settings`."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from lspmux.backends.backend import Backend
from lspmux.config.model import ServerConfig
from tests.unit.backends.helpers import NullHost

pytestmark = pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")

LINE = "x = 'a string long enough to pass twenty-five characters'\n"


def _backend(tmp_path: Path, client: Any, configured: Any) -> Backend:
    config = ServerConfig(
        name="ruff", command=("ruff", "server"), initialization_options=configured
    )
    argv = config.resolve_command(tmp_path)
    assert argv is not None
    return Backend(config, tmp_path, argv, host=NullHost(), client_initialization_options=client)


async def _codes(backend: Backend, path: Path) -> list[str]:
    path.write_text(LINE)
    uri = path.as_uri()
    backend.open_document(object(), uri, "python", 1, LINE)
    report = await backend.call("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    return sorted(d.get("code") for d in report.get("items", []))


@pytest.mark.parametrize(
    ("client", "configured", "expected"),
    [
        # the client's options reach the server (nothing configured)
        ({"settings": {"lint": {"select": ["E501"]}, "lineLength": 25}}, None, ["E501"]),
        # configuration wins on conflict, the client's other keys stay
        (
            {"settings": {"lint": {"select": ["E501"]}, "lineLength": 25}},
            {"settings": {"lineLength": 200}},
            [],
        ),
        (None, {"settings": {"lint": {"select": ["E501"]}, "lineLength": 25}}, ["E501"]),
    ],
)
async def test_client_initialization_options_reach_the_server(
    tmp_path: Path, client: Any, configured: Any, expected: list[str]
) -> None:
    backend = _backend(tmp_path, client, configured)
    try:
        assert await backend.ensure_running()
        assert await _codes(backend, tmp_path / "a.py") == expected
    finally:
        await backend.stop()


def test_backend_capabilities_follow_the_client(tmp_path: Path) -> None:
    client = {"textDocument": {"hover": {"contentFormat": ["plaintext"]}}}
    backend = Backend(
        ServerConfig(name="ruff", command=("ruff", "server")),
        tmp_path,
        ["ruff", "server"],
        host=NullHost(),
        client_capabilities=client,
        position_encoding="utf-8",
        pull_diagnostics=True,
    )
    sent = backend.client_capabilities
    assert sent["general"]["positionEncodings"] == ["utf-8"]
    assert sent["textDocument"]["hover"]["contentFormat"] == ["plaintext"]
    assert sent["window"] == {"workDoneProgress": True}  # lspmux takes it, whatever the client
    assert sent["textDocument"]["diagnostic"]["dynamicRegistration"] is True
