"""docs/configuration.md agrees with the code: feature names, keys, and the shipped tables.

The two reference tables in the doc (features → LSP methods, shipped servers and linters) are
rendered here from `ROUTES` and the shipped defaults; run this file as a script to print them
when the code changes, and paste them into the doc.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lspmux.config.linter_checks import JSON_MAPPING_KEYS
from lspmux.config.loader import GLOBAL_KEYS, LINTER_KEYS, SERVER_KEYS, load_config
from lspmux.config.model import Config, LinterConfig, ServerConfig
from lspmux.routing.table import FEATURES, ROUTES

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "configuration.md"


def _shipped() -> Config:
    """The shipped table as written: nothing installed, so the default choice leaves nothing
    out (what this machine has installed must not change the doc)."""
    return load_config(user_config=None, installed=lambda server: False)


def _code(value: str) -> str:
    return f"`{value}`"


def render_features() -> str:
    """The table of feature names and the LSP methods each one switches."""
    methods: dict[str, list[str]] = {}
    for method, route in ROUTES.items():
        if route.feature in FEATURES:
            methods.setdefault(route.feature, []).append(method)
    rows = ["| feature | LSP methods |", "|---|---|"]
    for feature in sorted(FEATURES):
        rows.append(f"| `{feature}` | {', '.join(map(_code, methods[feature]))} |")
    return "\n".join(rows)


def _entry_row(entry: ServerConfig | LinterConfig) -> str:
    enabled = "no" if entry.disabled else "yes"
    types = ", ".join(map(_code, entry.file_types))
    family = ""
    if isinstance(entry, ServerConfig):
        family = f" {_code(entry.family) if entry.family else ''} |"
    return f"| `{entry.name}` | `{' '.join(entry.command)}` | {types} |{family} {enabled} |"


def render_servers() -> str:
    rows = ["| server | command | file types | family | enabled |", "|---|---|---|---|---|"]
    rows += [_entry_row(s) for s in _shipped().servers.values()]
    return "\n".join(rows)


def render_linters() -> str:
    rows = ["| linter | command | file types | enabled |", "|---|---|---|---|"]
    rows += [_entry_row(lt) for lt in _shipped().linters.values()]
    return "\n".join(rows)


@pytest.fixture(scope="module")
def doc() -> str:
    return DOC.read_text(encoding="utf-8")


def test_every_feature_name_is_documented(doc: str) -> None:
    missing = [f for f in sorted(FEATURES) if f"`{f}`" not in doc]
    assert not missing, f"features missing from {DOC}: {missing}"


def test_feature_table_matches_the_routing_table(doc: str) -> None:
    assert render_features() in doc, "regenerate with: python tests/unit/config/test_config_docs.py"


def test_every_shipped_server_and_linter_is_in_the_tables(doc: str) -> None:
    config = _shipped()
    listed = set(re.findall(r"^\| `([^`]+)` \| `", doc, flags=re.M))
    missing = sorted((set(config.servers) | set(config.linters)) - listed)
    assert not missing, f"shipped entries missing from {DOC}: {missing}"


def test_shipped_tables_match_the_defaults(doc: str) -> None:
    hint = "regenerate with: python tests/unit/config/test_config_docs.py"
    assert render_servers() in doc, hint
    assert render_linters() in doc, hint


@pytest.mark.parametrize(
    ("section", "keys"),
    [
        ("global", GLOBAL_KEYS),
        ("server", SERVER_KEYS),
        ("linter", LINTER_KEYS),
        ("json mapping", dict.fromkeys(JSON_MAPPING_KEYS)),
    ],
)
def test_every_key_is_documented(doc: str, section: str, keys: dict[str, object]) -> None:
    missing = [k for k in keys if not re.search(rf"^\| `{k}` \|", doc, flags=re.M)]
    assert not missing, f"{section} keys without a row in {DOC}: {missing}"


if __name__ == "__main__":
    print(render_features(), render_servers(), render_linters(), sep="\n\n")
