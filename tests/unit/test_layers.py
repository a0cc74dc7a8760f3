"""Layers point down, and modules stay small.

The package is ranked below, lowest first. A module may import modules of its own group and of
any lower rank, never of a higher rank nor of a peer group on its own rank (the daemon and the
proxy are two ways of serving a client; neither builds on the other). Every import counts — at
module level, under `TYPE_CHECKING`, inside functions (test_architecture.py's walker) — because
a deferred import is still a dependency of the design.

A module belongs to the group of its longest matching prefix, so a module can sit apart from
its package where it truly does (`daemon.address` is a leaf that the config checks, the shim
and the agent read).

`ALLOWED` lists today's upward imports in other developers' files that issue 18 removes while
this test lands; each entry names who removes it. The lead deletes an entry after merging its
fix, and `test_every_allowance_is_still_needed` says when one is stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import pytest

from tests.unit.test_architecture import PACKAGE, import_sites, module_name


@dataclass(frozen=True)
class Rank:
    name: str
    #: Peer groups: each a tuple of module prefixes. Peers may not import each other.
    groups: tuple[tuple[str, ...], ...]
    why: str


LAYERS: tuple[Rank, ...] = (
    Rank(
        "leaves",
        (
            (
                "lspmux",  # the package itself (its version) only, not what lies under it
                "lspmux.errors",
                "lspmux.text",
                "lspmux.text_chunks",
                "lspmux.memory",
                "lspmux.serving",
                "lspmux.uris",
                "lspmux.dirs",
                "lspmux.options",
                "lspmux.install.prefix",
                "lspmux.setup_editor",
                "lspmux.logs",
                "lspmux.log_filters",
                "lspmux.workspace",
                "lspmux.locate",
                "lspmux.daemon.address",
                "lspmux.speedups",
            ),
        ),
        "Standard-library helpers and pure engines that know nothing of LSP traffic: errors, "
        "text and logging, the workspace's files and roots, the Locate engine, and where the "
        "daemon listens.",
    ),
    Rank(
        "wire",
        (("lspmux.wire",),),
        "Bytes to messages and back: framing, JSON-RPC ids and errors, the connection.",
    ),
    Rank(
        "routing data",
        (
            (
                "lspmux.routing",
                "lspmux.routing.methods",
                "lspmux.routing.features",
                "lspmux.routing.route",
                "lspmux.routing.capabilities",
                "lspmux.routing.merge",
                "lspmux.routing.semantic_tokens",
                "lspmux.routing.adapt",
            ),
        ),
        "What a method is and how answers combine: method names, the Route type, merging, "
        "semantic-token legends, adapting answers to a client — pure data and functions.",
    ),
    Rank(
        "encodings",
        (("lspmux.encodings",),),
        "Position encodings converted per method; reads the method list, nothing live.",
    ),
    Rank(
        "config",
        (("lspmux.config", "lspmux.trust"),),
        "The typed configuration, its files, checks and trust; it describes servers, it does "
        "not run them.",
    ),
    Rank(
        "diagnostics",
        (("lspmux.diagnostics",),),
        "The diagnostics store, the linters and the project summary: data and linter "
        "processes, no session.",
    ),
    Rank(
        "clients",
        (
            (
                "lspmux.headless",
                "lspmux.probe",
                "lspmux.cli_common",
                "lspmux.doctor",
                "lspmux.diagnostics.report",
                "lspmux.locate.command",
                "lspmux.daemon.dial",  # reaching the daemon: the shim's, the verbs', locate's
            ),
        ),
        "Clients of a running lspmux, one-shot checks and what every command shares (logging, "
        "the event loop): they talk to an lspmux process over wire or inspect the install — "
        "never a backend or a session in memory.",
    ),
    Rank(
        "backends",
        (("lspmux.backends",),),
        "One language-server process each, and the pool that shares them; no client in sight.",
    ),
    Rank(
        "session",
        (
            (
                "lspmux.session",
                "lspmux.routing.table",
                "lspmux.fit_worker",
            ),
        ),
        "One client's state and the handlers that serve it; the assembled dispatch table "
        "(which names the handlers), pulling diagnostics for a session, and the fit worker "
        "the session starts.",
    ),
    Rank(
        "remote",
        (("lspmux.remote",),),
        "Reaching an lspmux on another machine: the ssh/exec transport, path mapping, and the "
        "local relay that keeps the open documents' text (session.documents) to replay it "
        "after a dropped link. The shim and the agent hand over to it.",
    ),
    Rank(
        "serving",
        (("lspmux.daemon",), ("lspmux.proxy", "lspmux.proxy_registry")),
        "Two ways to serve clients over sessions: the shared daemon and the private stdio "
        "proxy. Peers: what both need lives lower (lspmux.serving).",
    ),
    Rank(
        "agent",
        (("lspmux.agent",),),
        "The agent tools and their MCP server: they use the clients and the daemon's shim.",
    ),
    Rank(
        "cli",
        (
            (
                "lspmux.cli",
                "lspmux.__main__",
                "lspmux.daemon.commands",
                "lspmux.cli_agent",
                "lspmux.cli_checks",
                "lspmux.completion",
                "lspmux.install",
            ),
        ),
        "The command line: it parses arguments, hands over to every command and wires the "
        "layers together (the daemon gets the agent's hosted tools from here).",
    ),
)

#: (importing module, imported module) → who removes it. Only other developers' files.
ALLOWED: dict[tuple[str, str], str] = {}


@cache  # asked for every import of every module
def place(module: str) -> tuple[int, int] | None:
    """(rank, group) of the longest prefix that matches `module`, or None."""
    best: tuple[int, int, int] | None = None
    for r, rank in enumerate(LAYERS):
        for g, group in enumerate(rank.groups):
            for prefix in group:
                inside = module.startswith(prefix + ".") and prefix != "lspmux"
                longer = best is None or len(prefix) > best[2]
                if (module == prefix or inside) and longer:
                    best = (r, g, len(prefix))
    return None if best is None else (best[0], best[1])


def describe(module: str) -> str:
    where = place(module)
    if where is None:
        return "unranked"
    rank = LAYERS[where[0]]
    group = f", group {rank.groups[where[1]][0]}" if len(rank.groups) > 1 else ""
    return f"rank {where[0]} {rank.name!r}{group}"


def climbs(importer: str, target: str) -> bool:
    """Whether `importer` importing `target` goes up a rank or sideways to a peer group."""
    here, there = place(importer), place(target)
    if here is None or there is None:
        return False  # test_every_module_has_a_rank says so
    return there[0] > here[0] or (there[0] == here[0] and there[1] != here[1])


@cache
def upward_imports() -> tuple[tuple[str, int, str], ...]:
    """(importing module, line, imported module) for every import that climbs."""
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    found = set()
    for path in paths:
        importer = module_name(path)
        for target, line in import_sites(path, modules):
            if climbs(importer, target):
                found.add((importer, line, target))
    return tuple(sorted(found))


@pytest.mark.parametrize(
    ("importer", "target", "up"),
    [
        ("lspmux.daemon.server", "lspmux.proxy", True),  # peers
        ("lspmux.proxy", "lspmux.daemon.server", True),
        ("lspmux.daemon.server", "lspmux.agent.hosted", True),
        ("lspmux.headless", "lspmux.daemon.shim", True),
        ("lspmux.routing.merge", "lspmux.routing.table", True),  # data below the table
        ("lspmux.wire.connection", "lspmux.backends.backend", True),
        ("lspmux.cli", "lspmux.agent.cli", False),
        ("lspmux.daemon.commands", "lspmux.agent.hosted", False),  # the CLI layer wires
        ("lspmux.agent.cli", "lspmux.daemon.shim", False),
        ("lspmux.session.session", "lspmux.routing.table", False),
        ("lspmux.config.checks", "lspmux.daemon.address", False),  # a leaf
        ("lspmux.daemon.server", "lspmux.daemon.clients", False),
    ],
)
def test_the_ranking_tells_up_from_down(importer: str, target: str, up: bool) -> None:
    assert climbs(importer, target) is up


def test_every_module_has_a_rank() -> None:
    unranked = sorted(m for m in map(module_name, PACKAGE.rglob("*.py")) if place(m) is None)
    assert not unranked, (
        f"modules with no place in LAYERS (tests/unit/test_layers.py): {unranked}; add each "
        "to the rank it truly sits at"
    )


def test_no_module_imports_upwards() -> None:
    bad = [
        f"{importer.replace('.', '/')}.py:{line} imports {target} "
        f"({describe(importer)} -> {describe(target)})"
        for importer, line, target in upward_imports()
        if (importer, target) not in ALLOWED
    ]
    assert not bad, (
        "imports that climb the layers (tests/unit/test_layers.py LAYERS): "
        + "; ".join(bad)
        + ". Move the shared part down, or let a higher layer pass it in."
    )


def test_every_allowance_is_still_needed() -> None:
    climbing = {(importer, target) for importer, _line, target in upward_imports()}
    stale = sorted(
        f"{a} -> {b} ({why})" for (a, b), why in ALLOWED.items() if (a, b) not in climbing
    )
    assert not stale, f"ALLOWED entries no longer needed (delete them): {stale}"


# -- size ------------------------------------------------------------------------------------

MAX_LINES = 400

#: Modules over MAX_LINES in other developers' files, each split under issue 18 item 4.
TOO_LONG: dict[str, str] = {}


@cache
def long_modules() -> dict[str, int]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            found[path.relative_to(PACKAGE).as_posix()] = lines
    return found


def test_no_module_is_over_400_lines() -> None:
    bad = {name: n for name, n in sorted(long_modules().items()) if name not in TOO_LONG}
    assert not bad, (
        f"modules over {MAX_LINES} lines (lspmux/…: lines): {bad}; split each by concern, one "
        "job per module, said in its docstring"
    )


def test_every_long_module_allowance_is_still_needed() -> None:
    long = long_modules()
    stale = sorted(name for name in TOO_LONG if name not in long)
    assert not stale, f"TOO_LONG entries now within {MAX_LINES} lines (delete them): {stale}"
