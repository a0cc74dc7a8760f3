"""`remote_map` in the configuration: the key's check, reading it for the editor's root, and
its place among `--map` and the --remote path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lspmux.config.checkers import ConfigError
from lspmux.config.loader import load_config
from lspmux.remote.mapping import configured_pairs
from lspmux.remote.relay import Relay
from lspmux.remote.target import parse_exec, parse_ssh_url


@pytest.fixture
def user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's config.toml in tmp_path (nothing of the real user's is read)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    path = tmp_path / "config" / "lspmux" / "config.toml"
    path.parent.mkdir(parents=True)
    return path


def test_the_user_file_gives_pairs(user_file: Path, tmp_path: Path) -> None:
    user_file.write_text('remote_map = ["/home/me/p=/srv/p", "/home/me/v/=/opt/v"]\n')
    assert configured_pairs(str(tmp_path)) == [("/home/me/p", "/srv/p"), ("/home/me/v", "/opt/v")]


def test_a_pair_that_is_not_two_absolute_paths_is_refused(user_file: Path) -> None:
    user_file.write_text('remote_map = ["proj=/srv/p"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(None)
    text = str(caught.value)
    assert "remote_map" in text and "LOCAL=REMOTE" in text and '"proj=/srv/p"' in text, text


def test_an_untrusted_project_file_may_not_set_it(user_file: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "lspmux.toml").write_text('remote_map = ["/=/srv/evil"]\n')
    user_file.write_text('remote_map = ["/home/me/p=/srv/p"]\n')
    assert configured_pairs(str(project)) == [("/home/me/p", "/srv/p")]


Pairs = Callable[[str], list[tuple[str, str]]]


def relay(url: str, maps: list[tuple[str, str]], configured: Pairs) -> tuple[Relay, list[bytes]]:
    out: list[bytes] = []
    target = parse_ssh_url(url, environ={}) if url.startswith("ssh:") else parse_exec(url)
    r = Relay(target, [], maps, write=out.append, environ={"XDG_CACHE_HOME": "/c"},
              configured=configured)  # fmt: skip
    return r, out


def test_map_then_the_configuration_then_the_remote_path() -> None:
    seen: list[str] = []

    def configured(root: str) -> list[tuple[str, str]]:
        seen.append(root)
        return [("/home/me/p", "/cfg/p"), ("/home/me/p/vendor", "/opt/v")]

    r, _ = relay("ssh://box/srv/p", [("/home/me/p", "/cli/p")], configured)
    pm = r._build_map({"rootUri": "file:///home/me/p"})
    assert seen == ["/home/me/p"]
    assert pm.pairs == [("/home/me/p", "/cli/p"), ("/home/me/p", "/cfg/p"),
                        ("/home/me/p/vendor", "/opt/v"), ("/home/me/p", "/srv/p")]  # fmt: skip
    assert pm.remote_path("/home/me/p/a.py") == "/cli/p/a.py"  # the first of equal prefixes
    assert pm.remote_path("/home/me/p/vendor/x.py") == "/opt/v/x.py"  # the longest prefix


def test_with_only_the_configuration_its_pairs_are_the_map() -> None:
    r, _ = relay("docker exec -i c", [], lambda root: [("/home/me/p", "/work")])
    pm = r._build_map({"rootUri": "file:///home/me/p"})
    assert pm.pairs == [("/home/me/p", "/work")]
    assert pm.remote_path("/home/me/p/src/a.py") == "/work/src/a.py"


def test_a_broken_configuration_is_said_and_the_command_line_map_still_works() -> None:
    def configured(root: str) -> list[tuple[str, str]]:
        raise ConfigError("/x/config.toml: remote_map[0]: found 1, expected LOCAL=REMOTE")

    r, out = relay("docker exec -i c", [("/l", "/r")], configured)
    assert r._build_map({"rootUri": "file:///l"}).pairs == [("/l", "/r")]
    assert len(out) == 1 and b"window/showMessage" in out[0] and b"/x/config.toml" in out[0]
