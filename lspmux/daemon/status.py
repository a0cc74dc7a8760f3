"""`lspmux status`: the daemon's and the proxies' status answers rendered as tables (stdlib
only).

The daemon answers `lspmux/status` with a JSON object (see `Daemon.status`): its pid, address,
uptime and memory, one row per instance (server, root, pid, clients, open documents, memory of
the server's whole process tree, uptime, state, the progress it reports now; and why an extra
instance of the same server and root exists) and one per client. Each running proxy answers
with its own (session/families/status.py), found through lspmux/proxy_registry.py. This module
only formats them for a terminal; `--json` prints the objects as they came, in one shape
whether a daemon answers or not (`no_daemon`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux status` would import typing (~5 ms)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


def no_daemon(address: str) -> dict[str, Any]:
    """`lspmux status --json` when no daemon answers at `address`: the keys of its answer
    (`Daemon.status`), with `pid` null, nothing running and nothing known."""
    return {
        "pid": None,
        "version": None,
        "address": address,
        "uptime": None,
        "rss": None,
        "instance_timeout": None,
        "idle_timeout": None,
        "instances": [],
        "clients": [],
    }


def human_bytes(n: Any) -> str:
    if not isinstance(n, int | float):
        return "-"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def human_seconds(s: Any) -> str:
    if not isinstance(s, int | float):
        return "-"
    s = int(s)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def progress_text(p: Any) -> str:
    """A server's running progress as one cell: `Indexing: 120/300 files 40%`, `-` for none."""
    if not isinstance(p, dict):
        return "-"
    text = ": ".join(str(p[k]) for k in ("title", "message") if p.get(k))
    pct = p.get("percentage")
    if isinstance(pct, int | float):
        text = f"{text} {pct:.0f}%".strip()
    return text or "(untitled)"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    for row in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def render(status: Mapping[str, Any]) -> str:
    out = [
        f"lspmux daemon {status.get('version', '?')}, pid {status.get('pid')}, "
        f"on {status.get('address')}, up {human_seconds(status.get('uptime'))}, "
        f"{human_bytes(status.get('rss'))}"
    ]
    instances = status.get("instances") or []
    out.append("")
    if instances:
        rows = [
            [
                str(i.get("server")),
                str(i.get("root")),
                str(i.get("pid") or "-"),
                str(len(i.get("clients") or [])),
                str(i.get("open_documents", 0)),
                human_bytes(i.get("rss")),
                human_seconds(i.get("uptime")),
                str(i.get("state")),
                progress_text(i.get("progress")),
            ]
            for i in instances
        ]
        headers = ["SERVER", "ROOT", "PID", "CLIENTS", "DOCS", "MEMORY", "UPTIME", "STATE"]
        out.append(table([*headers, "PROGRESS"], rows))
        # Why a server and root run more than once: what this instance's clients asked for
        # differently from the first instance's.
        out.extend(
            f"  {i.get('server')} (pid {i.get('pid') or '-'}) is another instance: {i['why']}"
            for i in instances
            if i.get("why")
        )
    else:
        out.append("no instances")
    clients = status.get("clients") or []
    out.append("")
    if clients:
        rows = [
            [
                str(c.get("id")),
                str(c.get("server") or "(by file type)"),
                ", ".join(c.get("roots") or []) or str(c.get("cwd") or "-"),
                str(c.get("open_documents", 0)),
                human_seconds(c.get("connected")),
                str(c.get("state")),
            ]
            for c in clients
        ]
        out.append(table(["CLIENT", "SERVER", "ROOT", "DOCS", "CONNECTED", "STATE"], rows))
    else:
        out.append("no clients")
    return "\n".join(out)


def render_proxies(proxies: Sequence[Mapping[str, Any]]) -> str:
    """The running proxies (`lspmux proxy`, one editor each): one row per proxy, then one per
    server they run, each with the pid of its proxy."""
    if not proxies:
        return "no proxies"
    rows, servers = [], []
    for p in proxies:
        st: Mapping[str, Any] = _mapping(p.get("status"))
        client: Mapping[str, Any] = _mapping(st.get("client"))
        roots = ", ".join(client.get("roots") or []) or str(p.get("cwd") or "-")
        state = str(client.get("state") or f"not answering: {p.get('error')}")
        rows.append(
            [
                str(p.get("pid")),
                roots,
                str(len(st.get("instances") or [])),
                str(client.get("open_documents", "-")),
                human_bytes(st.get("rss")),
                human_seconds(st.get("uptime")),
                state,
            ]
        )
        servers += [
            [
                str(i.get("server")),
                str(p.get("pid")),
                str(i.get("root")),
                str(i.get("pid") or "-"),
                str(i.get("open_documents", 0)),
                human_bytes(i.get("rss")),
                human_seconds(i.get("uptime")),
                str(i.get("state")),
                progress_text(i.get("progress")),
            ]
            for i in st.get("instances") or []
        ]
    out = [
        f"lspmux proxies: {len(proxies)}",
        "",
        table(["PROXY", "ROOT", "SERVERS", "DOCS", "MEMORY", "UPTIME", "STATE"], rows),
    ]
    if servers:
        headers = ["SERVER", "PROXY", "ROOT", "PID", "DOCS", "MEMORY", "UPTIME", "STATE"]
        out += ["", table([*headers, "PROGRESS"], servers)]
    return "\n".join(out)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def render_verbose(status: Mapping[str, Any], documents: Sequence[Mapping[str, Any]]) -> str:
    """`lspmux status -v`: every instance and client in full, one field a line (the Rust
    lspmux's layout), with each client's open documents (from `lspmux/documents`)."""
    out = [render(status).split("\n", 1)[0]]
    files: dict[str, list[str]] = {}
    for doc in documents:
        note = " (unsaved changes)" if doc.get("unsaved") else ""
        files.setdefault(str(doc.get("client")), []).append(f"{doc.get('uri')}{note}")
    for i in status.get("instances") or []:
        out += [
            "- Instance",
            f"  server: {i.get('server')}",
            f"  path: {i.get('root')}",
            f"  pid: {i.get('pid') or '-'}",
            f"  state: {i.get('state')}, up {human_seconds(i.get('uptime'))}, "
            f"{human_bytes(i.get('rss'))}, restarts: {i.get('restarts', 0)}",
            f"  progress: {progress_text(i.get('progress'))}",
            f"  open documents: {i.get('open_documents', 0)}",
            "  clients:",
            *(f"    - {c}" for c in i.get("clients") or []),
        ]
    for c in status.get("clients") or []:
        out += [
            f"- Client {c.get('id')}",
            f"  server: {c.get('server') or '(by file type)'}",
            f"  roots: {', '.join(c.get('roots') or []) or '-'}",
            f"  cwd: {c.get('cwd') or '-'}",
            f"  state: {c.get('state')}, connected {human_seconds(c.get('connected'))}, "
            f"idle {human_seconds(c.get('idle'))}",
            f"  instances: {', '.join(c.get('instances') or []) or '-'}",
            "  files:",
            *(f"    - {f}" for f in files.get(str(c.get("id")), [])),
        ]
    if len(out) == 1:
        out.append("no instances, no clients")
    return "\n".join(out)
