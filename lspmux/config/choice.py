"""The default choice among servers that do the same job: one per role and family.

Servers of the shipped table that are alternatives for one another (basedpyright, pyright,
pylsp, jedi-language-server and ty for Python) share a `family`. Of the enabled servers with
the same role and family, only the first one in configuration order whose executable is found
runs; the others are left out, so that one problem is not reported twice and one hover does
not come from two type checkers. A server the user turned on by name (`disabled = false` in a
configuration file) is never left out: it runs beside the chosen one (and is chosen itself when
it comes first). Where no server of a family is found, none is left out (`lspmux doctor` names
the one to install).

`choose` is a pure function of the servers, what the user turned on, and what is installed;
`lspmux.config.loader` applies it when it builds the configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar


class Candidate(Protocol):
    """What the choice reads of a server (`ServerConfig` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def family(self) -> str | None: ...
    @property
    def role(self) -> str: ...
    @property
    def disabled(self) -> bool: ...


S = TypeVar("S", bound=Candidate)


@dataclass(frozen=True, slots=True)
class Choice:
    """A server left out because another of its role and family runs in its place."""

    name: str
    chosen: str  # the server that runs instead (installed)
    family: str
    role: str

    @property
    def why(self) -> str:
        return (
            f"{self.chosen} (installed) takes the {self.family} {self.role} role; "
            f"set servers.{self.name}.disabled = false to run both"
        )

    @property
    def reason(self) -> str:
        return f"not used: {self.why}"


def choose(
    servers: Iterable[S], installed: Callable[[S], bool], turned_on: Collection[str] = ()
) -> dict[str, Choice]:
    """The servers to leave out: name → why.

    For each (role, family) of the enabled servers that have a family, the first one
    `installed` says is found is chosen and every other one is left out, except those in
    `turned_on` (named by the user). `installed` is asked about as few servers as it takes (it
    looks at the disk)."""
    groups: dict[tuple[str, str], list[S]] = {}
    for server in servers:
        if server.family is not None and not server.disabled:
            groups.setdefault((server.role, server.family), []).append(server)
    out: dict[str, Choice] = {}
    for (role, family), members in groups.items():
        if len(members) < 2:
            continue
        winner = next((s for s in members if installed(s)), None)
        if winner is None:
            continue
        for server in members:
            if server is not winner and server.name not in turned_on:
                out[server.name] = Choice(server.name, winner.name, family, role)
    return out


def chosen_over(choices: Iterable[Choice], name: str) -> list[str]:
    """The servers `name` was chosen over."""
    return [c.name for c in choices if c.chosen == name]
