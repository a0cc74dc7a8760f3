"""`lspmux client --remote ssh://127.0.0.1:PORT/…` end to end, as a raw LSP client sees it: a
real sshd, the far `lspmux client` and daemon, real basedpyright and ruff reading the remote
copy of the project, which lives at a different path than the local one."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import psutil
import pytest

from lspmux.daemon.address import default_address
from lspmux.daemon.dial import request
from tests.e2e import remote_harness
from tests.e2e.rawlsp import RawClient
from tests.e2e.remote_harness import RemoteSetup
from tests.tools import require_tool

remote_setup = remote_harness.remote_setup

pytestmark = pytest.mark.e2e


def pos(line: int, character: int) -> dict[str, int]:
    return {"line": line, "character": character}


async def start(setup: RemoteSetup, argv: list[str] | None = None) -> RawClient:
    import os

    client = RawClient()
    # pytest's environment for the relay (LSPMUX_SSH, the local cache for mirrored files)
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(setup.env)
    try:
        await client.start(*(argv or setup.client_argv()), cwd=str(setup.local))
    finally:
        os.environ.clear()
        os.environ.update(saved)
    root = setup.local.as_uri()
    await client.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root,
            "workspaceFolders": [{"uri": root, "name": "project"}],
            "capabilities": {
                "general": {"positionEncodings": ["utf-16"]},
                "textDocument": {
                    "hover": {"contentFormat": ["markdown", "plaintext"]},
                    "definition": {"linkSupport": False},
                    "rename": {"prepareSupport": True},
                    "publishDiagnostics": {"relatedInformation": True},
                },
                "workspace": {"workspaceEdit": {"documentChanges": False}},
            },
        },
        timeout=120,
    )
    client.notify("initialized", {})
    return client


def open_doc(client: RawClient, path: Path) -> str:
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                          "text": path.read_text()}},
    )  # fmt: skip
    return uri


def ssh_children(relay_pid: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(relay_pid).children() if p.name() == "ssh"]


async def test_remote_session_maps_paths_and_survives_a_dropped_link(
    remote_setup: RemoteSetup,
) -> None:
    require_tool("basedpyright-langserver")
    require_tool("ruff")
    setup = remote_setup
    client = await start(setup)
    try:
        app = open_doc(client, setup.local / "app.py")
        use = open_doc(client, setup.local / "use.py")

        # merged diagnostics (basedpyright and ruff, both run remotely), on the local URI
        def sources() -> set[str]:
            found = set()
            for params in client.published(app):
                for d in params["diagnostics"]:
                    if "undefined_name" in d["message"]:
                        found.add(d.get("source"))
            return found if len(found) >= 2 else set()

        seen = await client.wait_for(sources, "undefined_name from two servers", timeout=90)
        assert any("ruff" in str(s).lower() for s in seen), seen

        # hover on the remote server, asked with a local URI
        hover = await client.request(
            "textDocument/hover", {"textDocument": {"uri": use}, "position": pos(4, 12)}
        )
        assert "Greeter" in str(hover["contents"]), hover
        # sshd gives the far `lspmux client` two pipes: it passed them to the far daemon, which
        # serves them itself (no copying hop on the far side)
        assert far_sessions_served_directly(setup) == 1

        # definition into another file maps back to the local copy
        found = await client.request(
            "textDocument/definition", {"textDocument": {"uri": use}, "position": pos(0, 17)}
        )
        locations = found if isinstance(found, list) else [found]
        uris = {loc.get("uri") or loc.get("targetUri") for loc in locations}
        assert uris == {app}, locations

        # references across files, all local
        refs = await client.request(
            "textDocument/references",
            {"textDocument": {"uri": app}, "position": pos(3, 7),
             "context": {"includeDeclaration": True}},
        )  # fmt: skip
        assert {r["uri"] for r in refs} == {app, use}, refs

        # rename: the edit names local files
        edit = await client.request(
            "textDocument/rename",
            {"textDocument": {"uri": app}, "position": pos(3, 7), "newName": "Welcomer"},
        )
        edited = set(edit.get("changes") or {}) | {
            c["textDocument"]["uri"] for c in edit.get("documentChanges") or []
        }
        assert edited == {app, use}, edit

        # a definition outside the mapped root (the stdlib stubs basedpyright ships) opens:
        # a read-only copy in the local cache, with the remote file's text
        found = await client.request(
            "textDocument/definition", {"textDocument": {"uri": app}, "position": pos(0, 8)}
        )
        locations = found if isinstance(found, list) else [found]
        target = locations[0].get("uri") or locations[0].get("targetUri")
        cache = setup.env["XDG_CACHE_HOME"]
        local_copy = Path(target.removeprefix("file://"))
        assert str(local_copy).startswith(cache), target
        remote_original = Path(str(local_copy).split("/lspmux/remote/", 1)[1].split("/", 1)[1])
        assert local_copy.read_text() == Path("/", remote_original).read_text()
        # and the editor opening that copy asks the remote server about the remote file
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": target, "languageId": "python", "version": 1,
                              "text": local_copy.read_text()}},
        )  # fmt: skip
        symbols = await client.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": target}}
        )
        assert symbols, "no symbols for the copy of a file outside the mapped root"

        # the link drops: requests get an error at once, edits are kept and replayed
        assert client.proc is not None
        (ssh,) = ssh_children(client.proc.pid)
        ssh.kill()
        await client.wait_for(
            lambda: any(
                m == "window/showMessage" and "lost the connection" in p["message"]
                for m, p in client.notifications
            ),
            "the editor is told the link dropped",
        )
        edits = [
            {"range": {"start": pos(14, 0), "end": pos(14, 0)},
             "text": "def added_offline() -> int:\n    return 1\n\n\n"},
            {"range": {"start": pos(0, 0), "end": pos(0, 9)}, "text": "import sys"},
        ]  # fmt: skip
        for version, change in enumerate(edits, start=2):
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": app, "version": version}, "contentChanges": [change]},
            )
        try:
            await client.request(
                "textDocument/hover", {"textDocument": {"uri": app}, "position": pos(3, 7)},
                timeout=5,
            )  # fmt: skip
            answered_while_down = "an answer"
        except RuntimeError as exc:
            answered_while_down = str(exc)
        except ConnectionError:
            answered_while_down = "reconnected first"
        assert "reconnect" in answered_while_down, answered_while_down

        await client.wait_for(
            lambda: any(
                m == "window/showMessage" and "reconnected" in p["message"]
                for m, p in client.notifications
            ),
            "the link comes back",
            timeout=60,
        )
        symbols = await client.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": app}}
        )
        names = {s["name"]: s for s in symbols}
        assert "added_offline" in names, symbols
        assert far_sessions_served_directly(setup) == 2  # the reconnected link's too
        # the remote text equals the local buffer: written to the remote disk, the daemon
        # reports the buffer as saved (its text equals the file's, byte for byte)
        local_text = (setup.local / "app.py").read_text()
        for change in edits:
            local_text = apply(local_text, change)
        (setup.remote / "app.py").write_text(local_text)
        docs = request(
            default_address(setup.remote_env), "lspmux/documents",
            {"uris": [(setup.remote / "app.py").as_uri()]}, token=None, timeout=10,
        )  # fmt: skip
        assert docs["documents"], docs
        assert all(not d["unsaved"] for d in docs["documents"]), docs
    finally:
        await client.stop()


def far_sessions_served_directly(setup: RemoteSetup) -> int:
    """How many sessions the far daemon served on the far `lspmux client`'s own stdin and
    stdout (passed to it), by its log."""
    log = default_address(setup.remote_env).lock_path("log").read_text(errors="replace")
    return log.count("serving its editor's stdin and stdout")


def apply(text: str, change: dict[str, Any]) -> str:
    from lspmux.text import apply_change

    return apply_change(text, change)


async def test_a_wrong_path_fails_with_the_far_message(remote_setup: RemoteSetup) -> None:
    setup = remote_setup
    argv = setup.client_argv()
    argv[argv.index("--remote") + 1] = f"ssh://127.0.0.1:{setup.sshd.port}/no/such/dir"
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=setup.env,
    )  # fmt: skip
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'
    out, err = await asyncio.wait_for(
        proc.communicate(b"Content-Length: %d\r\n\r\n" % len(body) + body), 60
    )
    assert proc.returncode == 1, (out, err)
    assert b"/no/such/dir" in err, err
    assert b"before the session started" in err, err


@pytest.mark.parametrize("source", ["--map", "config"])
async def test_remote_exec_with_an_explicit_map(remote_setup: RemoteSetup, source: str) -> None:
    """`--remote-exec CMD` (here `env`, which runs the far command with stdio as docker exec -i
    would) and the pair LOCAL=REMOTE from `--map` or from the user's config file
    (`remote_map`): the same mapping, and files outside it copied through CMD."""
    import sys

    require_tool("basedpyright-langserver")
    setup = remote_setup
    pair = f"{setup.local}={setup.remote}"
    argv = [sys.executable, "-m", "lspmux", "client", "--remote-exec", "env",
            "--remote-lspmux", str(setup.lspmux)]  # fmt: skip
    if source == "--map":
        argv += ["--map", pair]
    else:  # the relay's own (local) user file; the far side has its own XDG folders
        user_file = Path(setup.env["XDG_CONFIG_HOME"]) / "lspmux" / "config.toml"
        user_file.parent.mkdir(parents=True, exist_ok=True)
        user_file.write_text(f"remote_map = [{json.dumps(pair)}]\n")
    # the far copy of app.py differs: a definition read from the local copy would say line 3
    far_app = setup.remote / "app.py"
    far_app.write_text("# the far copy\n\n" + far_app.read_text())
    client = await start(setup, argv)
    try:
        use = open_doc(client, setup.local / "use.py")
        found = await client.request(
            "textDocument/definition", {"textDocument": {"uri": use}, "position": pos(0, 17)}
        )
        locations = found if isinstance(found, list) else [found]
        assert {loc.get("uri") or loc.get("targetUri") for loc in locations} == {
            (setup.local / "app.py").as_uri()
        }, locations
        ranges = [loc.get("targetSelectionRange") or loc.get("range") for loc in locations]
        assert [r["start"]["line"] for r in ranges] == [5], locations  # read from the far copy
        app = open_doc(client, setup.local / "app.py")
        found = await client.request(
            "textDocument/definition", {"textDocument": {"uri": app}, "position": pos(0, 8)}
        )
        locations = found if isinstance(found, list) else [found]
        target = locations[0].get("uri") or locations[0].get("targetUri")
        copy = Path(target.removeprefix("file://"))
        assert str(copy).startswith(setup.env["XDG_CACHE_HOME"]) and copy.read_text(), target
    finally:
        await client.stop()


async def test_while_the_host_is_unreachable_requests_fail_at_once_until_it_is_back(
    remote_setup: RemoteSetup,
) -> None:
    """sshd stops listening and the link drops: the relay's attempts fail (with backoff), every
    request meanwhile is answered with an error within moments, and once sshd listens again the
    session comes back with the edits made while it was away."""
    require_tool("basedpyright-langserver")
    setup = remote_setup
    client = await start(setup)
    try:
        app = open_doc(client, setup.local / "app.py")
        hover = {"textDocument": {"uri": app}, "position": pos(3, 7)}
        for _ in range(100):  # the far session is up and basedpyright answers
            if await client.request("textDocument/hover", hover):
                break
        setup.sshd.stop()
        assert client.proc is not None
        for ssh in ssh_children(client.proc.pid):  # (the session may have ended with sshd)
            ssh.kill()

        def said(text: str) -> int:
            return sum(
                1
                for m, p in client.notifications
                if m == "window/showMessage" and text in p["message"]
            )

        await client.wait_for(lambda: said("lost the connection"), "the drop is told")
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": app, "version": 2},
             "contentChanges": [{"range": {"start": pos(14, 0), "end": pos(14, 0)},
                                 "text": "def while_away() -> None:\n    pass\n\n\n"}]},
        )  # fmt: skip
        # several requests across failed attempts: each answered with an error (a hang would
        # be a TimeoutError after 5 s, not the RuntimeError of an error answer)
        for _ in range(3):
            with pytest.raises(RuntimeError, match="reconnecting"):
                await client.request("textDocument/hover", hover, timeout=5)
            await asyncio.sleep(1)  # let attempts fail in between (a sleep cannot hide a hang here)
        assert said("lost the connection") == 1  # failed attempts are not new drops
        setup.sshd.start()
        await client.wait_for(lambda: said("reconnected"), "the link comes back", timeout=60)
        symbols = await client.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": app}}
        )
        assert "while_away" in {s["name"] for s in symbols}, symbols
    finally:
        await client.stop()


async def test_a_copy_outside_the_mapped_root_is_read_again_when_the_far_file_changed(
    remote_setup: RemoteSetup,
) -> None:
    """A far-only library (basedpyright's `extraPaths`, outside the mapped root): a definition
    into it gives a local copy; after the far file changes, the next answer naming it brings
    the new text (through ssh: one stat, then a read)."""
    require_tool("basedpyright-langserver")
    setup = remote_setup
    lib = setup.remote.parent / "far-lib"  # only on the far side, outside the mapped root
    lib.mkdir()
    (lib / "farlib.py").write_text("VALUE = 1\n")
    with (setup.remote / "pyproject.toml").open("a") as pyproject:
        pyproject.write(f"\n[tool.basedpyright]\nextraPaths = [{json.dumps(str(lib))}]\n")
    client = await start(setup)
    try:
        uri = (setup.local / "far_use.py").as_uri()  # its text travels in the didOpen
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                              "text": "import farlib\n\nprint(farlib.VALUE)\n"}},
        )  # fmt: skip

        async def copy_of_definition() -> Path:
            found = await client.request(
                "textDocument/definition",
                {"textDocument": {"uri": uri}, "position": pos(2, 15)},
                timeout=60,
            )
            locations = found if isinstance(found, list) else [found]
            assert locations and locations[0], found
            target = locations[0].get("uri") or locations[0].get("targetUri")
            copy = Path(target.removeprefix("file://"))
            assert str(copy).startswith(setup.env["XDG_CACHE_HOME"]), target
            assert str(copy).endswith(str(lib / "farlib.py")), target
            return copy

        copy = await copy_of_definition()
        assert copy.read_text() == "VALUE = 1\n"
        (lib / "farlib.py").write_text("VALUE = 1\n# changed on the far side\n")
        copy = await copy_of_definition()
        assert copy.read_text() == "VALUE = 1\n# changed on the far side\n"
    finally:
        await client.stop()
