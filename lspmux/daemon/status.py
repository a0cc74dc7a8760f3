"""`lspmux status`: the daemon's status answer rendered as tables (stdlib only).

The daemon answers `lspmux/status` with a JSON object (see `Daemon.status`): its pid, address,
uptime and memory, one row per instance (server, root, pid, clients, open documents, RSS,
uptime, state; and why an extra instance of the same server and root exists) and one per
client. This module only formats it for a terminal; `--json`
prints the object as it came.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux status` would import typing (~5 ms)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


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
            ]
            for i in instances
        ]
        out.append(
            table(["SERVER", "ROOT", "PID", "CLIENTS", "DOCS", "RSS", "UPTIME", "STATE"], rows)
        )
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
