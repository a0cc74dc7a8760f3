"""The session tools: status, reload, capabilities, and the raw `request` escape hatch.

`status` says which backends serve this root (through the daemon: its instances; private:
the proxy's server processes) and which configured servers are missing, with how to install
them. `reload` restarts a root's servers. `capabilities` shows what each server offers.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from lspmux.agent import install
from lspmux.agent.errors import ToolError
from lspmux.agent.lsp import AgentLsp
from lspmux.agent.tools import Result


def _config(lsp: AgentLsp) -> Any:
    return install.load(lsp.root, lsp.configs)


def _mib(rss: Any) -> str:
    return f"{rss / 1048576:.0f} MiB" if isinstance(rss, int | float) else "-"


async def status(lsp: AgentLsp) -> Result:
    """The backends of this root and the servers its files need but that are missing."""
    from lspmux.doctor import diagnose

    rows: list[dict[str, Any]] = []
    if lsp.daemon_query is not None:
        answer = await lsp.daemon_query("lspmux/status", {})
        for inst in answer.get("instances") or []:
            if Path(inst.get("root", "")) == lsp.root or lsp.root in Path(inst["root"]).parents:
                rows.append({k: inst.get(k) for k in ("server", "state", "pid", "rss", "root")})
                rows[-1]["open_files"] = inst.get("open_documents")
    elif lsp.client.proc is not None:
        import psutil

        try:
            children = psutil.Process(lsp.client.proc.pid).children()
        except psutil.NoSuchProcess:
            children = []
        for child in children:
            try:
                rows.append(
                    {
                        "server": _program(child.cmdline()),
                        "state": child.status(),
                        "pid": child.pid,
                        "rss": child.memory_info().rss,
                        "root": str(lsp.root),
                        "open_files": len(lsp.docs),
                    }
                )
            except psutil.Error:
                continue
    config = _config(lsp)
    missing = [
        {
            "server": c.name,
            "kind": c.kind,
            "problem": c.problem,
            "install": install.hint(config, c.name),
        }
        for c in await asyncio.to_thread(diagnose, config, lsp.root, smoke=False)
        if c.failed  # needed and missing or failing (not one left out, covered or optional)
    ]
    mode = "the lspmux daemon (shared)" if lsp.via_daemon else "a private lspmux proxy"
    lines = [f"root {lsp.root}, through {mode}"]
    for r in rows:
        lines.append(
            f"  {r['server']}: {r['state']}, pid {r['pid']}, {_mib(r['rss'])}, "
            f"{r['open_files']} open file(s)"
        )
    if not rows:
        lines.append("  no backend running yet (they start when a tool opens a file)")
    for m in missing:
        hint = f"; install: {m['install']}" if m["install"] else ""
        lines.append(f"  not installed: {m['kind']} {m['server']} ({m['problem']}){hint}")
    data = {"root": str(lsp.root), "daemon": lsp.via_daemon, "backends": rows, "missing": missing}
    return Result("\n".join(lines), data)


def _program(argv: list[str]) -> str:
    """The program a command line runs: the script after an interpreter, else argv[0]."""
    names = [Path(a).name for a in argv if a and not a.startswith("-")]
    for name in names:
        if not name.startswith(("python", "node")):
            return name
    return names[0] if names else "?"


async def reload(lsp: AgentLsp, file: str | None = None) -> Result:
    """Restart the servers of this root (a file's servers restart with them)."""
    if file:
        lsp.path(file)
    if lsp.daemon_query is not None:
        answer = await lsp.daemon_query("lspmux/reload", {"root": str(lsp.root)})
        restarted = answer.get("restarted") or []
    else:
        await lsp.restart()
        restarted = [{"server": "lspmux proxy", "root": str(lsp.root), "running": True}]
    lines = [
        f"restarted {r['server']} for {r['root']}: {'running' if r['running'] else 'NOT running'}"
        for r in restarted
    ]
    return Result("\n".join(lines) or f"no server running for {lsp.root}", {"restarted": restarted})


async def capabilities(lsp: AgentLsp, file: str | None = None) -> Result:
    """Each matching server's capabilities (as it announced them), and lspmux's union."""
    from lspmux.backends.capabilities import load_cached

    config = _config(lsp)
    if file:
        path = lsp.path(file)
        await lsp.sync(path)
        servers = [s.name for s in config.servers_for(str(path))]
    else:
        servers = [name for name, s in config.servers.items() if not s.disabled]
    per_server = {name: caps for name in servers if (caps := load_cached(name)) is not None}
    lines = []
    for name, caps in per_server.items():
        providers = sorted(k for k, v in caps.items() if v not in (None, False))
        lines.append(f"{name}: {', '.join(providers)}")
    if not lines:
        lines.append("no server has run yet for these files; ask a question first")
    data = {"servers": per_server, "lspmux": lsp.capabilities}
    return Result("\n".join(lines), data)


async def request(
    lsp: AgentLsp,
    method: str,
    params: Any = None,
    at: str | None = None,
    file: str | None = None,
    symbol: str | None = None,
) -> Result:
    """Any LSP request through lspmux; `at` fills textDocument + position, `file` the
    textDocument."""
    if isinstance(params, str):
        try:
            params = json.loads(params) if params.strip() else {}
        except ValueError as exc:
            raise ToolError(f"params is not JSON: {exc}") from exc
    params = dict(params or {})
    if at:
        target = await lsp.target(at, symbol)
        params.setdefault("textDocument", {"uri": target.uri})
        params.setdefault("position", target.position)
    elif file:
        doc = await lsp.sync(lsp.path(file))
        params.setdefault("textDocument", {"uri": doc.uri})
    answer = await lsp.request(method, params)
    return Result(json.dumps(answer, indent=2, ensure_ascii=False), {"result": answer})
