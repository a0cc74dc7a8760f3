"""Config keys are declared once, on the model's fields: the key tables, the merge rule and the
untrusted-file policy are derived from the fields' metadata, and pinned here."""

from __future__ import annotations

import dataclasses

import pytest

from lspmux.config.checkers import CHECK, DEEP_MERGE, EXECUTABLE
from lspmux.config.checks import (
    DEEP_MERGED,
    EXECUTABLE_GLOBALS,
    EXECUTABLE_KEYS,
    GLOBAL_KEYS,
    LINTER_KEYS,
    SERVER_KEYS,
)
from lspmux.config.model import Config, LinterConfig, ServerConfig

#: Fields that are not keys a file may set: the entry's own name (its table's name), and what
#: the loader records about the files it read.
NOT_KEYS = {
    "name",
    "servers",
    "linters",
    "origins",
    "files",
    "project_dir",
    "project_file",
    "workspace_trusted",
    "project_trusted",
    "untrusted_keys",
    "untrusted_executables",
    "trust_notice",
    "not_chosen",
}


@pytest.mark.parametrize(
    ("cls", "keys"),
    [(ServerConfig, SERVER_KEYS), (LinterConfig, LINTER_KEYS), (Config, GLOBAL_KEYS)],
)
def test_every_field_is_a_key_or_bookkeeping(cls: type, keys: dict[str, object]) -> None:
    """A new field must say how a file sets it (a checker), or be listed above."""
    for f in dataclasses.fields(cls):
        assert (f.name in keys) != (f.name in NOT_KEYS), f"{cls.__name__}.{f.name}"
        if f.name in keys:
            assert {CHECK, DEEP_MERGE, EXECUTABLE} <= set(f.metadata)


def test_tables_merge_deep() -> None:
    assert {
        "settings",
        "initialization_options",
        "env",
        "json",
        "options",
        "untrusted",
    } == DEEP_MERGED


def test_what_an_untrusted_project_file_may_not_set() -> None:
    assert {
        "command",
        "env",
        "settings",
        "initialization_options",
        "client_may_set",
        "untrusted",
        "project_check",
        "package",  # what `lspmux install` downloads and runs
    } == EXECUTABLE_KEYS
    assert {
        "allowed_servers",
        "max_message_size",
        "pass_environment",
        "listen",
        "connect",
        "remote_map",
    } == EXECUTABLE_GLOBALS


def test_keys_keep_the_model_order() -> None:
    assert list(SERVER_KEYS)[:4] == ["command", "file_types", "language_ids", "root_markers"]
    assert list(GLOBAL_KEYS)[:2] == ["request_timeout", "idle_timeout"]
