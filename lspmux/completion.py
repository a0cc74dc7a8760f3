"""`lspmux completion bash|zsh|fish`: shell completion, generated from the argument parser.

Completes the commands (kebab-case, as `--help` lists them), each command's options, and the
words a command takes (`setup`'s editors, `completion`'s shells, `install`'s servers). Install
with `eval "$(lspmux completion bash)"` in ~/.bashrc (zsh: ~/.zshrc, after compinit), or
`lspmux completion fish > ~/.config/fish/completions/lspmux.fish`.
"""

from __future__ import annotations

import argparse
import shlex

SHELLS = ("bash", "zsh", "fish")


def add_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "completion",
        help="print a shell completion script (bash, zsh, fish)",
        description='Print the completion script of SHELL. bash: `eval "$(lspmux completion '
        'bash)"` in ~/.bashrc; zsh: `eval "$(lspmux completion zsh)"` in ~/.zshrc after '
        "compinit; fish: `lspmux completion fish > ~/.config/fish/completions/lspmux.fish`.",
    )
    p.add_argument("shell", choices=SHELLS, metavar="SHELL", help=", ".join(SHELLS))


def commands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, list[str], list[str]]]:
    """Command → (its help, its options, the words its arguments take)."""
    found: dict[str, tuple[str, list[str], list[str]]] = {}
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {a.dest: a.help or "" for a in action._choices_actions}
        for name, sub in action.choices.items():
            options = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]
            words = [
                str(c) for a in sub._actions if not a.option_strings for c in (a.choices or ())
            ]
            if name == "install":
                words = _installable()
            found[name] = (helps.get(name, ""), options, words)
    return found


def _installable() -> list[str]:
    try:
        from lspmux.config.loader import load_config

        config = load_config(user_config=None)
    except Exception:  # a completion script is still useful without the names
        return []
    names = {n for n, s in config.servers.items() if s.package}
    return sorted(names | {n for n, s in config.linters.items() if s.package})


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    table = commands(parser)
    if shell == "bash":
        return _bash(table)
    if shell == "zsh":
        return _zsh(table)
    return _fish(table)


def _bash(table: dict[str, tuple[str, list[str], list[str]]]) -> str:
    cases = "\n".join(
        f"    {name}) opts={shlex.quote(' '.join(opts))} words={shlex.quote(' '.join(words))} ;;"
        for name, (_, opts, words) in table.items()
    )
    return f"""\
# lspmux completion (bash): eval "$(lspmux completion bash)"
_lspmux() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} opts="" words=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W {shlex.quote(" ".join(table))} -- "$cur"))
    return
  fi
  case ${{COMP_WORDS[1]}} in
{cases}
  esac
  case $cur in
    -*) COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
    *) COMPREPLY=($(compgen -W "$words" -- "$cur")) ;;
  esac
  [ ${{#COMPREPLY[@]}} -eq 0 ] && COMPREPLY=($(compgen -f -- "$cur"))
  return 0
}}
complete -o default -F _lspmux lspmux
"""


def _zsh(table: dict[str, tuple[str, list[str], list[str]]]) -> str:
    described = " ".join(
        shlex.quote(f"{name}:{help_.replace(':', ' ')}") for name, (help_, _, _) in table.items()
    )
    cases = "\n".join(
        f"    {name}) compadd -- {' '.join(shlex.quote(w) for w in opts + words)} ;;"
        for name, (_, opts, words) in table.items()
        if opts or words
    )
    return f"""\
#compdef lspmux
# lspmux completion (zsh): eval "$(lspmux completion zsh)" after compinit
_lspmux() {{
  local -a cmds
  cmds=({described})
  if (( CURRENT == 2 )); then
    _describe command cmds
    return
  fi
  case $words[2] in
{cases}
  esac
  _files
}}
compdef _lspmux lspmux
"""


def _fish(table: dict[str, tuple[str, list[str], list[str]]]) -> str:
    lines = ["# lspmux completion (fish): lspmux completion fish | source"]
    for name, (help_, opts, words) in table.items():
        lines.append(
            f"complete -c lspmux -n __fish_use_subcommand -f -a {shlex.quote(name)}"
            f" -d {shlex.quote(help_[:80])}"
        )
        seen = f"-n '__fish_seen_subcommand_from {name}'"
        lines += [f"complete -c lspmux {seen} -l {o.removeprefix('--')}" for o in opts]
        if words:
            lines.append(f"complete -c lspmux {seen} -f -a {shlex.quote(' '.join(words))}")
    return "\n".join(lines) + "\n"
