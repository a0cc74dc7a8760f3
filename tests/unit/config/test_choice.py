"""The default choice of one server per role and family (`lspmux.config.choice`): the pure
function by table and by property, then through the loader (the shipped table, what a file
turns on by name) and `lspmux config`'s text."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lspmux.config.choice import Choice, choose
from lspmux.config.loader import format_config, load_config
from lspmux.config.model import Config, ServerConfig
from lspmux.config.trust import TrustDB


def server(name: str, family: str | None = "python", **kw: object) -> ServerConfig:
    return ServerConfig(name=name, command=(name,), family=family, **kw)  # type: ignore[arg-type]


def left_out(
    servers: list[ServerConfig], installed: set[str], turned_on: set[str] = frozenset()
) -> dict[str, str]:
    """name → the server chosen instead."""
    return {
        n: c.chosen for n, c in choose(servers, lambda s: s.name in installed, turned_on).items()
    }


PY = [server("basedpyright"), server("pyright"), server("pylsp")]

CASES = [
    # (id, servers, installed, turned on, left out: name → chosen)
    ("both installed: the first wins", PY, {"basedpyright", "pyright"}, set(), {
        "pyright": "basedpyright", "pylsp": "basedpyright"}),
    ("only the second installed: it runs", PY, {"pyright"}, set(), {
        "basedpyright": "pyright", "pylsp": "pyright"}),
    ("none installed: nothing left out", PY, set(), set(), {}),
    ("turned on by name: runs beside", PY, {"basedpyright", "pyright"}, {"pyright"}, {
        "pylsp": "basedpyright"}),
    ("turned on and the only one installed: it is chosen", PY, {"pyright"}, {"pyright"}, {
        "basedpyright": "pyright", "pylsp": "pyright"}),
    ("the winner turned on by name still takes the role", PY, {"basedpyright", "pyright"},
     {"basedpyright"}, {"pyright": "basedpyright", "pylsp": "basedpyright"}),
    ("turned on and not installed: kept (doctor says it is missing)", PY, {"pyright"},
     {"basedpyright"}, {"pylsp": "pyright"}),
    ("disabled ones are no candidates", [server("a", disabled=True), server("b"), server("c")],
     {"a", "b", "c"}, set(), {"c": "b"}),
    ("no family: never left out", [server("a", None), server("b", None)], {"a", "b"}, set(), {}),
    ("families apart", [server("a"), server("t", "js"), server("b"), server("u", "js")],
     {"a", "b", "t", "u"}, set(), {"b": "a", "u": "t"}),
    ("roles apart: a linter beside the server", [server("bp"), server("ruff", role="linter")],
     {"bp", "ruff"}, set(), {}),
    ("one of a kind: alone", [server("a")], {"a"}, set(), {}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("servers", "installed", "turned_on", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_choice(
    servers: list[ServerConfig], installed: set[str], turned_on: set[str], expected: dict[str, str]
) -> None:
    assert left_out(servers, installed, turned_on) == expected


def test_the_reason_says_who_and_how_to_run_both() -> None:
    choice = Choice("pyright", "basedpyright", "python", "server")
    assert choice.reason == (
        "not used: basedpyright (installed) takes the python server role; "
        "set servers.pyright.disabled = false to run both"
    )


def test_installed_is_asked_no_further_than_the_winner() -> None:
    asked: list[str] = []

    def installed(s: ServerConfig) -> bool:
        asked.append(s.name)
        return s.name == "pyright"

    choose(PY, installed)
    assert asked == ["basedpyright", "pyright"]


_entries = st.lists(
    st.tuples(
        st.sampled_from([None, "python", "js"]),
        st.sampled_from(["server", "linter"]),
        st.booleans(),  # disabled
        st.booleans(),  # installed
        st.booleans(),  # turned on by name
    ),
    max_size=8,
)


@given(entries=_entries)
def test_one_runs_per_role_and_family_and_only_for_an_installed_one(
    entries: list[tuple[str | None, str, bool, bool, bool]],
) -> None:
    servers = [
        server(f"s{i}", family, role=role, disabled=disabled)
        for i, (family, role, disabled, _, _) in enumerate(entries)
    ]
    installed = {f"s{i}" for i, e in enumerate(entries) if e[3]}
    turned_on = {f"s{i}" for i, e in enumerate(entries) if e[4]}
    out = choose(servers, lambda s: s.name in installed, turned_on)
    order = [s.name for s in servers]
    by_name = {s.name: s for s in servers}
    for name, choice in out.items():
        s, winner = by_name[name], by_name[choice.chosen]
        # only an enabled server of a family, not turned on by name, is left out ...
        assert s.family is not None and not s.disabled and name not in turned_on
        # ... for an installed one of the same role and family that is not left out itself,
        assert choice.chosen in installed and choice.chosen not in out
        assert (winner.role, winner.family) == (s.role, s.family) == (choice.role, choice.family)
        # ... the first installed one in configuration order.
        rivals = [
            n
            for n in order
            if n in installed
            and not by_name[n].disabled
            and (by_name[n].role, by_name[n].family) == (s.role, s.family)
        ]
        assert rivals[0] == choice.chosen
    # Of each (role, family), at most one runs that was not turned on by name.
    running: dict[tuple[str, str | None], list[str]] = {}
    for s in servers:
        if s.family and not s.disabled and s.name not in out and s.name not in turned_on:
            running.setdefault((s.role, s.family), []).append(s.name)
    for group in running.values():
        assert len(group) == 1 or not set(group) & installed


# -- through the loader ----------------------------------------------------------------------


def shipped(project: Path | None = None, installed: set[str] = frozenset(), **kw: object) -> Config:
    return load_config(
        project,
        user_config=None,
        installed=lambda s: s.name in installed,
        trust_db=TrustDB(),
        **kw,  # type: ignore[arg-type]
    )


def python_servers(config: Config) -> list[str]:
    return [s.name for s in config.servers_for("/ws/app.py")]


@pytest.mark.parametrize(
    ("installed", "expected"),
    [
        ({"basedpyright", "pyright"}, ["basedpyright", "ruff"]),
        ({"pyright"}, ["pyright", "ruff"]),
        ({"basedpyright", "pyright", "pylsp", "ty"}, ["basedpyright", "ruff"]),
        # none found: nothing left out (doctor names basedpyright as the one to install)
        (set(), ["basedpyright", "pyright", "ruff"]),
    ],
)
def test_the_shipped_table_runs_one_python_server(installed: set[str], expected: list[str]) -> None:
    assert python_servers(shipped(installed=installed)) == expected


def test_biome_stays_beside_typescript_language_server() -> None:
    config = shipped(installed={"typescript-language-server", "biome", "eslint", "deno"})
    assert [s.name for s in config.servers_for("/ws/app.ts")] == [
        "typescript-language-server",
        "biome",
    ]


def test_a_file_that_turns_a_server_on_by_name_runs_it_beside(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text("[servers.pyright]\ndisabled = false\n")
    config = load_config(
        None, user_config=user, installed=lambda s: s.name in {"basedpyright", "pyright"}
    )
    assert python_servers(config) == ["basedpyright", "pyright", "ruff"]
    assert config.not_chosen == {}


def test_an_opt_in_server_turned_on_runs_beside_the_chosen_one(tmp_path: Path) -> None:
    user = tmp_path / "config.toml"
    user.write_text("[servers.ty]\ndisabled = false\n")
    config = load_config(None, user_config=user, installed=lambda s: True)
    assert python_servers(config) == ["basedpyright", "ty", "ruff"]
    assert config.not_chosen["pyright"].chosen == "basedpyright"


def test_a_file_that_turns_the_winner_off_makes_the_next_one_run(tmp_path: Path) -> None:
    extra = tmp_path / "extra.toml"
    extra.write_text("[servers.basedpyright]\ndisabled = true\n")
    config = shipped(installed={"basedpyright", "pyright"}, extra_files=[extra])
    assert python_servers(config) == ["pyright", "ruff"]


def test_a_server_of_your_own_joins_a_family_after_the_shipped_ones(tmp_path: Path) -> None:
    extra = tmp_path / "extra.toml"
    extra.write_text(
        '[servers.mine]\ncommand = ["mine"]\nfile_types = [".py"]\nfamily = "python"\n'
    )
    assert python_servers(shipped(installed={"mine", "pyright"}, extra_files=[extra])) == [
        "pyright",
        "ruff",
    ]
    assert python_servers(shipped(installed={"mine"}, extra_files=[extra])) == ["ruff", "mine"]


def test_what_is_installed_is_looked_up_as_a_start_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default the loader looks each server up (lspmux's prefix, PATH): here only
    pyright-langserver is on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "pyright-langserver"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # an empty prefix
    config = load_config(None, user_config=None)
    assert python_servers(config) == ["pyright", "ruff"]
    assert config.not_chosen["basedpyright"].chosen == "pyright"


def test_lspmux_config_says_which_was_chosen_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", os.defpath)
    config = shipped(installed={"basedpyright", "pyright"})
    text = format_config(config)
    lines = text.splitlines()
    head = next(line for line in lines if line.startswith("[servers.basedpyright]"))
    assert head.endswith("; chosen for the python server role over pyright")
    head = next(line for line in lines if line.startswith("[servers.pyright]"))
    assert head.startswith(
        "[servers.pyright]  # not used: basedpyright (installed) takes the python server role; "
        "set servers.pyright.disabled = false to run both ("
    )
    assert "disabled = true  # the default choice: basedpyright" in text
    as_json = format_config(config, as_json=True)
    assert '"not_used": "not used: basedpyright (installed)' in as_json
