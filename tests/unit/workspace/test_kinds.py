"""The kinds of files a project holds (`lspmux.workspace.kinds`): which are tool files, and
when an entry's files here are all other tools' configuration."""

from __future__ import annotations

from lspmux.workspace.kinds import is_marker, kinds_of

FILES = [
    "/p/app.py",
    "/p/lib.py",
    "/p/pyproject.toml",
    "/p/.pre-commit-config.yaml",
    "/p/Dockerfile",
    "/p/App.csproj",
    "/p/sub/pyproject.toml",
]
MARKERS = {"pyproject.toml", "*.csproj", ".git"}


def toml(path: str) -> bool:
    return path.endswith(".toml")


def test_one_sample_per_kind_and_tool_files_by_name() -> None:
    kinds = kinds_of(FILES, MARKERS)
    assert kinds.samples == {
        ".py": ("/p/app.py", 2),
        "pyproject.toml": ("/p/pyproject.toml", 2),
        ".pre-commit-config.yaml": ("/p/.pre-commit-config.yaml", 1),
        "Dockerfile": ("/p/Dockerfile", 1),
        "App.csproj": ("/p/App.csproj", 1),
    }
    assert kinds.tools == {"pyproject.toml", ".pre-commit-config.yaml", "App.csproj"}
    assert kinds.count(toml) == 2
    assert kinds.count(lambda p: p.endswith(".py")) == 2


def test_a_server_whose_only_files_configure_other_tools() -> None:
    kinds = kinds_of(FILES, MARKERS)
    assert kinds.only_tool_files(toml, own=(".taplo.toml", "taplo.toml")) == ("pyproject.toml",)
    yaml = kinds.only_tool_files(lambda p: p.endswith(".yaml"), own=(".git",))
    assert yaml == (".pre-commit-config.yaml",)
    # a source file of its own type, or one of its own markers, makes it needed
    assert kinds.only_tool_files(lambda p: p.endswith((".py", ".toml")), own=()) == ()
    assert kinds.only_tool_files(toml, own=("pyproject.toml",)) == ()
    with_own = kinds_of([*FILES, "/p/taplo.toml"], MARKERS | {"taplo.toml"})
    assert with_own.only_tool_files(toml, own=("taplo.toml",)) == ()
    assert with_own.only_tool_files(lambda p: p.endswith(".rs"), own=()) == ()  # no files


def test_markers_are_names_or_globs() -> None:
    assert is_marker("pyproject.toml", MARKERS)
    assert is_marker("Web.csproj", MARKERS)
    assert not is_marker("app.py", MARKERS)
    assert not is_marker("csproj", MARKERS)


def test_a_projects_notes_are_kinds_of_their_own() -> None:
    kinds = kinds_of([*FILES, "/p/README.md", "/p/docs/LICENSE.md", "/p/readme.rst"], MARKERS)
    assert kinds.notes == {"README.md", "LICENSE.md", "readme.rst"}
    md = kinds.only_tool_files(lambda p: p.endswith((".md", ".rst")), own=())
    assert md == ("README.md", "LICENSE.md", "readme.rst")
    written = kinds_of([*FILES, "/p/README.md", "/p/docs/guide.md"], MARKERS)
    assert written.only_tool_files(lambda p: p.endswith(".md"), own=()) == ()
