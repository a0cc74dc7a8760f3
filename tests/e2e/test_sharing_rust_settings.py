"""A client's initializationOptions visibly reach a real, shared rust-analyzer (2022-05, whose
schema has `checkOnSave.enable`) through `lspmux server`: with checkOnSave on, saving a file
runs `cargo check` (rust-analyzer reports it as `$/progress` "cargo check"); with it off,
never. The two settings conflict, so the two clients get two instances, and status says why.

The crate is the user's own: trusted (`lspmux trust`), since in an untrusted folder restricted
mode turns checkOnSave off whatever a client says (docs/configuration.md). Proving that something did not
happen: both clients save; the one with checkOnSave on is the control — once its cargo check
after the save has ended, the other's, saved first on an equally loaded instance, would have
begun had it been enabled.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.daemon_harness import (  # noqa: F401 (daemon is a fixture)
    DaemonUnderTest,
    RawClient,
    daemon_fixture,
    wait_until,
)

#: The 2022-05 rust-analyzer the test setup installs in .venv (its schema has
#: checkOnSave.enable); PATH may hold another (a rustup proxy) first.
_VENV_RA = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "rust-analyzer"
RUST_ANALYZER = str(_VENV_RA) if _VENV_RA.exists() else (shutil.which("rust-analyzer") or "")

pytestmark = pytest.mark.skipif(
    not os.environ.get("CI") and (not os.path.exists(RUST_ANALYZER) or not shutil.which("cargo")),
    reason="rust-analyzer or cargo is not installed (CI fails instead)",
)

MAIN = 'fn main() {\n    let x: i32 = "not a number";\n    println!("{}", x);\n}\n'


def crate(folder: Path) -> Path:
    (folder / "src").mkdir(parents=True)
    (folder / "Cargo.toml").write_text(
        '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
    )
    (folder / "src" / "main.rs").write_text(MAIN)
    return folder


async def client(daemon: DaemonUnderTest, root: Path, check_on_save: bool) -> RawClient:
    raw = await daemon.raw_client()
    options: dict[str, Any] = {
        "checkOnSave": {"enable": check_on_save},
        "cargo": {"noSysroot": True},
        "lspMux": {"version": "1", "method": "connect", "server": RUST_ANALYZER, "cwd": str(root)},
    }
    reply = await raw.request(
        1,
        "initialize",
        {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {"window": {"workDoneProgress": True}},
            "initializationOptions": options,
        },
        timeout=120,
    )
    assert "result" in reply, reply
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    return raw


def progress(msg: dict[str, Any], title: str, kind: str) -> bool:
    """A `$/progress` of rust-analyzer's `title` task (its token names it; lspmux numbers a
    token created again: `…/rustAnalyzer/Indexing#2`), of `kind`."""
    if msg.get("method") != "$/progress":
        return False
    params = msg["params"]
    token = str(params.get("token", "")).rsplit("#", 1)[0]
    return (
        token.endswith(f"rustAnalyzer/{title}") and (params.get("value") or {}).get("kind") == kind
    )


def send(raw: RawClient, method: str, document: dict[str, Any]) -> None:
    raw.send({"jsonrpc": "2.0", "method": method, "params": {"textDocument": document}})


async def test_check_on_save_reaches_rust_analyzer(daemon: DaemonUnderTest, tmp_path: Path) -> None:
    daemon.env["XDG_DATA_HOME"] = str(tmp_path / "xdg-data")  # a private trust database
    root = crate(tmp_path / "demo")
    trusted = daemon.run_cli("trust", str(root))
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr
    await daemon.start()
    main = root / "src" / "main.rs"
    doc = {"uri": main.as_uri(), "languageId": "rust", "version": 1, "text": MAIN}
    off = await client(daemon, root, check_on_save=False)
    on = await client(daemon, root, check_on_save=True)
    for raw in (off, on):
        send(raw, "textDocument/didOpen", doc)
    # the settings conflict: two instances, and status says why
    await wait_until(lambda: len(daemon.backends("rust-analyzer")) == 2, what="two instances")
    status = daemon.status()
    why = sorted(str(i["why"]) for i in status["instances"])
    assert why == ["None", "initializationOptions differ from client-1's"]
    for raw in (off, on):  # both loaded the workspace (progress reaches both clients)
        await raw.wait_notification(lambda m: progress(m, "Indexing", "end"), timeout=120)

    send(off, "textDocument/didSave", {"uri": main.as_uri()})
    mark = len(on.notifications)
    send(on, "textDocument/didSave", {"uri": main.as_uri()})

    def after_save(msg: dict[str, Any]) -> bool:
        return progress(msg, "cargo check", "end") and any(
            m is msg for m in on.notifications[mark:]
        )

    await on.wait_notification(after_save, timeout=120)
    assert any(progress(m, "cargo check", "begin") for m in on.notifications[mark:])
    # the control's cargo check after its save ran and ended; the other never began one
    await off.request(
        2,
        "textDocument/hover",
        {"textDocument": {"uri": main.as_uri()}, "position": {"line": 1, "character": 8}},
        timeout=60,
    )
    assert not [m for m in off.notifications if progress(m, "cargo check", "begin")]
