"""The transport's command lines and the remote options of `lspmux client`."""

from __future__ import annotations

import shlex

import pytest

from lspmux.remote.cli import split, target_of, wants_remote
from lspmux.remote.target import SSH_OPTIONS, TargetError, parse_exec, parse_ssh_url


def test_ssh_url_runs_the_client_in_the_remote_project() -> None:
    t = parse_ssh_url("ssh://me@box.lan:2222/srv/my%20proj/", lspmux="/opt/lspmux", environ={})
    assert t.remote_root == "/srv/my proj"
    argv = t.client_command(["--server-path", "rust-analyzer"])
    assert argv[: 1 + len(SSH_OPTIONS)] == ["ssh", *SSH_OPTIONS]
    assert argv[1 + len(SSH_OPTIONS) :][:4] == ["-p", "2222", "me@box.lan", "--"]
    assert argv[-1] == "cd '/srv/my proj' && exec /opt/lspmux client --server-path rust-analyzer"
    assert t.label == "me@box.lan:2222" and t.mirror_name() == "me@box.lan_2222"


def test_ssh_command_from_the_environment_and_no_port() -> None:
    t = parse_ssh_url("ssh://box", environ={"LSPMUX_SSH": "ssh -F '/tmp/my cfg'"})
    argv = t.client_command([])
    assert argv[:3] == ["ssh", "-F", "/tmp/my cfg"]
    assert "-p" not in argv and t.remote_root is None
    assert argv[-2:] == ["--", "exec lspmux client"]
    line = t.read_command("/a b")[-1]  # one shell line: the far login shell runs it
    assert line.startswith("exec sh -c ") and line.endswith(" sh '/a b'"), line


@pytest.mark.parametrize("url", ["box:/path", "http://box/x", "ssh:///path", "ssh://box:xx/p"])
def test_bad_urls_say_what_is_expected(url: str) -> None:
    with pytest.raises(TargetError, match=r"ssh://|port"):
        parse_ssh_url(url, environ={})


def test_exec_transport_appends_words() -> None:
    t = parse_exec("docker exec -i 'my box'", lspmux="lspmux")
    assert t.client_command(["--no-autostart"]) == [
        "docker", "exec", "-i", "my box", "lspmux", "client", "--no-autostart",
    ]  # fmt: skip
    read = t.read_command("/x")
    assert read[:6] == ["docker", "exec", "-i", "my box", "sh", "-c"] and read[7:] == ["sh", "/x"]
    stamps = t.stamps_command(["/x", "/y"])
    assert stamps[:6] == read[:6] and stamps[7:] == ["sh", "/x", "/y"]
    with pytest.raises(TargetError):
        parse_exec("  ")


def test_remote_options_are_split_from_the_far_clients() -> None:
    argv = ["--remote=ssh://h/p", "--map", "/a=/b", "--server-path", "ra", "--", "--map", "x"]
    assert wants_remote(argv)
    found, rest = split(argv)
    assert found == {"--remote": ["ssh://h/p"], "--map": ["/a=/b"]}
    assert rest == ["--server-path", "ra", "--", "--map", "x"]
    assert not wants_remote(["--server-path", "ra", "--", "--remote", "x"])
    with pytest.raises(TargetError):
        target_of({"--remote": ["ssh://h/p"], "--remote-exec": ["docker exec -i c"]})
    exec_target = target_of({"--remote-exec": ["kubectl exec -i pod --"]})
    assert shlex.join(exec_target.prefix) == "kubectl exec -i pod --"
