"""Server capabilities: what each backend serves, and what lspmux announces to its client.

- `supports()` decides whether a backend is eligible for a route: a static capability (with the
  option the method needs: `prepareProvider`, `rangesSupport`, semantic tokens `range`) or a
  dynamic registration that amounts to it.
- `registered_capabilities()` turns a backend's `client/registerCapability` registrations into
  the static capabilities they amount to; `effective()` is a backend's static capabilities
  with them.
- `merge_for_client()` is the `ServerCapabilities` lspmux announces: each capability backed by
  some backend that serves it, its options the union (`union()`), plus what lspmux itself
  provides (incremental sync, semantic token deltas, pull diagnostics when the session chose
  them). `client_registrations()` says what to register with a client when a backend offers
  more after `initialize`.
- A small on-disk cache remembers each server's capabilities; `announce()` unions the cached
  entries of a root's servers and names those with none, so that the session can start them
  before answering `initialize` (then the first start announces what the hundredth does).

What a backend is told about its client lives in `client_caps.py` (re-exported here).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lspmux import dirs
from lspmux.backends.client_caps import (
    LSPMUX_CLIENT_CAPABILITIES,
    for_backend,
    merge_init_options,
)
from lspmux.backends.provided import (
    BOOL_OPTION,
    FLAGS,
    effective,
    offered,
    opt,
    registered_capabilities,
    union,
)
from lspmux.routing import semantic_tokens
from lspmux.routing.capabilities import BY_KEY, BY_METHOD, FILE_OPERATIONS
from lspmux.routing.route import Route

log = logging.getLogger(__name__)

__all__ = [
    "LSPMUX_CLIENT_CAPABILITIES",
    "effective",
    "for_backend",
    "merge_init_options",
    "registered_capabilities",
    "union",
]


def supports(
    capabilities: Mapping[str, Any], registered: Iterable[str], method: str, route: Route
) -> bool:
    """Whether a backend with these static capabilities and dynamically registered methods can
    serve `method`."""
    if route.capability is None:
        return True
    registered = set(registered)
    if method in registered or route.capability in {BY_METHOD.get(m) for m in registered}:
        return True
    value = capabilities.get(route.capability)
    if route.capability == "workspace":  # file operations: workspace.fileOperations.<op>
        ops = (value or {}).get("fileOperations") or {}
        return bool(ops.get(FILE_OPERATIONS.get(method, "")))
    if route.capability == "textDocumentSync":
        sync = value
        return isinstance(sync, dict) and bool(sync.get("willSaveWaitUntil"))
    if route.needs_option is not None:
        return isinstance(value, dict) and bool(value.get(route.needs_option))
    return offered(value)


def resolve_provider(capabilities: Mapping[str, Any], capability: str) -> bool:
    value = capabilities.get(capability)
    return isinstance(value, dict) and bool(value.get("resolveProvider"))


# -- what lspmux announces -------------------------------------------------------------------------

#: What is assumed of a configured server whose capabilities are not known (never started here,
#: nothing cached): every routed provider, common trigger characters. `announce()` lets the
#: session avoid the guess by starting such servers first.
UNKNOWN_SERVER: dict[str, Any] = {
    **{key: True for key in FLAGS},
    **{key: {option: True} for key, option in BOOL_OPTION.items() if option != "rangesSupport"},
    "documentRangeFormattingProvider": True,
    "completionProvider": {
        "triggerCharacters": [".", ":", "<", '"', "'", "/", "@"],
        "resolveProvider": True,
    },
    "signatureHelpProvider": {"triggerCharacters": ["(", ","]},
    "codeActionProvider": {"resolveProvider": True},
    "executeCommandProvider": {"commands": []},
}

#: The `diagnosticProvider` lspmux announces when the session delivers diagnostics by pull.
PULL_DIAGNOSTICS: dict[str, Any] = {
    "identifier": "lspmux",
    "interFileDependencies": True,
    "workspaceDiagnostics": False,
}


def merge_for_client(
    per_backend: Sequence[Mapping[str, Any] | None],
    *,
    pull_diagnostics: bool = False,
    position_encoding: str = "utf-16",
) -> dict[str, Any]:
    """The `ServerCapabilities` lspmux announces, from each backend's effective capabilities
    (`effective()`; None for a server whose capabilities are unknown, assumed `UNKNOWN_SERVER`).

    Every provider announced is served by some backend, with the union of their options
    (`union()`). lspmux adds what it does itself: documents kept in sync incrementally with
    text on save (it gives full-sync backends full text), semantic token deltas computed from
    full results (`routing/semantic_tokens.py`), workspace folders, and `diagnosticProvider`
    only when `pull_diagnostics` (the session's delivery decision; otherwise it pushes)."""
    caps = union(UNKNOWN_SERVER if b is None else b for b in per_backend)
    backend_sync = caps.pop("textDocumentSync", {})
    caps.pop("diagnosticProvider", None)
    ops = (caps.pop("workspace", None) or {}).get("fileOperations")
    out: dict[str, Any] = {
        "positionEncoding": position_encoding,
        "textDocumentSync": {
            "openClose": True,
            "change": 2,  # incremental: lspmux recomputes full text for full-sync backends
            "save": {"includeText": True},
            "willSave": bool(backend_sync.get("willSave")),
            "willSaveWaitUntil": bool(backend_sync.get("willSaveWaitUntil")),
        },
        **caps,
    }
    sem = out.get("semanticTokensProvider")
    if sem is not None:
        sem["full"] = {"delta": True} if sem["full"] else False
        if not sem["full"] and not sem["range"]:
            del out["semanticTokensProvider"]
    if pull_diagnostics:
        out["diagnosticProvider"] = dict(PULL_DIAGNOSTICS)
    workspace: dict[str, Any] = {
        "workspaceFolders": {"supported": True, "changeNotifications": True}
    }
    if ops:
        workspace["fileOperations"] = ops
    out["workspace"] = workspace
    return out


def client_registrations(
    announced: Mapping[str, Any], current: Mapping[str, Any], client: Mapping[str, Any]
) -> list[tuple[str, dict[str, Any]]]:
    """What to register with the client (`(method, registerOptions)`; the caller mints ids)
    when the backends now serve `current` (a `merge_for_client()` result) but the client was
    told `announced`: each provider not announced yet, and commands not announced yet, where
    the client supports dynamic registration of it. Options of a provider already announced
    are not re-registered (a client would then ask twice)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for key, value in current.items():
        if key not in BY_KEY or not dynamic_registration(client, key):
            continue
        method, section = BY_KEY[key]
        options = dict(value) if isinstance(value, Mapping) else {}
        if key == "executeCommandProvider":
            known = set(opt(announced.get(key), "commands") or [])
            new = [c for c in options.get("commands", []) if c not in known]
            if new:
                out.append((method, {"commands": new}))
        elif not offered(announced.get(key)):
            if section.startswith("textDocument."):  # a workspace provider has no documents
                options["documentSelector"] = None  # the client's own selector
            out.append((method, options))
    return out


def stale_client_registrations(
    registered: Mapping[str, tuple[str, Any]], current: Mapping[str, Any]
) -> list[str]:
    """The ids of registrations lspmux made with the client (id → `(method, registerOptions)`)
    that no backend backs any more, given what they serve now (`current`): unregister them."""
    stale: list[str] = []
    for reg_id, (method, options) in registered.items():
        key = BY_METHOD.get(method)
        if key is None:
            continue
        value = current.get(key)
        if key == "executeCommandProvider":
            served = set(opt(value, "commands") or [])
            if not served & set(opt(options, "commands") or []):
                stale.append(reg_id)
        elif not offered(value):
            stale.append(reg_id)
    return stale


def dynamic_registration(client: Mapping[str, Any], key: str) -> bool:
    """Whether the client can take a dynamic registration of this provider."""
    if key not in BY_KEY:
        return False
    node: Any = client
    for part in BY_KEY[key][1].split("."):
        node = node.get(part) if isinstance(node, Mapping) else None
    return bool(opt(node, "dynamicRegistration"))


# -- the cache ------------------------------------------------------------------------------------


def cache_dir() -> Path:
    return dirs.cache_dir() / "capabilities"


def load_cached(server: str) -> dict[str, Any] | None:
    try:
        data = json.loads((cache_dir() / f"{server}.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def store_cached(
    server: str,
    capabilities: Mapping[str, Any],
    registrations: Iterable[tuple[str, Any]] = (),
) -> None:
    """Remember what a server serves: its static capabilities with its registrations (store
    again when it registers more, so that the next `initialize` announces them too)."""
    value = effective(capabilities, registrations) if registrations else capabilities
    with contextlib.suppress(OSError):
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{server}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(value))
        tmp.replace(folder / f"{server}.json")


def load_pulled(server: str) -> frozenset[str] | None:
    """The settings sections (their first part; "" for all of them) `server` asked for with
    `workspace/configuration` since it was first seen here; None when it never started here."""
    try:
        data = json.loads((cache_dir() / f"{server}.pulled.json").read_text())
    except (OSError, ValueError):
        return None
    return frozenset(s for s in data if isinstance(s, str)) if isinstance(data, list) else None


def pulled_sections(params: Any) -> set[str]:
    """The sections (their first part; "" for all) a `workspace/configuration` asks for."""
    items = params.get("items") if isinstance(params, dict) else None
    return {
        str(item.get("section") or "").split(".", 1)[0]
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict)
    }


def note_pulled(server: str, sections: Iterable[str] = ()) -> None:
    """Remember that `server` started here and asked for `sections` (what `load_pulled`
    gives); the file is written only when something is new."""
    folder = cache_dir()
    known = _PULLED.get(folder / server)
    if known is None:
        known = load_pulled(server)
    new = frozenset(sections)
    if known is not None and new <= known:
        return
    known = (known or frozenset()) | new
    _PULLED[folder / server] = known
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{server}.pulled.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(sorted(known)))
        tmp.replace(folder / f"{server}.pulled.json")


#: What `note_pulled` knows is in the cache (by cache folder and server): a server asking for
#: its settings at each document reads no file.
_PULLED: dict[Path, frozenset[str]] = {}


def asks_for(pulled: Iterable[str], settings: Mapping[str, Any]) -> bool:
    """Whether a server that asks for the sections `pulled` gets every part of `settings` by
    asking."""
    pulled = set(pulled)
    return "" in pulled or (bool(settings) and set(settings) <= pulled)


@dataclass(frozen=True, slots=True)
class Announcement:
    """What lspmux announces for a root: its servers (configuration order) and what is known
    of each. The union is taken in configuration order, so the same servers give the same
    answer, semantic token legend included, whenever they are known."""

    servers: tuple[str, ...]
    known: Mapping[str, Mapping[str, Any]]  # server name → what it serves (`effective()`)
    pull_diagnostics: bool = False
    position_encoding: str = "utf-16"

    @property
    def missing(self) -> tuple[str, ...]:
        """Servers nothing is known of (no cache entry, not started)."""
        return tuple(s for s in self.servers if s not in self.known)

    @property
    def complete(self) -> bool:
        """True when every server is known: the answer is what a later start would give."""
        return not self.missing

    def _ordered(self) -> list[str]:
        return [s for s in self.servers if s in self.known]

    @property
    def capabilities(self) -> dict[str, Any]:
        """The `ServerCapabilities` to announce (`merge_for_client()` of what is known)."""
        return merge_for_client(
            [self.known[s] for s in self._ordered()],
            pull_diagnostics=self.pull_diagnostics,
            position_encoding=self.position_encoding,
        )

    def legend_maps(self) -> dict[str, semantic_tokens.LegendMap]:
        """Per known server, where its semantic token indices land in the announced legend
        (`semantic_tokens.remap()` them before answering the client)."""
        names = self._ordered()
        legends = [opt(self.known[n].get("semanticTokensProvider"), "legend") for n in names]
        _, maps = semantic_tokens.union_legend(legends)
        return dict(zip(names, maps, strict=True))

    def with_known(self, server: str, capabilities: Mapping[str, Any]) -> Announcement:
        return dataclasses.replace(self, known={**self.known, server: capabilities})


def announce(
    servers: Iterable[str],
    *,
    pull_diagnostics: bool = False,
    position_encoding: str = "utf-16",
    load: Callable[[str], dict[str, Any] | None] = load_cached,
) -> Announcement:
    """What to announce for a root whose configured servers (the runnable ones, in order) are
    `servers`, from the cache. Servers without an entry are `missing`, never guessed: the
    session starts them before answering `initialize` (`complete()`), or announces this and
    registers the rest dynamically with a client that can take it (`client_registrations()`)."""
    names = tuple(servers)
    known = {name: cached for name in names if (cached := load(name)) is not None}
    return Announcement(names, known, pull_diagnostics, position_encoding)


async def complete(
    announcement: Announcement,
    start: Callable[[str], Awaitable[Mapping[str, Any] | None]],
    *,
    timeout: float,
) -> Announcement:
    """`announcement` with its missing servers started, concurrently: `start(name)` gives what
    the server serves once up (its `effective()` capabilities) or None when it cannot run. A
    server that fails or is not up within `timeout` seconds stays missing (register what it
    serves dynamically when it comes up)."""
    missing = announcement.missing
    if not missing:
        return announcement

    async def one(name: str) -> Mapping[str, Any] | None:
        try:
            return await asyncio.wait_for(start(name), timeout)
        except Exception as exc:  # a server that cannot start is reported by its backend
            why = str(exc) or type(exc).__name__
            log.info("%s: not up for initialize (%s); announced when it is", name, why)
            return None

    results = await asyncio.gather(*(one(name) for name in missing))
    out = announcement
    for name, served in zip(missing, results, strict=True):
        if served is not None:
            out = out.with_known(name, served)
    return out
