"""Roots as the servers find them (lspmux/workspace/roots.py): real directory trees per rule and
edge, and the cargo rule checked against the real `cargo locate-project --workspace`."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from lspmux.config.loader import load_config
from lspmux.workspace import manifests, roots
from lspmux.workspace.roots import go_work_uses, pnpm_packages, server_root
from tests.tools import require_tool

DATA = Path(__file__).resolve().parents[2] / "data"
RUST = ("Cargo.toml", "rust-project.json", ".git")
GO = ("go.work", "go.mod", ".git")
TS = ("tsconfig.json", "jsconfig.json", "package.json", ".git")


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    roots.clear_cache()
    yield
    roots.clear_cache()


def tree(base: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = base / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return base


def package(name: str, extra: str = "") -> str:
    return f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n{extra}'


def cargo(path: Path, folders: tuple[Path, ...] = ()) -> Path:
    return server_root(path, "cargo", RUST, folders)


# -- cargo ---------------------------------------------------------------------------------------

#: Layouts, each with the files to ask about and the root cargo gives them.
CARGO_LAYOUTS: dict[str, tuple[dict[str, str], dict[str, str]]] = {
    "virtual manifest, members by name": (
        {
            "Cargo.toml": '[workspace]\nmembers = ["a", "b"]\n',
            "a/Cargo.toml": package("a"),
            "a/src/lib.rs": "",
            "b/Cargo.toml": package("b", '[dependencies]\na = { path = "../a" }\n'),
            "b/src/lib.rs": "",
        },
        {"a/src/lib.rs": ".", "b/src/lib.rs": "."},
    ),
    "glob members and exclude": (
        {
            "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\nexclude = ["crates/skip"]\n',
            "crates/one/Cargo.toml": package("one"),
            "crates/one/src/lib.rs": "",
            "crates/two/Cargo.toml": package("two"),
            "crates/two/src/lib.rs": "mod deep;\n",
            "crates/two/src/deep/mod.rs": "",
            "crates/skip/Cargo.toml": package("skip"),
            "crates/skip/src/lib.rs": "",
        },
        {
            "crates/one/src/lib.rs": ".",
            "crates/two/src/deep/mod.rs": ".",
            "crates/skip/src/lib.rs": "crates/skip",
        },
    ),
    "a root package that is its own workspace": (
        {
            "Cargo.toml": package("app", '[workspace]\nmembers = ["plugins/*"]\n'),
            "src/main.rs": "fn main() {}\n",
            "plugins/p/Cargo.toml": package("p"),
            "plugins/p/src/lib.rs": "",
        },
        {"src/main.rs": ".", "plugins/p/src/lib.rs": "."},
    ),
    "a path dependency inside the workspace is a member": (
        {
            "Cargo.toml": '[workspace]\nmembers = ["cli"]\n',
            "cli/Cargo.toml": package("cli", '[dependencies]\ncore = { path = "../core" }\n'),
            "cli/src/main.rs": "fn main() {}\n",
            "core/Cargo.toml": package("core"),
            "core/src/lib.rs": "",
        },
        {"cli/src/main.rs": ".", "core/src/lib.rs": "."},
    ),
    "a nested workspace excluded by the outer one": (
        {
            "Cargo.toml": '[workspace]\nmembers = ["app"]\nexclude = ["inner"]\n',
            "app/Cargo.toml": package("app"),
            "app/src/lib.rs": "",
            "inner/Cargo.toml": '[workspace]\nmembers = ["lib"]\n',
            "inner/lib/Cargo.toml": package("lib"),
            "inner/lib/src/lib.rs": "",
        },
        {"app/src/lib.rs": ".", "inner/lib/src/lib.rs": "inner"},
    ),
    "package.workspace names a workspace that is not an ancestor": (
        {
            "ws/Cargo.toml": '[workspace]\nmembers = ["../p"]\n',
            "p/Cargo.toml": package("p", 'workspace = "../ws"\n'),
            "p/src/lib.rs": "",
        },
        {"p/src/lib.rs": "ws"},
    ),
}


@pytest.mark.parametrize("layout", list(CARGO_LAYOUTS))
def test_cargo_rule(tmp_path: Path, layout: str) -> None:
    files, expected = CARGO_LAYOUTS[layout]
    tree(tmp_path, files)
    for name, root in expected.items():
        assert cargo(tmp_path / name) == tmp_path / root, name


def locate_workspace(cargo_exe: str, folder: Path) -> Path:
    """The workspace manifest `cargo locate-project --workspace` names from `folder`."""
    done = subprocess.run(
        [cargo_exe, "locate-project", "--workspace", "--message-format", "plain"],
        cwd=folder,
        env={**os.environ, "CARGO_NET_OFFLINE": "true"},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"cargo locate-project in {folder}: {done.stderr}"
    return Path(done.stdout.strip())


@pytest.mark.parametrize("layout", list(CARGO_LAYOUTS))
def test_cargo_rule_agrees_with_cargo(tmp_path: Path, layout: str) -> None:
    exe = require_tool("cargo")
    files, expected = CARGO_LAYOUTS[layout]
    tree(tmp_path, files)
    for name in expected:
        file = tmp_path / name
        assert cargo(file) == locate_workspace(exe, file.parent).parent, name


def test_the_shipped_workspace_agrees_with_cargo(tmp_path: Path) -> None:
    """tests/data/cargo_workspace, which the end-to-end test opens: one root for both members,
    and cargo reads it offline with its lock file."""
    exe = require_tool("cargo")
    ws = tmp_path / "ws"
    shutil.copytree(DATA / "cargo_workspace", ws)
    for member in ("a", "b"):
        assert locate_workspace(exe, ws / member / "src") == ws / "Cargo.toml"
        assert cargo(ws / member / "src" / "lib.rs") == ws
    subprocess.run(
        [exe, "metadata", "--offline", "--format-version", "1", "--locked"],
        cwd=ws,
        capture_output=True,
        check=True,
    )


def test_cargo_non_member_is_its_own_root(tmp_path: Path) -> None:
    """cargo refuses a package under a workspace that does not list it; lspmux keeps it alone."""
    tree(
        tmp_path,
        {
            "Cargo.toml": '[workspace]\nmembers = ["a"]\n',
            "a/Cargo.toml": package("a"),
            "stray/Cargo.toml": package("stray"),
        },
    )
    assert cargo(tmp_path / "stray" / "src" / "lib.rs") == tmp_path / "stray"
    assert cargo(tmp_path / "a" / "src" / "lib.rs") == tmp_path


REGISTRY_CRATE = "home/.cargo/registry/src/index/dep-1.0.0"
REGISTRY_LAYOUT = {
    "Cargo.toml": '[workspace]\nmembers = ["home/.cargo/registry/src/*/*"]\n',
    f"{REGISTRY_CRATE}/Cargo.toml": package("dep"),
    f"{REGISTRY_CRATE}/src/lib.rs": "",
}


def test_cargo_does_not_look_above_cargo_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dependency's source under CARGO_HOME (go to definition into a crate) is its own root,
    whatever workspace lies above the home folder."""
    tree(tmp_path, REGISTRY_LAYOUT)
    file = tmp_path / REGISTRY_CRATE / "src" / "lib.rs"
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "home" / ".cargo"))
    assert cargo(file) == tmp_path / REGISTRY_CRATE
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "elsewhere"))
    roots.clear_cache()
    assert cargo(file) == tmp_path


def test_cargo_stops_at_cargo_home_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = require_tool("cargo")
    tree(tmp_path, REGISTRY_LAYOUT)
    folder = tmp_path / REGISTRY_CRATE / "src"
    monkeypatch.setenv("CARGO_HOME", str(tmp_path / "home" / ".cargo"))
    assert locate_workspace(exe, folder) == tmp_path / REGISTRY_CRATE / "Cargo.toml"


def test_cargo_member_opened_as_the_editor_folder_maps_to_the_workspace(tmp_path: Path) -> None:
    tree(tmp_path, CARGO_LAYOUTS["virtual manifest, members by name"][0])
    for member in ("a", "b"):
        assert cargo(tmp_path / member / "src" / "lib.rs", (tmp_path / member,)) == tmp_path


def test_cargo_virtual_manifest_file_outside_members(tmp_path: Path) -> None:
    tree(tmp_path, {"Cargo.toml": '[workspace]\nmembers = ["a"]\n', "a/Cargo.toml": package("a")})
    assert cargo(tmp_path / "scripts" / "gen.rs") == tmp_path


@pytest.mark.parametrize("where", ["package", "ancestor"])
def test_cargo_bad_toml_falls_back_to_the_package(tmp_path: Path, where: str) -> None:
    files = {"Cargo.toml": '[workspace]\nmembers = ["a"]\n', "a/Cargo.toml": package("a")}
    files["a/Cargo.toml" if where == "package" else "Cargo.toml"] = "[package\nname = "
    tree(tmp_path, files)
    assert cargo(tmp_path / "a" / "src" / "lib.rs") == tmp_path / "a"


def test_cargo_rust_project_json_without_cargo_toml(tmp_path: Path) -> None:
    tree(tmp_path, {"proj/rust-project.json": "{}", "proj/src/main.rs": ""})
    assert cargo(tmp_path / "proj" / "src" / "main.rs") == tmp_path / "proj"


def test_cargo_without_manifests_uses_the_markers_then_the_folder(tmp_path: Path) -> None:
    (tmp_path / "one" / "x").mkdir(parents=True)
    assert cargo(tmp_path / "one" / "x" / "a.rs", (tmp_path,)) == tmp_path
    (tmp_path / "one" / ".git").mkdir()
    assert cargo(tmp_path / "one" / "x" / "a.rs", (tmp_path,)) == tmp_path / "one"


# -- go.work -------------------------------------------------------------------------------------


def test_go_work_use_forms() -> None:
    text = """go 1.22

use ./a // the first
use (
    ./b
    "./c"   // quoted
    // ./commented
)
toolchain go1.22.0
"""
    assert go_work_uses(text) == ["./a", "./b", "./c"]
    assert go_work_uses("use .\n") == ["."]
    assert go_work_uses("user ./x\n") == []


@pytest.mark.parametrize(
    ("work", "expected"),
    [
        ("go 1.22\nuse ./a\n", {"a": ".", "b": "b"}),
        ("go 1.22\nuse (\n\t./a\n\t./b\n)\n", {"a": ".", "b": "."}),
        ("go 1.22\n", {"a": "a", "b": "b"}),
    ],
    ids=["single", "block", "no use"],
)
def test_go_work_rule(tmp_path: Path, work: str, expected: dict[str, str]) -> None:
    tree(
        tmp_path,
        {
            "go.work": work,
            "a/go.mod": "module example.com/a\n",
            "b/go.mod": "module example.com/b\n",
        },
    )
    for module, root in expected.items():
        file = tmp_path / module / "pkg" / "x.go"
        assert server_root(file, "go.work", GO) == tmp_path / root, module


def test_go_module_without_go_work(tmp_path: Path) -> None:
    tree(tmp_path, {"m/go.mod": "module m\n"})
    assert server_root(tmp_path / "m" / "cmd" / "main.go", "go.work", GO) == tmp_path / "m"


# -- JavaScript / TypeScript workspaces ----------------------------------------------------------


def test_pnpm_packages_forms() -> None:
    block = (
        "packages:\n  - 'packages/*'\n  - \"apps/**\"  # apps\n  - '!**/test/**'\ncatalog:\n  - x\n"
    )
    assert pnpm_packages(block) == ["packages/*", "apps/**", "!**/test/**"]
    assert pnpm_packages("packages: ['a/*', \"b\"]\n") == ["a/*", "b"]
    assert pnpm_packages("onlyBuiltDependencies:\n  - esbuild\n") == []


@pytest.mark.parametrize(
    "manifest",
    [
        {"package.json": '{"name": "mono", "workspaces": ["packages/*"]}'},
        {"package.json": '{"name": "mono", "workspaces": {"packages": ["packages/*"]}}'},
        {"package.json": '{"name": "mono"}', "pnpm-workspace.yaml": "packages:\n  - packages/*\n"},
    ],
    ids=["npm", "yarn", "pnpm"],
)
def test_js_workspace_rule(tmp_path: Path, manifest: dict[str, str]) -> None:
    tree(
        tmp_path,
        {
            **manifest,
            "packages/ui/package.json": '{"name": "ui"}',
            "packages/ui/tsconfig.json": "{}",
            "packages/api/package.json": '{"name": "api"}',
            "tools/x/package.json": '{"name": "x"}',
        },
    )
    for name in ("ui", "api"):
        file = tmp_path / "packages" / name / "src" / "index.ts"
        assert server_root(file, "js-workspace", TS) == tmp_path
        assert server_root(file, "js-workspace", TS, (tmp_path / "packages" / name,)) == tmp_path
    assert server_root(tmp_path / "scripts" / "build.ts", "js-workspace", TS) == tmp_path
    # not a workspace package: the markers decide (tools/x has its own package.json)
    assert (
        server_root(tmp_path / "tools" / "x" / "a.ts", "js-workspace", TS) == tmp_path / "tools/x"
    )


def test_js_workspace_negated_pattern(tmp_path: Path) -> None:
    tree(
        tmp_path,
        {
            "package.json": "{}",
            "pnpm-workspace.yaml": "packages:\n  - 'packages/**'\n  - '!packages/legacy/**'\n",
            "packages/new/package.json": "{}",
            "packages/legacy/old/package.json": "{}",
        },
    )
    assert server_root(tmp_path / "packages/new/a.ts", "js-workspace", TS) == tmp_path
    legacy = tmp_path / "packages/legacy/old"
    assert server_root(legacy / "a.ts", "js-workspace", TS) == legacy


def test_js_without_workspaces_uses_the_nearest_tsconfig_or_package(tmp_path: Path) -> None:
    tree(
        tmp_path, {"app/package.json": "{}", "app/web/tsconfig.json": "{}", "bad/package.json": "{"}
    )
    assert server_root(tmp_path / "app/web/a.ts", "js-workspace", TS) == tmp_path / "app/web"
    assert server_root(tmp_path / "app/b.ts", "js-workspace", TS) == tmp_path / "app"
    assert server_root(tmp_path / "bad/c.ts", "js-workspace", TS) == tmp_path / "bad"


# -- the client's workspace folders --------------------------------------------------------------


def test_no_markers_with_a_workspace_folder_gives_one_root(tmp_path: Path) -> None:
    clangd = ("compile_commands.json", "compile_flags.txt", ".clangd", ".git")
    for folder in ("lib", "src/deep"):
        (tmp_path / folder).mkdir(parents=True)
    found = {
        server_root(tmp_path / f / "x.c", None, clangd, (tmp_path,)) for f in ("lib", "src/deep")
    }
    assert found == {tmp_path}


def test_no_markers_and_no_workspace_folder_gives_the_file_s_folder(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    assert server_root(tmp_path / "lib" / "x.c", None, (".clangd",)) == tmp_path / "lib"


def test_a_marker_inside_the_folder_wins_and_one_above_it_does_not(tmp_path: Path) -> None:
    tree(tmp_path, {"pyproject.toml": "", "ws/pkg/pyproject.toml": "", "ws/other/a.py": ""})
    ws = tmp_path / "ws"
    markers = ("pyproject.toml", ".git")
    assert server_root(ws / "pkg" / "m.py", None, markers, (ws,)) == ws / "pkg"
    assert server_root(ws / "other" / "a.py", None, markers, (ws,)) == ws
    assert server_root(ws / "other" / "a.py", None, markers) == tmp_path  # no folder: as before


def test_the_innermost_workspace_folder_holding_the_file(tmp_path: Path) -> None:
    (tmp_path / "outer" / "inner" / "src").mkdir(parents=True)
    folders = (tmp_path / "outer", tmp_path / "outer" / "inner", tmp_path / "elsewhere")
    file = tmp_path / "outer" / "inner" / "src" / "x.c"
    assert server_root(file, None, (".clangd",), folders) == tmp_path / "outer" / "inner"


def test_a_folder_path_starts_in_the_folder(tmp_path: Path) -> None:
    tree(tmp_path, {"m/go.mod": "module m\n"})
    assert server_root(tmp_path / "m", "go.work", GO) == tmp_path / "m"


# -- the cache -----------------------------------------------------------------------------------


def test_repeated_calls_parse_nothing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree(tmp_path, CARGO_LAYOUTS["virtual manifest, members by name"][0])
    parsed: list[int] = []
    parse = manifests._PARSERS["toml"]
    monkeypatch.setitem(manifests._PARSERS, "toml", lambda data: parsed.append(1) or parse(data))
    file = tmp_path / "a" / "src" / "lib.rs"
    assert cargo(file) == tmp_path
    first = len(parsed)
    assert first > 0
    for _ in range(5):
        assert cargo(file) == tmp_path
    assert len(parsed) == first


def test_a_changed_manifest_or_folder_is_seen(tmp_path: Path) -> None:
    tree(tmp_path, {"a/Cargo.toml": package("a"), "a/src/lib.rs": ""})
    file = tmp_path / "a" / "src" / "lib.rs"
    assert cargo(file) == tmp_path / "a"

    def touch_later(path: Path) -> None:  # a clock tick coarser than the test must not hide it
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))

    (tmp_path / "Cargo.toml").write_text('[workspace]\nmembers = ["b"]\n')
    touch_later(tmp_path)
    assert cargo(file) == tmp_path / "a"  # a workspace now, but not a member of it
    (tmp_path / "Cargo.toml").write_text('[workspace]\nmembers = ["a"]\n')
    touch_later(tmp_path / "Cargo.toml")
    assert cargo(file) == tmp_path


# -- the defaults table --------------------------------------------------------------------------


def test_the_shipped_rules() -> None:
    servers = load_config(user_config=None).servers
    assert servers["rust-analyzer"].root_rule == "cargo"
    assert servers["gopls"].root_rule == "go.work"
    for name in ("typescript-language-server", "biome", "eslint"):
        assert servers[name].root_rule == "js-workspace", name
    assert servers["clangd"].root_rule is None
