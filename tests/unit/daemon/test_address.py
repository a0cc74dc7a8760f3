"""Addresses, the private socket folder and the TCP token (lspmux.daemon.address)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lspmux.daemon.address import (
    Address,
    AddressError,
    default_address,
    default_dir,
    is_loopback,
    load_token,
    parse,
    private_dir,
    resolve,
)


def test_parse_and_format_round_trip() -> None:
    assert parse("unix:/run/user/1/lspmux.sock") == Address("unix", path="/run/user/1/lspmux.sock")
    assert str(parse("unix:/a/b.sock")) == "unix:/a/b.sock"
    tcp = parse("tcp:127.0.0.1:27631")
    assert (tcp.kind, tcp.host, tcp.port) == ("tcp", "127.0.0.1", 27631)
    assert str(tcp) == "tcp:127.0.0.1:27631"
    v6 = parse("tcp:[::1]:9000")
    assert (v6.host, v6.port, str(v6)) == ("::1", 9000, "tcp:[::1]:9000")
    assert parse("/tmp/x.sock").path == "/tmp/x.sock"


@pytest.mark.parametrize(
    "text", ["", "unix:", "tcp:127.0.0.1", "tcp:host:notaport", "tcp:h:0", "tcp:h:70000", "x.sock"]
)
def test_bad_addresses_say_what_is_expected(text: str) -> None:
    with pytest.raises(AddressError, match=r"expected|needs a path"):
        parse(text)


def test_default_address_prefers_the_runtime_dir() -> None:
    env = {"XDG_RUNTIME_DIR": "/run/user/1000"}
    assert default_address(env).path == "/run/user/1000/lspmux/lspmux.sock"
    fallback = default_dir({"TMPDIR": "/var/tmp"})
    assert fallback == Path(f"/var/tmp/lspmux-{os.getuid()}")
    assert resolve(None, {"LSPMUX_ADDRESS": "tcp:127.0.0.1:5"}).port == 5
    assert resolve("unix:/x.sock", {"LSPMUX_ADDRESS": "tcp:127.0.0.1:5"}).path == "/x.sock"


def test_loopback_only() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert is_loopback("127.3.4.5")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")
    assert not is_loopback("example.com")


def test_private_dir_is_created_0700(tmp_path: Path) -> None:
    folder = tmp_path / "rt" / "lspmux"
    private_dir(folder)
    assert folder.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("mode", [0o777, 0o755, 0o710, 0o701])
def test_private_dir_refuses_group_or_other_bits(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "lspmux"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(AddressError, match=f"{mode:04o}"):
        private_dir(folder)


def test_private_dir_refuses_a_symlink_and_a_file(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(AddressError, match="not a directory"):
        private_dir(link)
    afile = tmp_path / "file"
    afile.write_text("")
    with pytest.raises(AddressError, match="not a directory"):
        private_dir(afile)


def test_token_from_a_private_file_or_the_environment(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("abc\n")
    token.chmod(0o600)
    assert load_token(token, {}) == "abc"
    token.chmod(0o644)
    with pytest.raises(AddressError, match="chmod 600"):
        load_token(token, {})
    empty = tmp_path / "empty"
    empty.write_text("\n")
    empty.chmod(0o600)
    with pytest.raises(AddressError, match="empty"):
        load_token(empty, {})
    with pytest.raises(AddressError, match="cannot read"):
        load_token(tmp_path / "missing", {})
    assert load_token(None, {"LSPMUX_TOKEN": " t0k "}) == "t0k"
    assert load_token(None, {}) is None


def test_a_socket_path_too_long_is_refused_before_binding(tmp_path: Path) -> None:
    from lspmux.daemon.address import check_socket_dir

    long = Address("unix", path=str(tmp_path / ("x" * 120) / "lspmux.sock"))
    with pytest.raises(AddressError, match="too long"):
        check_socket_dir(long)
    assert not (tmp_path / ("x" * 120)).exists()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_private_dir_refuses_a_folder_of_another_user(tmp_path: Path) -> None:
    folder = tmp_path / "lspmux"
    folder.mkdir(mode=0o700)
    os.chown(folder, 12345, -1)
    with pytest.raises(AddressError, match="belongs to uid 12345"):
        private_dir(folder)
