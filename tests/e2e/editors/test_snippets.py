"""The verified setups of docs/editors.md are there to be run: each snippet the editor tests use
is found under its heading and configures lspmux. Runs without any editor installed, so that a
doc edit breaking the editor tests is caught even where those tests skip."""

from __future__ import annotations

import pytest

from tests.e2e.editors.harness import EGLOT_HEADING as EGLOT
from tests.e2e.editors.harness import NEOVIM_HEADING as NEOVIM
from tests.e2e.editors.harness import doc_snippet, fenced_block


@pytest.mark.parametrize(
    ("heading", "lang", "needles"),
    [
        (
            NEOVIM,
            "lua",
            ["vim.lsp.config('lspmux'", "'lspmux', 'proxy'", "vim.lsp.enable('lspmux')"],
        ),
        (EGLOT, "elisp", ["eglot-server-programs", '("lspmux" "proxy")', "python-mode"]),
    ],
)
def test_verified_snippet_is_in_the_doc(heading: str, lang: str, needles: list[str]) -> None:
    snippet = doc_snippet(heading, lang)
    for needle in needles:
        assert needle in snippet, f"docs/editors.md, {heading}: {needle!r} not in\n{snippet}"


def test_fenced_block_takes_the_block_under_its_heading_only() -> None:
    doc = "# A\n```lua\na()\n```\n## B\ntext\n```lua\nb()\nc()\n```\n## C\n```sh\nx\n```\n"
    assert fenced_block(doc, "B", "lua") == "b()\nc()\n"
    with pytest.raises(LookupError, match="no ```lua block under 'C'"):
        fenced_block(doc, "C", "lua")
    with pytest.raises(LookupError, match="no heading containing 'D'"):
        fenced_block(doc, "D", "lua")
