"""`lspmux client --remote …` / `--remote-exec …`: the options, and handing off to the relay.

Imported by the shim on every start, so only the standard library at module level.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from lspmux.remote.target import Target

#: Options that make `lspmux client` a relay to another machine; the value follows each.
REMOTE_OPTIONS = ("--remote", "--remote-exec", "--map", "--remote-lspmux")


def wants_remote(argv: Sequence[str]) -> bool:
    """Whether the client's command line (before `--`) names a remote."""
    for word in argv:
        if word == "--":
            return False
        if word.partition("=")[0] in ("--remote", "--remote-exec"):
            return True
    return False


def add_remote_options(p: argparse.ArgumentParser, *, mapping: bool = True) -> None:
    g = p.add_argument_group("on another machine (docs/remote.md)")
    g.add_argument(
        "--remote",
        metavar="ssh://[USER@]HOST[:PORT]/PATH",
        help="run the client on HOST through OpenSSH (env LSPMUX_SSH: the ssh command); PATH "
        "is the project there, mapped to the editor's root",
    )
    g.add_argument(
        "--remote-exec",
        metavar="CMD",
        help="run the client through CMD, which gives stdio there "
        "(e.g. 'docker exec -i NAME', 'kubectl exec -i POD --')",
    )
    if mapping:
        g.add_argument(
            "--map",
            metavar="LOCAL=REMOTE",
            action="append",
            help="a path seen as LOCAL here and REMOTE there (may be repeated; longest wins)",
        )
    g.add_argument(
        "--remote-lspmux",
        metavar="PATH",
        help="the lspmux command on the other side (default: lspmux)",
    )


def split(argv: Sequence[str]) -> tuple[dict[str, list[str]], list[str]]:
    """The remote options (name -> values) and the words left for the far `lspmux client`."""
    found: dict[str, list[str]] = {}
    rest: list[str] = []
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            rest += words[i:]
            break
        name, eq, value = word.partition("=")
        if name in REMOTE_OPTIONS:
            if not eq:
                if i + 1 >= len(words):
                    raise ValueError(f"{name} needs a value")
                i += 1
                value = words[i]
            found.setdefault(name, []).append(value)
        else:
            rest.append(word)
        i += 1
    return found, rest


def target_of(found: dict[str, list[str]]) -> Target:
    from lspmux.remote.target import TargetError, parse_exec, parse_ssh_url

    lspmux = (found.get("--remote-lspmux") or ["lspmux"])[-1]
    urls, execs = found.get("--remote", []), found.get("--remote-exec", [])
    if len(urls) + len(execs) != 1:
        raise TargetError("give one --remote ssh://HOST/PATH or one --remote-exec 'CMD'")
    if urls:
        return parse_ssh_url(urls[0], lspmux=lspmux, environ=os.environ)
    return parse_exec(execs[0], lspmux=lspmux)


def main(argv: Sequence[str]) -> int:
    """`lspmux client` with a remote: run the relay until the editor leaves."""
    import asyncio
    import logging

    from lspmux.remote.mapping import MapError, parse_map
    from lspmux.remote.relay import run
    from lspmux.remote.target import TargetError

    try:
        found, rest = split(argv)
        target = target_of(found)
        maps = [parse_map(spec) for spec in found.get("--map", [])]
    except (ValueError, TargetError, MapError) as exc:
        print(f"lspmux client: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=os.environ.get("LSPMUX_REMOTE_LOG", "WARNING").upper(),
        format="lspmux remote: %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    try:
        return asyncio.run(run(target, rest, maps))
    except KeyboardInterrupt:
        return 130


def remote_words(ns: argparse.Namespace) -> list[str] | None:
    """The `lspmux client` words that reach the remote the agent options name (`lspmux mcp`,
    the CLI verbs), or None when they name none."""
    words: list[str] = []
    if getattr(ns, "remote", None):
        words += ["--remote", ns.remote]
    if getattr(ns, "remote_exec", None):
        words += ["--remote-exec", ns.remote_exec]
    if not words:
        return None
    for spec in getattr(ns, "map", None) or []:
        words += ["--map", spec]
    if getattr(ns, "remote_lspmux", None):
        words += ["--remote-lspmux", ns.remote_lspmux]
    return words


def remote_status(ns: argparse.Namespace) -> int | None:
    """`lspmux status --remote …`: the far `lspmux status` (same options), its output and exit
    status as they are; None when no remote is named."""
    found = {
        name: [value]
        for name, value in (
            ("--remote", ns.remote),
            ("--remote-exec", ns.remote_exec),
            ("--remote-lspmux", ns.remote_lspmux),
        )
        if value
    }
    if "--remote" not in found and "--remote-exec" not in found:
        return None
    import subprocess  # here: a local `lspmux status` starts fast without it

    from lspmux.remote.target import TargetError

    try:
        target = target_of(found)
    except TargetError as exc:
        print(f"lspmux status: {exc}", file=sys.stderr)
        return 2
    words = [target.lspmux, "status"]
    words += ["--json"] if ns.json else []
    words += ["--verbose"] if ns.verbose else []
    words += ["--connect", ns.connect] if ns.connect else []
    code = subprocess.run(target.command(words), stdin=subprocess.DEVNULL, check=False).returncode
    if code not in (0, 1):
        print(f"lspmux status: {target.label} did not answer (code {code})", file=sys.stderr)
    return code
