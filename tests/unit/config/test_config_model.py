"""The pure questions asked of the model: file matching, roots, executables, feature gating."""

from __future__ import annotations

from pathlib import Path

import pytest

from lspmux.config.model import (
    Config,
    LinterConfig,
    ServerConfig,
    find_root,
    matches_file,
    resolve_command,
)
from lspmux.routing.table import FEATURES

# -- matches_file ----------------------------------------------------------------------------

TYPES = (".py", ".d.ts", "Dockerfile", "go.mod")


@pytest.mark.parametrize(
    ("path", "language_id", "expected"),
    [
        ("/ws/pkg/mod.py", None, True),
        ("mod.py", None, True),
        ("/ws/mod.pyi", None, False),  # an extension matches the end, not a prefix
        ("/ws/mod.py.bak", None, False),
        ("/ws/.py", None, False),  # a file literally named ".py" has no extension
        ("/ws/types.d.ts", None, True),  # multi-part extensions work
        ("/ws/Dockerfile", None, True),  # a basename matches exactly...
        ("/ws/app/Dockerfile", None, True),
        ("/ws/Dockerfile.dev", None, False),  # ...and only exactly
        ("/ws/my.Dockerfile", None, False),
        ("/ws/dockerfile", None, False),  # case matters
        ("/ws/Dockerfile/notes.txt", None, False),  # a folder of that name does not count
        ("/ws/go.mod", None, True),
        ("/ws/x.go.mod", None, False),
        ("/ws/untitled", "python", True),  # the language id alone is enough
        ("/ws/untitled", "rust", False),
        ("/ws/mod.py", "plaintext", True),  # a name match is enough whatever the id
    ],
)
def test_matches_file(path: str, language_id: str | None, expected: bool) -> None:
    assert matches_file(TYPES, ("python",), path, language_id) is expected


def test_servers_for_keeps_configuration_order_and_skips_disabled() -> None:
    servers = {
        name: ServerConfig(name=name, command=(name,), file_types=(".py",), disabled=off)
        for name, off in [("b", False), ("a", False), ("off", True), ("c", False)]
    }
    servers["other"] = ServerConfig(name="other", command=("o",), file_types=(".rs",))
    config = Config(servers=servers)
    assert [s.name for s in config.servers_for("/x/y.py")] == ["b", "a", "c"]


def test_linters_for() -> None:
    linters = {
        "sc": LinterConfig(name="sc", command=("sc", "-"), file_types=(".sh",)),
        "off": LinterConfig(name="off", command=("o",), file_types=(".sh",), disabled=True),
    }
    config = Config(linters=linters)
    assert [lt.name for lt in config.linters_for("/x/run.sh")] == ["sc"]
    assert config.linters_for("/x/run.py") == []


# -- find_root -------------------------------------------------------------------------------


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    return path


def test_find_root_nearest_marker_wins(tmp_path: Path) -> None:
    touch(tmp_path / "Cargo.toml")
    (tmp_path / ".git").mkdir()
    member = touch(tmp_path / "crates" / "core" / "Cargo.toml").parent
    source = touch(member / "src" / "lib.rs")
    assert find_root(("Cargo.toml", ".git"), source) == member
    assert find_root((".git",), source) == tmp_path


def test_find_root_falls_back_to_the_file_s_folder(tmp_path: Path) -> None:
    source = touch(tmp_path / "a" / "b" / "x.zz")
    assert find_root(("no-such-marker-anywhere.zz",), source) == tmp_path / "a" / "b"


def test_find_root_of_a_folder_starts_in_it(tmp_path: Path) -> None:
    touch(tmp_path / "proj" / "go.mod")
    assert find_root(("go.mod",), tmp_path / "proj") == tmp_path / "proj"


def test_find_root_of_a_file_not_yet_on_disk(tmp_path: Path) -> None:
    touch(tmp_path / "go.mod")
    assert find_root(("go.mod",), tmp_path / "new" / "main.go") == tmp_path


def test_find_root_glob_markers(tmp_path: Path) -> None:
    touch(tmp_path / "App" / "App.csproj")
    source = touch(tmp_path / "App" / "Models" / "User.cs")
    assert find_root(("*.csproj",), source) == tmp_path / "App"
    assert find_root(("*.sln",), source) == source.parent  # no match anywhere up: fallback


def test_server_find_root_uses_its_markers(tmp_path: Path) -> None:
    touch(tmp_path / "pyproject.toml")
    source = touch(tmp_path / "src" / "pkg" / "mod.py")
    server = ServerConfig(name="p", command=("p",), root_markers=("pyproject.toml",))
    assert server.find_root(source) == tmp_path


# -- resolve_command -------------------------------------------------------------------------


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "path-bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir


def test_resolve_on_path(empty_path: Path) -> None:
    exe = executable(empty_path / "my-ls")
    assert resolve_command(("my-ls", "--stdio")) == [str(exe), "--stdio"]


def test_resolve_in_node_modules_under_root(tmp_path: Path, empty_path: Path) -> None:
    root = tmp_path / "ws"
    local = executable(root / "node_modules" / ".bin" / "biome")
    assert resolve_command(("biome", "lsp-proxy")) is None  # not on PATH, no root given
    trusted = {"project_bins": True}
    assert resolve_command(("biome", "lsp-proxy"), root, **trusted) == [str(local), "lsp-proxy"]
    assert resolve_command(("biome", "lsp-proxy"), root, project_bins=False) is None


def test_resolve_in_a_project_venv(tmp_path: Path, empty_path: Path) -> None:
    local = executable(tmp_path / "ws" / ".venv" / "bin" / "ruff")
    ws = tmp_path / "ws"
    assert resolve_command(("ruff", "server"), ws, project_bins=True) == [str(local), "server"]


def test_path_wins_over_the_project(tmp_path: Path, empty_path: Path) -> None:
    on_path = executable(empty_path / "tool")
    executable(tmp_path / "ws" / "node_modules" / ".bin" / "tool")
    assert resolve_command(("tool",), tmp_path / "ws") == [str(on_path)]


def test_not_found_and_not_executable(tmp_path: Path, empty_path: Path) -> None:
    assert resolve_command(("nowhere-to-be-found",), tmp_path) is None
    plain = tmp_path / "ws" / "node_modules" / ".bin" / "plain"
    plain.parent.mkdir(parents=True)
    plain.write_text("")
    assert resolve_command(("plain",), tmp_path / "ws", project_bins=True) is None
    assert resolve_command(()) is None


def test_explicit_path(tmp_path: Path, empty_path: Path) -> None:
    exe = executable(tmp_path / "opt" / "ls-bin")
    assert resolve_command((str(exe), "-v")) == [str(exe), "-v"]
    assert resolve_command((str(tmp_path / "opt" / "missing"),)) is None


# -- feature_enabled -------------------------------------------------------------------------


def server(**kwargs: object) -> ServerConfig:
    return ServerConfig(name="s", command=("s",), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "feature", "expected"),
    [
        ({}, "hover", True),
        ({}, "completion", True),
        ({"only_features": ("hover",)}, "hover", True),
        ({"only_features": ("hover",)}, "completion", False),
        ({"except_features": ("formatting",)}, "formatting", False),
        ({"except_features": ("formatting",)}, "hover", True),
        ({"only_features": ("hover", "rename"), "except_features": ("rename",)}, "rename", False),
        ({"role": "linter"}, "diagnostics", True),
        ({"role": "linter"}, "codeAction", True),
        ({"role": "linter"}, "hover", False),
        ({"role": "linter"}, "formatting", False),
        ({"role": "linter", "only_features": ("formatting",)}, "formatting", True),
        ({"role": "linter", "only_features": ("formatting",)}, "diagnostics", False),
        ({"role": "linter", "except_features": ("codeAction",)}, "codeAction", False),
        # Document sync is never switched off, whatever the lists say.
        ({"only_features": ("hover",)}, "sync", True),
        ({"role": "linter"}, "sync", True),
    ],
)
def test_feature_enabled(kwargs: dict[str, object], feature: str, expected: bool) -> None:
    assert server(**kwargs).feature_enabled(feature) is expected


def test_every_feature_is_on_for_a_plain_server() -> None:
    assert all(server().feature_enabled(f) for f in FEATURES)


def test_config_records_have_no_instance_dict() -> None:
    """Every record is slotted, the shared base included: a server or linter table carries no
    `__dict__` per entry (and an attribute set by mistake fails instead of sticking)."""
    for record in (
        ServerConfig(name="s", command=("s",)),
        LinterConfig(name="l", command=("l",)),
        Config(),
    ):
        assert not hasattr(record, "__dict__"), type(record).__name__
