"""The string form of a locate spec: `<file>[:<scope>][@<find>]`, parsed and formatted.

`app.py:Greeter.greet@return <|>message`, `app.py:42@x`, `app.py:10-20@x`, `app.py:L42`,
`app.py@self.<|>`, `app.py:Greeter`. After the file (and scope), everything that follows the
first `@` is the find, `@` and `:` included. `:` followed by digits, `,`, `-` or `L<digits>`
starts a line scope; anything else is a dotted symbol path. A path may itself contain `@` or
`:`; every way of splitting the string is tried, and a reading whose file exists (by the
caller's `exists` predicate) wins over one whose file does not, the shortest file first.
`~@` instead of `@` makes the find fuzzy (`app.py:Greeter.greet~@return <|>mesage`): that
reading comes before the one that keeps `~` in the file or scope.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from lspmux.locate.spec import (
    DEFAULT_THRESHOLD,
    Scope,
    Spec,
    Target,
    invalid,
    is_line_scope_text,
    parse_scope_text,
)

Reading = tuple[str, str | None, str | None, bool]  # (file, scope text, find, fuzzy)


def _split(head: str, scope: str | None, find: str) -> Iterator[Reading]:
    """A reading with a find; first the fuzzy one when `~@` separates the find."""
    last = scope if scope is not None else head
    if len(last) > 1 and last.endswith("~"):
        if scope is not None:
            yield head, scope[:-1], find, True
        else:
            yield head[:-1], None, find, True
    yield head, scope, find, False


def _readings(s: str) -> Iterator[Reading]:
    """Every split of `s` into file, scope and find, the shortest file first."""
    for i, ch in enumerate(s):
        if i == 0 or ch not in ":@":
            continue
        if ch == "@":
            yield from _split(s[:i], None, s[i + 1 :])
            continue
        j = s.find("@", i + 1)
        if j < 0:
            yield s[:i], s[i + 1 :], None, False
        else:
            yield from _split(s[:i], s[i + 1 : j], s[j + 1 :])
    yield s, None, None, False


def _plausible(reading: Reading) -> bool:
    file, scope, _, _ = reading
    if not file.strip() or file.endswith(("/", "\\")):
        return False
    if scope is None:
        return True
    scope = scope.strip()
    if not scope:
        return False
    return is_line_scope_text(scope) or not any(c in scope for c in "/\\")


def _build(reading: Reading) -> Target:
    file, scope_text, find, fuzzy = reading
    scope = parse_scope_text(scope_text) if scope_text is not None else Scope()
    if find is not None and not find.strip():
        raise invalid(f"empty find after '@' in {file!r}")
    if scope.kind == "file" and find is None:
        raise invalid(f"nothing to locate in {file!r}: add ':<scope>', '@<find>' or both")
    return Target(Spec(scope, find, fuzzy=DEFAULT_THRESHOLD if fuzzy else None), file_path=file)


def parse_locate(text: str, exists: Callable[[str], bool] | None = None) -> Target:
    """Parse the string form. `exists(path)` says whether a file exists; when the string can
    be split more than one way, a reading whose file exists is preferred."""
    s = text.strip()
    if not s:
        raise invalid("empty locate string")
    readings = [r for r in _readings(s) if _plausible(r)]
    if not readings:
        raise invalid(f"cannot read a file name in {text!r}")
    if exists is not None:
        for reading in readings:
            if exists(reading[0]):
                return _build(reading)
    return _build(readings[0])


def symbol_path_text(path: tuple[str, ...]) -> str | None:
    """The dotted form of `path`, or None when the string form cannot say it."""
    if not path or any(not p or p != p.strip() or any(c in p for c in ".@/\\") for p in path):
        return None
    dotted = ".".join(path)
    return None if is_line_scope_text(dotted) else dotted


def format_locate(file: str, spec: Spec) -> str | None:
    """The string form of `spec` applied to `file`, or None when it cannot be written so
    (a find_index, an explicit marker, a fuzzy threshold other than the default, or a symbol
    name the dotted syntax cannot carry)."""
    if spec.find_index or spec.marker is not None:
        return None
    if spec.fuzzy is not None and spec.fuzzy != DEFAULT_THRESHOLD:
        return None
    out = file
    scope = spec.scope
    if scope.kind == "symbol":
        dotted = symbol_path_text(scope.symbol_path)
        if dotted is None:
            return None
        out += f":{dotted}"
    elif scope.kind == "lines" and scope.lines is not None:
        a, b = scope.lines
        out += f":{a}" if a == b else f":{a}-{b}"
    if spec.find is not None:
        if spec.find != spec.find.strip():
            return None
        out += f"{'~' if spec.fuzzy is not None else ''}@{spec.find}"
    return out
