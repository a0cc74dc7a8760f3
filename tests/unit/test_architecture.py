"""The package's import graph has no cycles — counting every import: at module level, under
`TYPE_CHECKING`, and inside functions (a cycle hidden by either is still a cycle in the design).
docs/architecture.md draws this graph; the session's helpers and handlers depend on the
concrete `session/state.py` (`SessionState`), not on the Session class above them."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "lspmux"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def imported_names(path: Path) -> tuple[tuple[tuple[str, ...], int], ...]:
    """(absolute names an import statement names, line) for every import in `path`, parsed
    once per run: this test and test_layers.py walk every module several times."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: list[tuple[tuple[str, ...], int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.append((tuple(a.name for a in node.names), node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append(((base, *(f"{base}.{a.name}" for a in node.names)), node.lineno))
    return tuple(found)


def import_sites(path: Path, modules: set[str]) -> list[tuple[str, int]]:
    """(imported module, line) for every import in `path` of a module of the package —
    at module level, under `TYPE_CHECKING` and inside functions alike. A name imported from a
    module counts as that module (`from lspmux.wire import framing` is `lspmux.wire.framing`)."""
    name = module_name(path)
    found: list[tuple[str, int]] = []
    for targets, lineno in imported_names(path):
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and target != "lspmux":
                found.append((target, lineno))
    return found


def imports_of(path: Path, modules: set[str]) -> set[str]:
    return {target for target, _line in import_sites(path, modules)}


@cache
def graph() -> dict[str, set[str]]:
    paths = list(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles() -> None:
    found = cycles(graph())
    assert not found, f"import cycles (module groups that import each other): {found}"


def test_session_helpers_do_not_import_the_session_class() -> None:
    g = graph()
    helpers = [m for m in g if m.startswith("lspmux.session.") and m != "lspmux.session.session"]
    offenders = [m for m in helpers if "lspmux.session.session" in g[m]]
    assert not offenders
