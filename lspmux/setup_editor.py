"""`lspmux setup EDITOR`: the copy-paste setup of an editor, straight from docs/editors.md.

The snippets live in one place, docs/editors.md (the editor tests run them); the package ships
the docs (`lspmux/docs`, a link to docs/ in a checkout) and this command prints the first
code block of the editor's section (stdout), and the sentence that says where it goes (stderr).
"""

from __future__ import annotations

import argparse
from pathlib import Path

DOC = Path(__file__).resolve().parent / "docs" / "editors.md"

#: Editor name → the heading of its section in docs/editors.md (its start).
SECTIONS: dict[str, str] = {
    "nvim": "## Neovim 0.11+",
    "helix": "## Helix",
    "emacs": "## Emacs (eglot)",
    "vscode": "## VS Code",
    "zed": "## Zed",
}


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "setup",
        help="print the copy-paste setup of an editor (nvim, helix, emacs, vscode, zed)",
        description="Print the configuration snippet that makes EDITOR use lspmux, and where "
        "it goes (the same text as docs/editors.md, which the package ships).",
    )
    p.add_argument("editor", choices=sorted(SECTIONS), metavar="EDITOR", help=", ".join(SECTIONS))


def snippet(editor: str, doc: str | None = None) -> tuple[str, str]:
    """(where it goes, the code) of `editor`'s section: the paragraph before its first code
    block, and the block."""
    import re

    text = DOC.read_text(encoding="utf-8") if doc is None else doc
    heading = SECTIONS[editor]
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    section = "\n".join(lines[start:end])
    match = re.search(r"\n\n((?:(?!\n\n).)+?)\n\n```[a-z]*\n(.*?)\n```", section, flags=re.S)
    if match is None:
        raise LookupError(f"docs/editors.md: no code block under {heading!r}")
    return " ".join(match[1].split()), match[2]


def main(args: argparse.Namespace) -> int:
    """The snippet on stdout (`lspmux setup helix >> languages.toml` works), where it goes on
    stderr."""
    import sys

    where, code = snippet(args.editor)
    print(f"{SECTIONS[args.editor].removeprefix('## ')}: {where}", file=sys.stderr)
    print(code)
    return 0
