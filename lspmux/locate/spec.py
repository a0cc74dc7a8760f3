"""The Locate data model and its JSON form: what a locate spec says, validated.

A `Target` names a file (by `file_path` or `uri`) and carries a `Spec`: an optional `Scope`
(a symbol path, a 1-based inclusive line range, or the whole file) and an optional find
pattern with `find_index` and an explicit `marker`. This module turns the JSON object form
of `locate` into a `Target` (raising `InvalidParams` with the accepted syntax when it is
malformed), parses the scope text shared with the string form, and turns a `Spec` back
into JSON. It knows nothing about files, text or symbols.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NoReturn

from lspmux.errors import InvalidParams

ScopeKind = Literal["file", "lines", "symbol"]

DEFAULT_THRESHOLD = 0.6  # the least score a fuzzy match needs (docs/locate.md, Fuzzy matching)

SYNTAX_HELP = (
    'locate is a string "<file>[:<scope>][@<find>]" — e.g. "app.py:Greeter.greet@return <|>message", '
    '"app.py:12@foo(<|>x)", "app.py:10-20@x", "app.py:L42", "app.py@self.<|>", "app.py:Greeter" — '
    'or an object {"file_path" | "uri", "scope": {"symbol_path": ["Greeter", "greet"]} | {"line": 12} '
    '| {"line": [10, 20]}, "find": "return <|>message", "find_index": 0, "marker": "<|>", "fuzzy": true}; '
    "lines are 1-based and inclusive; a scope or a find (or both) is required; "
    '"~@" instead of "@" (or "fuzzy": true) also accepts a near match when nothing matches exactly'
)

_LINE_SCOPE = re.compile(r"L?(\d+)(?:\s*[-,]\s*L?(\d+))?")
_KEYS = {
    "file_path": "file_path",
    "filePath": "file_path",
    "path": "file_path",
    "uri": "uri",
    "scope": "scope",
    "symbol_path": "symbol_path",
    "symbolPath": "symbol_path",
    "line": "line",
    "lines": "line",
    "find": "find",
    "find_index": "find_index",
    "findIndex": "find_index",
    "marker": "marker",
    "fuzzy": "fuzzy",
}


def invalid(problem: str, **data: Any) -> InvalidParams:
    """An InvalidParams error whose message names the problem and the accepted syntax."""
    return InvalidParams(f"{problem}. {SYNTAX_HELP}", data={"problem": problem, **data})


@dataclass(frozen=True, slots=True)
class Scope:
    """Where to look: the whole file, lines `lines` (1-based, inclusive), or a symbol."""

    kind: ScopeKind = "file"
    symbol_path: tuple[str, ...] = ()
    lines: tuple[int, int] | None = None

    @staticmethod
    def symbol(*path: str) -> Scope:
        return Scope("symbol", symbol_path=tuple(path))

    @staticmethod
    def line_range(first: int, last: int | None = None) -> Scope:
        return Scope("lines", lines=(first, first if last is None else last))

    def to_json(self) -> dict[str, Any] | None:
        if self.kind == "symbol":
            return {"symbol_path": list(self.symbol_path)}
        if self.kind == "lines" and self.lines is not None:
            a, b = self.lines
            return {"line": a} if a == b else {"line": [a, b]}
        return None


@dataclass(frozen=True, slots=True)
class Spec:
    """A position description inside one text: scope + find (at least one of them)."""

    scope: Scope = field(default_factory=Scope)
    find: str | None = None
    find_index: int = 0
    marker: str | None = None
    fuzzy: float | None = None  # the least score of a near match; None: exact only

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        scope = self.scope.to_json()
        if scope is not None:
            out["scope"] = scope
        if self.find is not None:
            out["find"] = self.find
        if self.find_index:
            out["find_index"] = self.find_index
        if self.marker is not None:
            out["marker"] = self.marker
        if self.fuzzy is not None:
            out["fuzzy"] = True if self.fuzzy == DEFAULT_THRESHOLD else self.fuzzy
        return out


@dataclass(frozen=True, slots=True)
class Target:
    """A spec together with the file it applies to (either may be absent from `locate`
    objects whose request names the document in `textDocument`)."""

    spec: Spec
    file_path: str | None = None
    uri: str | None = None


def is_line_scope_text(s: str) -> bool:
    """`:` followed by digits, `,`, `-` or `L<digits>` is a line scope in the string form."""
    return bool(s) and (s[0].isdigit() or s[0] in ",-" or (s[0] == "L" and s[1:2].isdigit()))


def check_lines(first: int, last: int) -> tuple[int, int]:
    if first < 1 or last < 1:
        raise invalid(
            f"line numbers are 1-based; got {first if first < 1 else last}", line=[first, last]
        )
    if last < first:
        raise invalid(f"line range {first}-{last} is reversed", line=[first, last])
    return first, last


def parse_scope_text(s: str) -> Scope:
    """`12`, `10-20`, `10,20`, `L12`, `L10-20` → a line scope; `A.b.c` → a symbol path."""
    s = s.strip()
    if not s:
        raise invalid("empty scope after ':'")
    if is_line_scope_text(s):
        m = _LINE_SCOPE.fullmatch(s)
        if m is None:
            raise invalid(f"bad line scope {s!r}: write 12, 10-20, 10,20, L12 or L10-20")
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        return Scope("lines", lines=check_lines(first, last))
    parts = tuple(p.strip() for p in s.split("."))
    if any(not p for p in parts):
        raise invalid(
            f"bad symbol path {s!r}: names are separated by single dots, like Greeter.greet"
        )
    return Scope("symbol", symbol_path=parts)


def _scope_from_json(kind: str, value: Any) -> Scope:
    if kind == "symbol_path":
        if isinstance(value, str):
            value = [p.strip() for p in value.split(".")]
        if (
            not isinstance(value, list)
            or not value
            or not all(isinstance(p, str) and p for p in value)
        ):
            return _bad_symbol_path(value)
        return Scope("symbol", symbol_path=tuple(value))
    if isinstance(value, bool):
        raise invalid(f"bad line {value!r}: give a 1-based line number or [first, last]")
    if isinstance(value, int):
        return Scope("lines", lines=check_lines(value, value))
    if (
        isinstance(value, list)
        and len(value) in (1, 2)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return Scope("lines", lines=check_lines(value[0], value[-1]))
    if isinstance(value, str) and is_line_scope_text(value.strip()):
        return parse_scope_text(value)
    raise invalid(f"bad line {value!r}: give a 1-based line number or [first, last]")


def _bad_symbol_path(value: Any) -> NoReturn:
    raise invalid(
        f'bad symbol_path {value!r}: give a non-empty list of names like ["Greeter", "greet"]'
    )


def scope_from_json(value: Any) -> Scope:
    """The `scope` member: `{"symbol_path": [...]}`, `{"line": N}`, `{"line": [A, B]}`, a
    scope string (`"Greeter.greet"`, `"10-20"`) or null."""
    if value is None:
        return Scope()
    if isinstance(value, str):
        return parse_scope_text(value)
    if not isinstance(value, Mapping):
        raise invalid(f"bad scope {value!r}")
    keys = {_KEYS.get(k, k) for k in value}
    unknown = keys - {"symbol_path", "line"}
    if unknown or len(keys) != 1:
        raise invalid(f"bad scope {dict(value)!r}: give exactly one of symbol_path or line")
    (key,) = value
    return _scope_from_json(_KEYS[key], value[key])


def _fuzzy_from_json(value: Any) -> float | None:
    """`true` → the default threshold, `false`/null → exact only, a number in (0, 1] → that
    threshold."""
    if value is None or value is False:
        return None
    if value is True:
        return DEFAULT_THRESHOLD
    if isinstance(value, int | float) and 0 < value <= 1:
        return float(value)
    raise invalid(
        f"bad fuzzy {value!r}: give true, false, or the least score to accept (0 < score <= 1)"
    )


def target_from_json(obj: Mapping[str, Any]) -> Target:
    """The object form of `locate` → a validated Target."""
    fields: dict[str, Any] = {}
    for key, value in obj.items():
        name = _KEYS.get(key)
        if name is None:
            raise invalid(f"unknown locate field {key!r}", field=key)
        if name in fields:
            raise invalid(f"locate field {name!r} given twice", field=name)
        fields[name] = value
    scopes = [k for k in ("scope", "symbol_path", "line") if k in fields]
    if len(scopes) > 1:
        raise invalid(f"give one scope, not {' and '.join(scopes)}")
    scope = Scope()
    if scopes:
        key = scopes[0]
        if key == "scope":
            scope = scope_from_json(fields[key])
        else:
            scope = _scope_from_json(key, fields[key])
    find = fields.get("find")
    if find is not None and not isinstance(find, str):
        raise invalid(f"bad find {find!r}: give a string")
    if find is not None and not find.strip():
        raise invalid("find is empty")
    index = fields.get("find_index", 0)
    if index is None:
        index = 0
    if not isinstance(index, int) or isinstance(index, bool) or index < 0:
        raise invalid(f"bad find_index {index!r}: give a 0-based integer")
    if index and find is None:
        raise invalid("find_index needs a find")
    marker = fields.get("marker")
    if marker is not None and (not isinstance(marker, str) or not marker):
        raise invalid(f"bad marker {marker!r}: give a non-empty string")
    if marker is not None and find is None:
        raise invalid("marker needs a find")
    fuzzy = _fuzzy_from_json(fields.get("fuzzy"))
    if fuzzy is not None and find is None:
        raise invalid("fuzzy needs a find")
    if scope.kind == "file" and find is None:
        raise invalid("nothing to locate: give a scope, a find, or both")
    for name in ("file_path", "uri"):
        value = fields.get(name)
        if value is not None and (not isinstance(value, str) or not value):
            raise invalid(f"bad {name} {value!r}: give a non-empty string")
    if fields.get("file_path") is not None and fields.get("uri") is not None:
        raise invalid("give file_path or uri, not both")
    return Target(
        Spec(scope, find, index, marker, fuzzy),
        file_path=fields.get("file_path"),
        uri=fields.get("uri"),
    )
