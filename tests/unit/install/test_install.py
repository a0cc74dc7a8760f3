"""`lspmux install`'s recipes: parsed, pinned, checked in config files, and not changed by an
untrusted project. The real installs (a process each, ruff from PyPI) are in
tests/e2e/test_install.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from lspmux.config.loader import ConfigError, load_config
from lspmux.install.prefix import Package, install_hint, parse_recipe


def test_recipes_parse_and_name_the_install_command() -> None:
    assert parse_recipe("pypi:ruff==0.17.6") == Package("pypi", "ruff", "0.17.6")
    biome = parse_recipe("npm:@biomejs/biome@2.6.8")
    assert biome == Package("npm", "@biomejs/biome", "2.6.8")
    assert biome.spec == "@biomejs/biome@2.6.8" and str(biome) == "npm:@biomejs/biome@2.6.8"
    for wrong in ("ruff", "pypi:ruff", "pypi:ruff>=1", "npm:pyright", "cargo:taplo@1"):
        with pytest.raises(ValueError, match="not a pinned package"):
            parse_recipe(wrong)
    assert install_hint("ruff", ("pypi:ruff==0.17.6",), "pip install ruff") == "lspmux install ruff"
    assert install_hint("gopls", (), "go install x") == "go install x"


def test_every_builtin_recipe_is_pinned(tmp_path: Path) -> None:
    config = load_config(tmp_path, [])
    with_recipe = {n: s for n, s in config.servers.items() if s.package}
    assert {"basedpyright", "ruff", "clangd", "pyright", "typescript-language-server"} <= set(
        with_recipe
    )
    for server in with_recipe.values():
        assert all(parse_recipe(p) for p in server.package)


def test_a_bad_recipe_in_a_config_file_says_what_a_recipe_looks_like(tmp_path: Path) -> None:
    extra = tmp_path / "extra.toml"
    extra.write_text('[servers.ruff]\npackage = "ruff"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path, [extra])
    assert "servers.ruff.package" in str(caught.value)
    assert "pypi:ruff==0.17.6" in str(caught.value)


def test_an_untrusted_project_file_cannot_change_what_gets_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # an empty trust database
    project = tmp_path / "project"
    project.mkdir()
    (project / "lspmux.toml").write_text('[servers.ruff]\npackage = "pypi:not-ruff==6.6.6"\n')
    config = load_config(project, [])
    assert config.servers["ruff"].package == ("pypi:ruff==0.17.6",)
    assert "servers.ruff.package" in config.untrusted_keys
