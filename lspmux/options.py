"""Command-line options declared once, read two ways: a plain loop (`read_args`) at every start
of the commands a user waits for (argparse and the modules of the full command line cost tens
of milliseconds: `lspmux client`, `proxy`, `status`, the agent verbs…), and argparse
(`Option.add_to`) for `--help`, a mistake and every other command line. Standard library only.

What the plain loop cannot read as argparse would — help, an unknown or abbreviated option, a
value not among the choices — it leaves to argparse (`read_args` says None), which says what is
wrong; tests/unit/test_cli_readers.py checks both read the same words the same way.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: importing typing costs milliseconds
if TYPE_CHECKING:  # argparse is imported only to print help or an error
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any


class Option:
    """One option: its spellings, where its value goes, and how it reads (`kind`: "value",
    "append" for a repeatable value, "flag" (sets True), "off" (`--no-…`: sets False); a
    "value" has a `default`, may be converted by `convert`, such as `int`, and may be one of
    `choices` only)."""

    __slots__ = ("choices", "convert", "default", "dest", "help", "kind", "metavar", "names")

    def __init__(
        self,
        *names: str,
        dest: str,
        help: str,
        kind: str = "value",
        metavar: str | None = None,
        default: Any = None,
        convert: Callable[[str], Any] | None = None,
        choices: Sequence[str] | None = None,
    ) -> None:
        self.names = names
        self.dest = dest
        self.help = help
        self.kind = kind
        self.metavar = metavar
        self.default = default
        self.convert = convert
        self.choices = choices

    def initial(self) -> Any:
        """The value when the option is not given (argparse's default for it)."""
        return {"flag": False, "off": True, "append": []}.get(self.kind, self.default)

    def add_to(self, p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
        if self.kind in ("flag", "off"):
            action = "store_true" if self.kind == "flag" else "store_false"
            p.add_argument(*self.names, dest=self.dest, action=action, help=self.help)
        elif self.kind == "append":
            added = p.add_argument(
                *self.names,
                dest=self.dest,
                metavar=self.metavar,
                action="append",
                default=[],
                help=self.help,
            )
            added.type = self.convert  # argparse's default is None too
        else:
            added = p.add_argument(
                *self.names, dest=self.dest, metavar=self.metavar, default=self.default,
                choices=self.choices, help=self.help,
            )  # fmt: skip
            added.type = self.convert  # argparse's default is None too


if TYPE_CHECKING:  # to mypy, what argparse would have read: any attribute
    from argparse import Namespace as Args
else:

    class Args:
        """A command line read without argparse (`read_args`): the attributes of argparse's
        namespace for the same words."""

        def __init__(self, **values: Any) -> None:
            self.__dict__.update(values)


def read_args(
    words: Sequence[str], options: Sequence[Option], rest: str | None = None, **more: Any
) -> Args | None:
    """`words` read from `options` without argparse: each option's value (its `initial` when
    not given), the other words in a list named `rest` (no other word is taken without it),
    and `more` as they are (what argparse sets besides). None when argparse must read the
    words: help, a mistake (`read_options`), a value not among an option's `choices` (argparse
    names them)."""
    args = Args(**{o.dest: o.initial() for o in options}, **more)
    others: list[str] | None = None
    if rest is not None:
        others = []
        setattr(args, rest, others)
    if not read_options(words, {name: o for o in options for name in o.names}, args, others):
        return None
    return args


def read_options(
    argv: Sequence[str], by_name: Mapping[str, Option], args: object, rest: list[str] | None
) -> bool:
    """Set the attributes of `args` from `argv`, options named by `by_name`; other words
    (and all after `--`) go to `rest`. False when argparse must read them instead: help, an
    unknown or abbreviated option, a missing or unconvertible value, a value that looks like
    an option, a word where none is taken (`rest` is None), a value not among its option's
    `choices` (argparse checks each one given, and names the choices)."""
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-") or word == "--":
            if rest is None:
                return False
            if word == "--":
                rest += words[i + 1 :]
                break
            rest.append(word)
            i += 1
            continue
        name, eq, value = word.partition("=")
        option = by_name.get(name)
        if option is None:
            return False
        if option.kind in ("flag", "off"):
            if eq:
                return False  # argparse says `--no-autostart=x` is a mistake
            setattr(args, option.dest, option.kind == "flag")
            i += 1
            continue
        if not eq:
            if i + 1 >= len(words) or words[i + 1].startswith("-"):
                return False
            i += 1
            value = words[i]
        if option.convert is not None:
            try:
                value = option.convert(value)
            except ValueError:
                return False
        if option.choices is not None and value not in option.choices:
            return False  # argparse checks each value given, not only the last one
        if option.kind == "append":
            getattr(args, option.dest).append(value)
        else:
            setattr(args, option.dest, value)
        i += 1
    return True
