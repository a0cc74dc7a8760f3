"""The pool's instance key (backends/pool.py): server, root, argv, environment and the client's
initializationOptions make two instances; a client that asked for no settings joins a running
one; each extra instance says why it exists; the first client's settings are what the server
gets (`workspace/configuration` answers, `didChangeConfiguration`), under the configured ones."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from lspmux.backends.backend import Backend
from lspmux.backends.pool import InstanceKey, Pool
from lspmux.config.model import ServerConfig
from lspmux.session.families.server_answers import configuration


class Client:
    """What the pool needs of a session, and what it was asked."""

    def __init__(self, client_id: str, options: Any = None) -> None:
        self.client_id = client_id
        self.initialization_options = options
        self.state = "running"
        self.last_active = 0.0
        self.requests: list[tuple[Backend, dict[str, Any]]] = []
        self.answer: Any = None

    def backend_notification(self, backend: Backend, msg: Any) -> None:
        pass

    def backend_request(self, backend: Backend, msg: Any, reply: Any) -> None:
        self.requests.append((backend, msg))
        reply(self.answer)

    def backend_event(self, backend: Backend, event: str, detail: str) -> None:
        pass


SERVER = ServerConfig(name="py", command=(sys.executable, "-c", "pass"))


def get(pool: Pool, client: Client, root: Path, server: ServerConfig = SERVER) -> Backend:
    backend = pool.get(server, root, client=client)
    assert backend is not None
    pool.attach(backend, client)
    return backend


def test_the_same_key_shares_one_instance(tmp_path: Path) -> None:
    pool = Pool(shared=True)
    a, b = Client("client-1", {"x": 1}), Client("client-2", {"x": 1})
    assert get(pool, a, tmp_path) is get(pool, b, tmp_path)
    assert get(pool, a, tmp_path / ".") is get(pool, a, tmp_path)  # the real path counts
    [row] = pool.describe()
    assert row["why"] is None and row["first_client"] == "client-1"
    assert row["clients"] == ["client-1", "client-2"]


@pytest.mark.parametrize(
    ("other", "why"),
    [
        (dataclasses.replace(SERVER, command=(*SERVER.command, "--x")), "arguments differ"),
        (
            dataclasses.replace(SERVER, env={"VIRTUAL_ENV": "/b/.venv"}),
            "environment differs (VIRTUAL_ENV)",
        ),
    ],
)
def test_arguments_and_environment_make_another_instance(
    tmp_path: Path, other: ServerConfig, why: str
) -> None:
    pool = Pool(shared=True)
    first = get(pool, Client("client-1"), tmp_path)
    second = get(pool, Client("client-2"), tmp_path, other)
    assert second is not first
    rows = {r["first_client"]: r for r in pool.describe()}
    assert rows["client-2"]["why"] == f"{why} from client-1's"
    assert rows["client-1"]["why"] is None
    assert rows["client-2"]["command"][1:] == list(other.command[1:])
    assert rows["client-2"]["env"] == sorted(other.env)  # names only, never values
    assert get(pool, Client("client-3"), tmp_path, other) is second


def test_conflicting_initialization_options_make_another_instance(tmp_path: Path) -> None:
    pool = Pool(shared=True)
    first = get(pool, Client("client-1", {"checkOnSave": {"enable": False}}), tmp_path)
    other = get(pool, Client("client-2", {"checkOnSave": {"enable": True}}), tmp_path)
    assert other is not first
    assert pool.why[other] == "initializationOptions differ from client-1's"
    # options are compared as values: key order does not matter
    same = get(pool, Client("client-3", {"checkOnSave": {"enable": False}}), tmp_path)
    assert same is first
    # the server gets them (under the configured ones)
    assert first.initialization_options == {"checkOnSave": {"enable": False}}


def test_a_client_without_settings_joins_the_running_instance(tmp_path: Path) -> None:
    pool = Pool(shared=True)
    editor = get(pool, Client("client-1", {"cargo": {"noSysroot": True}}), tmp_path)
    agent = get(pool, Client("client-2"), tmp_path)  # an agent: no initializationOptions
    assert agent is editor and len(pool.backends) == 1
    # …but a client with settings does not join an instance started without any
    pool2 = Pool(shared=True)
    bare = get(pool2, Client("client-1"), tmp_path)
    assert get(pool2, Client("client-2", {"a": 1}), tmp_path) is not bare


def test_instance_key_differences_name_every_part() -> None:
    a = InstanceKey("s", "/r", ("/bin/s",), (("A", "1"),), None)
    b = InstanceKey("s", "/r", ("/bin/s", "-v"), (("A", "2"), ("B", "1")), '{"x":1}')
    assert a.differences(b) == [
        "arguments differ",
        "environment differs (A, B)",
        "initializationOptions differ",
    ]
    assert a.differences(a) == []
    other = InstanceKey("s", "/r", ("/opt/s",), (("A", "1"),), None)
    assert other.differences(a) == ["the executable differs (/opt/s, not /bin/s)"]


def test_a_server_named_by_path_or_by_name_is_one_instance(tmp_path: Path) -> None:
    """`lspmux client` routing by file type runs the configured command (found on PATH);
    `--server-path NAME` names the same program by the path the client's PATH gave."""
    by_name = dataclasses.replace(SERVER, command=("python3", "-c", "pass"))
    found = shutil.which("python3")
    assert found is not None
    by_path = dataclasses.replace(SERVER, command=(found, "-c", "pass"))
    pool = Pool(shared=True)
    assert get(pool, Client("client-1"), tmp_path, by_name) is get(
        pool, Client("client-2"), tmp_path, by_path
    )


def test_the_first_client_answers_and_the_next_one_takes_over(tmp_path: Path) -> None:
    pool = Pool(shared=True)
    one, two = Client("client-1"), Client("client-2")
    backend = get(pool, one, tmp_path)
    get(pool, two, tmp_path)
    assert pool.first_client(backend) is one
    pool.detach(one)
    assert pool.first_client(backend) is two
    pool.detach(two)
    assert pool.first_client(backend) is None


def test_configuration_is_the_first_clients_answer_under_the_configured_settings(
    tmp_path: Path,
) -> None:
    pool = Pool(shared=True)
    server = dataclasses.replace(SERVER, settings={"py": {"lineLength": 100}})
    first, second = Client("client-1"), Client("client-2")
    first.answer = [{"lineLength": 80, "select": ["E"]}, {"from": "client"}]
    second.answer = [{"never": "asked"}, None]
    backend = get(pool, first, tmp_path, server)
    get(pool, second, tmp_path, server)
    got: list[Any] = []
    msg = {"id": 1, "method": "workspace/configuration"}
    msg["params"] = {"items": [{"section": "py"}, {"section": "other"}]}
    configuration(pool, backend, msg, got.append)
    # the configuration wins a conflict; the client's other keys and sections stay
    assert got == [[{"lineLength": 100, "select": ["E"]}, {"from": "client"}]]
    assert [m["method"] for _, m in first.requests] == ["workspace/configuration"]
    assert second.requests == []
    # no client (or a useless answer): the configured settings alone
    first.answer = "nonsense"
    configuration(pool, backend, msg, got.append)
    assert got[-1] == [{"lineLength": 100}, None]


def test_did_change_configuration_is_merged_under_the_configured_settings(
    tmp_path: Path,
) -> None:
    server = dataclasses.replace(SERVER, settings={"py": {"lineLength": 100}})
    backend = Pool(shared=True).get(server, tmp_path)
    assert backend is not None
    sent: list[tuple[str, Any]] = []
    backend.notify = lambda method, params: sent.append((method, params))  # type: ignore[method-assign]
    backend.client_settings_changed({"settings": {"py": {"lineLength": 80, "x": 1}}})
    assert sent == [
        ("workspace/didChangeConfiguration", {"settings": {"py": {"lineLength": 100, "x": 1}}})
    ]
    plain = Pool(shared=True).get(SERVER, tmp_path)
    assert plain is not None
    plain.notify = lambda method, params: sent.append((method, params))  # type: ignore[method-assign]
    plain.client_settings_changed({"settings": None})
    assert sent[-1] == ("workspace/didChangeConfiguration", {"settings": None})


def test_extra_instances_are_told_apart_in_labels(tmp_path: Path) -> None:
    pool = Pool(shared=True)
    first = get(pool, Client("client-1", {"a": 1}), tmp_path)
    second = get(pool, Client("client-2", {"a": 2}), tmp_path)
    assert first.label == f"py[{tmp_path.name}]" and second.label == f"py[{tmp_path.name}]#2"
