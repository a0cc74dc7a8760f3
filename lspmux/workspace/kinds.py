"""The kinds of files a project holds, as `lspmux doctor` counts them: one sample path per kind
(an extension, or the whole name of a file without one) with how many files share it, and which
kinds are files that configure tools rather than the project's own sources.

A file configures a tool when it is hidden (`.pre-commit-config.yaml`) or when it is a root
marker of some server or linter (`pyproject.toml`, `package.json`, `Cargo.toml`): such a file
alone does not make a server for its type needed (taplo for a Python project's
`pyproject.toml`), unless it is one of that server's own markers (`taplo.toml` for taplo).

Likewise a project's standing notes — `README.md`, `CHANGELOG.md`, `LICENSE.md`,
`CONTRIBUTING.md` … (`NOTES`) — do not by themselves make a Markdown server or linter needed:
nearly every project has a README, and few want marksman for it.
"""

from __future__ import annotations

import fnmatch
import os
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field


@dataclass
class Kinds:
    #: kind → (one path of that kind, how many files are of it)
    samples: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: The kinds that are tool files (each keyed by its whole name).
    tools: set[str] = field(default_factory=set)
    #: The kinds that are a project's standing notes (`README.md`; keyed by the whole name).
    notes: set[str] = field(default_factory=set)

    def count(self, matches: Callable[[str], bool]) -> int:
        """How many files `matches` takes (asked of one sample per kind)."""
        return sum(n for path, n in self.samples.values() if matches(path))

    def only_tool_files(
        self, matches: Callable[[str], bool], own: Iterable[str]
    ) -> tuple[str, ...]:
        """The names of the files `matches` takes, when every one configures a tool other than
        the one whose root markers are `own`, or is one of the project's standing notes; else
        ()."""
        mine = [kind for kind, (path, _) in self.samples.items() if matches(path)]
        own = tuple(own)
        theirs = [k for k in mine if k in self.notes or (k in self.tools and not is_marker(k, own))]
        return tuple(theirs) if mine and len(theirs) == len(mine) else ()


def is_marker(name: str, markers: Iterable[str]) -> bool:
    """Whether a file named `name` is one of `markers` (names, or globs such as `*.csproj`)."""
    return any(
        name == m or (any(c in m for c in "*?[") and fnmatch.fnmatchcase(name, m)) for m in markers
    )


#: The stems of a project's standing notes, in any case and with any extension.
NOTES = frozenset(
    {
        "README",
        "CHANGELOG",
        "CHANGES",
        "HISTORY",
        "NEWS",
        "CONTRIBUTING",
        "LICENSE",
        "LICENCE",
        "NOTICE",
        "AUTHORS",
        "CODE_OF_CONDUCT",
        "SECURITY",
        "SUPPORT",
    }
)


def kinds_of(files: Iterable[str], markers: Iterable[str]) -> Kinds:
    """The kinds of `files`; `markers`: the root markers of every server and linter."""
    markers = set(markers)
    counts: Counter[str] = Counter()
    sample: dict[str, str] = {}
    kinds = Kinds()
    for path in files:
        base = os.path.basename(path)
        kind = os.path.splitext(base)[1] or base
        if base.startswith(".") or is_marker(base, markers):
            kind = base
            kinds.tools.add(kind)
        elif os.path.splitext(base)[0].upper() in NOTES:
            kind = base
            kinds.notes.add(kind)
        counts[kind] += 1
        sample.setdefault(kind, path)
    kinds.samples = {kind: (sample[kind], n) for kind, n in counts.items()}
    return kinds
