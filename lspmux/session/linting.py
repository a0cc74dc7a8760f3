"""Command-line linters inside a session: when they run, where their results go, and how their
failures reach the user.

`SessionLinting` owns one `LinterScheduler` per session. The session calls it once per event:
`opened`, `changed`, `saved` (each schedules the file's linters per their `run_on`), `closed`
(drops waiting runs, kills running ones) and `aclose` (kills everything, at shutdown or
disconnect). A run reads the buffer when it starts and remembers the document version it read;
its diagnostics become the linter's slice in the session's `DiagnosticStore`, and are
published, only while that version is still the document's current one (a newer run is on its
way otherwise). A run that fails (tool missing, crashed, timed out, unreadable output) leaves
the other sources alone and sends one `window/logMessage` per (linter, kind of failure) for
the whole session, never one per keystroke.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lspmux.config.model import LinterConfig
from lspmux.diagnostics.linters.runner import Event, LinterRun
from lspmux.diagnostics.linters.scheduler import LinterScheduler
from lspmux.errors import InvalidParams
from lspmux.install.prefix import install_hint
from lspmux.session.state import SessionState
from lspmux.uris import file_path, uri_to_path

log = logging.getLogger("lspmux.session")

#: window/logMessage types: failures that need the user to act are errors, slow or odd runs
#: are warnings.
_MESSAGE_TYPE: dict[str, int] = {
    "missing": 1,
    "crash": 1,
    "internal": 1,
    "timeout": 2,
    "output": 2,
    "io": 2,
}


def store_source(linter: str) -> str:
    """The name a linter's slice has in the diagnostics store: never a server's name, so
    `[linters.biome]` and `[servers.biome]` together keep two slices (and code actions send
    neither server a linter's diagnostics)."""
    return f"linter:{linter}"


class SessionLinting:
    """The glue between a session's document events and its command-line linters."""

    def __init__(self, session: SessionState) -> None:
        self.session = session
        self._scheduler: LinterScheduler | None = None
        #: (uri, linter) → the document version the latest started run read.
        self._versions: dict[tuple[str, str], int | None] = {}
        #: (linter, kind) pairs already reported to the client.
        self._reported: set[tuple[str, str]] = set()
        #: Every failure message reported, newest last (`lspmux/diagnosticStatus` returns them).
        self.failures: list[str] = []
        self._closed = False
        #: uri → (the configuration asked, the linters of the document): asked once per open
        #: document, not on every keystroke (matching globs costs more than the change).
        self._linters: dict[str, tuple[object, list[LinterConfig]]] = {}

    @property
    def scheduler(self) -> LinterScheduler:
        if self._scheduler is None:
            self._scheduler = LinterScheduler(self._on_result, encoding=self.session.encoding)
        return self._scheduler

    # -- events from the session -----------------------------------------------------------

    def opened(self, uri: str, language_id: str | None = None) -> None:
        self._schedule(uri, "open", language_id)

    def changed(self, uri: str) -> None:
        self._schedule(uri, "change")

    def saved(self, uri: str) -> None:
        self._schedule(uri, "save")

    def closed(self, uri: str) -> None:
        self._linters.pop(uri, None)
        if self._scheduler is not None:
            self._scheduler.cancel(uri)
        for key in [k for k in self._versions if k[0] == uri]:
            del self._versions[key]

    def busy(self, uri: str) -> bool:
        """Whether a linter run for `uri` is waiting for its debounce or running."""
        return self._scheduler is not None and self._scheduler.busy(uri)

    def last_run(self, uri: str, linter: str) -> LinterRun | None:
        """The latest finished run of `linter` on `uri` (None: none yet)."""
        return self._scheduler.last_run(uri, linter) if self._scheduler is not None else None

    def linters_for(self, uri: str, language_id: str | None = None) -> list[LinterConfig]:
        path = file_path(uri)
        if path is None:  # linters read files: untitled: buffers and other hosts have none
            return []
        if language_id is None:
            doc = self.session.documents.get(uri)
            language_id = doc.language_id if doc is not None else None
        return self.session.config.linters_for(path, language_id)

    async def aclose(self) -> None:
        """Stop every run (their processes are killed) and accept no more."""
        self._closed = True
        if self._scheduler is not None:
            await self._scheduler.aclose()

    # -- internals ---------------------------------------------------------------------------

    def _schedule(self, uri: str, event: Event, language_id: str | None = None) -> None:
        if self._closed:
            return
        current = self.session.config
        known = self._linters.get(uri) if event != "open" else None
        if known is not None and known[0] is current:
            linters = known[1]
        else:
            linters = self.linters_for(uri, language_id)
            self._linters[uri] = (current, linters)
        if not linters:
            return
        path = uri_to_path(uri)
        for config in linters:
            self.scheduler.schedule(
                config,
                uri=uri,
                path=path,
                text_provider=self._text_provider(uri, config.name),
                root=self._root(config, path),
                event=event,
            )

    def _root(self, config: LinterConfig, path: str) -> Path:
        root = config.find_root(path)
        for workspace in self.session.roots:  # a marker above the workspace is not its root
            if Path(path).is_relative_to(workspace) and not root.is_relative_to(workspace):
                return workspace
        return root

    def _text_provider(self, uri: str, name: str) -> Callable[[], str | None]:
        def provide() -> str | None:
            doc = self.session.documents.get(uri)
            if doc is None:
                return None
            self._versions[(uri, name)] = doc.version
            return str(doc.text)

        return provide

    def _on_result(
        self,
        uri: str,
        linter: str,
        diagnostics: list[dict[str, Any]] | None,
        error: str | None,
    ) -> None:
        if self._closed:
            return
        if error is not None or diagnostics is None:
            self._report_failure(uri, linter, error or f"{linter}: no result")
            return
        doc = self.session.documents.get(uri)
        version = self._versions.get((uri, linter))
        if doc is None or doc.version != version:
            log.debug("linter %s: result for %s v%s is stale; dropped", linter, uri, version)
            return
        if self.session.store.update(uri, store_source(linter), diagnostics, version):
            self.session.publish(uri)

    def _report_failure(self, uri: str, linter: str, message: str) -> None:
        run = self._scheduler.last_run(uri, linter) if self._scheduler is not None else None
        kind = getattr(run.error, "kind", "failed") if run is not None else "failed"
        if (linter, kind) in self._reported:
            return
        self._reported.add((linter, kind))
        path = file_path(uri) or uri
        name = Path(path).name
        text = f"lspmux: {message}"
        if name not in message:
            text += f" (linting {path})"
        self.failures.append(text)
        log.warning("%s: %s", self.session.client_id, text)
        self.session.tell(text, severity=_MESSAGE_TYPE.get(kind, 1), shown=False)


async def wait_settled(session: SessionState, uri: str, timeout: float = 2.0) -> None:
    """Wait (at most `timeout` seconds) until no linter run or backend pull for `uri` is
    pending and every server of the file that can report diagnostics has reported once, so
    a pull right after didOpen/didChange answers with more than an empty list."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    started = loop.time()
    while loop.time() < deadline:
        if not _pending(session, uri):
            if loop.time() - started > 0.05:
                log.debug("pull of %s waited %.2fs for its sources", uri, loop.time() - started)
            return
        await asyncio.sleep(0.02)
    log.debug("pull of %s answered after %.1fs with sources still pending", uri, timeout)


def _pending(session: SessionState, uri: str) -> bool:
    return bool(pending_sources(session, uri))


#: Seconds a server that offers no pull diagnostics and has published none since it started
#: must be idle (nothing sent to it, nothing heard) before it counts as not diagnosing: its
#: diagnostics are no longer waited for, and its files are "not checked" by it.
SILENT_AFTER = 1.0
SILENT_DETAIL = (
    "did not report: it has published no diagnostics for any file since it started and offers "
    "no pull diagnostics, so lspmux did not wait for it (it may not diagnose at all)"
)


def pending_sources(session: SessionState, uri: str) -> list[str]:
    """The sources of `uri` lspmux still waits for: linters waiting or running, servers being
    pulled, and servers (not failed) that have not reported for the document's current text."""
    pending: list[str] = []
    if session.linting.busy(uri):
        scheduler = session.linting.scheduler
        pending += [
            c.name for c in session.linting.linters_for(uri) if scheduler.busy_with(uri, c.name)
        ]
    reported = session.store.fresh_sources(uri)  # for the current text, not an older one
    for backend in session.backends_for(uri):
        if (
            backend.state in ("failed", "stopping")
            or not backend.config.feature_enabled("diagnostics")
            or backend.silent(SILENT_AFTER)
        ):
            continue
        if backend.name not in reported or session.puller.busy(uri, backend):
            pending.append(backend.name)
    return list(dict.fromkeys(pending))


def source_states(session: SessionState, uri: str) -> list[dict[str, Any]]:
    """Every source that applies to `uri` and where it stands for the document's current
    text: `reported`, `pending` (still working), `silent` (a server that has diagnosed
    nothing since it started and is idle: not waited for, see `SILENT_AFTER`), `failed` (with
    why and its stderr's last lines) or `missing` (not installed, with the install command) — what `lspmux diagnostics`
    needs to tell "clean" from "not checked" (DESIGN principle 9)."""
    if not uri.startswith("file:"):
        return []
    doc = session.documents.get(uri)
    language_id = doc.language_id if doc is not None else None
    pending = set(pending_sources(session, uri))
    reported = session.store.fresh_sources(uri)
    running = {b.name: b for b in session.backends_for(uri, language_id)}
    out: list[dict[str, Any]] = []
    for server in session.config.servers_for(file_path(uri) or uri, language_id):
        if not server.feature_enabled("diagnostics"):
            continue
        row: dict[str, Any] = {"name": server.name, "role": server.role}
        backend = running.get(server.name)
        if backend is None:
            exe = server.command[0] if server.command else ""
            row.update(state="missing", detail=f"{exe!r} is not installed (not found on PATH)")
            row["install"] = install_hint(server.name, server.package, server.install)
        elif backend.state == "failed":
            row.update(state="failed", detail=backend.failure or "failed")
            row["stderr"] = list(backend.stderr_tail)
        elif backend.name not in reported and backend.silent(SILENT_AFTER):
            row.update(state="silent", detail=SILENT_DETAIL)
        elif backend.name in pending or backend.name not in reported:
            row["state"] = "pending"
            if backend.restarts and backend.failure:  # crashed, restarting
                row.update(detail=f"restarting after: {backend.failure}")
                row["stderr"] = list(backend.stderr_tail)
        else:
            row["state"] = "reported"
        out.append(row)
    for linter in session.linting.linters_for(uri, language_id):
        row = {"name": linter.name, "role": "linter"}
        run = session.linting.last_run(uri, linter.name)
        if linter.name in pending:
            row["state"] = "pending"
        elif run is not None and run.error is not None:
            missing = getattr(run.error, "kind", "") == "missing"
            row.update(state="missing" if missing else "failed", detail=str(run.error))
            row["install"] = install_hint(linter.name, linter.package, linter.install)
        elif store_source(linter.name) in reported:
            row["state"] = "reported"
        elif not {"open", "change"} & set(linter.run_on):
            row.update(state="skipped", detail="runs on save only")
        else:
            row["state"] = "pending"
        out.append(row)
    return out


#: lspmux's own request: which sources of a document have not reported yet (`lspmux
#: diagnostics` waits for them), and where each source stands.


async def diagnostic_status(session: SessionState, msg: dict[str, Any]) -> dict[str, Any]:
    """`lspmux/diagnosticStatus` {uri} → {version, pending: [source], failures: [message]}."""
    params = msg.get("params") or {}
    document = params.get("textDocument") if isinstance(params, dict) else None
    uri = params.get("uri") if isinstance(params, dict) else None
    if uri is None and document is not None:
        uri = document.get("uri") if isinstance(document, dict) else document
    if not isinstance(params, dict) or (uri is not None and not isinstance(uri, str)):
        raise InvalidParams(
            'lspmux/diagnosticStatus takes {"textDocument": {"uri": URI}} (or {"uri": URI})'
        )
    if uri is None:
        return {"version": None, "pending": [], "failures": list(session.linting.failures)}
    doc = session.documents.get(uri)
    return {
        "version": doc.version if doc is not None else None,
        "pending": pending_sources(session, uri),
        "failures": list(session.linting.failures),
        "sources": source_states(session, uri),
    }
